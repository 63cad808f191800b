#!/usr/bin/env bash
# Sets up and builds hlogym (scripts/setup.sh --main: the command line, its plugin and the Python
# extension, not the tests), then runs the main job on the default benchmark
# suite (datasets/corpus/default_suite.txt: 12 GPT-2 modules; the smoke suite when there is no
# corpus): `hlogym stats` on every module and, once passes exist (`hlogym list-passes --json` lists
# passes and the xla-cpu-default pipeline), `hlogym opt --pipeline=xla-cpu-default` on each,
# writing the optimized modules to build/quickstart/ and printing their stats; then
# `hlogym eval --agent auto` (the shipped agent) on the suite, ending with the agent's table
# (I, D, R, X per module, the gain over xla-cpu-default, geomean(D/R), search time per graph).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

scripts/setup.sh --main  # the tests and benchmarks are scripts/test.sh's

HLOGYM="$ROOT/build/hlogym"
SUITE="$ROOT/datasets/corpus/default_suite.txt"
[[ -f "$SUITE" ]] || SUITE="$ROOT/datasets/smoke/default_suite.txt"
[[ -x "$HLOGYM" ]] || { echo "quickstart: $HLOGYM was not built" >&2; exit 1; }

mapfile -t files < <(grep -v '^[[:space:]]*\(#\|$\)' "$SUITE")
echo "quickstart: default suite: ${#files[@]} modules from ${SUITE#"$ROOT"/}"

status=0
for f in "${files[@]}"; do
  echo "== hlogym stats $f"
  "$HLOGYM" stats "$f" || { echo "quickstart: stats failed on $f" >&2; status=1; }
done

# The opt step runs once passes exist: list-passes works, lists at least one pass, and knows the
# xla-cpu-default pipeline.
have_pipeline() {
  "$HLOGYM" list-passes --json 2>/dev/null | "$ROOT/.venv/bin/python" -c '
import json, sys
d = json.load(sys.stdin)
names = {p if isinstance(p, str) else p.get("name") for p in d.get("pipelines", [])}
sys.exit(0 if d.get("passes") and "xla-cpu-default" in names else 1)' 2>/dev/null
}
if have_pipeline; then
  out="$ROOT/build/quickstart"
  mkdir -p "$out"
  for f in "${files[@]}"; do
    base="$(basename "$f")"; base="${base%.gz}"; base="${base%.zst}"; base="${base%.hlo}"
    dst="$out/$base.xla-cpu-default.hlo"
    echo "== hlogym opt $f --pipeline=xla-cpu-default -o ${dst#"$ROOT"/}"
    if "$HLOGYM" opt "$f" --pipeline=xla-cpu-default -o "$dst"; then
      "$HLOGYM" stats "$dst" || status=1
    else
      echo "quickstart: opt failed on $f" >&2; status=1
    fi
  done
  # The shipped agent, auto (its prior: datasets/policies/auto), on the suite;
  # every result is checked for equivalence and never worse than the default.
  echo "== hlogym eval --agent auto --suite ${SUITE#"$ROOT"/}"
  "$HLOGYM" eval --agent auto --suite "$SUITE" ||
    { echo "quickstart: eval failed" >&2; status=1; }
else
  echo "quickstart: skipping 'hlogym opt --pipeline=xla-cpu-default' and 'hlogym eval': no passes or no such pipeline yet"
fi
exit $status
