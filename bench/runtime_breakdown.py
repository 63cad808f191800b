#!/usr/bin/env python3
"""Where a run-time speed-up comes from: an `hlogym.xla_bench --json` report by kind of graph.

    .venv/bin/python bench/runtime_breakdown.py REPORT.json[.gz] [--versus OTHER.json[.gz]]

Prints, for each speed-up of the report (default over original, agent over original, ...), the
geometric mean over the graphs of each group: by number type (bf16, f16, f32; from the module
name), training step or inference, and families that no agent trained on (the manifest's
heldout_families) or the others. Modules not in the corpus manifest (PyTorch/XLA, smoke) count
in the "other frontend" group.

--versus OTHER compares the two reports' run times on the graphs both hold, by number type: how
much slower each variant ran in OTHER than in REPORT (geomean of the median times' ratio), and
the default-over-original speed-up in each.
"""

import argparse
import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from hlogym.xla_bench import SPEEDUPS, corpus_dir, corpus_manifest, geomean  # noqa: E402


def read_report(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def number_type(module: str) -> str:
    return "bf16" if "_bf16" in module else "f16" if "_f16" in module else "f32"


def groups(module: str, manifest: dict, heldout: set) -> list[str]:
    out = [number_type(module), "train" if "_train_" in module else "infer"]
    entry = manifest.get(module)
    if entry is None:
        out.append("other frontend")
    else:
        out.append("held-out families" if entry["family"] in heldout else "trained-on families")
    return out + ["all"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--versus", metavar="OTHER")
    args = ap.parse_args(argv)
    try:
        report = read_report(args.report)
        other = read_report(args.versus) if args.versus else None
    except (OSError, ValueError) as e:
        raise SystemExit(f"runtime_breakdown: {e}") from None
    manifest = corpus_manifest()
    heldout = set(json.loads((corpus_dir() / "manifest.json").read_text())["heldout_families"])
    for key in SPEEDUPS:
        by_group = defaultdict(list)
        for m in report["modules"]:
            if key in m.get("speedups", {}):
                for g in groups(m["module"], manifest, heldout):
                    by_group[g].append(m["speedups"][key]["ratio"])
        if by_group:
            cells = ", ".join(
                f"{g} {geomean(v):.3f}x ({len(v)})" for g, v in sorted(by_group.items())
            )
            print(f"{key}: {cells}")
    if other:
        theirs = {m["module"]: m for m in other["modules"] if "median_s" in m}
        by_type = defaultdict(list)
        for m in report["modules"]:
            if m["module"] in theirs and "median_s" in m:
                pair = (m["median_s"], theirs[m["module"]]["median_s"])
                by_type[number_type(m["module"])].append(pair)
        for t, pairs in sorted(by_type.items()):
            slower = {v: geomean([o[v] / h[v] for h, o in pairs]) for v in ("original", "default")}
            here = geomean([h["original"] / h["default"] for h, _ in pairs])
            there = geomean([o["original"] / o["default"] for _, o in pairs])
            print(
                f"{t} ({len(pairs)} graphs in both): original {slower['original']:.2f}x and "
                f"default {slower['default']:.2f}x slower in OTHER; default over original "
                f"{here:.3f}x here, {there:.3f}x in OTHER"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
