"""A run-time cost model from measured (module, pass sequence, run time) samples, judged on
families it was not fitted on.

    .venv/bin/python bench/runtime_cost_model.py REPORT.json [REPORT.json ...] [--json OUT]

REPORTs are `python -m hlogym.xla_bench --objective runtime --json` reports: for every module
they hold the candidates' pass sequences and the median XLA run time of each, measured against
each other in paired rounds (row["selection"]). Each (module, candidate) is a sample; its
features are what the gym observes of the candidate's text (`hlogym stats`: FLOPs,
transcendentals, bytes accessed, op count and the opcode histogram, by opcode class). The model
is a ridge regression of log(run time) on those features. It is judged by leaving one family
out at a time (fitted on the others, predicting it):

  - across samples: Spearman's rank correlation of predicted and measured run time (mostly
    says that larger graphs take longer);
  - within a module: the rank correlation over its candidates (what choosing a sequence
    needs), averaged over modules with at least three distinct candidates, and how often the
    candidate the model ranks first is the measured fastest.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from hlogym.xla_bench import Hlogym, corpus_manifest  # noqa: E402

# Opcode classes whose share of the op count is a feature (the rest is elementwise and such).
OPCODE_CLASSES = {
    "data movement": (
        "transpose",
        "copy",
        "reshape",
        "broadcast",
        "concatenate",
        "slice",
        "dynamic-slice",
        "dynamic-update-slice",
        "pad",
        "reverse",
        "gather",
        "scatter",
    ),
    "type change": ("convert", "bitcast-convert"),
    "contraction": ("dot", "convolution"),
    "reduction": ("reduce", "reduce-window", "select-and-scatter", "sort"),
    "control": ("while", "conditional", "call", "custom-call"),
}


def features(stats: dict) -> list[float]:
    hist, n = stats["opcode_histogram"], max(1, stats["op_count"])
    shares = [sum(hist.get(op, 0) for op in ops) / n for ops in OPCODE_CLASSES.values()]
    return [
        math.log1p(stats["flops"]),
        math.log1p(stats["transcendentals"]),
        math.log1p(stats["bytes_accessed"]),
        math.log(n),
        *shares,
    ]


FEATURE_NAMES = [
    "log flops",
    "log transcendentals",
    "log bytes accessed",
    "log op count",
    *(f"share {k}" for k in OPCODE_CLASSES),
]


def samples(reports: list[dict], hg: Hlogym) -> list[dict]:
    """One sample per (module, distinct candidate) with a measured median."""
    families = {name: entry["family"] for name, entry in corpus_manifest().items()}
    out = []
    for run, report in enumerate(reports):
        for row in report["modules"]:
            sel = row.get("selection")
            if not sel:
                continue
            path = ROOT / row["path"]
            for name, seconds in sel["median_s"].items():
                passes = row["candidates"][name]
                text = hg.opt(path, passes)
                stats = json.loads(hg("stats", "-", "--json", stdin=text))[0]
                out.append(
                    {
                        "run": run,
                        "module": row["module"],
                        "family": families[row["module"]],
                        "candidate": name,
                        "seconds": seconds,
                        "x": features(stats),
                    }
                )
    return out


def fit(x: np.ndarray, y: np.ndarray, ridge: float = 1e-2):
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / std])
    w = np.linalg.solve(z.T @ z + ridge * np.eye(z.shape[1]), z.T @ y)
    return lambda q: np.hstack([np.ones((len(q), 1)), (q - mean) / std]) @ w


def leave_family_out(data: list[dict]) -> np.ndarray:
    x = np.array([d["x"] for d in data])
    y = np.log([d["seconds"] for d in data])
    fams = np.array([d["family"] for d in data])
    pred = np.empty_like(y)
    for f in sorted(set(fams)):
        held = fams == f
        pred[held] = fit(x[~held], y[~held])(x[held])
    return pred


def judge(data: list[dict], pred: np.ndarray) -> dict:
    seconds = np.array([d["seconds"] for d in data])
    by_module: dict[tuple, list[int]] = {}  # a module's candidates, as one run measured them
    for i, d in enumerate(data):
        by_module.setdefault((d["run"], d["module"]), []).append(i)
    within, top1 = [], []
    for idx in by_module.values():
        if len(idx) < 3:
            continue
        rho = spearmanr(pred[idx], seconds[idx]).statistic
        if not math.isnan(rho):
            within.append(rho)
        top1.append(int(np.argmin(pred[idx]) == np.argmin(seconds[idx])))
    return {
        "samples": len(data),
        "modules": len({d["module"] for d in data}),
        "families": len({d["family"] for d in data}),
        "spearman_across_samples": float(spearmanr(pred, seconds).statistic),
        "modules_with_3_or_more_candidates": len(top1),
        "mean_spearman_within_module": float(np.mean(within)) if within else None,
        "top1_is_fastest": float(np.mean(top1)) if top1 else None,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+", help="xla_bench --objective runtime --json reports")
    ap.add_argument("--json", help="write the samples, predictions and scores here")
    args = ap.parse_args(argv)
    reports = [json.loads(Path(p).read_text()) for p in args.reports]
    data = samples(reports, Hlogym())
    if len({d["family"] for d in data}) < 2:
        raise SystemExit("runtime_cost_model: need samples from at least two families")
    pred = leave_family_out(data)
    scores = judge(data, pred)
    print(
        f"# {scores['samples']} samples, {scores['modules']} modules, {scores['families']} "
        "families; leave-one-family-out"
    )
    print(f"# Spearman across samples: {scores['spearman_across_samples']:.3f}")
    if scores["top1_is_fastest"] is not None:
        print(
            f"# within a module ({scores['modules_with_3_or_more_candidates']} modules with 3+ "
            f"candidates): mean Spearman {scores['mean_spearman_within_module']:.3f}, "
            f"top-ranked is the measured fastest {scores['top1_is_fastest']:.0%}"
        )
    if args.json:
        for d, p in zip(data, pred):
            d["predicted_seconds"] = float(np.exp(p))
        Path(args.json).write_text(
            json.dumps({"features": FEATURE_NAMES, "scores": scores, "samples": data}, indent=1)
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
