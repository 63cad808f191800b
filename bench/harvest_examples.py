#!/usr/bin/env python3
"""Harvests the example programs of examples/harvest/ (JAX, PyTorch/XLA, TensorFlow) with
`hlogym harvest` and evaluates agents on what came out: the table of docs/your-own-graphs.md.

    .venv/bin/python bench/harvest_examples.py \\
        [--torch-python VENV/bin/python] [--tf-python VENV/bin/python] [--out DIR] \\
        [--agents default auto coreset policy:generalist]

The JAX program runs with this Python; the PyTorch/XLA and TensorFlow ones need the Python of a
venv with datasets/corpus/requirements-torch.txt or requirements.txt and
requirements-tensorflow.txt (the corpus generator's environments) and are skipped, saying so,
without one. For each program: the harvest's wall time, modules kept and left out, how many have
X, how many have D == X (hlogym's xla-cpu-default against the program's own XLA) and, per agent,
geomean(D/R), R <= D and the median search time (`hlogym eval --json`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HLOGYM = REPO / "build" / "hlogym"
EXAMPLES = REPO / "examples" / "harvest"


def harvest(python: str, program: Path, out: Path) -> tuple[float, dict]:
    t0 = time.time()
    done = subprocess.run(
        [str(HLOGYM), "harvest", "--force", "--out", str(out), "--", python, str(program)],
        capture_output=True,
        text=True,
    )
    seconds = time.time() - t0
    if done.returncode != 0:
        raise SystemExit(f"harvest of {program.name} failed:\n{done.stderr[-3000:]}")
    return seconds, json.loads((out / "manifest.json").read_text())


def evaluate(agent: str, dataset: Path) -> dict:
    done = subprocess.run(
        [str(HLOGYM), "eval", "--agent", agent, "--suite", str(dataset), "--json", "-q"],
        capture_output=True,
        text=True,
    )
    if not done.stdout.strip():
        raise SystemExit(f"eval --agent {agent} on {dataset} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def summarize(report: dict) -> str:
    s = report["summary"]
    median = statistics.median(r["seconds"] for r in report["benchmarks"])
    return (
        f"{s['geomean_d_over_r']:.3f}, R<=D {s['r_le_d']}/{s['benchmarks']}, "
        f"median search {median:.2f} s, failed {s['failed']}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--torch-python", help="Python of a venv with torch and torch_xla")
    ap.add_argument("--tf-python", help="Python of a venv with TensorFlow")
    ap.add_argument("--out", default="build/harvest_examples", help="where the datasets go")
    ap.add_argument("--agents", nargs="+", default=["default", "auto", "coreset"])
    args = ap.parse_args()
    programs = [("jax", sys.executable, EXAMPLES / "jax_cnn.py")]
    for frontend, python, name in (
        ("pytorch", args.torch_python, "torch_mlp.py"),
        ("tensorflow", args.tf_python, "tf_mlp.py"),
    ):
        if python:
            programs.append((frontend, python, EXAMPLES / name))
        else:
            print(f"{frontend}: skipped (no --{'torch' if frontend == 'pytorch' else 'tf'}-python)")
    out_root = Path(args.out)
    for frontend, python, program in programs:
        seconds, manifest = harvest(python, program, out_root / program.stem)
        modules = manifest["modules"]
        dataset = out_root / program.stem
        default = evaluate("default", dataset)
        d_of = {r["name"]: r["D"] for r in default["benchmarks"] if r["valid"]}
        with_x = [n for n, m in modules.items() if m["X"] is not None]
        d_eq_x = sum(d_of.get(n) == modules[n]["X"] for n in with_x)
        within = sum(
            abs(d_of.get(n, 0) - modules[n]["X"]) <= 0.01 * modules[n]["X"] for n in with_x
        )
        print(
            f"{program.name} ({frontend}, {manifest['versions']}): harvest {seconds:.1f} s, "
            f"{len(modules)} kept, {len(manifest['left_out'])} left out, X for {len(with_x)}, "
            f"D == X {d_eq_x}, within 1% {within}"
        )
        for name, m in modules.items():
            print(f"    {name}: I={m['op_count']} D={d_of.get(name)} X={m['X']}")
        for agent in args.agents:
            report = default if agent == "default" else evaluate(agent, dataset)
            print(f"  {agent}: geomean(D/R) {summarize(report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
