"""Start-up time of the hlogym command line: the median wall time of commands that do little
(`--help`, `--version`, `stats` of a small module), and the shared libraries the binary loads.

    .venv/bin/python bench/cli_startup.py [--hlogym build/hlogym] [--reps 50]

Deep RL (LibTorch) is a plugin loaded only by `train` and the policy agents (src/cli/rl_plugin.h),
so none of these commands should load it; the last row, a policy agent's search, does.
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def median_ms(cmd: list[str], reps: int) -> float:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the page cache
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def shared_libraries(binary: str) -> list[str]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hlogym", default=str(REPO / "build" / "hlogym"))
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    libs = shared_libraries(args.hlogym)
    torch = [lib for lib in libs if "torch" in lib or "c10" in lib]
    print(
        f"{args.hlogym}: {len(libs)} shared libraries (ldd), LibTorch among them: "
        f"{', '.join(torch) if torch else 'none'}"
    )
    rows = [
        ["--help"],
        ["--version"],
        ["stats", "smoke/einsum"],
        ["search", "--algo", "policy:ppo-gpt2", "--suite", "smoke/einsum", "-q"],
    ]
    print(f"{'command':<58} median ms ({args.reps} runs)")
    for row in rows:
        reps = args.reps if row[0] != "search" else max(3, args.reps // 10)
        print(f"hlogym {' '.join(row):<51} {median_ms([args.hlogym, *row], reps):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
