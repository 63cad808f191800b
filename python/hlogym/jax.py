"""Try hlogym on a JAX function in one line.

    import hlogym.jax
    fast = hlogym.jax.optimize(fn, x, w)          # the shipped agent, auto, by default
    fast(x, w)                                    # == fn(x, w), same pytree of outputs
    fast.passes, fast.op_counts                   # what the agent chose and what it did
    fast = hlogym.jax.optimize(fn, x, w, check_speed=True)
    fast.speed                                    # timed against jax.jit; the faster one runs

``optimize`` lowers ``jax.jit(fn, keep_unused=True)`` on the example arguments to HLO text,
optimizes it with hlogym's extension (the agent picks a pass sequence, checked as ``hlogym search``
checks it, and the passes run on the text; the learned policies, which need the command line's
LibTorch plugin, run through the command line), compiles the result with XLA through
``hlogym.xla`` (XLA's full pipeline still runs after hlogym's passes) and returns a callable
taking arguments of the examples' structure, shapes and dtypes. Keyword arguments and static
arguments are not supported: close over them instead.

Fewer instructions do not always run faster. With ``check_speed=True`` the optimized module and
the plain one (what ``jax.jit`` compiles) are timed on the example arguments by
``hlogym.timing``'s harness (paired rounds, a bootstrap interval), and the optimized one is
kept only when its interval lies above 1 (faster beyond the noise of that measurement);
otherwise the function runs the plain module (``passes`` is then empty). ``speed`` says what
was measured and which one was chosen.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from . import xla as _xla

AGENTS = ("auto", "coreset", "greedy", "beam", "random", "evo", "default", "default-fp", "none")
# Agents named with an argument: auto:PRIOR (another auto prior), coreset:DIR (another coreset
# model), policy:DIR and policy-beam:DIR (a trained policy, its most likely pass or a beam over it),
# auto-policy:DIR (auto with the policy as its guide).
AGENT_PREFIXES = ("auto:", "coreset:", "policy:", "policy-beam:", "auto-policy:")


@dataclass
class OptimizedFunction:
    """The callable ``optimize`` returns; see the module docstring."""

    fn: Callable
    passes: list[str]
    hlo_original: str
    hlo_optimized: str
    op_counts: dict
    platform: str
    speed: dict | None  # check_speed's measurement and choice; None without check_speed
    _executable: Any = field(repr=False)
    _xla: Any = field(repr=False)
    _in_tree: Any = field(repr=False)
    _in_avals: list = field(repr=False)
    _out_tree: Any = field(repr=False)

    def __call__(self, *args):
        import jax
        import numpy as np

        leaves, tree = jax.tree_util.tree_flatten((args, {}))
        if tree != self._in_tree:
            raise TypeError(
                f"hlogym.jax: arguments have structure {tree}, the examples had {self._in_tree}"
            )
        bufs = []
        for i, (a, (shape, dtype)) in enumerate(zip(leaves, self._in_avals)):
            a_shape = tuple(np.shape(a))
            a_dtype = np.dtype(getattr(a, "dtype", np.asarray(a).dtype))
            if a_shape != shape or a_dtype != dtype:
                raise TypeError(
                    f"hlogym.jax: argument leaf {i} is {a_dtype}{list(a_shape)}, "
                    f"the example was {dtype}{list(shape)}"
                )
            bufs.append(jax.device_put(a, self._xla.device))
        outs = self._xla.execute(self._executable, bufs)
        return jax.tree_util.tree_unflatten(self._out_tree, outs)


# Agents the extension cannot make: they live in the command line's LibTorch plugin.
CLI_ONLY_PREFIXES = ("policy:", "policy-beam:", "auto-policy:")


def _search(path: Path, agent: str, seed: int, budget: int | None, cli) -> list[str] | None:
    """The passes `agent` finds for the module at `path`, as `hlogym search` finds them; None when
    its answer failed its own check."""
    if cli is None and not agent.startswith(CLI_ONLY_PREFIXES):
        from . import _hlogym

        found = _hlogym.search(str(path), agent, seed, budget or 0)
        return list(found["passes"]) if found["valid"] else None
    from .cli import Hlogym

    return (cli or Hlogym()).search(path, agent, seed, budget)


def _choose_passes(path: Path, agent, seed: int, budget: int | None, cli) -> list[str] | None:
    """The pass list for `agent`, or None for the xla-cpu-default pipeline (also when the agent's
    answer failed its own check: never a result that did)."""
    if isinstance(agent, str):
        if agent not in AGENTS and not agent.startswith(AGENT_PREFIXES):
            raise ValueError(
                f"agent must be one of {AGENTS}, start with one of {AGENT_PREFIXES}, "
                f"or be a list of pass names, not {agent!r}"
            )
        if agent == "default":
            return None
        if agent == "none":
            return []
        if agent == "default-fp":
            from .timing import RUNTIME_CANDIDATES

            return list(RUNTIME_CANDIDATES["default-fp"])
        return _search(path, agent, seed, budget, cli)
    passes = list(agent)
    if not all(isinstance(p, str) for p in passes):
        raise TypeError("agent: a pass list must hold pass names (str)")
    from . import _hlogym

    known = {name for name, _ in _hlogym.list_passes()} | set(_hlogym.list_pipelines())
    unknown = [p for p in passes if p not in known]
    if unknown:
        raise ValueError(f"agent: unknown passes {unknown} (see `hlogym list-passes`)")
    return passes


def _check_one_partition(text: str, devices: int = 1) -> None:
    """optimize compiles for one device: a program split over several (jax.pmap, shard_map,
    sharded inputs) would be handed back to XLA with per-device shapes once hlogym has
    partitioned it, so it is refused with the reason instead. devices: what jax compiles the
    lowering for; the module's own header says it where XLA wrote it (num_partitions)."""
    m = re.search(r"\bnum_partitions=(\d+)", text.split("\n", 1)[0])
    devices = max(devices, int(m.group(1)) if m else 1)
    if devices > 1:
        raise ValueError(
            f"optimize: fn is compiled for {devices} devices (jax.pmap, jax.shard_map or "
            "sharded inputs), and hlogym.jax.optimize compiles for one; optimize its HLO "
            "with `hlogym opt` or `hlogym eval` instead"
        )


