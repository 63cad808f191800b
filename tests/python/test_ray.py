"""hlogym on Ray, on a local cluster of 2 workers: an evaluation spread over them gives the table
a local `hlogym eval` gives, and RLlib's PPO trains on the environment with 2 env runners.

Needs requirements-rl.txt (scripts/setup.sh --rl, which scripts/test.sh runs); nothing is skipped.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

try:
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
except ImportError as e:  # a failure, not a skip: scripts/setup.sh --rl installs it
    raise ImportError(
        f"test_ray needs requirements-rl.txt in {sys.executable}'s environment "
        f"(scripts/setup.sh --rl): {e}"
    ) from e

import hlogym  # noqa: E402
import hlogym.ray  # noqa: E402
from hlogym import _locate  # noqa: E402

SUITE = ["smoke/mlp_train", "smoke/cnn_train", "smoke/einsum", "smoke/gpt2_infer"]
# What must not depend on where a benchmark ran (times do).
ROW_KEYS = ("benchmark", "name", "I", "D", "R", "X", "passes", "steps", "valid", "equivalence")
SUMMARY_KEYS = (
    "benchmarks",
    "counted",
    "gain",
    "geomean_ratio",
    "r_le_d",
    "r_lt_d",
    "geomean_d_over_r",
    "best",
    "worst",
    "failed",
)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def local_eval(agent: str, *extra: str) -> dict:
    out = subprocess.run(
        [
            str(_locate.cli_binary()),
            "eval",
            "--agent",
            agent,
            "--suite",
            *SUITE,
            "--json",
            "-q",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("agent,budget", [("auto", None), ("greedy", 60)])
def test_distributed_eval_is_the_local_eval(cluster, agent, budget):
    extra = ["--budget", str(budget)] if budget else []
    local = local_eval(agent, *extra)
    spread = hlogym.ray.evaluate(agent, SUITE, budget=budget)
    rows = spread.report["benchmarks"]
    assert [r["benchmark"] for r in rows] == [r["benchmark"] for r in local["benchmarks"]]
    for mine, theirs in zip(rows, local["benchmarks"]):
        assert {k: mine.get(k) for k in ROW_KEYS} == {k: theirs.get(k) for k in ROW_KEYS}
        assert mine["valid"] and mine["equivalence"] == "equivalent"
    assert {k: spread.report["summary"][k] for k in SUMMARY_KEYS} == {
        k: local["summary"][k] for k in SUMMARY_KEYS
    }
    assert "gain over xla-cpu-default" in spread.table and "failed: 0" in spread.table
    # The benchmarks ran as Ray tasks, spread over the cluster's worker processes.
    assert [p["benchmark"] for p in spread.placements] == [r["benchmark"] for r in rows]
    pids = {p["pid"] for p in spread.placements}
    assert os.getpid() not in pids and len(pids) >= 2


def test_distributed_eval_reports_a_bad_benchmark(cluster):
    """As in a local eval, a benchmark that cannot run is a failed row naming it."""
    spread = hlogym.ray.evaluate("auto", ["smoke/einsum", "smoke/no_such_module"])
    rows = spread.report["benchmarks"]
    assert rows[0]["valid"] and "no_such_module" in rows[1]["error"]
    assert spread.report["summary"]["failed"] == 1 and "failed: 1" in spread.table


def test_rllib_ppo_trains_on_two_env_runners(cluster):
    name = hlogym.ray.register_rllib_env()
    config = (
        PPOConfig()
        .environment(name, env_config={"benchmark_locs": ["mlp_train"], "traj_limit": 5})
        .env_runners(num_env_runners=2, rollout_fragment_length=64, num_cpus_per_env_runner=1)
        .learners(num_cpus_per_learner=0)
        .training(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=2, lr=1e-3)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        results = [algo.train() for _ in range(2)]
    finally:
        algo.stop()
    runners = results[-1]["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 256
    assert runners["num_episodes_lifetime"] >= 256 // 5 - 2
    # Episodes end at traj_limit (or earlier on a failing pass); returns are real numbers.
    assert 1 <= runners["episode_len_mean"] <= 5
    assert math.isfinite(runners["episode_return_mean"])


def test_rllib_env_is_a_float_view_of_the_histogram():
    config = {"benchmark_locs": ["mlp_train"], "traj_limit": 3}
    obs, _ = hlogym.ray.rllib_env(config).reset(seed=0)
    raw, _ = hlogym.make(**config).reset(seed=0)
    assert obs.dtype == np.float32 and raw.max() > 0
    np.testing.assert_allclose(obs, np.log1p(raw), rtol=1e-6)
    with pytest.raises(ValueError, match="op_histogram"):
        hlogym.ray.rllib_env(
            {"benchmark_locs": ["mlp_train"], "observation_spaces": ["op_histogram", "cost"]}
        )
