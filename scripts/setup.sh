#!/usr/bin/env bash
# Sets up everything hlogym needs and builds it; idempotent and a quick no-op when nothing changed.
#   1. Debian packages (installed only when missing; needs root, or sudo)
#   2. the project-local Python venv .venv/ with requirements.txt (reinstalled only when that
#      file changes; the stamp is .venv/.requirements.sha256), and the second venv .venv-sb3/
#      for the Stable-Baselines3 test (tests/sb3): Debian's python3 with --system-site-packages
#      (python3-torch 1.13, numpy 1.24) plus requirements-sb3.txt (stamp .venv-sb3/.requirements.sha256)
#   3. a Release build in build/ (cmake + ninja when installed, else make), 2 parallel jobs
#   4. hlogym itself installed into .venv with pip (pyproject.toml), reusing build/: the package,
#      the `hlogym` command in .venv/bin and the data in .venv/share/hlogym (reinstalled only
#      when something it installs is newer than the stamp .venv/.hlogym-install.stamp)
# Usage: scripts/setup.sh [--no-build]
# Environment: PYTHON (interpreter for the venv, default python3), HLOGYM_JOBS (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD=1
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

JOBS="${HLOGYM_JOBS:-2}"
log() { echo "setup: $*"; }

# ---- 1. Debian packages ---------------------------------------------------------------------
DEB_PACKAGES=(build-essential cmake pkg-config clang libabsl-dev libcli11-dev nlohmann-json3-dev
              libgtest-dev libgmock-dev libbenchmark-dev libzstd-dev zlib1g-dev libeigen3-dev
              zstd python3-venv libtorch-dev python3-torch)
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
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum requirements.txt | cut -d' ' -f1)"
if [[ -x "$VENV/bin/python" ]] && ! "$VENV/bin/python" -c '' >/dev/null 2>&1; then
  log "the venv's interpreter is broken; recreating .venv"
  rm -rf "$VENV"
fi
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$want" ]]; then
  if [[ ! -x "$VENV/bin/python" ]]; then
    PY="${PYTHON:-python3}"
    log "creating .venv with $("$PY" --version 2>&1) ($(command -v "$PY"))"
    "$PY" -m venv "$VENV"
  fi
  log "installing requirements.txt into .venv"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements.txt
  echo "$want" > "$STAMP"
fi

# ---- 2b. The Stable-Baselines3 venv ---------------------------------------------------------
# PyPI's Linux torch is a multi-GB CUDA build, so SB3 runs on Debian's python3-torch (1.13, built
# for Debian's /usr/bin/python3 and numpy 1.24): .venv-sb3/ sees Debian's packages and gets the
# exact pins of requirements-sb3.txt with --no-deps (that file says why). Only tests/sb3 uses it;
# the hlogym extension from step 3 imports there too (same CPython 3.11 ABI).
SB3_VENV="$ROOT/.venv-sb3"
SB3_STAMP="$SB3_VENV/.requirements.sha256"
SB3_PY="${HLOGYM_SB3_PYTHON:-/usr/bin/python3}"
want_sb3="$(sha256sum requirements-sb3.txt | cut -d' ' -f1)"
if [[ -x "$SB3_VENV/bin/python" ]] && ! "$SB3_VENV/bin/python" -c '' >/dev/null 2>&1; then
  log "the .venv-sb3 interpreter is broken; recreating .venv-sb3"
  rm -rf "$SB3_VENV"
fi
if [[ ! -f "$SB3_STAMP" || "$(cat "$SB3_STAMP")" != "$want_sb3" ]]; then
  if [[ ! -x "$SB3_VENV/bin/python" ]]; then
    if ! "$SB3_PY" -c 'import torch' >/dev/null 2>&1; then
      msg="$SB3_PY cannot import torch (Debian's python3-torch); tests/sb3 will fail"
      # On Debian step 1 installed python3-torch, so this is an error; elsewhere only a warning.
      if command -v dpkg-query >/dev/null 2>&1; then echo "setup.sh: $msg" >&2; exit 1; fi
      log "warning: $msg"
    else
      log "creating .venv-sb3 with $("$SB3_PY" --version 2>&1) ($SB3_PY) over its site packages"
      "$SB3_PY" -m venv --system-site-packages "$SB3_VENV"
    fi
  fi
  if [[ -x "$SB3_VENV/bin/python" ]]; then
    log "installing requirements-sb3.txt into .venv-sb3"
    "$SB3_VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
      -r requirements-sb3.txt
    echo "$want_sb3" > "$SB3_STAMP"
  fi
fi

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
  if [[ ! -f "$CACHE" ]]; then
    if command -v ninja >/dev/null 2>&1; then GEN=Ninja; else GEN="Unix Makefiles"; fi
    log "configuring build/ (Release, $GEN)"
    cmake -S "$ROOT" -B "$BUILD_DIR" -G "$GEN" -DCMAKE_BUILD_TYPE=Release >/dev/null
  elif [[ ! -f "$BUILD_DIR/build.ninja" && ! -f "$BUILD_DIR/Makefile" ]]; then
    log "re-running the configure step that failed last time"
    cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  # cmake --build re-runs the configure step by itself when a CMakeLists.txt or a glob changed.
  cmake --build "$BUILD_DIR" --parallel "$JOBS"
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
      --no-deps -Cbuild-dir="$BUILD_DIR" -Ccmake.define.HLOGYM_TESTS=ON \
      -Ccmake.define.HLOGYM_BENCH=ON -w "$BUILD_DIR/dist" .
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
      --force-reinstall "$BUILD_DIR"/dist/hlogym-*.whl
    touch "$INSTALL_STAMP"
  fi
fi
