#!/usr/bin/env bash
# train: a run killed with SIGKILL resumes from its last checkpoint and ends
# with one continuous learning curve; the policy it writes evaluates (a gnn
# policy too); bad input is refused without touching the user's files.
# Usage: train.sh path/to/hlogym SOURCE_DIR
set -u
hlogym="$1"
src="$2"
work="$(mktemp -d)"
trap 'kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
pid=0
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mlp="$src/datasets/smoke/mlp_train.hlo"
small=(--suite "$mlp" --passes algsimp,cse,dce,sharding-remover --traj-limit 4 --hidden 32
       --envs 2 --threads 1 --rollout 32 --minibatch 16 --epochs 2 --checkpoint-every 64 --no-plot -q)

# A long run, killed once its first checkpoint is committed.
"$hlogym" train "${small[@]}" --steps 1000000 --out "$work/run" >"$work/killed.txt" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [ -f "$work/run/checkpoint.json" ] && break
  sleep 0.1
done
[ -f "$work/run/checkpoint.json" ] || fail "no checkpoint within 60 s"
sleep 0.5
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
checkpointed="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' "$work/run/checkpoint.json")"
[ "$checkpointed" -ge 64 ] || fail "checkpoint at step $checkpointed"

target=$((checkpointed + 128))
out="$("$hlogym" train "${small[@]}" --steps "$target" --out "$work/run")" || fail "resume exited $?: $out"
echo "$out" | grep -q "resumed from $checkpointed" || fail "did not resume from $checkpointed: $out"
python3 - "$work/run/curve.csv" "$target" <<'PY' || fail "curve not continuous"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
steps = [int(r["steps"]) for r in rows]
assert steps == sorted(set(steps)), steps
assert steps[-1] == int(sys.argv[2]), steps
PY
[ -f "$work/run/policy.pt" ] && [ -f "$work/run/policy.json" ] || fail "no policy files"

# The trained policy is an agent for eval (its results are checked for equivalence).
"$hlogym" eval --agent "policy:$work/run" --suite "$mlp" -q >"$work/eval.txt" || fail "eval policy exited $?"
grep -q "gain over xla-cpu-default" "$work/eval.txt" || fail "eval policy: no summary"
# It says whether its own steps went below its start states (here: the module as it came).
grep -qE "the policy's own steps went below its start states on [01] of 1 " "$work/eval.txt" ||
  fail "eval policy: no line on its own steps: $(cat "$work/eval.txt")"
"$hlogym" eval --agent auto --suite "$mlp" -q >"$work/eval_auto.txt" || fail "eval auto exited $?"
! grep -q "the policy's own steps" "$work/eval_auto.txt" || fail "eval auto: a policy's line"

# A gnn policy trains and evaluates the same way (policy-beam: batched graphs).
"$hlogym" train "${small[@]}" --network gnn --gnn-dim 8 --steps 64 --out "$work/gnn" >/dev/null || fail "gnn train exited $?"
"$hlogym" eval --agent "policy-beam:$work/gnn" --suite "$mlp" -q >"$work/eval_gnn.txt" || fail "eval gnn policy exited $?"
grep -q "gain over xla-cpu-default" "$work/eval_gnn.txt" || fail "eval gnn policy: no summary"

# --sequences coreset: the shipped coreset's sequences are actions, first, each one
# pass name that joins its passes with '+'; the policy evaluates.
"$hlogym" train "${small[@]}" --sequences coreset --steps 32 --out "$work/seq" >/dev/null || fail "--sequences train exited $?"
python3 - "$work/seq/policy.json" "$src/datasets/policies/coreset/coreset.json" <<'PY' || fail "--sequences: not the coreset's sequences first"
import json, sys
actions = json.load(open(sys.argv[1]))["actions"]
sequences = ["+".join(s) for s in json.load(open(sys.argv[2]))["sequences"]]
assert actions == sequences + ["algsimp", "cse", "dce", "sharding-remover"], actions
PY
"$hlogym" eval --agent "policy:$work/seq" --suite "$mlp" -q >"$work/eval_seq.txt" || fail "eval --sequences policy exited $?"
grep -q "gain over xla-cpu-default" "$work/eval_seq.txt" || fail "eval --sequences policy: no summary"
"$hlogym" train "${small[@]}" --sequences "$work/nothing" --out "$work/z" 2>"$work/err.txt"
[ $? -eq 2 ] || fail "missing coreset: expected exit 2"
grep -q -- "--sequences $work/nothing" "$work/err.txt" || fail "missing coreset: unclear error: $(cat "$work/err.txt")"
[ ! -e "$work/z" ] || fail "missing coreset: wrote $work/z"

# Bad input: exit 2, nothing written over.
mkdir -p "$work/occupied" && echo keep >"$work/occupied/notes.txt"
"$hlogym" train "${small[@]}" --steps 64 --out "$work/occupied" 2>"$work/err.txt"
[ $? -eq 2 ] || fail "non-run directory: expected exit 2"
[ "$(cat "$work/occupied/notes.txt")" = keep ] || fail "notes.txt changed"
"$hlogym" train --algo sarsa --suite "$mlp" --out "$work/x" 2>/dev/null
[ $? -eq 2 ] || fail "unknown algorithm: expected exit 2"
"$hlogym" train --network transformer --suite "$mlp" --out "$work/y" 2>"$work/err.txt"
[ $? -eq 2 ] || fail "unknown network: expected exit 2"
grep -q "unknown network 'transformer' (expected one of mlp, gnn)" "$work/err.txt" || fail "unknown network: unclear error: $(cat "$work/err.txt")"
[ ! -e "$work/y" ] || fail "unknown network: wrote $work/y"
"$hlogym" eval --agent "policy:$work/nothing" --suite "$mlp" -q 2>"$work/err.txt"
[ $? -eq 2 ] || fail "missing policy: expected exit 2"
grep -q "policy.json" "$work/err.txt" || fail "missing policy: unclear error: $(cat "$work/err.txt")"

[ "$failures" -eq 0 ] && echo "train.sh: all passed"
exit "$failures"
