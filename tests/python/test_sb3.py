"""Stable-Baselines3's PPO trains on ``hlogym/XlaPassOrdering-v0``.

Runs in the project's .venv with the current Stable-Baselines3 and PyPI's torch
(requirements-rl.txt, installed by ``scripts/setup.sh --rl``, which scripts/test.sh runs). Nothing
here is skipped: a missing package is a failure, since the set-up installs it.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import pytest

try:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_checker import check_env
    from stable_baselines3.common.logger import Logger
except ImportError as e:  # a failure, not a skip: scripts/setup.sh installs these
    raise ImportError(
        f"test_sb3 needs requirements-rl.txt in {sys.executable}'s environment "
        f"(scripts/setup.sh --rl): {e}"
    ) from e

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

import gymnasium  # noqa: E402

import hlogym  # noqa: E402

BENCHMARK = "mlp_train"  # datasets/smoke/mlp_train.hlo: a real JAX MLP training step, 175 ops
TRAJ_LIMIT = 5
STEPS = 3072


def _make_env():
    return gymnasium.make(
        hlogym.ENV_ID,
        benchmark_locs=[BENCHMARK],
        traj_limit=TRAJ_LIMIT,
        reward_space="op_count_decrease_normalized",
    )


def _greedy_episode(model, env):
    """The policy's most likely pass at each step: (final op count, initial op count, actions)."""
    obs, info = env.reset(seed=0)
    actions, done = [], False
    while not done:
        action, _ = model.predict(obs, deterministic=True)
        actions.append(int(action))
        obs, _, terminated, truncated, info = env.step(int(action))
        done = terminated or truncated
    return info["op_count"], info["initial_op_count"], actions


@pytest.fixture(scope="module")
def trained():
    torch.set_num_threads(1)
    env = _make_env()
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=256,
        batch_size=64,
        n_epochs=4,
        learning_rate=1e-3,
        policy_kwargs=dict(net_arch=[64, 64]),
        seed=0,
        device="cpu",
        verbose=0,
    )
    # SB3's default logger makes an empty SB3-<date> folder in /tmp on every learn(), even with
    # verbose=0; a logger with no outputs writes nowhere.
    model.set_logger(Logger(folder=None, output_formats=[]))
    before = _greedy_episode(model, _make_env())
    start = time.monotonic()
    model.learn(total_timesteps=STEPS)
    seconds = time.monotonic() - start
    return model, before, seconds


def test_sb3_check_env_passes():
    env = _make_env()
    check_env(env.unwrapped, warn=True)
    # Gymnasium's make wrappers (order enforcing, passive checker) are what SB3 trains through.
    check_env(env, warn=True)


def test_ppo_trains_for_the_requested_steps(trained):
    model, _, seconds = trained
    assert model.num_timesteps == STEPS
    monitor = model.get_env().envs[0]  # SB3 wraps the env in a Monitor
    lengths = monitor.get_episode_lengths()
    assert len(lengths) == STEPS // TRAJ_LIMIT
    assert set(lengths) == {TRAJ_LIMIT}
    print(f"PPO: {STEPS} steps in {seconds:.1f} s ({STEPS / seconds:.0f} steps/s)")


def test_ppo_learns_to_shrink_the_module(trained):
    model, (before_ops, initial, before_actions), _ = trained
    after_ops, initial2, after_actions = _greedy_episode(model, _make_env())
    assert initial2 == initial
    print(
        f"greedy episode: untrained {before_ops} ops {before_actions}, "
        f"trained {after_ops} ops {after_actions}, initial {initial}"
    )
    # The trained policy's most likely passes shrink the module, and by more than before training.
    assert after_ops < initial
    assert after_ops < before_ops
    # The episodes got better while training: the mean return (sum of rewards = the share of
    # xla-cpu-default's reduction reached) of the last 100 episodes beats the first 100's.
    returns = np.asarray(model.get_env().envs[0].get_episode_rewards())
    assert returns[-100:].mean() > returns[:100].mean() + 0.05, (
        returns[:100].mean(),
        returns[-100:].mean(),
    )


def test_ppo_save_load_round_trip(trained, tmp_path):
    model, _, _ = trained
    path = tmp_path / "ppo_hlogym.zip"
    model.save(path)
    loaded = PPO.load(path, device="cpu")
    assert loaded.observation_space == model.observation_space
    assert loaded.action_space == model.action_space
    env = _make_env()
    obs, _ = env.reset(seed=0)
    for _ in range(TRAJ_LIMIT):
        a, _ = model.predict(obs, deterministic=True)
        b, _ = loaded.predict(obs, deterministic=True)
        assert int(a) == int(b)
        with torch.no_grad():
            t = model.policy.obs_to_tensor(obs)[0]
            pa = model.policy.get_distribution(t).distribution.probs
            pb = loaded.policy.get_distribution(
                loaded.policy.obs_to_tensor(obs)[0]
            ).distribution.probs
        np.testing.assert_allclose(pa.numpy(), pb.numpy(), rtol=1e-6, atol=1e-7)
        obs, *_ = env.step(int(a))
    assert _greedy_episode(loaded, _make_env()) == _greedy_episode(model, _make_env())
