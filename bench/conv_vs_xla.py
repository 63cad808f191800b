"""The reference evaluator against XLA:CPU on one real convolution, in one run.

    .venv/bin/python bench/conv_vs_xla.py [--hlogym build/hlogym] [--reps 3]

The module: f32[64,128,128,3] (NHWC) convolved with a 5x5x3x64 kernel (HWIO), SAME padding,
5.0 GMAC, three instructions. hlogym's time is `hlogym run` end to end (parse, seeded random
inputs, evaluation, digest of the 67M outputs); XLA's is the compiled convolution alone (jax.jit,
after compilation, inputs already on the device). Both on every core of this machine; medians.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BATCH, SIZE, IN_FEATURES, OUT_FEATURES, TAPS = 64, 128, 3, 64, 5
MODULE = f"""HloModule conv5x5

ENTRY main {{
  input = f32[{BATCH},{SIZE},{SIZE},{IN_FEATURES}]{{3,2,1,0}} parameter(0)
  kernel = f32[{TAPS},{TAPS},{IN_FEATURES},{OUT_FEATURES}]{{3,2,1,0}} parameter(1)
  ROOT conv = f32[{BATCH},{SIZE},{SIZE},{OUT_FEATURES}]{{3,2,1,0}} convolution(input, kernel), window={{size={TAPS}x{TAPS} pad=2_2x2_2}}, dim_labels=b01f_01io->b01f
}}
"""


def median_seconds(run, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hlogym", default=str(REPO / "build" / "hlogym"))
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    gmac = BATCH * SIZE * SIZE * OUT_FEATURES * IN_FEATURES * TAPS * TAPS / 1e9

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "conv5x5.hlo"
        path.write_text(MODULE)
        cmd = [args.hlogym, "run", str(path)]
        subprocess.run(cmd, check=True, capture_output=True)  # page cache, first-touch memory
        ours = median_seconds(
            lambda: subprocess.run(cmd, check=True, capture_output=True), args.reps
        )

    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-1, 1, (BATCH, SIZE, SIZE, IN_FEATURES)).astype(np.float32))
    k = jnp.asarray(rng.uniform(-1, 1, (TAPS, TAPS, IN_FEATURES, OUT_FEATURES)).astype(np.float32))
    conv = jax.jit(
        lambda x, k: jax.lax.conv_general_dilated(
            x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
    )
    conv(x, k).block_until_ready()  # compile
    xla = median_seconds(lambda: conv(x, k).block_until_ready(), args.reps + 2)

    print(
        f"convolution f32[{BATCH},{SIZE},{SIZE},{IN_FEATURES}] * "
        f"{TAPS}x{TAPS}x{IN_FEATURES}x{OUT_FEATURES}, SAME: {gmac:.2f} GMAC, "
        f"{os.cpu_count()} cores, jax {jax.__version__}"
    )
    print("| | seconds (median) | GMAC/s |")
    print("|---|---|---|")
    print(f"| `hlogym run` (end to end) | {ours:.2f} | {gmac / ours:.2f} |")
    print(f"| XLA:CPU (compiled convolution) | {xla:.2f} | {gmac / xla:.2f} |")
    print(f"hlogym / XLA: {ours / xla:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
