"""The reference evaluator on lax.scan's stacked outputs: time against the scan's length.

    .venv/bin/python bench/scan_outputs.py [--hlogym build/hlogym] [--lengths 1000,4000,16000]

The module: `jax.lax.scan` of T steps over a f32[256] carry (tanh(1.01 c + 0.1)), its outputs
stacked into f32[T,256], as JAX lowers it (a while loop whose body writes row i of the stacked
buffer with a dynamic-update-slice inside a call). Written row by row into a copy of the whole
buffer, the evaluation grows with T squared; written in place (OverwritableCopy), with T.
Prints `hlogym run`'s wall time per length, end to end (parse, inputs, evaluation, digest).
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp

REPO = Path(__file__).resolve().parents[1]


def scan_module(length: int) -> str:
    def stacked(x):
        def step(c, _):
            c = jnp.tanh(c * 1.01 + 0.1)
            return c, c

        return jax.lax.scan(step, x, None, length=length)[1]

    return jax.jit(stacked).lower(jnp.zeros((256,), jnp.float32)).compiler_ir("hlo").as_hlo_text()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hlogym", default=str(REPO / "build" / "hlogym"))
    parser.add_argument("--lengths", default="1000,4000,16000")
    args = parser.parse_args()
    print("length  seconds")
    with tempfile.TemporaryDirectory() as tmp:
        for length in (int(t) for t in args.lengths.split(",")):
            path = Path(tmp) / f"scan_{length}.hlo"
            path.write_text(scan_module(length))
            start = time.perf_counter()
            subprocess.run([args.hlogym, "run", str(path)], check=True, stdout=subprocess.DEVNULL)
            print(f"{length:6d}  {time.perf_counter() - start:7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
