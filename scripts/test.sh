#!/usr/bin/env bash
# Builds hlogym (scripts/setup.sh --rl: also the RL libraries the tests train with) and runs every
# test suite: ctest on build/, then pytest on python/tests and tests/python (whichever exist and
# hold tests), then runs the shipped policy with the installed command from another folder, lints
# the Python (ruff, pyproject.toml), checks the C++ formatting (.clang-format) and builds the documentation site (mkdocs.yml) with warnings as
# errors. Every runner runs even when an earlier one failed; the exit status is non-zero when any
# of them failed.
# Usage: scripts/test.sh [--sanitize]
#   --sanitize  also configure and build build-asan/ (-DHLOGYM_SANITIZE=ON -DHLOGYM_BENCH=OFF,
#               RelWithDebInfo) and run its ctest under AddressSanitizer + UBSan.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SANITIZE=0
for arg in "$@"; do
  case "$arg" in
    --sanitize) SANITIZE=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done
JOBS="${HLOGYM_JOBS:-2}"

scripts/setup.sh --rl || { echo "test.sh: setup/build failed" >&2; exit 1; }

failed=()

# The tests' temporary files go to a folder of this run (GoogleTest's TEST_TMPDIR, mktemp's
# TMPDIR), which must be empty when they end: a test run leaves nothing behind in /tmp.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# left_behind NAME: fails NAME when the tests left something in the scratch folder.
left_behind() {
  if [[ -n "$(ls -A "$scratch")" ]]; then
    echo "test.sh: $1 left files behind: $(ls -A "$scratch" | head -5 | tr '\n' ' ')" >&2
    failed+=("$1 left files behind")
    rm -rf "${scratch:?}"/*
  fi
}

echo "== ctest (build/)"
TEST_TMPDIR="$scratch/" TMPDIR="$scratch" ctest --test-dir build --output-on-failure -j"$JOBS" ||
  failed+=("ctest")
left_behind ctest

if ((SANITIZE)); then
  echo "== build-asan/ (AddressSanitizer + UndefinedBehaviorSanitizer)"
  if [[ ! -f build-asan/CMakeCache.txt ]]; then
    if command -v ninja >/dev/null 2>&1; then GEN=Ninja; else GEN="Unix Makefiles"; fi
    cmake -S . -B build-asan -G "$GEN" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DHLOGYM_SANITIZE=ON -DHLOGYM_BENCH=OFF >/dev/null
  fi
  if cmake --build build-asan --parallel "$JOBS"; then
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
      TEST_TMPDIR="$scratch/" TMPDIR="$scratch" \
      ctest --test-dir build-asan --output-on-failure -j"$JOBS" || failed+=("ctest (sanitize)")
    left_behind "ctest (sanitize)"
  else
    failed+=("build-asan")
  fi
fi

# pytest on the python test folders that exist and contain test files.
py_dirs=()
for d in python/tests tests/python; do
  if [[ -d "$d" ]] && find "$d" -name 'test_*.py' -o -name '*_test.py' | grep -q .; then
    py_dirs+=("$d")
  fi
done
if ((${#py_dirs[@]})); then
  echo "== pytest ${py_dirs[*]}"
  TMPDIR="$scratch" .venv/bin/python -m pytest -q "${py_dirs[@]}"
  rc=$?
  # 5: no tests collected, which is not a failure here
  if [[ $rc -ne 0 && $rc -ne 5 ]]; then failed+=("pytest"); fi
  # pytest keeps its last runs' tmp_path folders, Ray its sessions' logs and torch its compile
  # cache, by design; they go with the scratch folder.
  rm -rf "$scratch"/pytest-of-* "$scratch"/ray "$scratch"/torchinductor_*
  left_behind pytest
else
  echo "== pytest: no python tests (python/tests, tests/python)"
fi

# What a user runs after the set-up: the installed command, from another folder, with the shipped
# policy (the deep-RL plugin and the torch it was built against).
echo "== the installed hlogym runs the shipped policy (deep-RL plugin), from another folder"
(cd "$scratch" && "$ROOT/.venv/bin/hlogym" eval --agent policy:ppo-gpt2 --suite smoke/einsum -q) ||
  failed+=("installed policy:ppo-gpt2")

echo "== lint (ruff check, ruff format --check; clang-format --dry-run on the C++)"
{ .venv/bin/ruff check --quiet . && .venv/bin/ruff format --check --quiet .; } || failed+=("lint")
git ls-files -z -- '*.cc' '*.h' | xargs -0 clang-format --dry-run --Werror || failed+=("format")

echo "== docs (mkdocs build --strict)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet || failed+=("docs")

if ((${#failed[@]})); then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all test runners passed"
