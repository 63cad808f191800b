"""What each pass costs when it has nothing to do, against what it costs when it has work.

    .venv/bin/python bench/pass_nothing_to_do.py [--bench build/bench/hlogym_bench] [--filter RE]

Runs hlogym_bench's BM_PassWithWork/<pass>, BM_PassNothingToDo/<pass> and
BM_PassNothingToDoUnseen/<pass> (bench/pass_bench.cc): the largest corpus or smoke module the pass
changes, and then the pass's own output on it, run until the pass changed nothing more, once as
that run left it (with the record of the pass's last run, which a tracked pass uses to skip what
did not change since: passes/change_tracking.h) and once with the records forgotten (as on a
module the pass never saw). Prints one row per pass (times are Google Benchmark's CPU time per run)
and the passes whose idle run costs 5% or more of the run with work, in both cases.
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
        [
            args.bench,
            f"--benchmark_filter=^BM_Pass(WithWork|NothingToDo|NothingToDoUnseen)/({args.filter})$",
            "--benchmark_format=json",
            f"--benchmark_min_time={args.min_time}",
        ],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return out.returncode
    rows: dict[str, dict] = {}
    for b in json.loads(out.stdout)["benchmarks"]:
        kind, name = re.match(
            r"BM_Pass(WithWork|NothingToDoUnseen|NothingToDo)/(.+)", b["name"]
        ).groups()
        row = rows.setdefault(name, {})
        row[kind] = b
    print(
        "| pass | module with work (instructions) | with work (µs) | nothing to do (µs) "
        "| idle / work | never seen (µs) | unseen / work | pre-check skipped |"
    )
    print("|---|---|---|---|---|---|---|---|")
    over, over_unseen, no_work = [], [], []
    for name in sorted(rows):
        work, idle = rows[name].get("WithWork"), rows[name].get("NothingToDo")
        unseen = rows[name].get("NothingToDoUnseen")
        runs = (work, idle, unseen)
        if any(r is None or r.get("error_occurred") for r in runs):
            reason = next((r for r in runs if r is not None), {}).get("error_message", "no result")
            no_work.append(f"{name} ({reason})")
            continue
        ratio = idle["cpu_time"] / work["cpu_time"]
        unseen_ratio = unseen["cpu_time"] / work["cpu_time"]
        if ratio >= LIMIT:
            over.append(name)
        if unseen_ratio >= LIMIT:
            over_unseen.append(name)
        print(
            f"| {name} | {work.get('label', '')} ({int(work['instructions'])}) "
            f"| {work['cpu_time']:.1f} | {idle['cpu_time']:.1f} | {100 * ratio:.1f}% "
            f"| {unseen['cpu_time']:.1f} | {100 * unseen_ratio:.1f}% "
            f"| {'yes' if idle['skipped'] else 'no'} |"
        )
    measured = len(rows) - len(no_work)
    print(
        f"\n{measured} passes measured; {len(over)} cost {100 * LIMIT:.0f}% or more of their run "
        f"with work when they have nothing to do: {', '.join(over) or '-'}"
    )
    print(
        f"On their output with the records of earlier runs forgotten, {len(over_unseen)} do: "
        f"{', '.join(over_unseen) or '-'}"
    )
    if no_work:
        print(f"not measured: {'; '.join(no_work)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
