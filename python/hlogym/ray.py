"""hlogym on a Ray cluster: an evaluation spread over its workers, and the environment for RLlib.

    import ray, hlogym.ray
    ray.init(address="auto")                      # or ray.init() for a local cluster
    result = hlogym.ray.evaluate("auto", ["gpt2"], split="test")
    print(result.table)                           # the table `hlogym eval` prints

    hlogym.ray.register_rllib_env()               # then PPOConfig().environment("hlogym", ...)

``evaluate`` runs ``hlogym eval --json`` on one benchmark per Ray task, on whichever worker Ray
picks, and merges the reports with ``hlogym eval --merge``: the rows and the summary are those of
one local ``hlogym eval`` over the same suite with the same seed (only the times differ). Every
worker needs hlogym installed (``pip install``); corpus and smoke modules are passed by name, so
the workers read them from their own installed data.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import gymnasium
import numpy as np

RLLIB_ENV_NAME = "hlogym"


@dataclass
class EvalResult:
    report: dict  # as `hlogym eval --json` prints it
    table: str  # as `hlogym eval` prints it
    placements: list[dict]  # per benchmark, where it ran: {"benchmark", "node", "pid"}


def _eval_one(spec: str, args: list[str]) -> dict:
    """One benchmark's `hlogym eval --json` report, run where the Ray task landed."""
    import os

    import ray

    from hlogym import _locate  # resolved on the worker: its own installed command line

    out = subprocess.run(
        [str(_locate.cli_binary()), "eval", "--suite", spec, "--json", "-q", *args],
        capture_output=True,
        text=True,
    )
    # Exit 1 still prints a report (a benchmark that failed is a row with an error).
    if out.returncode not in (0, 1) or not out.stdout.strip():
        raise RuntimeError(
            f"hlogym eval --suite {spec}: exit {out.returncode}: {out.stderr.strip()[-2000:]}"
        )
    return {
        "report": out.stdout,
        "benchmark": spec,
        "pid": os.getpid(),
        "node": ray.get_runtime_context().get_node_id(),
    }


def evaluate(
    agent: str,
    suite: Sequence[Any],
    split: str | None = None,
    *,
    seed: int = 0,
    budget: int | None = None,
    extra_args: Sequence[str] = (),
) -> EvalResult:
    """`hlogym eval --agent AGENT --suite SUITE... [--split SPLIT]` as one Ray task per
    benchmark. SUITE may hold hlogym.datasets objects; without SPLIT, as in the CLI, corpus
    suites take their test split and dataset folders all their modules.

    Uses the Ray cluster this process is connected to (``ray.init``; a local one is started
    when there is none). extra_args go to every `hlogym eval` (e.g. ``["--trials", "3"]``).
    """
    import ray

    import hlogym
    from hlogym import _locate

    from hlogym import datasets

    locs = datasets.benchmark_locs(list(suite))
    specs = hlogym.resolve_suite(locs, split or "test", dataset_split=split or "")
    args = [
        "--agent",
        agent,
        "--seed",
        str(seed),
        *(["--budget", str(budget)] if budget else []),
        *extra_args,
    ]
    remote = ray.remote(num_cpus=1)(_eval_one)
    done = ray.get([remote.remote(spec, args) for spec in specs])
    with tempfile.TemporaryDirectory(prefix="hlogym_ray_") as tmp:
        files = []
        for i, one in enumerate(done):
            files.append(Path(tmp) / f"{i:05d}.json")
            files[-1].write_text(one.pop("report"))
        merge = [str(_locate.cli_binary()), "eval", "--merge", *map(str, files)]
        runs = [
            subprocess.run(cmd, capture_output=True, text=True)
            for cmd in (merge + ["--json"], merge)
        ]
    for run in runs:
        if run.returncode not in (0, 1):
            raise RuntimeError(f"hlogym eval --merge: exit {run.returncode}: {run.stderr.strip()}")
    return EvalResult(report=json.loads(runs[0].stdout), table=runs[1].stdout, placements=done)


def rllib_env(config: dict) -> gymnasium.Env:
    """hlogym's environment as RLlib's models take it: the op-count histogram (the default
    observation) as float32 log(1 + count), the state the paper's policy sees. config holds
    hlogym.make's keyword arguments."""
    import hlogym

    env = hlogym.make(**dict(config))
    if not isinstance(env.observation_space, gymnasium.spaces.Box):
        raise ValueError(
            "hlogym.ray.rllib_env: needs the default (op_histogram) observation, "
            f"not {env.observation_space}"
        )
    space = gymnasium.spaces.Box(0, np.inf, env.observation_space.shape, np.float32)
    return gymnasium.wrappers.TransformObservation(
        env, lambda obs: np.log1p(obs).astype(np.float32), space
    )


def register_rllib_env(name: str = RLLIB_ENV_NAME) -> str:
    """Registers rllib_env with Ray Tune under `name` (for ``AlgorithmConfig.environment``)."""
    from ray.tune.registry import register_env

    register_env(name, rllib_env)
    return name
