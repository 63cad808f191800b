"""Optimized graphs handed back to real XLA (issue 9): hlogym.xla, hlogym.jax.optimize, and XLA
running original and optimized modules on the same inputs.

(a) hlogym.xla itself: parse errors, signatures, deterministic inputs, run, comparison rules.
(b) hlogym.jax.optimize on a small MLP and on a function with tuple/dict outputs.
(c) Same results on XLA: XLA compiles the original and hlogym's optimized text and runs both on
    the same deterministic random inputs (hlogym.xla.Xla.random_inputs, seed 0); outputs must
    agree (ints/pred exactly, f32 rtol 1e-4/atol 1e-5, bf16 graphs within 2e-2 of the scale).
    - every module of datasets/corpus/default_suite.txt: after xla-cpu-default and after the
      greedy agent's sequence (`hlogym search --algo greedy`);
    - a deterministic sample of the rest of the corpus, SAMPLE_PER_FAMILY per family (the
      smallest crc32 of the name among modules of at most SAMPLE_MAX_BYTES): after
      xla-cpu-default.
    Every corpus module after xla-cpu-default is `python -m hlogym.xla_bench --split all
    --agent none --no-time` (README); it takes far longer than this tier's budget.
    Compiles here use xla_backend_optimization_level=0 (XLA's HLO passes run in full; LLVM's
    optimizations are skipped, which saves compile time).
XLA parsing hlogym's text after xla-cpu-default and random sequences for every corpus module is
test_xla_oracle.py's part (a); compiling here parses the greedy agent's texts too.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
HLOGYM = REPO / "build" / "hlogym"
CORPUS = REPO / "datasets" / "corpus"

jax = pytest.importorskip("jax")
if not HLOGYM.exists():  # scripts/test.sh builds it; a missing binary is a failure, not a skip
    raise RuntimeError(f"{HLOGYM} is not built; run scripts/setup.sh")

import ml_dtypes  # noqa: E402

from hlogym import timing, xla, xla_bench  # noqa: E402
from hlogym.cli import Hlogym  # noqa: E402
from hlogym.xla_bench import (  # noqa: E402
    DEFAULT_SUITE,
    FAST_COMPILE,
    corpus_manifest,
    module_name,
    resolve_modules,
)

FAST = FAST_COMPILE
SAMPLE_PER_FAMILY = 1
SAMPLE_MAX_BYTES = 80_000


@functools.lru_cache(maxsize=None)
def X() -> xla.Xla:  # noqa: N802
    return xla.Xla("cpu")


@functools.lru_cache(maxsize=None)
def HG() -> Hlogym:  # noqa: N802
    return Hlogym(HLOGYM)


ADD = """HloModule add
ENTRY e {
  a = f32[3] parameter(0)
  b = (s32[2], pred[]) parameter(1)
  i = s32[2] get-tuple-element(b), index=0
  c = f32[3] add(a, a)
  ROOT t = (f32[3], s32[2]) tuple(c, i)
}
"""


# --- (a) hlogym.xla ---------------------------------------------------------------------------


def test_parse_rejects_bad_text_with_xla_message():
    with pytest.raises(xla.XlaError, match="XLA rejected the HLO text"):
        X().parse("HloModule m\nENTRY e { ROOT p = f32[] parameter(0)")
    with pytest.raises(TypeError):
        X().parse(b"HloModule m")


def test_unknown_platform_and_compile_option():
    with pytest.raises(ValueError, match="platform"):
        xla.Xla("tpu9")
    with pytest.raises(xla.XlaError, match="xla_no_such_option"):
        X().compile(ADD, {"xla_no_such_option": 1})


def test_signature_flattens_tuple_parameters_and_results():
    params, results = X().signature(ADD)
    assert [(p.shape, p.element_type) for p in params] == [
        ((3,), "f32"),
        ((2,), "s32"),
        ((), "pred"),
    ]
    assert [(r.shape, r.element_type) for r in results] == [((3,), "f32"), ((2,), "s32")]


def test_random_inputs_are_deterministic_and_typed():
    a, b = X().random_inputs(ADD, seed=3), X().random_inputs(ADD, seed=3)
    c = X().random_inputs(ADD, seed=4)
    assert [x.dtype for x in a] == [np.float32, np.int32, np.bool_]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    assert np.all(np.abs(a[0]) <= 1) and np.all((a[1] >= 0) & (a[1] <= 7))


MIXED = """HloModule mixed
ENTRY e {
  w = bf16[4,3] parameter(0)
  t = (s32[2], pred[]) parameter(1)
  v = f32[5] parameter(2)
  i = s32[2] get-tuple-element(t), index=0
  g = bf16[2,3] gather(w, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  s = f32[5] sqrt(v)
  ROOT r = (bf16[2,3], f32[5]) tuple(g, s)
}
"""


@pytest.mark.parametrize("which", ["mixed", "gpt2_train_L2_d128_h8_s64_b2_bf16_adamw"])
def test_random_inputs_are_hlogym_runs_inputs(which, tmp_path):
    """One generator: the same seed gives the same inputs, bit for bit, as `hlogym run --seed`
    (bf16 raw bits, a tuple parameter, gather indices in bounds, a sqrt operand drawn positive;
    a bf16 GPT-2 training step with its optimizer state)."""
    if which == "mixed":
        path = tmp_path / "mixed.hlo"
        path.write_text(MIXED)
    else:
        path = CORPUS / corpus_manifest()[which]["path"]
    HG()("run", path, "--seed", "3", "--io", tmp_path / "io")
    theirs = xla.load_io_dir(tmp_path / "io", "inputs")
    ours = X().random_inputs(HG().fmt(path), seed=3)
    assert len(ours) == len(theirs) >= 3
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))
    if which == "mixed":
        w, idx, flag, v = ours
        assert w.dtype == ml_dtypes.bfloat16 and flag.dtype == np.bool_
        assert np.all((idx >= 0) & (idx < 4)) and np.all(v >= 0.5)


def test_resnet_inference_is_finite_on_xla_with_the_projects_inputs():
    """Batch-norm variances are drawn positive: XLA's own output is finite, so the agreement
    of anything with it means something (with inputs uniform in [-1, 1] it was all NaN)."""
    name = "resnet_infer_r18_w4_px16_cifar_b2_f32"
    text = HG().fmt(CORPUS / corpus_manifest()[name]["path"])
    inputs = X().random_inputs(text, seed=0)
    outs = X().run(X().compile(text, FAST), inputs)
    assert all(np.isfinite(o).all() for o in outs if o.dtype.kind == "f")
    assert xla.vacuous_reason(outs, inputs) == ""
    # The mutant that the old inputs were: a negative variance gives NaN everywhere, which
    # the check reports as vacuous instead of comparing NaN with NaN.
    flipped = [-np.abs(a) if a.dtype.kind == "f" and a.min() >= 0.5 else a for a in inputs]
    nan_outs = X().run(X().compile(text, FAST), flipped)
    assert "all NaN" in xla.vacuous_reason(nan_outs, flipped)


NAN_MODULE = """HloModule all_nan
ENTRY e {
  x = f32[8] parameter(0)
  three = f32[] constant(3)
  tb = f32[8] broadcast(three), dimensions={}
  d = f32[8] subtract(x, tb)
  ROOT n = f32[8] sqrt(d)
}
"""


def test_vacuous_comparisons_are_not_judged():
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    nan = np.full(8, np.nan, np.float32)
    assert "all NaN" in xla.vacuous_reason([x, nan], [x])
    assert "all infinite" in xla.vacuous_reason([np.full(2, np.inf, np.float32)], [x])
    assert "constant" in xla.vacuous_reason([np.zeros(8, np.float32), np.ones(2, np.int32)], [x])
    assert xla.vacuous_reason([np.zeros(8, np.float32)], [np.ones(8, np.float32)]) == ""
    assert xla.vacuous_reason([np.float32(2.5)], [x]) == ""  # a scalar: a sum, say
    assert xla.vacuous_reason([x, np.zeros(1, np.float32)], [x]) == ""
    # agree: NaN == NaN used to pass; now the comparison is not judged, and not ok.
    inputs = X().random_inputs(NAN_MODULE, seed=0)
    want = X().run(X().compile(NAN_MODULE), inputs)
    c = xla.agree(X(), [w.copy() for w in want], want, NAN_MODULE, inputs)
    assert not c.ok and not c.judged and "not judged" in c.message
    # A result that differs from the NaNs is still a judged mismatch.
    c = xla.agree(X(), [np.zeros(8, np.float32)], want, NAN_MODULE, inputs)
    assert not c.ok and c.judged


def test_run_computes_the_module():
    exe = X().compile(ADD)
    a = np.array([1.5, -2, 3], np.float32)
    out = X().run(exe, [a, np.array([7, -1], np.int32), np.array(True)])
    np.testing.assert_array_equal(out[0], 2 * a)
    np.testing.assert_array_equal(out[1], [7, -1])


def test_measure_pairs_rounds():
    from hlogym.timing import measure

    exe = X().compile(ADD)
    inputs = [np.array([1.5, -2, 3], np.float32), np.array([7, -1], np.int32), np.array(True)]
    times = measure(X(), {"a": exe, "b": exe}, inputs, warmup=1, min_rounds=7, max_rounds=7)
    assert set(times) == {"a", "b"} and all(len(v) == 7 for v in times.values())
    assert all(t > 0 for v in times.values() for t in v)
    # A module that donates its input buffer (a training step updating its weights in place)
    # consumes them on every run: each run gets fresh ones.
    donating = X().compile(
        "HloModule m, input_output_alias={ {}: (0, {}, may-alias) }\n"
        "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT a = f32[4] add(p, p)\n}\n"
    )
    buffers = X().put([np.ones(4, np.float32)])
    X().execute(donating, buffers)
    assert buffers[0].is_deleted()
    times = measure(
        X(),
        {"a": donating, "b": donating},
        [np.ones(4, np.float32)],
        warmup=1,
        min_rounds=3,
        max_rounds=3,
    )
    assert all(len(v) == 3 for v in times.values())


def test_speedup_interval_and_verdicts():
    rng = np.random.default_rng(0)
    # The machine drifts 10x over the run; each round pairs the two, so the ratio stays exact.
    drift = np.exp(rng.uniform(0, np.log(10), 60))
    s = timing.speedup(list(drift * 1.10), list(drift))
    assert s.ratio == pytest.approx(1.10) and s.verdict == "faster" and s.rounds == 60
    assert s.low == pytest.approx(1.10) and s.high == pytest.approx(1.10)
    s = timing.speedup(list(drift), list(drift * 1.10))
    assert s.verdict == "slower" and s.ratio == pytest.approx(1 / 1.10)
    # Noise of +-20% per run around a true 5% speed-up: an interval around 1.05 that excludes 1.
    base = drift * 1.05 * rng.uniform(0.8, 1.2, 60)
    new = drift * rng.uniform(0.8, 1.2, 60)
    s = timing.speedup(list(base), list(new))
    assert s.low < 1.05 < s.high and s.high - s.low > 0.02
    # Below the margin, or an interval that holds 1: within noise (but a gain, to choose by).
    small = timing.speedup(list(drift * 1.01), list(drift))
    assert small.verdict == "within noise" and small.gain
    noisy = timing.speedup(list(drift * rng.uniform(0.5, 1.5, 60)), list(drift))
    assert noisy.low < 1 < noisy.high and noisy.verdict == "within noise" and not noisy.gain
    assert timing.verdict(1.5, 0.99, 2.0) == "within noise"
    assert timing.verdict(1.5, 1.01, 2.0) == "faster"
    assert timing.verdict(0.5, 0.4, 0.99) == "slower"
    with pytest.raises(ValueError, match="paired"):
        timing.speedup([1.0, 2.0], [1.0])


def test_compare_outputs_rules():
    f = np.array([1.0, np.nan, np.inf, 1e-7], np.float32)
    assert xla.compare_outputs([f], [f.copy()]).ok  # NaN == NaN, inf == inf
    assert xla.compare_outputs([f + np.float32(5e-5) * np.array([1, 0, 0, 0], np.float32)], [f]).ok
    c = xla.compare_outputs([f * np.float32(1.001)], [f])
    assert not c.ok and "leaf 0" in c.message
    assert not xla.compare_outputs([np.array([np.nan], np.float32)], [np.array([0], np.float32)]).ok
    assert not xla.compare_outputs(
        [np.array([np.inf], np.float32)], [np.array([-np.inf], np.float32)]
    ).ok
    i = np.array([1, 2, 3], np.int32)
    assert xla.compare_outputs([i], [i.copy()]).ok
    assert not xla.compare_outputs([i + np.array([0, 0, 1], np.int32)], [i]).ok
    assert not xla.compare_outputs([i], [i.astype(np.int64)]).ok  # dtype must match
    assert not xla.compare_outputs([i], [i, i]).ok
    bf = np.array([100, 1], ml_dtypes.bfloat16)
    assert xla.compare_outputs([bf], [np.array([101, 2], ml_dtypes.bfloat16)]).ok  # 2% scale
    assert not xla.compare_outputs([bf], [np.array([110, 1], ml_dtypes.bfloat16)]).ok


# --- (b) hlogym.jax.optimize ------------------------------------------------------------------


def _mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return jax.nn.log_softmax(x @ w + b)


def _mlp_args():
    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((16, 32)).astype(np.float32) / 4, np.zeros(32, np.float32)),
        (rng.standard_normal((32, 32)).astype(np.float32) / 6, np.full(32, 0.1, np.float32)),
        (rng.standard_normal((32, 10)).astype(np.float32) / 6, np.ones(10, np.float32)),
    ]
    return params, rng.standard_normal((8, 16)).astype(np.float32)


def test_jax_optimize_mlp_default_agent():
    import hlogym.jax as hj

    params, x = _mlp_args()
    fast = hj.optimize(_mlp, params, x)
    # the shipped agent, auto: never ends above the default pipeline
    assert fast.passes
    default = hj.optimize(_mlp, params, x, agent="default")
    assert (
        fast.op_counts["optimized"] <= default.op_counts["optimized"] < fast.op_counts["original"]
    )
    want = np.asarray(_mlp(params, x))
    np.testing.assert_allclose(np.asarray(fast(params, x)), want, rtol=1e-5, atol=1e-5)
    # other inputs of the same shapes: still the same function
    params2 = [(w * 2, b - 1) for w, b in params]
    np.testing.assert_allclose(
        np.asarray(fast(params2, x + 1)), np.asarray(_mlp(params2, x + 1)), rtol=1e-4, atol=1e-4
    )
    with pytest.raises(TypeError, match="leaf"):
        fast(params, x[:4])
    with pytest.raises(TypeError, match="structure"):
        fast(params[:2], x)


def test_jax_optimize_refuses_programs_split_over_devices():
    # A pmap step as XLA receives it (4 partitions): handed back after hlogym's partitioner, it
    # would carry one device's shapes, so optimize says why it cannot take it.
    import hlogym.jax as hj

    probe = REPO / "datasets" / "probes" / "partitioned" / "partitioned" / "jit__fun.hlo.zst"
    text = subprocess.run(
        ["zstd", "-d", "-q", "-c", str(probe)], check=True, capture_output=True, text=True
    ).stdout
    with pytest.raises(ValueError, match="compiled for 4 devices"):
        hj._check_one_partition(text)
    one = text.replace("num_partitions=4", "num_partitions=1")
    hj._check_one_partition(one)
    with pytest.raises(ValueError, match="compiled for 2 devices"):
        hj._check_one_partition(one, devices=2)  # as jax says it for a shard_map over 2


def test_jax_optimize_tuple_and_dict_outputs():
    import hlogym.jax as hj

    def f(a, b):
        s = a @ b
        return s + 1.0, {
            "max": jax.numpy.max(s, axis=0),
            "n": jax.numpy.sum(a > 0),
            "same": (a * 1.0 + 0.0) - a,
        }

    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((5, 3)).astype(np.float32)
    for agent in ("default", ["algsimp", "cse", "dce"], "none"):
        fast = hj.optimize(f, a, b, agent=agent)
        got, want = fast(a, b), f(a, b)
        assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_jax_optimize_named_agents():
    import hlogym.jax as hj

    params, x = _mlp_args()
    want = np.asarray(_mlp(params, x))
    for agent in (
        "auto:" + str(REPO / "datasets" / "policies" / "auto"),
        "coreset",
        "coreset:" + str(REPO / "datasets" / "policies" / "coreset"),
        "policy:" + str(REPO / "datasets" / "policies" / "ppo-gpt2"),
        "policy:ppo-gpt2",
    ):  # the shipped models by their names
        fast = hj.optimize(_mlp, params, x, agent=agent)
        assert fast.op_counts["optimized"] < fast.op_counts["original"], agent
        np.testing.assert_allclose(np.asarray(fast(params, x)), want, rtol=1e-5, atol=1e-5)


def test_jax_optimize_default_fp_leaves_bf16_roundings_out():
    """agent='default-fp': the default pipeline, then simplify-fp-conversions; a bf16 MLP keeps
    fewer converts than with 'default', and its outputs lie within bf16 rounding of jax.jit's."""
    import hlogym.jax as hj

    params, x = _mlp_args()
    params = [(w.astype(jax.numpy.bfloat16), b.astype(jax.numpy.bfloat16)) for w, b in params]
    x = x.astype(jax.numpy.bfloat16)
    fp = hj.optimize(_mlp, params, x, agent="default-fp")
    default = hj.optimize(_mlp, params, x, agent="default")
    assert fp.passes == timing.RUNTIME_CANDIDATES["default-fp"]
    assert fp.hlo_optimized.count(" convert(") < default.hlo_optimized.count(" convert(")
    got, want = np.asarray(fp(params, x), np.float32), np.asarray(_mlp(params, x), np.float32)
    assert fp(params, x).dtype == jax.numpy.bfloat16
    np.testing.assert_allclose(got, want, rtol=5e-2, atol=5e-2)
    assert not np.array_equal(got, np.zeros_like(got))


def test_jax_optimize_check_speed_runs_the_faster():
    """check_speed times both modules with the harness: the optimized one runs only when it is
    faster beyond the noise; a slower or undecided one falls back to the plain module."""
    import hlogym.jax as hj

    params, x = _mlp_args()
    want = np.asarray(_mlp(params, x))
    fast = hj.optimize(_mlp, params, x, check_speed=True, target_seconds=0.05)
    s = fast.speed
    assert s["verdict"] in timing.VERDICTS and s["low"] <= s["ratio"] <= s["high"]
    assert s["chosen"] == ("optimized" if s["low"] > 1 else "jax.jit")
    assert (fast.passes == []) == (s["chosen"] == "jax.jit") and s["agent_passes"]
    np.testing.assert_allclose(np.asarray(fast(params, x)), want, rtol=1e-5, atol=1e-5)
    assert hj.optimize(_mlp, params, x).speed is None


@pytest.mark.parametrize(
    "optimized_over_plain, chosen", [(2.0, "jax.jit"), (0.5, "optimized"), (1.0, "jax.jit")]
)
def test_jax_optimize_check_speed_choice(monkeypatch, optimized_over_plain, chosen):
    """The choice follows the harness's verdict: times scripted per round (slower, faster,
    the same), and the function runs the chosen module."""
    import hlogym.jax as hj

    rng = np.random.default_rng(3)

    def scripted(x, executables, inputs, **kw):
        base = 1e-3 * (1 + rng.random(40))  # the machine's drift, shared by both in a round
        return {
            "jax.jit": list(base),
            "optimized": list(base * optimized_over_plain * (1 + 1e-3 * rng.random(40))),
        }

    monkeypatch.setattr(timing, "measure", scripted)
    params, x = _mlp_args()
    fast = hj.optimize(_mlp, params, x, agent="default", check_speed=True)
    assert fast.speed["chosen"] == chosen
    if chosen == "jax.jit":
        assert fast.passes == [] and fast.hlo_optimized == fast.hlo_original
        assert fast.op_counts["optimized"] == fast.op_counts["original"]
    else:
        assert fast.passes == ["<xla-cpu-default>"]
        assert fast.op_counts["optimized"] < fast.op_counts["original"]
    np.testing.assert_allclose(
        np.asarray(fast(params, x)), np.asarray(_mlp(params, x)), rtol=1e-5, atol=1e-5
    )


def test_jax_optimize_bad_agent():
    import hlogym.jax as hj

    a = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="agent must be one of"):
        hj.optimize(lambda v: v + 1, a, agent="smartest")
    with pytest.raises(ValueError, match="unknown passes"):
        hj.optimize(lambda v: v + 1, a, agent=["algsimp", "no-such-pass"])
    with pytest.raises(TypeError):
        hj.optimize(3, a)


