"""Run time on real XLA, the one place hlogym times XLA executables: paired rounds
(`measure`), their medians, the speed-up of one variant over another with a bootstrap interval
and a verdict (`speedup`), and the candidate sequences the run-time objective times
(RUNTIME_CANDIDATES). hlogym.jax and hlogym.xla_bench both use it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

# A speed-up within MARGIN of 1 is never called faster or slower, whatever its interval. A run's
# interval covers the noise within that process only; between two runs of the test split on
# this project's 2-core machine a ratio moves by about 3% at the 90th percentile, so a 2%
# margin gives the same verdict twice on only about 85% of graphs, 5% on 96% or more (docs/xla.md,
# "Run time on XLA:CPU", has today's numbers).
MARGIN = 0.05
CONFIDENCE = 0.95
RESAMPLES = 2000
VERDICTS = ("faster", "slower", "within noise")


def measure(
    x,
    executables: dict,
    inputs,
    *,
    warmup: int = 3,
    min_rounds: int = 10,
    max_rounds: int = 1000,
    target_seconds: float = 1.0,
    seed: int = 0,
) -> dict[str, list[float]]:
    """Seconds per execution of each executable (same signature, same inputs, already on the
    device; outputs waited for), in paired rounds: every round runs each executable once, in an
    order shuffled per round (seeded), so neither the order nor the machine's slow drift favours
    one; entry i of every list comes from round i. Warm-up runs first, then as many rounds as fit
    target_seconds per executable (estimated from the warm-up), within the bounds. An executable
    that donates its inputs (a training step updating weights in place) gets fresh buffers
    before each run, outside the timed span."""
    buffers = x.put(inputs)
    donating = set()  # executables that consume (donate) their input buffers
    for k, exe in executables.items():
        x.execute(exe, buffers)  # first run: allocation, page faults
        if any(b.is_deleted() for b in buffers):
            donating.add(k)
            buffers = x.put(inputs)

    def run(k) -> float:
        nonlocal buffers
        if k in donating:
            buffers = x.put(inputs)  # fresh inputs, outside the timed span
        t0 = time.perf_counter()
        x.execute(executables[k], buffers)
        return time.perf_counter() - t0

    estimate = {k: sum(run(k) for _ in range(max(1, warmup))) / max(1, warmup) for k in executables}
    slowest = max(estimate.values(), default=0.0)
    rounds = max_rounds if slowest <= 0 else int(target_seconds / slowest)
    rounds = min(max_rounds, max(min_rounds, rounds))
    rng = np.random.default_rng(seed)
    names = list(executables)
    times: dict[str, list[float]] = {k: [] for k in names}
    for _ in range(rounds):
        for i in rng.permutation(len(names)):
            times[names[i]].append(run(names[i]))
    return times


def medians(times: dict[str, list[float]]) -> dict[str, float]:
    """The median seconds of each variant `measure` timed."""
    return {k: float(np.median(v)) for k, v in times.items()}


@dataclass(frozen=True)
class Speedup:
    """t_base / t_new over paired rounds: `ratio` is the median of the per-round ratios (a round
    the machine was slow in slows both sides, and cancels), [low, high] its bootstrap percentile
    interval (rounds resampled whole), `verdict` one of VERDICTS."""

    ratio: float
    low: float
    high: float
    verdict: str
    rounds: int

    @property
    def gain(self) -> bool:
        """Faster beyond this run's own noise (the interval lies above 1): the bar for choosing
        the faster of two modules, which a second measurement then confirms."""
        return self.low > 1

    def as_dict(self) -> dict:
        return {
            "ratio": self.ratio,
            "low": self.low,
            "high": self.high,
            "verdict": self.verdict,
            "rounds": self.rounds,
        }


def verdict(ratio: float, low: float, high: float, margin: float = MARGIN) -> str:
    """'faster' when the interval lies above 1 and the ratio is at least 1 + margin, 'slower'
    in the mirror case, 'within noise' otherwise."""
    if low > 1 and ratio >= 1 + margin:
        return "faster"
    if high < 1 and ratio <= 1 / (1 + margin):
        return "slower"
    return "within noise"


def speedup(
    base: Sequence[float],
    new: Sequence[float],
    *,
    margin: float = MARGIN,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Speedup:
    """How much faster `new` runs than `base`, from the paired rounds of `measure`."""
    if len(base) != len(new) or not base:
        raise ValueError(f"speedup: need paired rounds, got {len(base)} and {len(new)} times")
    per_round = np.asarray(base, dtype=float) / np.asarray(new, dtype=float)
    idx = np.random.default_rng(seed).integers(0, len(per_round), (resamples, len(per_round)))
    resampled = np.median(per_round[idx], axis=1)
    low, high = np.quantile(resampled, [(1 - confidence) / 2, (1 + confidence) / 2])
    ratio = float(np.median(per_round))
    return Speedup(
        ratio, float(low), float(high), verdict(ratio, low, high, margin), len(per_round)
    )


# --objective runtime: sequences from other agents and pipelines, each a candidate for the
# fastest variant (a str: `hlogym search --algo`; a list: the passes themselves).
# "default-fp" is xla-cpu-default followed by simplify-fp-conversions, which removes the
# f32 -> bf16 -> f32 round trips that float normalization leaves around every bf16 operation
# XLA:CPU computes in f32. XLA:GPU runs it right after its float normalization whenever excess
# precision is allowed (xla_allow_excess_precision, on by default, also in JAX); XLA:CPU only in
# oneDNN builds, which jaxlib is not. The prefix (deduplication and CSE before inlining) is the
# one the greedy agent's sequences start with.
RUNTIME_CANDIDATES = {
    "auto": "auto",
    "greedy": "greedy",
    "default-exact": ["xla-cpu-default-exact"],
    "default-fp": [
        "computation-deduplicator",
        "cse",
        "algsimp",
        "cse",
        "xla-cpu-default",
        "simplify-fp-conversions",
        "xla-cpu-simplification",
        "cse",
    ],
}
