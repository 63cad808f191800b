#!/usr/bin/env bash
# Sets up everything hlogym needs and builds it; idempotent and a quick no-op when nothing changed.
#   1. Debian packages (installed only when missing; needs root, or sudo)
#   2. the project-local Python venv .venv/ with requirements.txt, and with --rl also
#      requirements-rl.txt (torch, Stable-Baselines3, Ray RLlib: the test suite's RL libraries);
#      reinstalled only when those files change (stamps .venv/.requirements*.sha256)
#   3. a Release build in build/ (cmake + ninja when installed, else make), 2 parallel jobs; with
#      --main only what the commands need (hlogym, the Python extension, and the deep-RL plugin
#      when .venv has torch), not the tests and benchmarks; with --rl the deep-RL plugin and its
#      tests, built against .venv's torch (the one LibTorch of the project: CMakeLists.txt)
#   4. hlogym itself installed into .venv with pip (pyproject.toml), reusing build/: the package,
#      the `hlogym` command in .venv/bin and the data in .venv/share/hlogym (reinstalled only
#      when something it installs is newer than the stamp .venv/.hlogym-install.stamp)
# Usage: scripts/setup.sh [--no-build] [--main] [--rl]
# Environment: PYTHON (interpreter for the venv, default python3), HLOGYM_JOBS (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD=1
RL=0
MAIN_ONLY=0
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
    --main) MAIN_ONLY=1 ;;
    --rl) RL=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

JOBS="${HLOGYM_JOBS:-2}"
log() { echo "setup: $*"; }

# ---- 1. Debian packages ---------------------------------------------------------------------
DEB_PACKAGES=(build-essential cmake ninja-build pkg-config libabsl-dev libcli11-dev nlohmann-json3-dev
              libgtest-dev libgmock-dev libbenchmark-dev libzstd-dev libxxhash-dev zlib1g-dev libeigen3-dev
              libgoogle-perftools-dev zstd python3-venv python3-dev ccache clang-format)
# libgoogle-perftools-dev: tcmalloc, the malloc of the hlogym command and the tests (CMakeLists.txt).
# python3-dev: the extension needs Python.h, which Debian's python3 does not ship.
# clang-format: scripts/test.sh checks the C++ formatting (.clang-format).
# ccache: CMakeLists.txt compiles through it when installed (a clean rebuild in the same build
# folder then takes seconds).
# Deep RL needs no Debian package: the plugin builds against the LibTorch inside .venv's torch.
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${DEB_PACKAGES[@]}" 2>/dev/null || true)"
  for p in "${DEB_PACKAGES[@]}"; do
    grep -qx "$p install ok installed" <<<"$installed" || missing+=("$p")
  done
else
  log "no dpkg-query (not Debian?): skipping the system package check"