# --- (c) same results on XLA ------------------------------------------------------------------


def default_suite() -> list[tuple[str, Path]]:
    return resolve_modules([str(DEFAULT_SUITE)])


def family_sample() -> list[tuple[str, Path]]:
    suite = {n for n, _ in default_suite()}
    by_family: dict[str, list] = {}
    smallest_f32: dict[str, tuple] = {}
    for name, m in corpus_manifest().items():
        if name in suite or not (CORPUS / m["path"]).exists():
            continue
        if m["bytes"] <= SAMPLE_MAX_BYTES:
            by_family.setdefault(m["family"], []).append((zlib.crc32(name.encode()), name, m))
        if m["config"]["dtype"] == "f32":
            smallest_f32[m["family"]] = min(
                smallest_f32.get(m["family"], (m["bytes"], name, m)), (m["bytes"], name, m)
            )
    # Families whose every module is larger (the Keras applications): their smallest f32 module
    # (deep bf16 nets on random weights are too ill-conditioned for any comparison).
    for fam, entry in smallest_f32.items():
        by_family.setdefault(fam, [entry])
    out = []
    for fam in sorted(by_family):
        for _, name, m in sorted(by_family[fam])[:SAMPLE_PER_FAMILY]:
            out.append((name, CORPUS / m["path"]))
    return out


