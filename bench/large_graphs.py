#!/usr/bin/env python3
"""Agents on large training steps: the corpus's largest graphs (5,000 instructions and more) by
where each stands in the leave-families-out protocol (a held-out family, the test split, or the
train split the shipped agents were trained on), and datasets/large_steps (Flax ResNet and ViT
training steps of 5,000-10,000 instructions, no family of which any agent trained on).

    .venv/bin/python bench/large_graphs.py [--min-ops 5000] [--hlogym build/hlogym]

Prints geomean(D/R), R <= D, not judged, the total search time and the median and largest time
per graph, validation included, for auto (shipped, guided by the coreset), auto without its
guide, and greedy search without a budget over the same passes as auto (every registered pass
but those that change numeric precision, which auto leaves out by default).
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


def run_eval(hlogym, agent, suite, extra=()):
    out = subprocess.run(
        [hlogym, "eval", "--agent", agent, "--suite", suite, "--json", "-q", *extra],
        capture_output=True,
        text=True,
    )
    if out.returncode not in (0, 1):
        sys.exit(f"hlogym eval --agent {agent}: exit {out.returncode}\n{out.stderr}")
    return json.loads(out.stdout)["benchmarks"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-ops", type=int, default=5000)
    ap.add_argument("--hlogym", default=os.path.join(ROOT, "build", "hlogym"))
    args = ap.parse_args()
    listed = json.loads(
        subprocess.run(
            [args.hlogym, "list-passes", "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    exact = ",".join(p["name"] for p in listed["passes"] if not p["changes_numeric_precision"])
    agents = [
        ("auto (shipped)", "auto", ()),
        (
            "auto without its guide",
            "auto:" + os.path.join(ROOT, "datasets", "policies", "auto"),
            (),
        ),
        ("greedy, no budget, auto's passes", "greedy", ("--passes", exact)),
    ]
    manifest = json.load(open(os.path.join(ROOT, "datasets", "corpus", "manifest.json")))
    heldout = set(manifest.get("heldout_families", []))
    where = {}
    for name, entry in manifest["modules"].items():
        if (entry.get("op_count") or 0) >= args.min_ops:
            where[name] = (
                "corpus, held-out family"
                if entry["family"] in heldout
                else (f"corpus, {entry['split']} split")
            )
    large = json.load(open(os.path.join(ROOT, "datasets", "large_steps", "manifest.json")))
    for name in large["modules"]:
        where[name] = "large_steps (held out)"
    groups = ["corpus, held-out family", "corpus, test split", "corpus, train split"]
    groups.append("large_steps (held out)")
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as suite:
        suite.write("".join(f"corpus/{n}\n" for n in sorted(where) if n in manifest["modules"]))
        suite.write("".join(f"large_steps/{n}\n" for n in sorted(large["modules"])))
        suite.flush()
        print(
            "| agent | graphs | n | geomean(D/R) | R <= D | not judged | search time "
            "(total) | per graph, validation included (median / max) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for label, agent, extra in agents:
            rows = [b for b in run_eval(args.hlogym, agent, suite.name, extra) if "error" not in b]
            for group in groups:
                mine = [b for b in rows if where[b["name"]] == group]
                if not mine:
                    continue
                geomean = math.exp(sum(math.log(b["D"] / b["R"]) for b in mine) / len(mine))
                times = [b["seconds"] + b["validate_seconds"] for b in mine]
                undecided = sum(b["equivalence"].startswith("undecided") for b in mine)
                print(
                    f"| {label} | {group} | {len(mine)} | {geomean:.3f} | "
                    f"{sum(b['R'] <= b['D'] for b in mine)}/{len(mine)} | {undecided} | "
                    f"{sum(b['seconds'] for b in mine):.1f} s | "
                    f"{statistics.median(times):.2f} / {max(times):.2f} s |"
                )


if __name__ == "__main__":
    main()
