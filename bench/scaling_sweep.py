"""How the xla-cpu-default pipeline's time grows with module size, beside XLA's own pipeline.

    .venv/bin/python bench/scaling_sweep.py [--layers 1 2 4 8 16] [--reps 5] [--plot FILE]

The modules: the corpus's GPT-2 training step (datasets/corpus/generate.py, the same model code
and lowering) at d=128, 8 heads, sequence 64, batch 2, f32, AdamW, with 1 to 16 layers, written
to build/scaling/. For each size, the median over --reps runs of
  - hlogym: the passes' time that `hlogym opt --pipeline=xla-cpu-default --time-passes` reports
    (loading and printing the module are not included);
  - XLA: the time from the start of XLA:CPU's first HLO pass to the start of layout-assignment,
    read from XLA's pass log (TF_CPP_VMODULE=hlo_pass_pipeline=1 gives each pass's time stamps),
    which is the part of XLA's pipeline that xla-cpu-default models. The compiles run with
    --xla_backend_optimization_level=0: that shortens LLVM's code generation, after the passes
    measured here, and leaves the pass sequence through layout-assignment as it is.
With --callgrind, also the machine instructions `hlogym opt` executes (valgrind's callgrind: load,
pipeline and print), a count that caches and a busy machine do not move.
Prints a table, the growth exponent of each between the smallest and largest module
(time ~ instructions^k; k = 1 is linear) and, with --plot, draws both against size.
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = dict(
    d=128, heads=8, seq=64, batch=2, dtype="f32", remat=0, mode="train", opt="adamw", vocab=256
)

# Run in a fresh interpreter per module: lowers the model, writes its HLO text, compiles it.
WORKER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import generate
layers, out = int(sys.argv[2]), sys.argv[3]
cfg = dict(json.loads(sys.argv[4]), layers=layers)
lowered = generate.lower_text(f"gpt2_scaling_L{layers}", "gpt2", cfg)
if out != "-":
    open(out, "w").write(lowered.as_text(dialect="hlo"))
else:
    lowered.compile()
"""

_STAMP = re.compile(r"^I\d{4} (\d+):(\d+):(\d+\.\d+)")


def stamp_seconds(line: str) -> float:
    h, m, s = _STAMP.match(line).groups()
    return 3600 * int(h) + 60 * int(m) + float(s)


def xla_pipeline_ms(layers: int) -> float:
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        TF_CPP_MIN_LOG_LEVEL="0",
        TF_CPP_VMODULE="hlo_pass_pipeline=1",
        XLA_FLAGS="--xla_backend_optimization_level=0",
    )
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            WORKER,
            str(REPO / "datasets" / "corpus"),
            str(layers),
            "-",
            json.dumps(CONFIG),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = run.stderr.splitlines()
    start = next(stamp_seconds(l) for l in lines if "Running HLO pass pipeline" in l)
    end = next(stamp_seconds(l) for l in lines if l.endswith("HLO pass layout-assignment"))
    return 1000 * (end - start)


def hlogym_pipeline_ms(hlogym: str, path: Path) -> tuple[float, int]:
    run = subprocess.run(
        [hlogym, "opt", str(path), "--pipeline=xla-cpu-default", "-o", os.devnull, "--time-passes"],
        capture_output=True,
        text=True,
        check=True,
    )
    m = re.search(r"passes ([\d.]+) ms \((\d+) instructions", run.stderr)
    return float(m.group(1)), int(m.group(2))


def executed_instructions(hlogym: str, path: Path) -> int:
    run = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={os.devnull}",
            hlogym,
            "opt",
            str(path),
            "--pipeline=xla-cpu-default",
            "-o",
            os.devnull,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(re.search(r"Collected : (\d+)", run.stderr).group(1))


def exponent(sizes, times) -> float:
    return math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hlogym", default=str(REPO / "build" / "hlogym"))
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "build" / "scaling"), help="where the modules go")
    ap.add_argument("--plot", help="write a plot of both times against size to this file")
    ap.add_argument(
        "--callgrind",
        action="store_true",
        help="also count the instructions hlogym executes (valgrind)",
    )
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for layers in args.layers:
        path = out / f"gpt2_scaling_L{layers}.hlo"
        if not path.exists():
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    WORKER,
                    str(REPO / "datasets" / "corpus"),
                    str(layers),
                    str(path),
                    json.dumps(CONFIG),
                ],
                env=dict(os.environ, JAX_PLATFORMS="cpu"),
                check=True,
            )
        ours, xla, instructions = [], [], 0
        for _ in range(args.reps):  # interleaved, so that a busy spell hits both
            ms, instructions = hlogym_pipeline_ms(args.hlogym, path)
            ours.append(ms)
            xla.append(xla_pipeline_ms(layers))
        executed = executed_instructions(args.hlogym, path) if args.callgrind else 0
        rows.append(
            (layers, instructions, statistics.median(ours), statistics.median(xla), executed)
        )
        print(
            f"layers {layers}: {instructions} instructions, hlogym {rows[-1][2]:.1f} ms, "
            f"XLA {rows[-1][3]:.1f} ms",
            file=sys.stderr,
            flush=True,
        )

    print(
        f"GPT-2 train step ({', '.join(f'{k}={v}' for k, v in CONFIG.items())}), "
        f"medians of {args.reps} interleaved runs\n"
    )
    executed_header = " executed by hlogym opt, per instruction |" if args.callgrind else ""
    print(
        "| layers | instructions | hlogym xla-cpu-default (ms) | µs / instruction "
        "| XLA:CPU through layout-assignment (ms) | µs / instruction | hlogym / XLA |"
        + executed_header
    )
    print("|---|---|---|---|---|---|---|" + ("---|" if args.callgrind else ""))
    for layers, n, ours, xla, executed in rows:
        print(
            f"| {layers} | {n} | {ours:.1f} | {1000 * ours / n:.2f} | {xla:.1f} "
            f"| {1000 * xla / n:.2f} | {ours / xla:.2f}x |"
            + (f" {executed / n:,.0f} |" if args.callgrind else "")
        )
    sizes = [r[1] for r in rows]
    if len(rows) > 1:
        print(
            f"\ngrowth exponent from {sizes[0]} to {sizes[-1]} instructions (time ~ n^k): "
            f"hlogym k = {exponent(sizes, [r[2] for r in rows]):.2f}, "
            f"XLA k = {exponent(sizes, [r[3] for r in rows]):.2f}"
            + (
                f", instructions executed by hlogym k = {exponent(sizes, [r[4] for r in rows]):.2f}"
                if args.callgrind
                else ""
            )
        )
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        ax.loglog(sizes, [r[2] for r in rows], "o-", label="hlogym xla-cpu-default")
        ax.loglog(
            sizes, [r[3] for r in rows], "s-", label="XLA:CPU, passes before layout-assignment"
        )
        ax.loglog(
            sizes,
            [rows[0][2] * n / sizes[0] for n in sizes],
            ":",
            color="gray",
            label="linear from the smallest",
        )
        ax.set_xlabel("instructions (GPT-2 train step, 1 to 16 layers)")
        ax.set_ylabel("pipeline time (ms)")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"\nplot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