# Modules whose comparison on XLA is vacuous on the project's inputs (xla.vacuous_reason), each
# with the reason; any other not-judged comparison fails the test. None today.
NOT_JUDGED: dict[str, str] = {}


def same_on_xla(path: Path, variants: dict[str, str]) -> dict[str, str]:
    """{variant: mismatch message} for the variants whose XLA outputs differ from the
    original's on the same inputs (xla.agree: excess precision on bf16 graphs is allowed)."""
    original = HG().fmt(path)
    exe = X().compile(original, FAST)
    inputs = X().random_inputs(original, seed=0)
    want = X().run(exe, inputs)
    failures = {}
    for what, text in variants.items():
        got = X().run(X().compile(text, FAST), inputs)
        c = xla.agree(X(), got, want, original, inputs, FAST)
        if not c.judged and path.name.split(".")[0] in NOT_JUDGED:
            continue
        if not c.ok:
            failures[what] = f"XLA(original) vs XLA({what}): {c.message}"
    return failures


def check_same_on_xla(path: Path, variants: dict[str, str]):
    failures = same_on_xla(path, variants)
    assert not failures, "; ".join(failures.values())


# 256 + x in bf16 rounds to a multiple of 2 (8 significand bits), so the original's outputs are
# -2, 0 or 2; computed without the bf16 rounding (the excess precision XLA allows, which
# simplify-fp-conversions and float normalization give), they are x itself: far outside the
# bf16 tolerance of the original's, and exactly the original computed in f32.
EXCESS_PRECISION = """HloModule excess
ENTRY e {
  x = f32[64] parameter(0)
  b = bf16[64] convert(x)
  c = bf16[] constant(256)
  cb = bf16[64] broadcast(c), dimensions={}
  s = bf16[64] add(b, cb)
  f = f32[64] convert(s)
  d = f32[] constant(256)
  db = f32[64] broadcast(d), dimensions={}
  ROOT out = f32[64] subtract(f, db)
}
"""


