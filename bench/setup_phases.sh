#!/usr/bin/env bash
# Times each phase of a fresh set-up on a clone of this repository's HEAD and prints a table:
# Python environment, RL libraries, configure + build of the main job, build of the tests, the
# main job (quick start), ctest, pytest. Debian packages are taken as installed (scripts/setup.sh
# installs them; time that on a fresh machine with `time scripts/setup.sh --no-build`).
# Usage: bench/setup_phases.sh [WORKDIR]   (default: a new temporary folder, removed afterwards)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${1:-$(mktemp -d)}"
[[ $# -ge 1 ]] || trap 'rm -rf "$WORK"' EXIT
git clone -q "$ROOT" "$WORK/hlogym" || exit 1
cd "$WORK/hlogym" || exit 1

rows=()
phase() {  # phase NAME COMMAND...: runs it, quietly, and records its wall time and status
  local name="$1"; shift
  local start=$SECONDS
  "$@" > "$WORK/$name.log" 2>&1
  local status=$?
  rows+=("$(printf '%-34s %6d s  %s' "$name" $((SECONDS - start)) \
            "$([[ $status -eq 0 ]] && echo ok || echo "FAILED ($status), see $WORK/$name.log")")")
}

JOBS="${HLOGYM_JOBS:-2}"
phase "python environment" scripts/setup.sh --no-build
phase "RL libraries" scripts/setup.sh --no-build --rl
phase "configure + build main job" scripts/setup.sh --main
phase "main job (quick start)" scripts/quickstart.sh
phase "build tests and benchmarks" cmake --build build --parallel "$JOBS"
phase "ctest" ctest --test-dir build -j"$JOBS"
phase "pytest" .venv/bin/python -m pytest -q python/tests tests/python

printf '%s\n' "fresh set-up of $(git rev-parse --short HEAD) on $(nproc) cores, $(date -u +%F):" "${rows[@]}"
