#!/usr/bin/env python3
"""hlogym's default pipeline against real XLA's (issues 5 and 19).

For every module of each dataset's manifest.json, D is the op count after
`hlogym opt --pipeline=xla-cpu-default` and X is the manifest's op count after
real XLA's target-independent pipeline. The datasets: the corpus
(datasets/corpus), XLA's optimized modules of corpus modules
(datasets/xla_optimized: fusions, non-default layouts) and PyTorch/XLA's
modules (datasets/pytorch: the third frontend) and large Flax training steps
(datasets/large_steps). Prints, per dataset,
the distribution of (D - X) / X, the share within 1% and 3% of X, the share
with D <= X and the per-family medians, then one row per class of module over every dataset
(frontend and its version, and the library that wrote it), so that a new class of miss shows up
as a row. Dataset folders (what `hlogym harvest` writes) are measured too. Writes
build/default_vs_xla.json.

    .venv/bin/python bench/default_vs_xla.py [--hlogym build/hlogym] [-j 2] [--json OUT]
        [--datasets corpus xla_optimized pytorch large_steps DIR...]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from multiprocessing import Pool

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS = {
    "corpus": os.path.join(ROOT, "datasets", "corpus"),
    "xla_optimized": os.path.join(ROOT, "datasets", "xla_optimized"),
    "pytorch": os.path.join(ROOT, "datasets", "pytorch"),
    "large_steps": os.path.join(ROOT, "datasets", "large_steps"),
}
# The distribution whose version names a frontend's class of modules.
FRONTEND_VERSION = {"jax": "jax", "tensorflow": "tensorflow", "pytorch": "torch_xla"}


def module_class(entry, versions, optimized):
    """A module's class: its frontend with that frontend's version, and the library that wrote
    it (a new frontend version or library shows up as a row of its own)."""
    frontend = entry.get("frontend") or "unknown"
    if optimized:  # XLA's own optimized modules of corpus modules
        return f"XLA-optimized (jaxlib {versions.get('jaxlib', '?')}), from {frontend}"
    key = FRONTEND_VERSION.get(frontend, frontend)
    version = versions.get(key) or versions.get(f"{key}-cpu") or "?"
    library = entry.get("library") or frontend
    return f"{frontend} {version}" + ("" if library in (frontend, "torch") else f", {library}")


HLOGYM = os.path.join(ROOT, "build", "hlogym")


def measure(item):
    dataset, name, entry = item
    path = os.path.join(DATASETS[dataset], entry["path"])
    row = {
        "dataset": dataset,
        "module": name,
        "family": entry["family"],
        "class": entry["class"],
        "I": entry["op_count"],
        "X": entry["X"],
    }
    if entry["X"] is None:  # a harvested module XLA gave no reference for
        why = "; ".join(entry.get("xla_problems", [])) or "no reason recorded"
        row["error"] = f"no X in the manifest ({why})"
        return row
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.hlo")
        res = subprocess.run(
            [HLOGYM, "opt", path, "--pipeline=xla-cpu-default", "-o", out],
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            row["error"] = (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1]
            return row
        stats = subprocess.run([HLOGYM, "stats", out, "--json"], capture_output=True, text=True)
        data = json.loads(stats.stdout)
        row["D"] = (data[0] if isinstance(data, list) else data)["op_count"]
    row["rel"] = (row["D"] - row["X"]) / row["X"]
    return row


def main():
    global HLOGYM
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hlogym", default=HLOGYM)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--json", default=os.path.join(ROOT, "build", "default_vs_xla.json"))
    ap.add_argument(
        "--datasets",
        nargs="+",
        default=list(DATASETS),
        help=f"shipped datasets ({', '.join(DATASETS)}) or dataset folders (hlogym harvest's)",
    )
    args = ap.parse_args()
    HLOGYM = args.hlogym

    items = []
    for dataset in args.datasets:
        if dataset not in DATASETS:
            if not os.path.isfile(os.path.join(dataset, "manifest.json")):
                sys.exit(f"{dataset}: not a shipped dataset nor a folder with a manifest.json")
            DATASETS[dataset] = os.path.abspath(dataset)
        manifest = json.load(open(os.path.join(DATASETS[dataset], "manifest.json")))
        versions = manifest.get("versions", {})
        # XLA's own optimized modules: the corpus's (datasets/xla_optimized) or an older XLA's
        # (datasets/probes/older_xla_optimized marks itself)
        optimized = "--xla-optimized" in manifest.get("generator", "") or manifest.get(
            "xla_optimized", False
        )
        for name, entry in sorted(manifest["modules"].items()):
            entry = dict(entry, **{"class": module_class(entry, versions, optimized)})
            items.append((dataset, name, entry))
    with Pool(args.jobs, initializer=_set_hlogym, initargs=(HLOGYM,)) as pool:
        rows = pool.map(measure, items, chunksize=1)
    report = {"rows": rows}
    for dataset in args.datasets:
        print(f"== {dataset} ({os.path.relpath(DATASETS[dataset], ROOT)})")
        report[dataset] = summarize([r for r in rows if r["dataset"] == dataset])
    print("== by class (frontend and version, library), every dataset")
    report["classes"] = by_class(rows)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {os.path.relpath(args.json, ROOT)}")


def summarize(rows):
    """Prints and returns the distribution of (D - X) / X over rows."""
    ok = [r for r in rows if "rel" in r]
    errors = [r for r in rows if "rel" not in r]
    rel = np.array([r["rel"] for r in ok])
    summary = {
        "modules": len(rows),
        "measured": len(ok),
        "errors": len(errors),
        "min": float(rel.min()),
        "p10": float(np.percentile(rel, 10)),
        "median": float(np.median(rel)),
        "p90": float(np.percentile(rel, 90)),
        "max": float(rel.max()),
        "within_1pct": float(np.mean(np.abs(rel) <= 0.01)),
        "within_3pct": float(np.mean(np.abs(rel) <= 0.03)),
        "d_le_x": float(np.mean([r["D"] <= r["X"] for r in ok])),
        "exact": int(sum(r["D"] == r["X"] for r in ok)),
        "sum_abs_d_minus_x": int(sum(abs(r["D"] - r["X"]) for r in ok)),
    }
    families = {}
    for fam in sorted({r["family"] for r in ok}):
        fr = np.array([r["rel"] for r in ok if r["family"] == fam])
        families[fam] = {
            "modules": len(fr),
            "median": float(np.median(fr)),
            "within_1pct": float(np.mean(np.abs(fr) <= 0.01)),
            "within_3pct": float(np.mean(np.abs(fr) <= 0.03)),
            "min": float(fr.min()),
            "max": float(fr.max()),
        }

    print(
        f"modules: {summary['measured']}/{summary['modules']} measured, {len(errors)} errors, "
        f"{summary['exact']} with D = X"
    )
    print(
        "(D - X) / X: "
        + ", ".join(f"{k} {summary[k]:+.1%}" for k in ("min", "p10", "median", "p90", "max"))
    )
    print(
        f"within 1% of X: {summary['within_1pct']:.1%}   within 3%: "
        f"{summary['within_3pct']:.1%}   D <= X: {summary['d_le_x']:.1%}"
    )
    print(f"{'family':18} {'n':>4} {'median':>8} {'<=1%':>6} {'<=3%':>6} {'min':>8} {'max':>8}")
    for fam, f in families.items():
        print(
            f"{fam:18} {f['modules']:4} {f['median']:+8.1%} {f['within_1pct']:6.0%} "
            f"{f['within_3pct']:6.0%} {f['min']:+8.1%} {f['max']:+8.1%}"
        )
    for r in errors[:10]:
        print(f"error: {r['module']}: {r['error']}")
    return {"summary": summary, "families": families}


def by_class(rows):
    """Prints and returns, per module class, how many modules and how many within 1% of X."""
    classes = {}
    print(f"{'class':48} {'n':>4} {'D = X':>6} {'<=1%':>6} {'max |D - X| / X':>16}")
    for cls in sorted({r["class"] for r in rows}):
        ok = [r for r in rows if r["class"] == cls and "rel" in r]
        if not ok:
            continue
        rel = np.abs([r["rel"] for r in ok])
        classes[cls] = {
            "modules": len(ok),
            "exact": int(sum(r["D"] == r["X"] for r in ok)),
            "within_1pct": int(np.sum(rel <= 0.01)),
            "max_abs": float(rel.max()),
        }
        c = classes[cls]
        print(f"{cls:48} {c['modules']:4} {c['exact']:6} {c['within_1pct']:6} {c['max_abs']:16.1%}")
    return classes


def _set_hlogym(path):
    global HLOGYM
    HLOGYM = path


if __name__ == "__main__":
    sys.exit(main())