def test_agree_allows_excess_precision_and_nothing_else():
    # XLA:CPU itself computes bf16 arithmetic in f32 unless told not to.
    strict = {**FAST, "xla_allow_excess_precision": False}
    original = EXCESS_PRECISION
    optimized = xla.widened_to_f32(original)
    inputs = X().random_inputs(original, seed=0)
    want = X().run(X().compile(original, strict), inputs)
    got = X().run(X().compile(optimized, strict), inputs)
    assert not xla.compare_outputs(got, want, all_low_precision=True).ok
    c = xla.agree(X(), got, want, original, inputs, strict)
    assert c.ok and c.excess_precision, c.message
    # A wrong result is not rescued by the f32 reference: scale the output.
    wrong = [(got[0] * 1.5).astype(got[0].dtype)]
    c = xla.agree(X(), wrong, want, original, inputs, strict)
    assert not c.ok and not c.excess_precision and "in f32" in c.message
    assert xla.widened_to_f32("x = bf16[2]{0} bitcast-convert(u16[2]{0} p)") is None
    assert (
        xla.widened_to_f32("a = bf16[2]{0} add(bf16[2]{0} b, f16[] c)")
        == "a = f32[2]{0} add(f32[2]{0} b, f32[] c)"
    )


# (p + 1000) * 1000 - (p * 1000 + 1e6) is 0; in f32 each side rounds to a multiple of 1/16.
CANCELLATION = """HloModule cancellation
ENTRY e {
  p = f32[4] parameter(0)
  k = f32[] constant(1000)
  kb = f32[4] broadcast(k), dimensions={}
  m = f32[] constant(1000000)
  mb = f32[4] broadcast(m), dimensions={}
  a = f32[4] multiply(f32[4] add(p, kb), kb)
  b = f32[4] add(f32[4] multiply(p, kb), mb)
  ROOT s = f32[4] subtract(a, b)
}
"""


