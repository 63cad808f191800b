#!/usr/bin/env python3
"""Agents on the corpus's largest graphs (training steps of 5,000 instructions and more), by where
each graph stands in the leave-families-out protocol: a held-out family, the test split, or the
train split (what the shipped agents were trained on).

    .venv/bin/python bench/large_graphs.py [--min-ops 5000] [--hlogym build/hlogym]

Prints geomean(D/R), R <= D and the median and largest search time per graph for auto (shipped,
guided by the coreset), auto without its guide, and greedy search without a budget.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENTS = [
    ("auto (shipped)", "auto"),
    ("auto without its guide", "auto:" + os.path.join(ROOT, "datasets", "policies", "auto")),
    ("greedy, no budget", "greedy"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-ops", type=int, default=5000)
    ap.add_argument("--hlogym", default=os.path.join(ROOT, "build", "hlogym"))
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(ROOT, "datasets", "corpus", "manifest.json")))
    heldout = set(manifest.get("heldout_families", []))
    where = {}
    for name, entry in manifest["modules"].items():
        if (entry.get("op_count") or 0) >= args.min_ops:
            where[name] = "held-out family" if entry["family"] in heldout else entry["split"]
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as suite:
        suite.write("".join(f"corpus/{name}\n" for name in sorted(where)))
        suite.flush()
        print(
            "| agent | graphs | n | geomean(D/R) | R <= D | search time per graph (median / max) |"
        )
        print("|---|---|---|---|---|---|")
        for label, agent in AGENTS:
            out = subprocess.run(
                [args.hlogym, "eval", "--agent", agent, "--suite", suite.name, "--json", "-q"],
                capture_output=True,
                text=True,
            )
            if out.returncode not in (0, 1):
                sys.exit(f"hlogym eval --agent {agent}: exit {out.returncode}\n{out.stderr}")
            rows = [b for b in json.loads(out.stdout)["benchmarks"] if "error" not in b]
            for group in ("held-out family", "test", "train"):
                mine = [b for b in rows if where[b["name"]] == group]
                if not mine:
                    continue
                geomean = math.exp(sum(math.log(b["D"] / b["R"]) for b in mine) / len(mine))
                times = [b["seconds"] for b in mine]
                print(
                    f"| {label} | {group} | {len(mine)} | {geomean:.3f} | "
                    f"{sum(b['R'] <= b['D'] for b in mine)}/{len(mine)} | "
                    f"{statistics.median(times):.2f} / {max(times):.2f} s |"
                )


if __name__ == "__main__":
    main()
