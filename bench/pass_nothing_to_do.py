"""What each pass costs when it has nothing to do, against what it costs when it has work.

    .venv/bin/python bench/pass_nothing_to_do.py [--bench build/bench/hlogym_bench] [--filter RE]

Runs hlogym_bench's BM_PassWithWork/<pass> and BM_PassNothingToDo/<pass> (bench/pass_bench.cc):
the same module for both, the largest corpus or smoke module the pass changes, and then the pass's
own output on it, run until the pass changed nothing more. Prints one row per pass (times are
Google Benchmark's CPU time per run) and the passes whose idle run costs 5% or more of the run
with work.
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT = 0.05


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=str(REPO / "build" / "bench" / "hlogym_bench"))
    ap.add_argument("--filter", default=".*", help="regular expression on pass names")
    ap.add_argument("--min-time", default="0.05", help="Google Benchmark's --benchmark_min_time")
    args = ap.parse_args()
    out = subprocess.run(
        [args.bench, f"--benchmark_filter=^BM_Pass(WithWork|NothingToDo)/({args.filter})$",
         "--benchmark_format=json", f"--benchmark_min_time={args.min_time}"],
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return out.returncode
    rows: dict[str, dict] = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        kind, name = re.match(r"BM_Pass(WithWork|NothingToDo)/(.+)", b["name"]).groups()
        row = rows.setdefault(name, {})
        row[kind] = b
    print("| pass | module with work (instructions) | with work (µs) | nothing to do (µs) "
          "| pre-check skipped | idle / work |")
    print("|---|---|---|---|---|---|")
    over, no_work = [], []
    for name in sorted(rows):
        work, idle = rows[name].get("WithWork"), rows[name].get("NothingToDo")
        if work is None or idle is None or work.get("error_occurred") or idle.get("error_occurred"):
            reason = (work or idle or {}).get("error_message", "no result")
            no_work.append(f"{name} ({reason})")
            continue
        ratio = idle["cpu_time"] / work["cpu_time"]
        if ratio >= LIMIT:
            over.append(name)
        print(f"| {name} | {work.get('label', '')} ({int(work['instructions'])}) "
              f"| {work['cpu_time']:.1f} | {idle['cpu_time']:.1f} "
              f"| {'yes' if idle['skipped'] else 'no'} | {100 * ratio:.1f}% |")
    print(f"\n{len(rows) - len(no_work)} passes measured; {len(over)} cost {100 * LIMIT:.0f}% "
          f"or more of their run with work when they have nothing to do: {', '.join(over) or '-'}")
    if no_work:
        print(f"not measured: {'; '.join(no_work)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