def test_agree_f32_rounding_second_look():
    """An f32 result off the original's by rounding (here: exact, where the original's f32
    arithmetic cancels) agrees as rounding; a wrong one does not."""
    inputs = [np.array([0.1234, 0.2345, 0.3456, 0.4567], np.float32)]
    want = X().run(X().compile(CANCELLATION), inputs)
    assert np.abs(want[0]).max() > 1e-2  # the original's rounding error, far past rtol
    exact = [np.zeros(4, np.float32)]
    assert not xla.compare_outputs(exact, want).ok
    c = xla.agree(X(), exact, want, CANCELLATION, inputs)
    assert c.ok and c.rounding and "computed in f64" in c.message, c.message
    c = xla.agree(X(), [np.full(4, 0.5, np.float32)], want, CANCELLATION, inputs)
    assert not c.ok and not c.rounding and "in f64" in c.message
    # Integers must still be equal.
    assert not xla.f64_reference_check([np.array([1])], [np.array([2])], [np.array([1])])[0]


SUITE = default_suite()


def test_default_suite_has_the_readme_size():
    assert len(SUITE) == 12 and all(p.exists() for _, p in SUITE)


@pytest.mark.parametrize("name,path", SUITE, ids=[n for n, _ in SUITE])
def test_default_suite_default_and_greedy_agree_on_xla(name, path):
    passes = HG().greedy(path)
    assert passes, f"greedy found no sequence for {name}"
    check_same_on_xla(
        path,
        {
            "xla-cpu-default": HG().default(path),
            "greedy " + ",".join(passes): HG().opt(path, passes),
        },
    )


