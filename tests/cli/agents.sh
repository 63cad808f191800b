#!/usr/bin/env bash
# search and eval: exit statuses, the table, --json, -o DIR (written modules
# are equivalent to the originals), bad input.
# Usage: agents.sh path/to/hlogym SOURCE_DIR
set -u
hlogym="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mlp="$src/datasets/smoke/mlp_train.hlo"
einsum="$src/datasets/smoke/einsum.hlo"

out="$("$hlogym" search --algo greedy --budget 60 --suite "$mlp" "$einsum" -q -o "$work/out")" \
  || fail "search greedy exited $?"
echo "$out" | grep -q "gain over xla-cpu-default" || fail "search: no summary: $out"
echo "$out" | grep -q "passes:" || fail "search: no pass sequences: $out"
echo "$out" | grep -q "equiv" || fail "search: results not checked: $out"
[ -f "$work/out/mlp_train.hlo" ] || fail "search -o: mlp_train.hlo missing"
[ -f "$work/out/mlp_train.record.json" ] || fail "search -o: record missing"
"$hlogym" verify "$work/out/mlp_train.hlo" >/dev/null || fail "written module does not verify"
"$hlogym" equiv "$mlp" "$work/out/mlp_train.hlo" >/dev/null || fail "written module not equivalent"

for algo in random beam evo; do
  "$hlogym" search --algo "$algo" --budget 40 --length 5 --beam-width 2 --beam-depth 3 \
    --population 4 --suite "$mlp" -q --seed 3 >"$work/$algo.txt" || fail "search $algo exited $?"
done
"$hlogym" search --algo random --budget 40 --length 5 --suite "$mlp" -q --seed 3 >"$work/random2.txt"
# Same seed, same budget: the same table apart from timings.
diff <(grep passes: "$work/random.txt") <(grep passes: "$work/random2.txt") >/dev/null \
  || fail "random search not deterministic per seed"

# A work budget: the search stops once the modules its passes ran on add up
# to it, and the report says so.
json="$("$hlogym" search --algo random --work 3000 --suite "$mlp" --json -q)" \
  || fail "search --work exited $?"
python3 - "$json" <<'PY' || fail "search --work: $json"
import json, sys
r = json.loads(sys.argv[1])
b = r["benchmarks"][0]
assert r["budget"]["work"] == 3000, r["budget"]
assert b["budget_exhausted"] and 3000 <= b["work"] < 3000 + 4 * b["I"], b
PY

json="$("$hlogym" eval --agent default --suite "$mlp" --json -q)" || fail "eval default exited $?"
python3 - "$json" <<'PY' || fail "eval --json: $json"
import json, sys
r = json.loads(sys.argv[1])
b = r["benchmarks"][0]
assert r["agent"] == "default"
assert b["R"] == b["D"] and b["valid"] and b["equivalence"] == "equivalent"
assert r["summary"]["r_le_d"] == 1
PY

# No agent named: the shipped one, auto, whose search has the default as a candidate (and the
# sequence its guide predicts as a start), so it never ends above it.
json="$("$hlogym" eval --suite "$mlp" --json -q)" || fail "eval (auto) exited $?"
python3 - "$json" <<'PY' || fail "eval auto --json: $json"
import json, sys
r = json.loads(sys.argv[1])
b = r["benchmarks"][0]
assert r["agent"] == "auto"
assert b["passes"] and b["R"] <= b["D"] < b["I"] and b["valid"]
assert r["summary"]["geomean_d_over_r"] >= 1.0
PY
# Its passes replay with `hlogym opt --passes` (pipeline names included).
passes="$(python3 -c 'import json,sys; print(",".join(json.loads(sys.argv[1])["benchmarks"][0]["passes"]))' "$json")"
"$hlogym" opt "$mlp" --passes="$passes" -o "$work/auto.hlo" || fail "opt --passes=$passes exited $?"
want="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["benchmarks"][0]["R"])' "$json")"
got="$("$hlogym" stats "$work/auto.hlo" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["op_count"])')"
[ "$got" = "$want" ] || fail "replayed auto passes give $got ops, eval said $want"

# eval --merge: the reports of parts of a suite give the whole suite's rows and summary.
"$hlogym" eval --agent greedy --budget 40 --suite "$mlp" "$einsum" --json -q > "$work/whole.json" ||
  fail "eval greedy (whole) exited $?"
"$hlogym" eval --agent greedy --budget 40 --suite "$mlp" --json -q > "$work/part1.json"
"$hlogym" eval --agent greedy --budget 40 --suite "$einsum" --json -q > "$work/part2.json"
"$hlogym" eval --merge "$work/part1.json" "$work/part2.json" --json > "$work/merged.json" ||
  fail "eval --merge exited $?"