def optimize(
    fn: Callable,
    *example_args,
    agent: str | Sequence[str] = "auto",
    platform: str = "cpu",
    seed: int = 0,
    budget: int | None = None,
    hlogym_binary: str | os.PathLike | None = None,
    xla_backend: _xla.Xla | None = None,
    check_speed: bool = False,
    target_seconds: float = 1.0,
) -> OptimizedFunction:
    """Lower fn on example_args, optimize its HLO with an hlogym agent, compile it with XLA.

    agent: 'auto' (default: the shipped agent, never worse than xla-cpu-default and checked for
      equivalence), 'auto:PRIOR', 'coreset' (one learned choice among known-good sequences),
      'coreset:DIR', 'policy:DIR', 'policy-beam:DIR', 'auto-policy:DIR', 'greedy', 'beam', 'random',
      'evo' (``hlogym search --algo``; budget is its --budget), 'default' (the xla-cpu-default
      pipeline), 'default-fp' (the default, then simplify-fp-conversions: bf16 computed in f32
      without rounding between operations, as XLA:GPU does with excess precision allowed; see
      hlogym.timing.RUNTIME_CANDIDATES), 'none' (hlogym's text unchanged), or a list of pass
      and pipeline names applied in order.
    platform: XLA platform ('cpu', or 'gpu' when jaxlib has one).
    hlogym_binary: run the agent through this command line (`hlogym search`) instead of the
      extension.
    check_speed: time the optimized and the plain module on example_args (about target_seconds
      each) and run the optimized one only if it is faster beyond noise (see the module doc).
    """
    import jax

    if not callable(fn):
        raise TypeError(f"optimize: fn must be callable, not {type(fn).__name__}")
    from . import _hlogym

    cli = None
    if hlogym_binary is not None:
        from .cli import Hlogym

        cli = Hlogym(hlogym_binary)
    lowered = jax.jit(fn, keep_unused=True).lower(*example_args)
    text = lowered.as_text(dialect="hlo")
    # jax keeps the device count beside the text, in its (private) compile arguments.
    compile_args = getattr(getattr(lowered, "_lowering", None), "compile_args", None) or {}
    _check_one_partition(text, int(compile_args.get("num_devices", 1)))
    in_leaves, in_tree = jax.tree_util.tree_flatten((example_args, {}))
    import numpy as np

    in_avals = [
        (tuple(np.shape(a)), np.dtype(getattr(a, "dtype", np.asarray(a).dtype))) for a in in_leaves
    ]
    with tempfile.TemporaryDirectory(prefix="hlogym_jax_") as tmp:
        path = Path(tmp) / "module.hlo"
        path.write_text(text)
        passes = _choose_passes(path, agent, seed, budget, cli)
    if passes is None:
        optimized = _hlogym.optimize_hlo(text, ["xla-cpu-default"])
        passes = ["<xla-cpu-default>"]
    else:
        optimized = _hlogym.optimize_hlo(text, passes)
    op_counts = {"original": _hlogym.op_count(text), "optimized": _hlogym.op_count(optimized)}
    x = xla_backend or _xla.Xla(platform)
    exe = x.compile(optimized)
    speed = None
    if check_speed:
        plain = x.compile(text)
        speed = _faster_of(x, plain, exe, in_leaves, seed, target_seconds)
        speed["agent_passes"] = passes
        if speed["chosen"] == "jax.jit":
            exe, optimized, passes = plain, text, []
            op_counts["optimized"] = op_counts["original"]
    return OptimizedFunction(
        fn=fn,
        passes=passes,
        hlo_original=text,
        hlo_optimized=optimized,
        op_counts=op_counts,
        platform=x.platform,
        speed=speed,
        _executable=exe,
        _xla=x,
        _in_tree=in_tree,
        _in_avals=in_avals,
        _out_tree=lowered.out_tree,
    )


def _faster_of(x, plain, optimized, inputs, seed: int, target_seconds: float) -> dict:
    """Times the plain and the optimized executable with the harness; the optimized one is
    chosen only when it is faster beyond the measurement's noise (Speedup.gain)."""
    import numpy as np

    from . import timing

    times = timing.measure(
        x,
        {"jax.jit": plain, "optimized": optimized},
        [np.asarray(a) for a in inputs],
        target_seconds=target_seconds,
        seed=seed,
    )
    s = timing.speedup(times["jax.jit"], times["optimized"], seed=seed)
    return {
        **s.as_dict(),
        "chosen": "optimized" if s.gain else "jax.jit",
        "median_s": timing.medians(times),
    }


__all__ = ["optimize", "OptimizedFunction", "AGENTS", "AGENT_PREFIXES"]
