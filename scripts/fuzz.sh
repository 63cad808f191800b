#!/usr/bin/env bash
# Builds the parser fuzzer with clang (libFuzzer + ASan + UBSan) in
# build-fuzz/ and runs it for SECONDS (default 600), seeded with the test
# modules and the corpus modules. Usage: scripts/fuzz.sh [SECONDS]
# One fuzzing process; set FUZZ_JOBS=2 for two (their logs go to fuzz-N.log).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
# clang is only this script's (the set-up does not install it).
if ! command -v clang++ >/dev/null 2>&1; then
  SUDO=(); [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends clang
fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHLOGYM_FUZZ=ON -DHLOGYM_SANITIZE=ON -DHLOGYM_TESTS=OFF -DHLOGYM_BENCH=OFF >/dev/null
cmake --build build-fuzz -j2 --target parser_fuzz
seeds=build-fuzz/seeds
corpus=build-fuzz/corpus
mkdir -p "$seeds" "$corpus"
# Seeds: every plain-text test module and every corpus module (decompressed)
# of at most 128 KiB (libFuzzer's -max_len): 208 of the 374 corpus modules.
max_len=131072
find datasets -type f \( -name '*.hlo' -o -name '*.txt' \) -size -128k 2>/dev/null |
  while read -r f; do cp "$f" "$seeds/$(echo "$f" | tr '/' '_')"; done
for f in datasets/corpus/*/*.hlo.zst; do
  out="$seeds/$(basename "$f" .zst)"
  zstd -q -dc "$f" >"$out"
  if [ "$(stat -c %s "$out")" -gt "$max_len" ]; then rm -f "$out"; fi
done
jobs="${FUZZ_JOBS:-1}"
parallel=()
if [ "$jobs" -gt 1 ]; then parallel=(-jobs="$jobs" -workers="$jobs"); fi
build-fuzz/tests/fuzz/parser_fuzz "$corpus" "$seeds" -max_len="$max_len" \
  -max_total_time="$seconds" "${parallel[@]}" -print_final_stats=1 \
  -dict=tests/fuzz/hlo.dict 2>&1 | tail -40