python3 - "$work/whole.json" "$work/merged.json" <<'PY' || fail "eval --merge differs from the whole run"
import json, sys
whole, merged = (json.load(open(f)) for f in sys.argv[1:])
keys = ("benchmark", "I", "D", "R", "passes", "valid")
assert [{k: r[k] for k in keys} for r in whole["benchmarks"]] == \
       [{k: r[k] for k in keys} for r in merged["benchmarks"]]
for k in ("counted", "gain", "geomean_ratio", "r_le_d", "geomean_d_over_r", "failed"):
    assert whole["summary"][k] == merged["summary"][k], k
PY
"$hlogym" eval --agent auto --suite "$einsum" --json -q > "$work/other.json"
"$hlogym" eval --merge "$work/part1.json" "$work/other.json" 2> "$work/err.txt"
[ $? -eq 2 ] || fail "eval --merge of different agents should exit 2"
grep -q "different evaluations" "$work/err.txt" || fail "merge error unclear: $(cat "$work/err.txt")"
echo "not json" > "$work/bad.json"
"$hlogym" eval --merge "$work/bad.json" 2> "$work/err.txt"
[ $? -eq 2 ] && grep -q "bad.json" "$work/err.txt" || fail "eval --merge of a bad file: $(cat "$work/err.txt")"

# The shipped policy by its name, and by its path under the data root, from another folder.
hlogym_abs="$(cd "$(dirname "$hlogym")" && pwd)/$(basename "$hlogym")"
for spec in policy:ppo-gpt2 policy:datasets/policies/ppo-gpt2 auto:auto; do
  (cd "$work" && "$hlogym_abs" search --algo "$spec" --suite smoke/einsum -q --json > "$work/p.json") ||
    fail "search --algo $spec from another folder exited $?"
done
(cd "$work" && "$hlogym_abs" search --algo policy:no-such-policy --suite smoke/einsum -q) 2> "$work/err.txt"
[ $? -eq 2 ] || fail "search --algo policy:no-such-policy should exit 2"
grep -q "no-such-policy" "$work/err.txt" || fail "unknown policy not named: $(cat "$work/err.txt")"

if [ -f "$src/datasets/corpus/manifest.json" ]; then
  # The leave-families-out split: only modules of the manifest's held-out families.
  held="$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["heldout_families"]))' "$src/datasets/corpus/manifest.json")"
  "$hlogym" eval --agent default --suite diverse --split heldout --json -q >"$work/held.json" \
    || fail "eval --split heldout exited $?"
  python3 - "$work/held.json" "$held" <<'PY' || fail "--split heldout lists other families"
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
held = sys.argv[2].split()
assert len(rows) >= 50
for r in rows:
    assert any(r["name"].startswith(f + "_") for f in held), r["name"]
PY
fi

# A pipeline among a search's passes is a macro-action, as it is for auto.
"$hlogym" eval --agent greedy --passes cse,dce,xla-cpu-default --suite smoke/einsum --json -q \
  >"$work/macro.json" || fail "eval greedy with a pipeline among --passes exited $?"
python3 - "$work/macro.json" <<'PY' || fail "greedy refused a pipeline among its passes"
import json, sys
row = json.load(open(sys.argv[1]))["benchmarks"][0]
assert "error" not in row and row["R"] <= row["D"], row
PY

out="$("$hlogym" eval --agent greedy --suite smoke --budget 150 -q)" || fail "eval greedy smoke exited $?"
echo "$out" | grep -q "R <= D:" || fail "eval: no share line: $out"
echo "$out" | grep -q "gpt2_train" || fail "eval: smoke suite rows missing: $out"

"$hlogym" search --algo nope --suite "$mlp" -q >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown algo should exit 2"
"$hlogym" eval --suite "$work/nothing_here.hlo" -q >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || [ $rc -eq 2 ] || fail "missing benchmark should fail (got $rc)"
if [ ! -f "$src/datasets/corpus/manifest.json" ]; then
  "$hlogym" eval --suite gpt2 -q >/dev/null 2>"$work/err"
  [ $? -eq 2 ] || fail "corpus suite without a manifest should exit 2"
  grep -q manifest "$work/err" || fail "no manifest hint: $(cat "$work/err")"
fi

# Benchmarks given both with --suite and as arguments: an error, not the arguments alone
# (`--json FILE` reads FILE as a benchmark, since --json takes no value).
"$hlogym" eval --agent default --suite "$einsum" --json "$work/report.json" >"$work/out.txt" \
  2>"$work/err"
status=$?
[ "$status" -eq 2 ] || fail "--suite beside benchmark arguments: exit $status, want 2"
grep -q -- "--suite excludes benchmarks" "$work/err" || fail "no --suite error: $(cat "$work/err")"
[ ! -s "$work/out.txt" ] || fail "--suite beside arguments still evaluated: $(cat "$work/out.txt")"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "agents.sh: all passed"