# TensorFlow graphs with bounded dynamic shapes (boolean masks, tf.unique, tf.where, Keras
# embeddings' sparse gradients): hlogym's default pipeline pads them as XLA's dynamic padder does.
# Before it did, D of a boolean mask's mean, of tf.where with gather_nd and of tf.unique's segment
# sums computed something else than the original on XLA.
DYNAMIC_SHAPES = sorted(
    (REPO / "datasets/probes/tf_dynamic_shapes/tf_dynamic_shapes").glob("*.hlo*")
)


@pytest.mark.parametrize(
    "path", DYNAMIC_SHAPES, ids=[p.name.split(".hlo")[0] for p in DYNAMIC_SHAPES]
)
def test_dynamic_shapes_default_agrees_on_xla(path):
    check_same_on_xla(path, {"xla-cpu-default": HG().default(path)})


# Modules with XLA:CPU's LAPACK custom calls (eigh, Cholesky, QR, SVD, LU, triangular solves),
# whose kernels JAX binds to SciPy's LAPACK only when it lowers such an op itself: until
# hlogym.xla bound them too, running one read from text crashed the process (a null function),
# so none of these had been compared on XLA. In a child process, so that a crash fails this test
# and not the session.
LAPACK_MODULES = [
    REPO / "datasets/probes" / probe / probe / f"{name}.hlo.zst"
    for probe, name in (
        ("lax_ops", "jit_linear_algebra"),
        ("lax_ops", "jit_factorizations"),
        ("lax_ops", "jit_lu_solves"),
        ("more_jax_libraries", "jit__lambda_6"),
        ("more_jax_libraries", "jit__lambda_7"),
        ("jax_simulation", "jit_eigh"),
        ("jax_simulation", "jit_generations"),
    )
]


def test_lapack_custom_calls_run_on_xla(tmp_path):
    report = tmp_path / "lapack.json"
    out = _bench(
        *LAPACK_MODULES, "--agent", "none", "--no-time", "--hlogym", HLOGYM, "--json", report
    )
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    summary = json.loads(report.read_text())["summary"]
    assert summary["compared"] == len(LAPACK_MODULES), summary
    assert summary["disagree"] == 0 and summary["not_judged"] == 0, summary


SAMPLE = family_sample()


def test_family_sample_covers_every_family():
    fams = {m["family"] for m in corpus_manifest().values()}
    assert len(SAMPLE) == SAMPLE_PER_FAMILY * len(fams)
    assert module_name(SAMPLE[0][1]) == SAMPLE[0][0]


