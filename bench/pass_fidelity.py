#!/usr/bin/env python3
"""Fidelity of hlogym's passes to XLA's (issue 5).

For every pass with (before, after) pairs from real XLA in
datasets/corpus/xla_pass_pairs/index.json, runs
    build/hlogym opt BEFORE --passes=<the pass with the same XLA name>
once (no fixed-point or pipeline context) and compares the op count of the
result with AFTER's (`hlogym stats --json`). Prints pairs, matches and the
match rate per pass, overall, and the passes with pairs that hlogym does not
register. Writes build/pass_fidelity.json.

    .venv/bin/python bench/pass_fidelity.py [--hlogym build/hlogym] [--json OUT]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = os.path.join(ROOT, "datasets", "corpus", "xla_pass_pairs")


def op_count(hlogym, path):
    out = subprocess.run([hlogym, "stats", path, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"stats {path}: {out.stderr.strip()}")
    data = json.loads(out.stdout)
    return (data[0] if isinstance(data, list) else data)["op_count"]


def run_pair(hlogym, pass_name, pair):
    before = os.path.join(PAIRS, "..", pair["before"])
    after = os.path.join(PAIRS, "..", pair["after"])
    row = {
        "module": pair["module"],
        "before": op_count(hlogym, before),
        "xla_after": op_count(hlogym, after),
    }
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "out.hlo")
        res = subprocess.run(
            [hlogym, "opt", before, f"--passes={pass_name}", "-o", out_path],
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            row["error"] = res.stderr.strip().splitlines()[-1:] or [f"exit {res.returncode}"]
            row["ours"] = None
        else:
            row["ours"] = op_count(hlogym, out_path)
    row["match"] = row["ours"] == row["xla_after"]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hlogym", default=os.path.join(ROOT, "build", "hlogym"))
    ap.add_argument("--json", default=os.path.join(ROOT, "build", "pass_fidelity.json"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()

    index = json.load(open(os.path.join(PAIRS, "index.json")))
    listed = json.loads(
        subprocess.run(
            [args.hlogym, "list-passes", "--json"], check=True, capture_output=True, text=True
        ).stdout
    )
    ours = {p["name"] for p in listed["passes"]}

    report = {"passes": {}, "missing": []}
    jobs = []
    with ThreadPoolExecutor(args.jobs) as pool:
        for name, pairs in sorted(index.items()):
            if name not in ours:
                report["missing"].append({"pass": name, "pairs": len(pairs)})
                continue
            jobs.append((name, [pool.submit(run_pair, args.hlogym, name, p) for p in pairs]))
        for name, futures in jobs:
            rows = [f.result() for f in futures]
            report["passes"][name] = {
                "pairs": len(rows),
                "matches": sum(r["match"] for r in rows),
                "rows": rows,
            }

    total = sum(p["pairs"] for p in report["passes"].values())
    matched = sum(p["matches"] for p in report["passes"].values())
    print(f"{'pass':34} pairs matches  rate   (before -> XLA after / ours, mismatches)")
    for name, p in report["passes"].items():
        bad = [
            f"{r['before']}->{r['xla_after']}/{r['ours'] if r['ours'] is not None else 'ERR'}"
            for r in p["rows"]
            if not r["match"]
        ]
        print(
            f"{name:34} {p['pairs']:5} {p['matches']:7} {p['matches'] / p['pairs']:6.0%}  "
            + " ".join(bad)
        )
    perfect = sum(p["matches"] == p["pairs"] for p in report["passes"].values())
    at90 = sum(p["matches"] >= 0.9 * p["pairs"] for p in report["passes"].values())
    print(
        f"overall: {matched}/{total} pairs match ({matched / max(total, 1):.1%}); "
        f"{at90}/{len(report['passes'])} passes at >= 90%"
    )
    if report["missing"]:
        print(
            "missing (pairs exist, hlogym does not register the pass): "
            + ", ".join(f"{m['pass']} ({m['pairs']})" for m in report["missing"])
        )
    report["overall"] = {
        "pairs": total,
        "matches": matched,
        "passes_at_90": at90,
        "passes_perfect": perfect,
    }
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {os.path.relpath(args.json, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
