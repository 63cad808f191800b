"""Learning curves of `hlogym train` as PNG.

    .venv/bin/python python/hlogym/plot.py DIR/curve.csv [-o DIR/curve.png]
    .venv/bin/python python/hlogym/plot.py A/curve.csv B/curve.csv --labels ppo,dqn -o compare.png

(Run as a file it needs only matplotlib, not the C++ extension; `python -m hlogym.plot`
works too once the extension is built.)

Plots the mean end-of-episode ratio (I - R) / (I - D) against environment steps
(1.0 = as good as xla-cpu-default), one line per curve.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path


def read_curve(path: str | Path) -> tuple[list[int], list[float]]:
    """Steps and mean ratios of a curve.csv (rows without finished episodes skipped)."""
    steps: list[int] = []
    ratios: list[float] = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None or not {"steps", "mean_ratio"} <= set(reader.fieldnames):
            raise ValueError(
                f"{path}: not an hlogym curve.csv (needs steps and mean_ratio columns)"
            )
        for row in reader:
            ratio = float(row["mean_ratio"])
            if math.isfinite(ratio):
                steps.append(int(row["steps"]))
                ratios.append(ratio)
    return steps, ratios


def smooth(values: list[float], window: int) -> list[float]:
    """Trailing moving average over `window` points."""
    out = []
    total = 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def plot(curves: list[str], labels: list[str], output: str, window: int = 5) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for path, label in zip(curves, labels):
        steps, ratios = read_curve(path)
        if steps:
            ax.plot(steps, smooth(ratios, window), label=label)
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1, label="xla-cpu-default")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("episode (I - R) / (I - D), training graphs")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(output)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__.splitlines()[0])
    parser.add_argument("curves", nargs="+", help="curve.csv files written by hlogym train")
    parser.add_argument(
        "-o", "--output", help="PNG to write (default: beside the first curve, curve.png)"
    )
    parser.add_argument(
        "--labels", help="comma-separated legend labels (default: the directories' names)"
    )
    parser.add_argument(
        "--window", type=int, default=5, help="moving-average window in rows (default 5)"
    )
    args = parser.parse_args(argv)
    labels = (
        args.labels.split(",") if args.labels else [Path(c).parent.name or c for c in args.curves]
    )
    if len(labels) != len(args.curves):
        parser.error("--labels needs one label per curve")
    output = args.output or str(Path(args.curves[0]).with_name("curve.png"))
    try:
        plot(args.curves, labels, output, max(1, args.window))
    except (OSError, ValueError) as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
