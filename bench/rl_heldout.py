"""Learned pass ordering on graphs it never saw, as an RL reviewer reads it: one algorithm trained
with several seeds on the corpus's training families (`--split train-seen`), each seed's policy
evaluated with one deterministic rollout on sets no policy trained on, and the per-graph scores
summarized with rliable (interquartile mean and a 95% stratified-bootstrap confidence interval over
seeds x graphs).

    .venv/bin/python bench/rl_heldout.py [--algo ppo|a2c|trpo|dqn|coreset] [--seeds 5]
        [--steps 49152] [--jobs 2] [--curve-points 3] [--out build/rl_heldout] [--plot FILE.png]
        [--train-suite all build/datasets/training] [-- EXTRA TRAIN FLAGS]

Learning curves on the held-out families: each seed trains in --curve-points chunks (hlogym train
resumes into its --out with a larger --steps; PPO's schedule does not depend on the total), and its
policy is evaluated on the held-out families after each, so overfitting to the training families
shows as a falling curve (printed, in summary.json, and drawn with --plot).

The coreset agent (`--algo coreset`) trains in one go: its seeds each draw 80% of the training
graphs (--graph-fraction 0.8), and its curve is over the coreset's size (the greedy cover's first
1, 2, 4, ... sequences, which is what a smaller --coreset-size trains).

Two scores per graph: D/R, the agent's answer (the policy's best state, D where that is lower or
fails its check: Agent::NoWorseThanDefault), and D/R_own, the policy's own answer. Each seed's
training and evaluation are kept in OUT/seed-K/ and reused when the command runs again; the summary
is printed as a Markdown table and written to OUT/summary.json.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from rliable import library as rly
from rliable import metrics

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / "build" / "hlogym"
# The tuned PPO settings of docs/agents.md.
TRAIN_FLAGS = [
    "--hidden",
    "256,256",
    "--envs",
    "8",
    "--threads",
    "1",
    "--rollout",
    "512",
    "--minibatch",
    "128",
    "--lr",
    "1e-3",
    "--entropy",
    "0.001",
]
CORESET_FLAGS = ["--graph-fraction", "0.8"]
# (label, eval flags): the held-out families (JAX and TensorFlow), a frontend no agent saw, and
# modules XLA has already optimized.
SETS = [
    ("held-out families", ["--suite", "all", "--split", "heldout"]),
    ("PyTorch/XLA modules", ["--suite", "datasets/pytorch"]),
    ("XLA-optimized modules", ["--suite", "datasets/xla_optimized"]),
]


def is_coreset(algo: str) -> bool:
    return algo == "coreset"


def model_file(algo: str, model_dir: Path) -> Path:
    return model_dir / ("coreset.json" if is_coreset(algo) else "policy.json")


def trained_steps(algo: str, model_dir: Path) -> int:
    """The steps the policy in model_dir was trained for (0 where there is none yet)."""
    path = model_file(algo, model_dir)
    return json.loads(path.read_text()).get("trained_steps", 0) if path.exists() else 0


def train(
    seed_dir: Path, algo: str, steps: int, seed: int, suites: list[str], extra: list[str]
) -> None:
    """Trains on `suites` (their train-seen split) to `steps`, resuming the run in seed_dir (one
    already there returns at once: resuming it would write its policy again, newer than the
    evaluations of its curve)."""
    if is_coreset(algo):
        if model_file(algo, seed_dir).exists():
            return
        flags = CORESET_FLAGS
    else:
        if trained_steps(algo, seed_dir) >= steps:
            return
        flags = ["--steps", str(steps), "--no-plot", *TRAIN_FLAGS]
    subprocess.run(
        [
            str(CLI),
            "train",
            "--algo",
            algo,
            "--suite",
            *suites,
            "--split",
            "train-seen",
            "--seed",
            str(seed),
            "--out",
            str(seed_dir),
            "-q",
            *flags,
            *extra,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def coreset_prefix(seed_dir: Path, size: int) -> Path:
    """The seed's coreset cut to its first `size` sequences, in seed_dir/size-N: the greedy cover
    picks one sequence at a time, so this is what --coreset-size N trains."""
    model = json.loads((seed_dir / "coreset.json").read_text())
    out = seed_dir / f"size-{size}"
    out.mkdir(exist_ok=True)
    model["sequences"] = model["sequences"][:size]
    for row in model["graphs"]:
        row["values"] = row["values"][:size]
    text = json.dumps(model)
    path = out / "coreset.json"
    if not path.exists() or path.read_text() != text:  # a rewrite would redo its evaluations
        path.write_text(text)
    return out


def evaluate(
    algo: str, model_dir: Path, label: str, flags: list[str], point: int | None = None
) -> dict:
    """The model's agent on one set (kept in model_dir; redone when the model is newer). With
    `point`, the policy as trained to that many steps, a point of the learning curve: once the run
    has trained past it, its report stays as it is, and a missing one cannot be made."""
    tag = "" if point is None else f"-{point}"
    report = model_dir / f"eval-{label.split()[0].lower().replace('/', '')}{tag}.json"
    model = model_file(algo, model_dir)
    prefix = "coreset" if is_coreset(algo) else "policy"
    if point is not None and trained_steps(algo, model_dir) > point:
        if not report.exists():
            sys.exit(
                f"{model_dir}: no {label} evaluation at {point} steps, and the run has trained "
                "past it; delete the folder to train it again"
            )
        return json.loads(report.read_text())
    if not report.exists() or report.stat().st_mtime < model.stat().st_mtime:
        out = subprocess.run(
            [str(CLI), "eval", "--agent", f"{prefix}:{model_dir}", *flags, "--json", "-q"],
            capture_output=True,
            text=True,
            check=True,
        )
        report.write_text(out.stdout)
    return json.loads(report.read_text())


def scores(report: dict) -> tuple[list[float], list[float]]:
    """Per graph: D/R and D/R_own (the policy's own answer), in the report's order."""
    guarded, own = [], []
    for row in report["benchmarks"]:
        if row.get("error") or not row["R"]:
            guarded.append(math.nan)
            own.append(math.nan)
            continue
        guarded.append(row["D"] / row["R"])
        own.append(row["D"] / row.get("own_R", row["R"]))
    return guarded, own


def iqm_ci(matrix: np.ndarray) -> tuple[float, float, float]:
    """IQM over seeds x graphs with its 95% stratified-bootstrap interval (rliable)."""
    point, interval = rly.get_interval_estimates(
        {"s": matrix}, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=2000
    )
    return float(point["s"][0]), float(interval["s"][0][0]), float(interval["s"][1][0])


def main() -> int:
    global CLI  # --hlogym
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algo", default="ppo")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=49152)
    parser.add_argument("--jobs", type=int, default=2, help="trainings run side by side")
    parser.add_argument(
        "--curve-points",
        type=int,
        default=3,
        help="held-out evaluations during training (the last at --steps)",
    )
    parser.add_argument("--out", type=Path, default=REPO / "build" / "rl_heldout")
    parser.add_argument("--plot", type=Path, help="draw the held-out learning curves here")
    parser.add_argument(
        "--hlogym",
        type=Path,
        default=CLI,
        help="the command line that trains and judges (default build/hlogym; a copy keeps a long "
        "run safe from rebuilds)",
    )
    parser.add_argument(
        "--train-suite",
        nargs="+",
        default=["all"],
        help="what the seeds train on, its train-seen split (default: the corpus; add "
        "build/datasets/training for the generated training set)",
    )
    args = parser.parse_args(argv)
    CLI = args.hlogym.resolve()
    if args.seeds < 1 or args.curve_points < 1:
        parser.error("--seeds and --curve-points must be at least 1")
    seed_dirs = [args.out / f"seed-{k}" for k in range(args.seeds)]
    points = [args.steps * (i + 1) // args.curve_points for i in range(args.curve_points)]
    heldout_label, heldout_flags = SETS[0]

    if is_coreset(args.algo):
        # Coreset sizes 1, 2, 4, ... up to --curve-points of them (the last the whole coreset).
        points = [2**i for i in range(args.curve_points - 1)] + [0]

    def run_seed(k: int) -> list[float]:
        """Trains seed k chunk by chunk (a coreset: once, then its prefixes); geomean(D/R_own) on
        the held-out families after each."""
        curve = []
        for point in points:
            train(seed_dirs[k], args.algo, point, k, args.train_suite, extra)
            seed_dir = seed_dirs[k]
            if is_coreset(args.algo):
                size = len(json.loads((seed_dir / "coreset.json").read_text())["sequences"])
                model_dir = coreset_prefix(seed_dir, point) if 0 < point < size else seed_dir
                report = evaluate(args.algo, model_dir, heldout_label, heldout_flags)
            else:
                report = evaluate(args.algo, seed_dir, heldout_label, heldout_flags, point)
            own = np.array(scores(report)[1])
            curve.append(float(np.exp(np.nanmean(np.log(own)))))
        return curve

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        curves = list(pool.map(run_seed, range(args.seeds)))

    summary = {
        "algo": args.algo,
        "seeds": args.seeds,
        "steps": args.steps,
        "train_suite": args.train_suite,
        "train_flags": (CORESET_FLAGS if is_coreset(args.algo) else TRAIN_FLAGS) + extra,
        "sets": {},
        "heldout_curve": {"steps": points, "geomean_d_over_own_r_per_seed": curves},
    }
    trained = "" if is_coreset(args.algo) else f", {args.steps} steps"
    print(
        f"| {args.algo}, {args.seeds} seeds{trained} | graphs | IQM D/R [95% CI] | "
        "IQM D/R, policy alone [95% CI] | geomean(D/R) per seed | R <= D | fell back to D | "
        "failed | time per graph (median) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, flags in SETS:
        # The held-out families' last curve point is that set's evaluation.
        point = points[-1] if label == heldout_label and not is_coreset(args.algo) else None
        reports = [evaluate(args.algo, d, label, flags, point) for d in seed_dirs]
        guarded = np.array([scores(r)[0] for r in reports])
        own = np.array([scores(r)[1] for r in reports])
        failed = sum(r["summary"]["failed"] for r in reports)
        ok = ~np.isnan(guarded).any(axis=0)  # graphs every seed answered
        g_iqm = iqm_ci(guarded[:, ok])
        o_iqm = iqm_ci(own[:, ok])
        per_seed = [r["summary"]["geomean_d_over_r"] for r in reports]
        r_le_d = sum(r["summary"]["r_le_d"] for r in reports)
        n = sum(r["summary"]["benchmarks"] for r in reports)
        fell_back = sum(1 for r in reports for row in r["benchmarks"] if row.get("fallback"))
        times = [row["seconds"] for r in reports for row in r["benchmarks"] if not row.get("error")]
        # Answers the policy's own steps made: below every state of its starts.
        past_starts = sum(
            1
            for r in reports
            for row in r["benchmarks"]
            if "start_R" in row and row.get("own_R", row["R"]) < row["start_R"]
        )
        summary["sets"][label] = {
            "iqm_d_over_r": g_iqm,
            "iqm_d_over_own_r": o_iqm,
            "geomean_d_over_r_per_seed": per_seed,
            "r_le_d": r_le_d,
            "evaluated": n,
            "fell_back": fell_back,
            "below_starts": past_starts,
            "failed": failed,
            "median_seconds": float(np.median(times)) if times else None,
        }
        print(
            f"| | {label} ({guarded.shape[1]}) | {g_iqm[0]:.3f} [{g_iqm[1]:.3f}, {g_iqm[2]:.3f}] | "
            f"{o_iqm[0]:.3f} [{o_iqm[1]:.3f}, {o_iqm[2]:.3f}] | "
            f"{', '.join(f'{x:.3f}' for x in per_seed)} | {r_le_d}/{n} | {fell_back}/{n} | "
            f"{failed} | {np.median(times):.2f} s |"
        )
    if not is_coreset(args.algo):
        print(
            "\nanswers the policy's own steps made (below every state of its starts): "
            + ", ".join(
                f"{label} {v['below_starts']}/{v['evaluated']}"
                for label, v in summary["sets"].items()
            )
        )
    unit = "sequences (0: as trained)" if is_coreset(args.algo) else "steps"
    print("\nheld-out families, geomean(D/R_own) of the policy alone during training:")
    for point, values in zip(points, zip(*curves)):
        print(f"  {point:>8} {unit}: " + ", ".join(f"{v:.3f}" for v in values))
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        xs = list(range(len(points))) if is_coreset(args.algo) else points
        for k, curve in enumerate(curves):
            ax.plot(xs, curve, marker="o", label=f"seed {k}")
        if is_coreset(args.algo):
            # A prefix at least as long as the model is the model.
            ax.set_xticks(xs, [str(p) if p else "as trained" for p in points])
        ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label="xla-cpu-default")
        ax.set_xlabel("coreset size" if is_coreset(args.algo) else "environment steps")
        ax.set_ylabel("geomean(D/R), policy alone")
        ax.set_title(
            "coreset: held-out families by coreset size"
            if is_coreset(args.algo)
            else f"{args.algo}: held-out families during training"
        )
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
