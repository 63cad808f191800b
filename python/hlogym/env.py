"""The Gymnasium environment ``hlogym/XlaPassOrdering-v0`` over the C++ core."""

from __future__ import annotations

import os
from typing import Any, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from . import _hlogym, datasets

ENV_ID = "hlogym/XlaPassOrdering-v0"
DEFAULT_BENCHMARK_LOCS = ("datasets/smoke/default_suite.txt",)
_INT_HIGH = 2**53  # counts fit; keeps Box.sample() free of int64 overflow
# The environment's defaults are the C++ EnvOptions' (src/gym/environment.h), defined there only.
_DEFAULTS = _hlogym.env_defaults()
# One space is observed as a plain array (a list of spaces, as a dict).
_DEFAULT_OBSERVATION_SPACES = (
    _DEFAULTS["observation_spaces"][0]
    if len(_DEFAULTS["observation_spaces"]) == 1
    else tuple(_DEFAULTS["observation_spaces"])
)


def _int_box(n: int, low: int = 0) -> spaces.Box:
    return spaces.Box(low=low, high=_INT_HIGH, shape=(n,), dtype=np.int64)


class XlaPassOrderingEnv(gymnasium.Env):
    """Choose the next XLA pass; the reward follows the op count (see ``reward_space``).

    Args:
      benchmark_locs: the paper's benchmark locations: benchmark names (smoke, corpus or
        dataset modules: ``corpus/gpt2/NAME``, ``DIR/FAMILY/NAME``), module files, suite files
        (``*.txt``), directories, or hlogym.datasets objects (a Dataset, a Module, a list of
        them, a shipped dataset's name). Default: the smoke suite
        ``datasets/smoke/default_suite.txt``.
      benchmark: one benchmark, as CompilerGym's ``make(..., benchmark=...)`` takes it
        (the same as ``benchmark_locs=[benchmark]``; give one of the two).
      traj_limit: steps per episode (the episode is truncated after it).
      observation_spaces: one name or a list, from ``hlogym.observation_space_names()``:
        op_histogram (the paper's), cost, autophase, action_history, graph. One name gives
        that space; several give a Dict.
      reward_space: op_count (the paper's: -op count / initial op count), op_count_decrease,
        op_count_decrease_normalized (1.0 per episode = matched xla-cpu-default),
        op_count_log_ratio (log(previous / new op count): an episode sums to log(I / R)),
        lowest_op_count_log_ratio (the same for the episode's lowest op count so far), each
        optionally with "+shaped" (potential-based, Phi = -(FLOPs + 2 transcendentals),
        scaled by the initial value, using ``gamma``).
      actions: pass names forming the action space (default: every registered pass); a
        pipeline ("xla-cpu-default") or a sequence ("cse+dce") is one macro-action.
      benchmark_order: "cycle" (in order) or "random" (drawn with the reset seed).
      mask_in_info: put ``action_mask`` (which actions change the module) into every info.
      diagnostics_in_info: also put ``cache_hit`` and ``pass_ms`` into the step info (off by
        default: they differ between two runs of the same episode, which Gymnasium's
        determinism check rejects); ``last_diagnostics`` always has them.
      render_mode: "ansi" (a summary string), "hlo" (the HLO text), or "human" (prints the
        summary).
      max_op_count_growth, op_count_growth_allowance: the growth guard: a step that would grow
        the module past ``max_op_count_growth * initial op count + op_count_growth_allowance``
        instructions is rejected (state unchanged, ``info["error"]`` says why);
        ``max_op_count_growth <= 0`` turns it off.
      gamma, baseline, use_cache, cache_max_instructions, verify_each_step: see the C++
        EnvOptions (src/gym/environment.h).
    """

    metadata = {"render_modes": ["ansi", "hlo", "human"], "render_fps": 4}

    def __init__(
        self,
        benchmark_locs: Any = None,
        traj_limit: int = _DEFAULTS["traj_limit"],
        observation_spaces: Sequence[str] | str = _DEFAULT_OBSERVATION_SPACES,
        reward_space: str = _DEFAULTS["reward_space"],
        actions: Sequence[str] | None = None,
        benchmark_order: str = "cycle",
        mask_in_info: bool = False,
        diagnostics_in_info: bool = False,
        render_mode: str | None = None,
        gamma: float = _DEFAULTS["gamma"],
        baseline: str = _DEFAULTS["baseline"],
        use_cache: bool = _DEFAULTS["use_cache"],
        cache_max_instructions: int = _DEFAULTS["cache_max_instructions"],
        verify_each_step: bool = _DEFAULTS["verify_each_step"],
        max_op_count_growth: float = _DEFAULTS["max_op_count_growth"],
        op_count_growth_allowance: int = _DEFAULTS["op_count_growth_allowance"],
        benchmark: str | os.PathLike | None = None,
    ):
        super().__init__()
        if benchmark is not None:
            if benchmark_locs is not None:
                raise ValueError("hlogym: give benchmark or benchmark_locs, not both")
            benchmark_locs = [benchmark]
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}"
            )
        if benchmark_order not in ("cycle", "random"):
            raise ValueError(
                f"benchmark_order must be 'cycle' or 'random', not {benchmark_order!r}"
            )
        locs = datasets.benchmark_locs(benchmark_locs or DEFAULT_BENCHMARK_LOCS)
        self.benchmarks = list(_hlogym.expand_benchmark_locs(locs))
        self._single_space = isinstance(observation_spaces, str)
        obs_names = [observation_spaces] if self._single_space else list(observation_spaces)
        if not obs_names:
            raise ValueError("observation_spaces is empty")
        self._core = _hlogym.Env(
            actions=list(actions or []),
            observation_spaces=obs_names,
            reward_space=reward_space,
            traj_limit=int(traj_limit),
            gamma=float(gamma),
            baseline=baseline,
            use_cache=use_cache,
            cache_max_instructions=int(cache_max_instructions),
            verify_each_step=verify_each_step,
            max_op_count_growth=float(max_op_count_growth),
            op_count_growth_allowance=int(op_count_growth_allowance),
        )
        self.render_mode = render_mode
        self.benchmark_order = benchmark_order
        self.mask_in_info = mask_in_info
        self.diagnostics_in_info = diagnostics_in_info
        self.last_diagnostics: dict[str, Any] = {}
        self.traj_limit = int(traj_limit)
        self._next_benchmark = 0
        self._last_info: dict[str, Any] = {}

        self.action_space = spaces.Discrete(self._core.num_actions)
        subspaces = {name: self._space_for(name) for name in obs_names}
        self.observation_space = (
            subspaces[obs_names[0]] if self._single_space else spaces.Dict(subspaces)
        )
        self.reward_range = (-float("inf"), float("inf"))

    # ---- spaces -------------------------------------------------------------------------------
    def _space_for(self, name: str) -> spaces.Space:
        if name == "op_histogram":
            return _int_box(_hlogym.num_opcodes)
        if name == "cost":
            return spaces.Box(low=0.0, high=1e30, shape=(3,), dtype=np.float64)
        if name == "autophase":
            return _int_box(len(_hlogym.autophase_feature_names()))
        if name == "action_history":
            return _int_box(self._core.num_actions)
        if name == "graph":
            return spaces.Graph(
                node_space=spaces.Box(
                    low=-1,
                    high=_INT_HIGH,
                    shape=(len(_hlogym.graph_node_feature_names()),),
                    dtype=np.int64,
                ),
                edge_space=spaces.Box(low=0, high=_INT_HIGH, shape=(2,), dtype=np.int64),
            )
        raise ValueError(f"unknown observation space {name!r}")  # the core rejected it already

    def _convert(self, obs: dict) -> Any:
        out = {}
        for name, value in obs.items():
            if name == "graph":
                value = spaces.GraphInstance(
                    nodes=value["nodes"], edges=value["edges"], edge_links=value["edge_links"]
                )
            out[name] = value
        if self._single_space:
            return next(iter(out.values()))
        return out

    def _info(self, step_info: dict | None = None) -> dict[str, Any]:
        info = dict(step_info or {})
        info.update(
            benchmark=self._core.benchmark,
            op_count=self._core.op_count,
            initial_op_count=self._core.initial_op_count,
            episode_length=self._core.episode_length,
        )
        if self.mask_in_info:
            info["action_mask"] = self._core.action_mask()
        return info

    # ---- Gymnasium API ------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._next_benchmark = 0  # a seeded reset starts the benchmark cycle anew
        options = options or {}
        if "benchmark" in options:
            benchmark = options["benchmark"]
        elif self.benchmark_order == "random":
            benchmark = self.benchmarks[int(self.np_random.integers(len(self.benchmarks)))]
        else:
            benchmark = self.benchmarks[self._next_benchmark % len(self.benchmarks)]
            self._next_benchmark += 1
        try:
            obs = self._core.reset(os.fspath(benchmark))
        except FileNotFoundError as e:
            raise FileNotFoundError(f"hlogym: cannot reset to benchmark {benchmark!r}: {e}") from e
        except ValueError as e:
            raise ValueError(f"hlogym: cannot reset to benchmark {benchmark!r}: {e}") from e
        except RuntimeError as e:
            raise RuntimeError(f"hlogym: cannot reset to benchmark {benchmark!r}: {e}") from e
        self._last_info = self._info()
        return self._convert(obs), self._last_info

    def step(self, action):
        if not self._core.has_state:
            raise RuntimeError("hlogym: call reset() before step()")
        if not self.action_space.contains(action) and not (
            isinstance(action, (int, np.integer)) and 0 <= int(action) < self.action_space.n
        ):
            raise ValueError(f"hlogym: action {action!r} is not in {self.action_space}")
        obs, reward, terminated, truncated, step_info = self._core.step(int(action))
        self.last_diagnostics = {k: step_info[k] for k in ("cache_hit", "pass_ms")}
        if not self.diagnostics_in_info:
            for k in ("cache_hit", "pass_ms"):
                del step_info[k]
        self._last_info = self._info(step_info)
        return self._convert(obs), float(reward), bool(terminated), bool(truncated), self._last_info

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode (use 'ansi', 'hlo' or 'human')"
            )
            return None
        if self.render_mode == "hlo":
            return self._core.hlo_text()
        text = self.summary()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass

    # ---- extras -------------------------------------------------------------------------------
    def summary(self) -> str:
        if not self._core.has_state:
            return "hlogym: no episode (call reset)"
        history = [self._core.actions[a] if a >= 0 else "?" for a in self._core.action_history]
        return (
            f"benchmark {self._core.benchmark}: op count {self._core.op_count} "
            f"(initial {self._core.initial_op_count}), step {self._core.episode_length}/"
            f"{self.traj_limit}, episode reward {self._core.episode_reward:.6g}, "
            f"passes [{', '.join(history)}]"
        )

    def action_masks(self) -> np.ndarray:
        """Which actions change the module now (sb3-contrib's MaskablePPO convention)."""
        return self._core.action_mask()

    @property
    def actions(self) -> list[str]:
        return list(self._core.actions)

    @property
    def core(self) -> _hlogym.Env:
        """The C++ environment (fork, record, replay, validate, hlo_text, cache_stats, ...)."""
        return self._core

    def record(self) -> str:
        return self._core.record()

    def write_record(self, path: str | os.PathLike) -> None:
        self._core.write_record(os.fspath(path))

    def replay(self, record_json: str):
        return self._convert(self._core.replay(record_json))

    def validate(self) -> dict[str, Any]:
        return self._core.validate()

    def hlo_text(self) -> str:
        return self._core.hlo_text()


def register() -> None:
    """Registers ``hlogym/XlaPassOrdering-v0`` with Gymnasium (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="hlogym.env:XlaPassOrderingEnv")


def make(id: str = ENV_ID, **kwargs) -> gymnasium.Env:  # noqa: A002 (Gymnasium's name)
    """``gymnasium.make`` for hlogym: ``hlogym.make(benchmark_locs=[...], traj_limit=10, ...)``."""
    register()
    return gymnasium.make(id, **kwargs)
