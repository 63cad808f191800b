#!/usr/bin/env bash
# Builds the parser fuzzer with clang (libFuzzer + ASan + UBSan) in
# build-fuzz/ and runs it for SECONDS (default 600) on both cores, seeded with
# the test modules. Usage: scripts/fuzz.sh [SECONDS]
# One fuzzing process; set FUZZ_JOBS=2 for two (their logs go to fuzz-N.log).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHLOGYM_FUZZ=ON -DHLOGYM_SANITIZE=ON -DHLOGYM_TESTS=OFF -DHLOGYM_BENCH=OFF >/dev/null
cmake --build build-fuzz -j2 --target parser_fuzz
seeds=build-fuzz/seeds
corpus=build-fuzz/corpus
mkdir -p "$seeds" "$corpus"
# Seeds: every plain-text test module, at most 64 KiB each (libFuzzer's -max_len).
find datasets tests/data -type f \( -name '*.hlo' -o -name '*.txt' \) -size -64k 2>/dev/null |
  while read -r f; do cp "$f" "$seeds/$(echo "$f" | tr '/' '_')"; done
jobs="${FUZZ_JOBS:-1}"
parallel=()
if [ "$jobs" -gt 1 ]; then parallel=(-jobs="$jobs" -workers="$jobs"); fi
build-fuzz/tests/fuzz/parser_fuzz "$corpus" "$seeds" -max_len=65536 \
  -max_total_time="$seconds" "${parallel[@]}" -print_final_stats=1 \
  -dict=tests/fuzz/hlo.dict 2>&1 | tail -40
