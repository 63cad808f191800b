"""Every learned agent of docs/agents.md's deep-RL tables, judged the same way, by one command: each
row is a bench/rl_heldout.py run (5 seeds trained on the corpus's --split train-seen, each seed's
one rollout judged on the held-out families, PyTorch/XLA's modules and XLA's optimized modules,
rliable's IQM with a 95% stratified-bootstrap interval), then one Markdown table of them all.

    .venv/bin/python bench/rl_tables.py [--rows ppo,a2c,...] [--seeds 5] [--out build/rl_heldout]

Each row keeps its runs in OUT/<row>/ and reuses them when the command runs again, so a second run
only prints (a row's runs are redone when its flags change: delete its folder). The rows:
  coreset       the coreset of sequences with normalized value prediction (Liang et al.)
  ppo           PPO over the coreset's sequences (the shipped policy:generalist's recipe)
  a2c, trpo     the same settings with A2C and TRPO
  dqn           DQN with the same action space, starts, reward and features
  ppo-shaping   PPO plus the seed paper's potential-based reward shaping (--shaping)
  ppo-value-cost PPO plus the paper's value function that also sees the cost (--value-cost)
  ppo-gnn       PPO with the graph network (--network gnn), at --gnn-steps (8192; it trains about 16
                times slower than the MLP here)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEQUENCE_FLAGS = [
    "--start",
    "initial,xla-cpu-default,coreset",
    "--traj-limit",
    "5",
    "--reward",
    "lowest_op_count_log_ratio",
    "--features",
    "relative",
    "--sequences",
    "coreset",
    "--passes",
    "xla-cpu-default,xla-cpu-default-exact,computation-deduplicator,cse,dce,algsimp,"
    "xla-cpu-simplification",
]
# row: (label, algo, extra train flags, curve points)
ROWS = {
    "coreset": ("coreset (Liang et al.)", "coreset", [], 4),
    "ppo": ("PPO over sequences (`policy:generalist`)", "ppo", SEQUENCE_FLAGS, 3),
    "a2c": ("A2C over sequences", "a2c", SEQUENCE_FLAGS, 1),
    "trpo": ("TRPO over sequences", "trpo", SEQUENCE_FLAGS, 1),
    "dqn": ("DQN over sequences", "dqn", SEQUENCE_FLAGS, 1),
    "ppo-shaping": ("PPO + reward shaping", "ppo", [*SEQUENCE_FLAGS, "--shaping"], 1),
    "ppo-value-cost": ("PPO + value sees cost", "ppo", [*SEQUENCE_FLAGS, "--value-cost"], 1),
    "ppo-gnn": ("PPO, graph network", "ppo", [*SEQUENCE_FLAGS, "--network", "gnn"], 1),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rows", default=",".join(ROWS), help="comma-separated, from: " + ", ".join(ROWS)
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=49152)
    parser.add_argument("--gnn-steps", type=int, default=8192)
    parser.add_argument("--out", type=Path, default=REPO / "build" / "rl_heldout")
    parser.add_argument("--hlogym", type=Path, default=REPO / "build" / "hlogym")
    args = parser.parse_args()
    rows = args.rows.split(",")
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; known: {', '.join(ROWS)}")

    table = [
        "| agent, 5 seeds | steps | graphs | IQM D/R [95% CI] | geomean(D/R) per seed | R <= D | "
        "fell back to D | failed | the policy's own steps lowest | time per graph (median) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        label, algo, flags, curve_points = ROWS[row]
        steps = args.gnn_steps if row == "ppo-gnn" else args.steps
        out = args.out / row
        subprocess.run(
            [
                sys.executable,
                str(REPO / "bench" / "rl_heldout.py"),
                "--algo",
                algo,
                "--seeds",
                str(args.seeds),
                "--steps",
                str(steps),
                "--curve-points",
                str(curve_points),
                "--out",
                str(out),
                "--hlogym",
                str(args.hlogym),
                "--",
                *flags,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        summary = json.loads((out / "summary.json").read_text())
        for k, (graphs, s) in enumerate(summary["sets"].items()):
            iqm, lo, hi = s["iqm_d_over_r"]
            per_seed = ", ".join(f"{x:.4f}" for x in s["geomean_d_over_r_per_seed"])
            n = s["evaluated"]
            first = (label, "-" if algo == "coreset" else str(steps)) if k == 0 else ("", "")
            # Answers below every state of the policy's starts (a coreset has no steps of its own).
            own = "-" if algo == "coreset" else f"{s['below_starts']}/{n}"
            table.append(
                f"| {first[0]} | {first[1]} | {graphs} | {iqm:.3f} [{lo:.3f}, {hi:.3f}] | "
                f"{per_seed} | {s['r_le_d']}/{n} | {s['fell_back']}/{n} | {s['failed']} | "
                f"{own} | {s['median_seconds']:.2f} s |"
            )
        print(f"{row}: done", file=sys.stderr, flush=True)
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