@pytest.mark.parametrize("name,path", SAMPLE, ids=[n for n, _ in SAMPLE])
def test_corpus_sample_default_agrees_on_xla(name, path):
    check_same_on_xla(path, {"xla-cpu-default": HG().default(path)})


def _xla_optimized_ops(text: str, opcodes: tuple[str, ...]) -> dict[str, int]:
    """How many of each opcode XLA's own optimized module (after its whole CPU pipeline) has."""
    optimized = X().compile(text, FAST).hlo_modules()[0].to_string()
    return {op: len(re.findall(rf"\b{op}\(", optimized)) for op in opcodes}


def test_default_hands_xla_convolutions_it_need_not_canonicalize_again():
    # XLA swaps these 11 small convolutions' operands after its convolution canonicalization;
    # handed a swapped one, its canonicalization wraps it in transposes and copies (0.73x).
    path = CORPUS / "resnet" / "resnet_infer_r18_w16_px16_imagenet_b4_bf16.hlo.zst"
    ops = ("transpose", "copy", "convolution")
    alone = _xla_optimized_ops(HG().fmt(path), ops)
    assert alone["convolution"] == 20
    assert _xla_optimized_ops(HG().default(path), ops) == alone
    swapped = _xla_optimized_ops(HG()("opt", path, "--pipeline=xla-cpu-default"), ops)
    assert swapped["transpose"] > alone["transpose"], swapped  # what --for-xla avoids


# --- python -m hlogym.xla_bench ---------------------------------------------------------------


