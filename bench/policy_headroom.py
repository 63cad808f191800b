"""How much a policy's own steps could add after its starts: for each graph of a suite, the lowest
state the policy can start from (the original module, and the lowest state inside each pass
sequence among its actions, xla-cpu-default included: a superset of its starts), then whether one
step of any action `auto` may choose (every pass but the precision-changing ones, and the
pipelines) goes below it, and whether a best-improvement descent of a few steps over the policy's
own actions does; beside it, where `auto`'s answer ends (its own search: other starts, sideways
moves, widening rounds).

    .venv/bin/python bench/policy_headroom.py [--policy datasets/policies/generalist]
        [--suite all --split heldout] [--steps 5] [--out build/policy_headroom.json]

A policy whose start is already a local minimum of every single action has nothing to learn from
one more step; what `auto` finds below it takes moves that do not lower the op count first.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

from hlogym import _hlogym

REPO = Path(__file__).resolve().parents[1]
HLOGYM = REPO / "build" / "hlogym"


def lowest_inside(env, sequence: str):
    """The lowest state on `sequence` (passes joined by '+') applied to a fork of `env`."""
    state, lowest = env.fork(), None
    for name in sequence.split("+"):
        state.step_pass(name)
        if lowest is None or state.op_count < lowest.op_count:
            lowest = state.fork()
    return lowest


def auto_answers(suite: list[str], split: str) -> dict[str, int]:
    command = [str(HLOGYM), "eval", "-q", "--agent", "auto", "--json", "--suite", *suite]
    if split:
        command += ["--split", split]
    report = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
    return {row["benchmark"]: row["R"] for row in report["benchmarks"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default=str(REPO / "datasets/policies/generalist"))
    parser.add_argument("--suite", nargs="+", default=["all"])
    parser.add_argument("--split", default="heldout")
    parser.add_argument(
        "--steps", type=int, default=5, help="the descent over the policy's actions"
    )
    parser.add_argument("--out", default=str(REPO / "build/policy_headroom.json"))
    args = parser.parse_args()

    actions = json.loads((Path(args.policy) / "policy.json").read_text())["actions"]
    every_action = [
        p["name"]
        for p in json.loads(
            subprocess.run(
                [str(HLOGYM), "list-passes", "--json"], check=True, capture_output=True
            ).stdout
        )["passes"]
        if not p["changes_numeric_precision"]
    ]
    policy_passes = {name for action in actions for name in action.split("+")}
    # The sequences and the default pipelines: the states a policy starts from are among them.
    start_actions = [a for a in actions if "+" in a or a.startswith("xla-cpu-default")]
    benchmarks = _hlogym.resolve_suite(args.suite, args.split)
    auto = auto_answers(args.suite, args.split)
    rows = []
    for benchmark in benchmarks:
        env = _hlogym.Env(actions=sorted(set(every_action) | policy_passes), traj_limit=10**6)
        env.reset(benchmark)
        starts = [env.fork()] + [lowest_inside(env, a) for a in actions if a in start_actions]
        start = min(starts, key=lambda state: state.op_count)
        one_step, best_action = min(
            (lowest_inside(start, name).op_count, name) for name in every_action
        )
        state, descent = start, start.op_count
        for _ in range(args.steps):
            state = min((lowest_inside(state, a) for a in actions), key=lambda s: s.op_count)
            descent = min(descent, state.op_count)
        rows.append(
            {
                "benchmark": benchmark,
                "start": start.op_count,
                "one_step": one_step,
                "one_step_action": best_action if one_step < start.op_count else None,
                "descent": descent,
                "auto": auto.get(benchmark),
            }
        )
        print(
            benchmark,
            start.op_count,
            one_step,
            best_action,
            descent,
            auto.get(benchmark),
            flush=True,
        )
    n = len(rows)
    below = {
        key: sum(r[key] < r["start"] for r in rows if r[key] is not None)
        for key in ("one_step", "descent", "auto")
    }
    geomean = math.exp(sum(math.log(r["start"] / r["auto"]) for r in rows) / n)
    summary = {"graphs": n, "below_start": below, "auto_over_start_geomean": geomean}
    Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    print(
        f"{n} graphs: one step of any action goes below the policy's lowest start on "
        f"{below['one_step']}, a {args.steps}-step descent over its own actions on "
        f"{below['descent']}; auto's answer is below it on {below['auto']} "
        f"(geomean start/auto {geomean:.4f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
