#!/usr/bin/env bash
# Runs `python -m hlogym.xla_bench --from-export EXPORT_DIR` as N processes at once, shard i
# pinned with taskset to CPU FIRST_CPU+i (one XLA:CPU thread each, so shards do not share cores),
# then merges their reports into OUT_JSON and prints the summary of all modules.
# Made for a many-core machine without hlogym (make EXPORT_DIR here with --export).
# Usage: bench/xla_bench_shards.sh EXPORT_DIR OUT_JSON N FIRST_CPU [xla_bench args...]
#   e.g. bench/xla_bench_shards.sh /tmp/export /tmp/all.json 12 2 --no-time --fast-compile
# Environment: PYTHON (default .venv/bin/python, else python3).
set -uo pipefail
if (($# < 4)); then sed -n '2,9p' "$0"; exit 2; fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXPORT="$1" OUT="$2" N="$3" FIRST="$4"
shift 4
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[[ -x "$PY" ]] || PY=python3
parts=()
for ((i = 0; i < N; i++)); do
  part="$OUT.shard$i.json"
  parts+=("$part")
  PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" taskset -c $((FIRST + i)) \
    "$PY" -m hlogym.xla_bench --from-export "$EXPORT" --shard "$i/$N" --threads 1 \
    --json "$part" "$@" > "$OUT.shard$i.log" 2>&1 &
done
wait
PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m hlogym.xla_bench \
  --merge "${parts[@]}" --json "$OUT"
