#!/usr/bin/env python3
"""The agent tables of docs/agents.md: the shipped agent (auto) against auto without its guide,
the coreset agent alone (one rollout, no search) and greedy search without a budget.

    .venv/bin/python bench/agent_tables.py [--hlogym build/hlogym] [--out build/agent_tables]
        [--only auto coreset ...]                        # the rows of these agents (first word)
    .venv/bin/python bench/agent_tables.py --ablation    # auto's design choices, held-out families

Runs `hlogym eval --json` for each agent on each suite (the leave-families-out test set of families
no agent trained on and its TensorFlow part, XLA's own optimized modules of corpus graphs
(datasets/xla_optimized), PyTorch/XLA's modules (datasets/pytorch), the corpus's by-configuration
test split, its GPT-2 part, and the smoke modules, which are not corpus families either) and prints
one markdown table with the paper's gain over xla-cpu-default, geomean(D/R), the share with R <= D
and R <= X, failed graphs, not-judged equivalence checks and the search time per graph. The JSON
reports stay in --out.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TF_FAMILIES = [
    os.path.join(ROOT, "datasets", "corpus", f)
    for f in ("tf_mobilenetv2", "tf_bert", "tf_rnn", "tf_dlrm")
]
SUITES = [
    ("held-out families (never trained on)", ["diverse", "--split", "heldout"]),
    ("their TensorFlow part (a frontend never trained on)", TF_FAMILIES),
    (
        "XLA's optimized modules (fusions, layouts; never trained on)",
        [os.path.join(ROOT, "datasets", "xla_optimized")],
    ),
    (
        "PyTorch/XLA's modules (a third frontend, never trained on)",
        [os.path.join(ROOT, "datasets", "pytorch")],
    ),
    ("by-configuration test split", ["diverse", "--split", "test"]),
    ("GPT-2 test split", ["gpt2", "--split", "test"]),
    ("smoke modules (not corpus families)", ["smoke"]),
]
AGENTS = [
    ("auto (shipped)", ["--agent", "auto"]),
    (
        "auto without its guide",
        ["--agent", "auto:" + os.path.join(ROOT, "datasets", "policies", "auto")],
    ),
    ("coreset (one rollout, no search)", ["--agent", "coreset"]),
    ("greedy, no budget", ["--agent", "greedy"]),
]


def run(hlogym, agent_args, suite_args, out):
    r = subprocess.run(
        [hlogym, "eval", *agent_args, "--suite", *suite_args, "--json", "-q"],
        capture_output=True,
        text=True,
    )
    if r.returncode not in (0, 1):  # 1: some benchmark failed, which the table shows
        sys.exit(
            f"hlogym eval {' '.join(agent_args + suite_args)}: exit {r.returncode}\n{r.stderr}"
        )
    with open(out, "w") as f:
        f.write(r.stdout)
    return json.loads(r.stdout)


def row(name, suite, report):
    s = report["summary"]
    rows = [b for b in report["benchmarks"] if "error" not in b]
    times = [b["seconds"] for b in rows]
    not_judged = sum(b["equivalence"].startswith("undecided") for b in rows)
    gain = "n/a" if s["gain"] is None else f"{100 * s['gain']:+.1f}%"
    if s["gain"] is not None and s["counted"] < s["benchmarks"]:
        # the paper's metric leaves out graphs where the default does not lower the op count
        gain += f" ({s['counted']} counted)"
    return (
        f"| {name} | {suite} | {s['benchmarks'] + s['failed']} | {gain} | "
        f"{s['geomean_d_over_r']:.3f} | {s['r_le_d']}/{s['benchmarks']} | "
        f"{s['r_le_x']}/{s['with_x']} | {s['failed']} | {not_judged} | "
        f"{statistics.median(times):.2f} / {max(times):.2f} s |"
    )


def ablation_agents(out):
    """auto's design choices, one changed at a time (on the held-out families)."""
    # An empty prior beside the shipped guide (auto:DIR reads DIR/coreset.json).
    empty = os.path.join(out, "empty_prior")
    os.makedirs(empty, exist_ok=True)
    with open(os.path.join(empty, "prior.json"), "w") as f:
        f.write('{"actions": []}\n')
    shutil.copy(os.path.join(ROOT, "datasets", "policies", "auto-guide", "coreset.json"), empty)
    return [
        ("auto (shipped)", ["--agent", "auto"]),
        (
            "auto without its guide",
            ["--agent", "auto:" + os.path.join(ROOT, "datasets", "policies", "auto")],
        ),
        ("auto without the learned prior (every action every round)", ["--agent", "auto:" + empty]),
        ("auto with 5 times the work (1,000,000)", ["--agent", "auto", "--work", "1000000"]),
        ("auto, excess precision allowed", ["--agent", "auto", "--allow-excess-precision"]),
        ("greedy from I, no budget", ["--agent", "greedy"]),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hlogym", default=os.path.join(ROOT, "build", "hlogym"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "agent_tables"))
    ap.add_argument(
        "--ablation",
        action="store_true",
        help="instead: auto's design choices on the held-out families",
    )
    ap.add_argument("--only", nargs="+", help="only the agents whose label starts with these")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lines = [
        "| agent | graphs | n | gain over default | geomean(D/R) | R <= D | R <= X | failed "
        "| not judged | search time per graph (median / max) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    suites, agents = SUITES, AGENTS
    if args.ablation:
        suites, agents = SUITES[:1], ablation_agents(args.out)
    if args.only:
        agents = [a for a in agents if a[0].split()[0] in args.only]
    for i, (suite, suite_args) in enumerate(suites):
        for agent, agent_args in agents:
            tag = f"{i}_" + "_".join(
                os.path.basename(a).strip("-") for a in agent_args + suite_args
            )
            report = run(args.hlogym, agent_args, suite_args, os.path.join(args.out, tag + ".json"))
            lines.append(row(agent, suite, report))
            print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
