"""RLlib's PPO on hlogym's environment, with its env runners spread over a Ray cluster.

    .venv/bin/python examples/rllib_ppo.py                        # a local cluster on this machine
    .venv/bin/python examples/rllib_ppo.py --address auto --env-runners 32 --iterations 200

On a cluster (every node with hlogym installed: scripts/setup.sh --rl, or pip install '.[rl]'):
    ray start --head --port=6379                                  # on the head node
    ray start --address=HEAD_IP:6379                              # on every other node
then run this script on the head node with --address auto.
"""

import argparse

import ray
from ray.rllib.algorithms.ppo import PPOConfig

import hlogym
import hlogym.ray


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--address",
        help="Ray cluster address ('auto' for the running one); default: start a local cluster",
    )
    ap.add_argument("--suite", nargs="+", default=["gpt2"], help="training suite (hlogym eval's)")
    ap.add_argument("--split", default="train")
    ap.add_argument("--env-runners", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--traj-limit", type=int, default=20)
    args = ap.parse_args()

    ray.init(address=args.address)
    benchmarks = hlogym.resolve_suite(args.suite, args.split)
    config = (
        PPOConfig()
        .environment(
            hlogym.ray.register_rllib_env(),
            env_config={"benchmark_locs": benchmarks, "traj_limit": args.traj_limit},
        )
        .env_runners(num_env_runners=args.env_runners, num_cpus_per_env_runner=1)
        .training(
            train_batch_size_per_learner=64 * max(1, args.env_runners),
            minibatch_size=64,
            num_epochs=4,
            lr=3e-4,
        )
    )
    algo = config.build_algo()
    for i in range(args.iterations):
        runners = algo.train()["env_runners"]
        print(
            f"iteration {i + 1}: {runners['num_env_steps_sampled_lifetime']:.0f} steps, "
            f"mean episode return {runners.get('episode_return_mean', float('nan')):.3f}"
        )
    print("checkpoint:", algo.save().checkpoint.path)
    algo.stop()


if __name__ == "__main__":
    main()