def _bench(*args, cwd=REPO):
    import os
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run(
        [sys.executable, "-m", "hlogym.xla_bench", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


# Optimistix's and lineax's solves carry Equinox's runtime checks, custom calls back into the
# Python process that traced them: the harness ran one (lineax's CG) and the process died
# (segfault). It skips them, saying why, and goes on (a child process, so a crash fails the test).
CALLBACK_MODULES = [
    REPO / "datasets/probes/jax_scientific/jax_scientific" / f"{name}.hlo.zst"
    for name in ("jit_cg", "jit_minimum")
]


def test_python_callbacks_names_the_calls_into_the_tracing_process():
    text = 'custom-call(x), custom_call_target="xla_ffi_python_cpu_callback", api_version=4'
    assert xla.python_callbacks(text) == ["xla_ffi_python_cpu_callback"]
    assert xla.python_callbacks('custom-call(x), custom_call_target="lapack_sgetrf_ffi"') == []


def test_modules_calling_back_into_python_are_skipped_not_run(tmp_path):
    report = tmp_path / "callbacks.json"
    out = _bench(
        *CALLBACK_MODULES, "--agent", "none", "--no-time", "--hlogym", HLOGYM, "--json", report
    )
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert "calls back into the Python process" in out.stderr
    summary = json.loads(report.read_text())["summary"]
    assert sorted(summary["skipped"]) == ["jit_cg", "jit_minimum"], summary
    assert summary["compared"] == 0, summary


def test_xla_bench_skips_modules_for_several_partitions(tmp_path):
    # The harness compiles and runs on one device: a pmap step (4 partitions) is skipped with
    # the reason, not an error from inside XLA.
    probe = REPO / "datasets" / "probes" / "partitioned" / "partitioned" / "jit__fun.hlo.zst"
    out = tmp_path / "r.json"
    r = _bench(probe, "--agent", "none", "--no-time", "--json", out)
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["modules"] == [] and len(report["summary"]["skipped"]) == 1
    assert "compiled for 4 partitions" in r.stderr


def test_xla_bench_cli(tmp_path):
    seqs = tmp_path / "seqs.json"
    seqs.write_text(json.dumps({"mlp_infer": ["algsimp", "call-inliner", "cse", "dce"]}))
    out = tmp_path / "r.json"
    r = _bench(
        "smoke/mlp_infer",
        "smoke/einsum",
        "--sequences",
        seqs,
        "--json",
        out,
        "--target-seconds",
        "0.02",
        "--warmup",
        "1",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["config"]["pinning"]["threads"] == 1
    (row,) = report["modules"]
    assert row["module"] == "mlp_infer" and report["summary"]["skipped"] == ["einsum"]
    assert row["op_count"]["agent"] < row["op_count"]["original"]
    assert all(v["ok"] for v in row["agree"].values())
    assert row["rounds"] >= 10 and all(t > 0 for t in row["median_s"].values())
    assert all(len(v) == row["rounds"] for v in row["times_s"].values())
    sp = row["speedups"]["agent_over_default"]
    assert sp["low"] <= sp["ratio"] <= sp["high"] and sp["verdict"] in timing.VERDICTS
    d = report["summary"]["agent_over_default"]
    assert d["modules"] == 1 and d["geomean"] == pytest.approx(sp["ratio"])
    assert sum(d["verdicts"].values()) == 1
    assert "speedup agent over default: geomean" in r.stdout
    # Two runs compared verdict by verdict: a run agrees with itself; a changed verdict is named.
    other = json.loads(out.read_text())
    flipped = {"faster": "slower", "slower": "within noise", "within noise": "faster"}
    other["modules"][0]["speedups"]["agent_over_default"]["verdict"] = flipped[sp["verdict"]]
    second = tmp_path / "r2.json"
    second.write_text(json.dumps(other))
    r = _bench("--agreement", out, out)
    assert r.returncode == 0 and "agent over default: the same verdict on 1 of 1" in r.stdout
    r = _bench("--agreement", out, second)
    assert "agent over default: the same verdict on 0 of 1 modules (0%)" in r.stdout
    assert "default over original: the same verdict on 1 of 1" in r.stdout
    assert "mlp_infer: " + sp["verdict"] in r.stdout


def test_xla_bench_objective_runtime(tmp_path):
    """--objective runtime times every candidate against the others, keeps the fastest only
    when it beats the original beyond noise, then times original, default and the chosen one
    again."""
    out = tmp_path / "r.json"
    r = _bench(
        "gpt2/gpt2_infer_L1_d32_h2_s32_b1_bf16",
        "--objective",
        "runtime",
        "--json",
        out,
        "--target-seconds",
        "0.05",
        "--warmup",
        "1",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    (row,) = json.loads(out.read_text())["modules"]
    sel, cands = row["selection"], row["candidates"]
    # original, default, greedy's (the agent), and distinct texts of auto / default-exact /
    # default-fp; in this bf16 module simplify-fp-conversions removes 99 of 136 converts, so
    # default-fp's text is one of them
    assert {"original", "default", "agent"} <= set(cands) and len(cands) >= 4
    assert cands["cand:default-fp"] == timing.RUNTIME_CANDIDATES["default-fp"]
    assert row["op_count"]["cand:default-fp"] < row["op_count"]["default"]
    assert set(sel["median_s"]) == set(cands)  # every candidate agreed with the original
    assert all(v["ok"] for v in sel["agree"].values())
    chosen = sel["chosen"]
    if chosen != "original":
        assert sel["over_original"][chosen]["low"] > 1
        assert sel["median_s"][chosen] == min(sel["median_s"].values())
        assert row["agree"]["agent"]["ok"]
    assert row["passes"] == cands[chosen] and row["op_count"]["agent"] == row["op_count"][chosen]
    assert set(row["speedups"]) == set(xla_bench.SPEEDUPS)
    r = _bench("smoke/mlp_infer", "--objective", "runtime", "--no-time")
    assert r.returncode == 2 and "not with --no-time" in r.stderr


def test_xla_bench_export_shards_merge(tmp_path):
    """--export here, --from-export (as on a machine without hlogym) in two shards, --merge."""
    seqs = tmp_path / "seqs.json"
    seqs.write_text(
        json.dumps({"mlp_infer": ["algsimp", "cse", "dce"], "einsum": ["algsimp", "dce"]})
    )
    export = tmp_path / "export"
    r = _bench("smoke/mlp_infer", "smoke/einsum", "--sequences", seqs, "--export", export)
    assert r.returncode == 0, r.stderr[-3000:]
    index = json.loads((export / "export.json").read_text())
    assert [m["module"] for m in index["modules"]] == ["mlp_infer", "einsum"]
    assert set(index["modules"][0]["files"]) == {"original", "default", "agent"}
    # The shards run from the exported texts only: no hlogym binary in reach.
    parts = []
    for i in range(2):
        parts.append(tmp_path / f"part{i}.json")
        r = _bench(
            "--from-export",
            export,
            "--shard",
            f"{i}/2",
            "--no-time",
            "--fast-compile",
            "--hlogym",
            tmp_path / "no-such-binary",
            "--json",
            parts[-1],
        )
        assert r.returncode == 0, r.stderr[-3000:]
        (row,) = json.loads(parts[-1].read_text())["modules"]
        assert row["module"] == index["modules"][i]["module"]
        assert row["op_count"] == index["modules"][i]["op_count"]
    merged = tmp_path / "all.json"
    r = _bench("--merge", *parts, "--json", merged)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(merged.read_text())["summary"]
    assert summary["modules"] == 2 and summary["compared"] == 4 and summary["disagree"] == 0
    assert "4 optimized outputs compared" in r.stdout


def test_xla_bench_bad_input():
    r = _bench("smoke/mlp_infer", "--passes", "algsimp,not-a-pass", "--no-time")
    assert r.returncode != 0 and "unknown passes: not-a-pass" in r.stderr
    # pipelines are names a pass list may hold, as in `hlogym opt --passes`
    r = _bench(
        "smoke/mlp_infer",
        "--passes",
        "xla-cpu-default,simplify-fp-conversions",
        "--no-time",
        "--fast-compile",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    r = _bench("no/such_module", "--no-time")
    assert r.returncode != 0 and "no/such_module" in r.stderr and "Traceback" not in r.stderr
    r = _bench("--split", "test", "smoke/mlp_infer")
    assert r.returncode == 2 and "exclude each other" in r.stderr
    r = _bench("--from-export", "/no/such/dir", "--no-time")
    assert r.returncode != 0 and "export.json is missing" in r.stderr
    r = _bench("--shard", "2/2", "--no-time")
    assert r.returncode == 2 and "0 <= I < N" in r.stderr
