#!/usr/bin/env bash
# The seed paper's Figure 2 / Figure 4 comparisons redone on hlogym's corpus:
# PPO, A2C, TRPO and DQN trained on the GPT-2 train split with the same step
# budget, PPO with each enhancement (reward shaping; a value function that
# also sees FLOPs and transcendentals), PPO trained on the diverse train split,
# every policy judged on test splits, and the search baselines at the same
# per-graph step budget as policy-guided search (plus greedy without a budget).
# Usage: bench/rl_compare.sh [OUT_DIR] [STEPS] [BUDGET]
#   OUT_DIR  runs and reports (default build/rl_compare)
#   STEPS    training steps per run (default 24576)
#   BUDGET   environment steps per graph for guided search and baselines (default 200)
# Writes OUT_DIR/summary.tsv and OUT_DIR/figure.png. Two trainings run at a
# time. Rerunning it resumes or skips finished trainings (their checkpoints).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/build/rl_compare}"
steps="${2:-24576}"
budget="${3:-200}"
hlogym="${HLOGYM:-$root/build/hlogym}"  # HLOGYM=path overrides the binary
mkdir -p "$out"
common=(--steps "$steps" --hidden 256,256 --envs 8 --threads 1 --checkpoint-every 4096 -q --no-plot)

train() {  # name, flags...
  local name="$1"; shift
  "$hlogym" train "${common[@]}" "$@" --out "$out/$name" >"$out/$name.train.txt" 2>&1
}
gpt2=(--suite gpt2 --split train)
train ppo --algo ppo "${gpt2[@]}" & train a2c --algo a2c "${gpt2[@]}" & wait
train trpo --algo trpo "${gpt2[@]}" & train dqn --algo dqn "${gpt2[@]}" & wait
train ppo_shaping --algo ppo --shaping "${gpt2[@]}" & train ppo_value_cost --algo ppo --value-cost "${gpt2[@]}" & wait
train ppo_diverse --algo ppo --suite diverse --split train

evaluate() {  # label, suite, agent, flags...
  local label="$1" suite="$2" agent="$3"; shift 3
  local file="$out/eval.$label.$suite.json"
  [ -s "$file" ] || "$hlogym" eval --agent "$agent" --suite "$suite" --split test --json -q "$@" >"$file"
}
for run in ppo a2c trpo dqn ppo_shaping ppo_value_cost; do
  evaluate "$run" gpt2 "policy:$out/$run"
done
evaluate ppo_guided gpt2 "policy:$out/ppo" --budget "$budget"
for algo in random greedy beam evo; do
  evaluate "$algo" gpt2 "$algo" --budget "$budget"
done
evaluate greedy_unbounded gpt2 greedy
evaluate ppo_diverse diverse "policy:$out/ppo_diverse"
evaluate ppo_diverse_guided diverse "policy:$out/ppo_diverse" --budget "$budget"
evaluate greedy diverse greedy --budget "$budget"
evaluate greedy_unbounded diverse greedy

"$root/.venv/bin/python" - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
lines = ["agent\tsuite\tgain_over_default\tshare_R_le_D\tsearch_seconds"]
for path in sorted(glob.glob(os.path.join(out, "eval.*.json"))):
    _, label, suite, _ = os.path.basename(path).split(".")
    s = json.load(open(path))["summary"]
    lines.append("%s\t%s\t%+.1f%%\t%.1f%%\t%.1f" % (label, suite, 100 * s["gain"], 100 * s["share_r_le_d"],
                                                  s["search_seconds"]))
open(os.path.join(out, "summary.tsv"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
"$root/.venv/bin/python" "$root/python/hlogym/plot.py" \
  "$out"/{ppo,a2c,trpo,dqn,ppo_shaping,ppo_value_cost}/curve.csv \
  --labels PPO,A2C,TRPO,DQN,"PPO+shaping","PPO+value-cost" -o "$out/figure.png"