fi
if ((${#missing[@]})); then
  log "installing missing Debian packages: ${missing[*]}"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
      echo "setup.sh: not root and no sudo; install: apt-get install ${missing[*]}" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---- 2. Python venv -------------------------------------------------------------------------
VENV="$ROOT/.venv"
if [[ -x "$VENV/bin/python" ]] && ! "$VENV/bin/python" -c '' >/dev/null 2>&1; then
  log "the venv's interpreter is broken; recreating .venv"
  rm -rf "$VENV"
fi
if [[ ! -x "$VENV/bin/python" ]]; then
  PY="${PYTHON:-python3}"
  log "creating .venv with $("$PY" --version 2>&1) ($(command -v "$PY"))"
  "$PY" -m venv "$VENV"
fi
REQUIREMENTS=(requirements.txt)
if ((RL)); then REQUIREMENTS+=(requirements-rl.txt); fi
for req in "${REQUIREMENTS[@]}"; do
  stamp="$VENV/.${req%.txt}.sha256"
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    log "installing $req into .venv"
    # With the base pins too, so that pip keeps them.
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements.txt -r "$req"
    echo "$want" > "$stamp"
  fi
done

# ---- 3. Build -------------------------------------------------------------------------------
if ((BUILD)); then
  BUILD_DIR="$ROOT/build"
  CACHE="$BUILD_DIR/CMakeCache.txt"
  # A build tree configured from another checkout (or with a generator that is gone) is stale.
  if [[ -f "$CACHE" ]]; then
    home="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$CACHE")"
    gen="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$CACHE")"
    if [[ "$home" != "$ROOT" ]] || { [[ "$gen" == Ninja ]] && ! command -v ninja >/dev/null; }; then
      log "build/ was configured elsewhere or with a missing generator; reconfiguring"
      rm -rf "$BUILD_DIR"
    fi
  fi
  # With --rl the deep-RL plugin is required (its tests must run), not built only when found.
  TORCH_FLAGS=()
  if ((RL)); then TORCH_FLAGS=(-DHLOGYM_TORCH=ON); fi
  if [[ ! -f "$CACHE" ]]; then
    if command -v ninja >/dev/null 2>&1; then GEN=Ninja; else GEN="Unix Makefiles"; fi
    log "configuring build/ (Release, $GEN)"
    cmake -S "$ROOT" -B "$BUILD_DIR" -G "$GEN" -DCMAKE_BUILD_TYPE=Release "${TORCH_FLAGS[@]}" >/dev/null
  elif [[ ! -f "$BUILD_DIR/build.ninja" && ! -f "$BUILD_DIR/Makefile" ]]; then
    log "re-running the configure step that failed last time"
    cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${TORCH_FLAGS[@]}" >/dev/null
  elif ((RL)) && ! grep -q '^HLOGYM_TORCH:STRING=ON$' "$CACHE"; then
    # Configured by the quick start, before .venv had torch.
    log "configuring build/ again, with the deep-RL plugin (.venv's torch)"
    cmake -S "$ROOT" -B "$BUILD_DIR" "${TORCH_FLAGS[@]}" >/dev/null
  fi
  # cmake --build re-runs the configure step by itself when a CMakeLists.txt or a glob changed.
  TARGETS=()
  if ((MAIN_ONLY)); then
    TARGETS=(--target hlogym)  # its plugin comes with it (a dependency)
    if grep -q '^build _hlogym\b\|^_hlogym:' "$BUILD_DIR/build.ninja" "$BUILD_DIR/Makefile" 2>/dev/null; then
      TARGETS+=(_hlogym)
    fi
  fi
  cmake --build "$BUILD_DIR" --parallel "$JOBS" "${TARGETS[@]}"
fi

# ---- 4. hlogym into .venv ---------------------------------------------------------------------
# The wheel is built with build-dir=build: the same tree, configured the same way (tests and
# benchmarks on), where everything is already built, so this costs seconds, not a second build.
# It stays in build/dist/ (tests/python/test_install.py installs it into a fresh environment).
if ((BUILD)); then
  INSTALL_STAMP="$VENV/.hlogym-install.stamp"
  newer=""
  if [[ -f "$INSTALL_STAMP" ]]; then
    newer="$(find pyproject.toml CMakeLists.txt python/hlogym datasets/corpus datasets/smoke \
               datasets/policies "$BUILD_DIR/hlogym" "$BUILD_DIR/libhlogym_rl.so" "$BUILD_DIR/python/hlogym" \
               -newer "$INSTALL_STAMP" -print -quit 2>/dev/null)"
  fi
  if [[ ! -f "$INSTALL_STAMP" || -n "$newer" ]]; then
    log "installing hlogym into .venv (a wheel of build/, in build/dist/)"
    rm -rf "$BUILD_DIR/dist"
    "$VENV/bin/python" -m pip wheel -q --disable-pip-version-check --no-build-isolation \
      --no-deps --config-settings=build-dir="$BUILD_DIR" \
      --config-settings=cmake.define.HLOGYM_TESTS=ON \
      --config-settings=cmake.define.HLOGYM_BENCH=ON -w "$BUILD_DIR/dist" .
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
      --force-reinstall "$BUILD_DIR"/dist/hlogym-*.whl
    touch "$INSTALL_STAMP"
  fi
fi
