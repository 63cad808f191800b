"""hlogym against real XLA (jaxlib's HLO parser and CPU backend), issues 4 and 9.

(a) XLA parses hlogym's printed text: for every smoke module and every corpus module (whatever
    datasets/corpus/manifest.json lists and exists), `hlogym fmt`, `hlogym opt
    --pipeline=xla-cpu-default` and seeded random pass sequences (passes from `hlogym list-passes
    --json`) must all be accepted by jaxlib._hlo.hlo_module_from_text.
(b) Same results on XLA: `hlogym run --seed 0 --io DIR` saves the inputs and hlogym's outputs as
    .npy files; XLA compiles the module (HLO text -> StableHLO -> CPU executable, see
    python/hlogym/xla.py) and runs it on those inputs; outputs must agree (integers and pred
    exactly, f32 within rtol 1e-4 / atol 1e-5, bf16/f16 within 2e-2 of the array's scale; NaN ==
    NaN; modules that compute in bf16/f16 get the bf16 tolerance on their f32 outputs too). For
    every smoke module and a sample of corpus modules (at least 50 in all), on the original module; for the smoke modules also XLA(original) vs XLA(after xla-cpu-default).
    HLOGYM_ORACLE_FULL=1 compares every corpus module, original and after xla-cpu-default.

The largest relative errors seen are printed (pytest -s) and written to
build/xla_oracle_report.json, with any module that was not compared and why.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HLOGYM = REPO / "build" / "hlogym"
SMOKE = REPO / "datasets" / "smoke"
CORPUS = REPO / "datasets" / "corpus"
REPORT = REPO / "build" / "xla_oracle_report.json"
sys.path.insert(0, str(REPO / "python"))

jax = pytest.importorskip("jax")
if not HLOGYM.exists():  # scripts/test.sh builds it; a missing binary is a failure, not a skip
    raise RuntimeError(f"{HLOGYM} is not built; run scripts/setup.sh")

from hlogym import xla as xla_runtime  # noqa: E402

FULL = os.environ.get("HLOGYM_ORACLE_FULL") == "1"
# Corpus modules compared on XLA by default (besides the smoke modules), spread over families.
CORPUS_SAMPLE = int(os.environ.get("HLOGYM_ORACLE_CORPUS_SAMPLE", "36"))
RANDOM_SEQUENCES_SMOKE = 3
RANDOM_SEQUENCES_CORPUS = 1

# Opcodes whose values hlogym's evaluator cannot reproduce: modules using them are not compared
# element-wise on XLA and are listed in the report. (rng-bit-generator is XLA's Philox/ThreeFry
# stream bit for bit, see src/eval/prng.h and test_rng_bit_generator_bits_match_xla.)
NOT_BIT_COMPATIBLE = {
    " rng(": "rng is keyed by XLA's runtime seed (GetRngSeed) and rng state, which the CPU "
    "client does not expose",
}


# --- modules ------------------------------------------------------------------------------


def smoke_modules() -> list[Path]:
    return sorted(
        p
        for p in SMOKE.iterdir()
        if p.name.endswith((".hlo", ".hlo.gz"))
        and ".optimized." not in p.name
        and ".debuginfo." not in p.name
    )


def corpus_entries() -> list[tuple[str, dict]]:
    manifest = CORPUS / "manifest.json"
    if not manifest.exists():
        return []
    mods = json.loads(manifest.read_text())["modules"]
    return sorted((n, m) for n, m in mods.items() if (CORPUS / m["path"]).exists())


def corpus_sample(entries, k: int) -> list[tuple[str, dict]]:
    """k modules spread over families (round-robin), the smallest of each family first (XLA
    compile and hlogym evaluation time grow with size; HLOGYM_ORACLE_FULL=1 runs them all)."""
    by_family: dict[str, list] = {}
    for name, m in entries:
        by_family.setdefault(m["family"], []).append((name, m))
    queues = [
        sorted(by_family[fam], key=lambda nm: (nm[1]["bytes"], nm[0])) for fam in sorted(by_family)
    ]
    out = []
    while len(out) < k and any(queues):
        for q in queues:
            if q and len(out) < k:
                out.append(q.pop(0))
    return out


SMOKE_MODULES = smoke_modules()
CORPUS_ENTRIES = corpus_entries()
ALL_MODULES = [(f"smoke/{p.name}", p) for p in SMOKE_MODULES] + [
    (f"corpus/{n}", CORPUS / m["path"]) for n, m in CORPUS_ENTRIES
]
COMPARED = [(f"smoke/{p.name}", p, True) for p in SMOKE_MODULES] + [
    (f"corpus/{n}", CORPUS / m["path"], FULL)
    for n, m in (CORPUS_ENTRIES if FULL else corpus_sample(CORPUS_ENTRIES, CORPUS_SAMPLE))
]


# --- helpers ------------------------------------------------------------------------------


def hlogym(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(HLOGYM), *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def read_module_text(path: Path) -> str:
    name = path.name
    if name.endswith(".zst"):
        return subprocess.run(
            ["zstd", "-dcq", str(path)], check=True, capture_output=True
        ).stdout.decode()
    if name.endswith(".gz"):
        import gzip

        return gzip.decompress(path.read_bytes()).decode()
    return path.read_text()


@functools.lru_cache(maxsize=None)
def xla() -> xla_runtime.Xla:
    return xla_runtime.Xla("cpu")


@functools.lru_cache(maxsize=None)
def pass_names() -> tuple[str, ...]:
    out = hlogym("list-passes", "--json")
    assert out.returncode == 0, out.stderr
    return tuple(p["name"] for p in json.loads(out.stdout)["passes"])


def random_sequence(key: str, k: int) -> list[str]:
    rng = random.Random(zlib.crc32(f"{key}#{k}".encode()))
    names = pass_names()
    return [rng.choice(names) for _ in range(rng.randint(2, 8))]


@functools.lru_cache(maxsize=64)
def default_optimized(path: Path) -> str:
    out = hlogym("opt", path, "--pipeline=xla-cpu-default")
    assert out.returncode == 0, (
        f"hlogym opt --pipeline=xla-cpu-default {path}: {out.stderr[-2000:]}"
    )
    return out.stdout


class Report:
    """Collected across tests; written at the end of the session (see the fixture below)."""

    data = {
        "parse": {"modules": 0, "texts": 0, "rejected": []},
        "results": {
            "compared_original": 0,
            "compared_optimized": 0,
            "mismatches": [],
            "not_compared": [],
            "max_rel_err_f32": 0.0,
            "max_rel_err_f32_module": None,
            "max_rel_err_bf16": 0.0,
            "max_rel_err_bf16_module": None,
            "max_scaled_err_f32": 0.0,
            "max_scaled_err_bf16": 0.0,
            "max_scaled_err_bf16_module": None,
            "max_tolerance_ratio": 0.0,
            "max_tolerance_ratio_module": None,
            "optimized_max_rel_err_f32": 0.0,
            "optimized_max_rel_err_bf16": 0.0,
            "per_module": {},
        },
    }

    @classmethod
    def note_comparison(cls, key: str, kind: str, c: xla_runtime.Comparison):
        r = cls.data["results"]
        r["per_module"].setdefault(key, {})[kind] = {
            "ok": c.ok,
            "max_rel_err": c.max_rel_err,
            "max_rel_err_low_precision": c.max_rel_err_low_precision,
            "max_scaled_err": c.max_scaled_err,
            "max_scaled_err_low_precision": c.max_scaled_err_low_precision,
            "max_tolerance_ratio": c.max_tolerance_ratio,
            "message": c.message,
        }
        if c.max_tolerance_ratio > r["max_tolerance_ratio"]:
            r["max_tolerance_ratio"] = c.max_tolerance_ratio
            r["max_tolerance_ratio_module"] = f"{key} ({kind})"
        if kind == "original":
            r["compared_original"] += 1
            if c.max_rel_err > r["max_rel_err_f32"]:
                r["max_rel_err_f32"], r["max_rel_err_f32_module"] = c.max_rel_err, key
            if c.max_rel_err_low_precision > r["max_rel_err_bf16"]:
                r["max_rel_err_bf16"] = c.max_rel_err_low_precision
                r["max_rel_err_bf16_module"] = key
            r["max_scaled_err_f32"] = max(r["max_scaled_err_f32"], c.max_scaled_err)
            if c.max_scaled_err_low_precision > r["max_scaled_err_bf16"]:
                r["max_scaled_err_bf16"] = c.max_scaled_err_low_precision
                r["max_scaled_err_bf16_module"] = key
        else:
            r["compared_optimized"] += 1
            r["optimized_max_rel_err_f32"] = max(r["optimized_max_rel_err_f32"], c.max_rel_err)
            r["optimized_max_rel_err_bf16"] = max(
                r["optimized_max_rel_err_bf16"], c.max_rel_err_low_precision
            )
        if not c.ok:
            r["mismatches"].append({"module": key, "kind": kind, "message": c.message})


@pytest.fixture(scope="module", autouse=True)
def write_report():
    yield
    import jaxlib

    d = dict(Report.data, jaxlib=jaxlib.__version__, full=FULL)
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(d, indent=2, sort_keys=True) + "\n")
    p, r = d["parse"], d["results"]
    print(
        f"\n[xla oracle] parse: {p['texts']} texts of {p['modules']} modules, "
        f"{len(p['rejected'])} rejected by XLA"
    )
    print(
        f"[xla oracle] results: {r['compared_original']} modules compared with XLA "
        f"(original), {r['compared_optimized']} after xla-cpu-default; "
        f"{len(r['mismatches'])} mismatches, {len(r['not_compared'])} not compared"
    )
    print(
        f"[xla oracle] largest relative error hlogym vs XLA, f32 modules: "
        f"{r['max_rel_err_f32']:.3g} ({r['max_rel_err_f32_module']}); bf16 modules: "
        f"{r['max_rel_err_bf16']:.3g} element-wise ({r['max_rel_err_bf16_module']}), "
        f"{r['max_scaled_err_bf16']:.3g} of the array's scale "
        f"({r['max_scaled_err_bf16_module']})"
    )
    print(
        f"[xla oracle] XLA original vs hlogym-optimized: f32 "
        f"{r['optimized_max_rel_err_f32']:.3g}, bf16 {r['optimized_max_rel_err_bf16']:.3g}; "
        f"largest error/tolerance {r['max_tolerance_ratio']:.3g} "
        f"({r['max_tolerance_ratio_module']})"
    )
    looks = r.get("second_looks", {})
    print(
        f"[xla oracle] second looks (tolerance failed): {len(looks)}, passed "
        f"{sum(v['passed'] for v in looks.values())}: "
        + "; ".join(f"{k}: {v['note']}" for k, v in looks.items())
    )
    print(f"[xla oracle] report: {REPORT}")


# --- (a) XLA parses hlogym's text ------------------------------------------------------------


@pytest.mark.parametrize("key,path", ALL_MODULES, ids=[k for k, _ in ALL_MODULES])
def test_xla_parses_hlogym_text(key, path, tmp_path):
    is_smoke = key.startswith("smoke/")
    texts = []
    out = hlogym("fmt", path)
    assert out.returncode == 0, f"hlogym fmt: {out.stderr[-2000:]}"
    texts.append(("fmt", out.stdout))
    texts.append(("opt --pipeline=xla-cpu-default", default_optimized(path)))
    for k in range(RANDOM_SEQUENCES_SMOKE if is_smoke else RANDOM_SEQUENCES_CORPUS):
        seq = ",".join(random_sequence(key, k))
        out = hlogym("opt", path, f"--passes={seq}")
        assert out.returncode == 0, f"hlogym opt --passes={seq}: {out.stderr[-2000:]}"
        texts.append((f"opt --passes={seq}", out.stdout))
    rejected = []
    for what, text in texts:
        try:
            xla().parse(text)
        except Exception as e:  # noqa: BLE001 - jaxlib raises its own error types
            msg = str(e).strip().splitlines()
            rejected.append({"module": key, "text": what, "error": " | ".join(msg[:3])[:600]})
    Report.data["parse"]["modules"] += 1
    Report.data["parse"]["texts"] += len(texts)
    Report.data["parse"]["rejected"] += rejected
    assert not rejected, json.dumps(rejected, indent=1)


# --- (b) same results on XLA -----------------------------------------------------------------

LOW_PRECISION_RE = re.compile(r"\b(bf16|f16|f8e\w*)\[")


def computes_in_low_precision(text: str) -> bool:
    return LOW_PRECISION_RE.search(text) is not None


def not_bit_compatible(text: str) -> str | None:
    for needle, why in NOT_BIT_COMPATIBLE.items():
        if needle in text:
            return why
    return None


# --- a second, closer look at a failed comparison -------------------------------------------
# A fixed tolerance cannot tell a wrong result from an ill-conditioned computation. Two
# checks look closer, only at comparisons the tolerance failed, and are reported per module:
# (1) f32 modules: XLA runs the same module in f64 (every float type made f64) as the reference;
#     ours passes if, for every float output, it is no farther from the f64 result than twice
#     XLA's own f32 result is (both are f32 roundings of the same ill-conditioned computation).
# (2) integer outputs that are an argmax over a float array (a reduce whose single operand has
#     the output's shape plus one trailing dimension): the operand is added as an extra output
#     and a differing index passes only if, in both evaluations, the values at the two indices
#     are equal within the tolerance the float outputs are compared with (a tie within
#     rounding), and the operand itself matches XLA's (within tolerance, or by check (1)).


def _run_in_f64(text: str, inputs) -> list:
    with jax.enable_x64(True):
        return xla_runtime.run_in_f64(xla(), text, inputs)


def f64_reference_check(text: str, inputs, ours, theirs) -> tuple[bool, str]:
    return xla_runtime.f64_reference_check(ours, theirs, _run_in_f64(text, inputs))


def _definitions(text: str) -> dict[str, tuple[str, str]]:
    """name -> (shape, rest of the line) for the ENTRY computation's instructions."""
    entry = text[text.index("\nENTRY ") :]
    out = {}
    for m in re.finditer(r"^\s*(?:ROOT )?%?([\w.\-]+) = (\S+) (.*)$", entry, re.M):
        out[m.group(1)] = (m.group(2), m.group(3))
    return out


def argmax_tie_check(text: str, inputs, ours, theirs, low: bool) -> tuple[bool, str]:
    import numpy as np

    entry = text[text.index("\nENTRY ") :]
    root = re.search(r"^\s*ROOT %?[\w.\-]+ = (\(.*\)) tuple\(([^()]*)\)", entry, re.M)
    if not root:
        return False, "root is not a tuple"
    names = [n.strip().lstrip("%") for n in root.group(2).split(",")]
    defs = _definitions(text)
    extra, bad_leaves = [], []
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a.dtype.kind in "fc" or str(a.dtype) == "bfloat16" or np.array_equal(a, b):
            continue
        shape, rest = defs.get(names[i], ("", ""))
        ops = re.match(r"[\w\-]+\(%?([\w.\-]+)\)", rest)
        if not ops or ops.group(1) not in defs:
            return False, f"leaf {i} is not a single-operand reduction"
        logits = ops.group(1)
        dims = re.match(r"\w+\[([\d,]*)\]", defs[logits][0])
        if not dims or [int(d) for d in dims.group(1).split(",") if d][:-1] != list(a.shape):
            return False, f"leaf {i}: {logits} is not [output shape + 1 dimension]"
        extra.append(logits)
        bad_leaves.append(i)
    if not extra:
        return False, "no integer leaf differs"
    shapes = root.group(1)[1:-1] + "".join(f", {defs[n][0]}" for n in extra)
    new_root = (
        root.group(0)
        .replace(root.group(1), f"({shapes})", 1)
        .replace(f"tuple({root.group(2)})", f"tuple({root.group(2)}, {', '.join(extra)})")
    )
    text2 = xla_runtime.strip_entry_layout(text).replace(root.group(0), new_root)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.hlo"
        p.write_text(text2)
        out = hlogym("run", p, "--seed", "0", "--io", Path(d) / "io")
        assert out.returncode == 0, out.stderr[-2000:]
        ours2 = xla_runtime.load_io_dir(Path(d) / "io", "outputs")
    theirs2 = xla().run(xla().compile(text2), inputs)
    notes = []
    for k, i in enumerate(bad_leaves):
        j = len(ours) + k
        lo, lx = ours2[j].astype(np.float64), theirs2[j].astype(np.float64)
        c = xla_runtime.compare_outputs([ours2[j]], [theirs2[j]], all_low_precision=low)
        if not c.ok:
            ref = np.asarray(_run_in_f64(text2, inputs)[j], dtype=np.float64)
            err_ours, err_xla = float(np.abs(lo - ref).max()), float(np.abs(lx - ref).max())
            if err_ours > max(2 * err_xla, 1e-6):
                return False, (
                    f"leaf {i}: the argmax operand differs ({c.message}) and is "
                    f"{err_ours:.3g} from f64 against XLA's {err_xla:.3g}"
                )
            notes.append(
                f"argmax operand of leaf {i} outside tolerance, but |hlogym - f64| "
                f"{err_ours:.3g} vs |XLA - f64| {err_xla:.3g}"
            )
        lo, lx = lo.reshape(-1, lo.shape[-1]), lx.reshape(-1, lx.shape[-1])
        a, b = ours[i].reshape(-1), theirs[i].reshape(-1)
        for row in np.flatnonzero(a != b):
            for logit in (lo[row], lx[row]):
                big = float(np.abs(logit).max())
                va, vb = logit[a[row]], logit[b[row]]
                tol = (
                    (max(1e-2, 2e-2 * big) + 2e-2 * max(abs(va), abs(vb)))
                    if low
                    else (1e-5 + 1e-4 * max(abs(va), abs(vb)))
                )
                if abs(va - vb) > tol:
                    return False, (
                        f"leaf {i}[{row}]: index {a[row]} vs {b[row]}, values "
                        f"{va:.6g} vs {vb:.6g} differ by more than {tol:.3g}"
                    )
            notes.append(
                f"leaf {i}[{row}]: index {a[row]} vs {b[row]} tie within "
                f"{abs(lo[row][a[row]] - lo[row][b[row]]):.3g} (hlogym), "
                f"{abs(lx[row][a[row]] - lx[row][b[row]]):.3g} (XLA)"
            )
    return True, "; ".join(notes)


def second_look(text: str, inputs, ours, theirs, low: bool) -> tuple[bool, str]:
    """After a failed comparison: the argmax tie check when only integer outputs differ,
    the f64 reference check for f32 modules whose float outputs are out of tolerance."""

    def is_float(a):
        return a.dtype.kind in "fc" or str(a.dtype) == "bfloat16"

    float_bad = any(
        is_float(a) and not xla_runtime.compare_outputs([a], [b], all_low_precision=low).ok
        for a, b in zip(ours, theirs)
    )
    if not float_bad:
        return argmax_tie_check(text, inputs, ours, theirs, low)
    return f64_reference_check(text, inputs, ours, theirs)


def xla_misses_f64(text: str, inputs, theirs, low: bool) -> str:
    """Why the comparison cannot judge: XLA's own outputs are out of tolerance of the module
    computed in f64 (the graph amplifies rounding on these inputs), or "" when they are not."""
    import numpy as np

    ref = [np.asarray(r).astype(t.dtype) for r, t in zip(_run_in_f64(text, inputs), theirs)]
    c = xla_runtime.compare_outputs(theirs, ref, all_low_precision=low)
    return "" if c.ok else f"XLA's own result misses its f64 result: {c.message}"


def test_enough_modules_compared():
    assert len(COMPARED) >= 50 or not CORPUS_ENTRIES, len(COMPARED)


# Known, not yet root-caused differences from XLA, kept visible as xfail (non-strict, so a fix
# shows up as XPASS): tracked in the evaluator issue.
# (None now: the 32-step f32 GRU, 4x over the f32 tolerance, and the bf16 T5 argmax token pass
# the second look below: the GRU is as close to the f64 result as XLA is, the token is a
# three-way tie within one or two bf16 ulps of the logits.)
KNOWN_MISMATCHES: dict[str, str] = {}

# Modules whose comparison cannot judge anything (docs/ARCHITECTURE.md: "not judged", never an
# agreement): XLA's own outputs are vacuous on the project's inputs (xla.vacuous_reason), or
# the tolerance and the second look both fail and XLA's own output is out of tolerance of the
# same module computed in f64, so rounding decides. The test fails on a
# not-judged module that is not listed here (none today: the sample's deep Keras nets on random
# weights pass the second look, hlogym as close to the f64 result as XLA), and on a listed one
# that agrees with XLA outright (then take it off the list).
NOT_JUDGED: dict[str, str] = {}


def compared_params():
    for key, path, with_optimized in COMPARED:
        marks = ()
        if key in KNOWN_MISMATCHES:
            marks = (pytest.mark.xfail(strict=False, reason=KNOWN_MISMATCHES[key]),)
        yield pytest.param(key, path, with_optimized, id=key, marks=marks)


@pytest.mark.parametrize("key,path,with_optimized", list(compared_params()))
def test_same_results_on_xla(key, path, with_optimized, tmp_path):
    text = read_module_text(path)
    io = tmp_path / "io"
    out = hlogym("run", path, "--seed", "0", "--io", io)
    assert out.returncode == 0, f"hlogym run: {out.stderr[-2000:]}"
    inputs = xla_runtime.load_io_dir(io, "inputs")
    ours = xla_runtime.load_io_dir(io, "outputs")
    theirs = xla().run(xla().compile(text), inputs)
    why = not_bit_compatible(text)
    low = computes_in_low_precision(text)
    failures = []
    # XLA's own outputs on the project's inputs must be meaningful (not all NaN, not constant
    # while the inputs vary), or every agreement below is vacuous.
    vacuous = xla_runtime.vacuous_reason(theirs, inputs)
    if vacuous:
        Report.data["results"].setdefault("not_judged", {})[key] = f"vacuous: {vacuous}"
        assert key in NOT_JUDGED, f"not judged and not listed in NOT_JUDGED: {vacuous}"
    if why:
        Report.data["results"]["not_compared"].append({"module": key, "reason": why})
    else:
        c = xla_runtime.compare_outputs(ours, theirs, all_low_precision=low)
        unjudgeable = ""
        if not c.ok:
            passed, note = second_look(text, inputs, ours, theirs, low)
            Report.data["results"].setdefault("second_looks", {})[key] = {
                "passed": passed,
                "note": note,
                "tolerance_failure": c.message,
            }
            if passed:
                c.ok, c.message = True, f"within tolerance on a second look: {note}"
            else:
                c.message += f" (second look: {note})"
                unjudgeable = xla_misses_f64(text, inputs, theirs, low)
            if unjudgeable:
                Report.data["results"].setdefault("not_judged", {})[key] = unjudgeable
                assert key in NOT_JUDGED, f"not judged and not listed in NOT_JUDGED: {unjudgeable}"
                c.ok, c.message = True, f"not judged ({NOT_JUDGED[key]}): {unjudgeable}"
        if (
            key in NOT_JUDGED
            and c.ok
            and not unjudgeable
            and not vacuous
            and key not in Report.data["results"].get("second_looks", {})
        ):
            failures.append(f"{key} is listed in NOT_JUDGED but now agrees with XLA: unlist it")
        Report.note_comparison(key, "original", c)
        if not c.ok:
            failures.append(f"hlogym vs XLA on the original: {c.message}")
    if with_optimized:
        # The same inputs through XLA on hlogym's default-optimized text (its entry signature
        # is the original's, so the saved inputs fit).
        optimized = xla().run(xla().compile(default_optimized(path)), inputs)
        c = xla_runtime.compare_outputs(optimized, theirs, all_low_precision=low)
        Report.note_comparison(key, "optimized", c)
        if not c.ok:
            failures.append(f"XLA(original) vs XLA(xla-cpu-default): {c.message}")
    assert not failures, "; ".join(failures)


# Flax ResNet training steps (datasets/large_steps): batch norm over a batch of 2 or 4, whose
# variance E[x^2] - E[x]^2 cancels, so how the evaluator sums decides whether it agrees with XLA.
# The first disagreed with XLA while f32 sums ran one by one (docs/verification.md).
BATCH_NORM_STEPS = [
    "flax_resnet/flax_resnet_train_r34_w8_px16_b2_f32_sgd",
    "flax_resnet/flax_resnet_train_r34_w16_px16_b4_f32_sgd",
]


@pytest.mark.parametrize("name", BATCH_NORM_STEPS)
def test_batch_norm_training_step_agrees_with_xla(name, tmp_path):
    path = REPO / "datasets" / "large_steps" / f"{name}.hlo.zst"
    out = hlogym("run", path, "--seed", "0", "--io", tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    inputs = xla_runtime.load_io_dir(tmp_path, "inputs")
    ours = xla_runtime.load_io_dir(tmp_path, "outputs")
    text = read_module_text(path)
    theirs = xla().run(xla().compile(text), inputs)
    assert not xla_runtime.vacuous_reason(theirs, inputs)
    c = xla_runtime.compare_outputs(ours, theirs, all_low_precision=False)
    assert c.ok, c.message


# Programs whose modules JAX lowers on CPU to its LAPACK kernels (typed-FFI custom calls), each
# output a raw kernel result or one that does not depend on a singular vector's or eigenvector's
# sign (which is an accident of LAPACK's algorithm: src/eval/lapack_custom_calls.h).
def _lapack_programs():
    import jax.numpy as jnp
    from jax import lax

    def sym(a):
        return a + jnp.swapaxes(a, -1, -2)

    def svd_parts(a, full):
        u, s, vt = jnp.linalg.svd(a, full_matrices=full)
        k = s.shape[-1]
        # Past the first k, u's columns (vt's rows) are any basis of what is left: not compared.
        u, vt = u[..., :k], vt[..., :k, :]
        return s, (u * s[..., None, :]) @ vt, jnp.abs(u), jnp.abs(vt)

    def eigh_parts(a):
        w, v = jnp.linalg.eigh(sym(a))
        return w, (v * w[..., None, :]) @ jnp.swapaxes(v, -1, -2), jnp.abs(v)

    def eig_parts(a):
        w, v = jnp.linalg.eig(a)
        residual = a.astype(v.dtype) @ v - v * w[..., None, :]
        return jnp.sort(w), jnp.linalg.norm(residual, axis=-2), jnp.abs(w).sum(-1)

    def tridiagonal(a, b):
        # Random diagonals: rows swap where a sub-diagonal element outweighs the diagonal.
        dl, d, du = a[..., 0, :], a[..., 1, :], a[..., 2, :]
        return lax.linalg.tridiagonal_solve(dl.at[..., 0].set(0), d, du.at[..., -1].set(0), b)

    f32 = jnp.float32
    return {
        # getrf: the packed factors and the pivots, as lax.linalg.lu gives them.
        "getrf": (lambda a: lax.linalg.lu(a), [((3, 6, 6), f32)]),
        "getrf_wide": (lambda a: lax.linalg.lu(a), [((4, 7), f32)]),
        "solve_and_slogdet": (
            lambda a, b: (jnp.linalg.solve(a, b), *jnp.linalg.slogdet(a), jnp.linalg.inv(a)),
            [((5, 5), f32), ((5, 3), f32)],
        ),
        "trsm": (
            lambda a, b: lax.linalg.triangular_solve(
                jnp.tril(a) + 3 * jnp.eye(6), b, left_side=True, lower=True, transpose_a=True
            ),
            [((6, 6), f32), ((6, 2), f32)],
        ),
        "qr": (lambda a: jnp.linalg.qr(a), [((7, 5), f32)]),
        "svd_full": (lambda a: svd_parts(a, True), [((2, 6, 4), f32)]),
        "svd_thin": (lambda a: svd_parts(a, False), [((4, 6), f32)]),
        "svd_values": (lambda a: jnp.linalg.svd(a, compute_uv=False), [((5, 3), f32)]),
        "eigh": (eigh_parts, [((2, 5, 5), f32)]),
        "tridiagonal_solve": (tridiagonal, [((4, 3, 7), f32), ((4, 7, 3), f32)]),
        # geev: the eigenvalues' order is an accident of the QR iteration, in LAPACK and in the
        # evaluator alike; sorted, and each eigenvector's residual, they compare.
        "eig": (eig_parts, [((2, 6, 6), f32)]),
    }


@pytest.mark.parametrize("name", sorted(_lapack_programs()))
def test_lapack_custom_calls_agree_with_xla(name, tmp_path):
    import numpy as np

    fn, params = _lapack_programs()[name]
    text = (
        jax.jit(fn)
        .lower(*[jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in params])
        .as_text(dialect="hlo")
    )
    assert "lapack_" in text, f"{name}: JAX no longer lowers it to a LAPACK custom call"
    path = tmp_path / f"{name}.hlo"
    path.write_text(text)
    out = hlogym("run", path, "--seed", "0", "--io", tmp_path / "io")
    assert out.returncode == 0, out.stderr[-2000:]
    inputs = xla_runtime.load_io_dir(tmp_path / "io", "inputs")
    ours = xla_runtime.load_io_dir(tmp_path / "io", "outputs")
    theirs = xla().run(xla().compile(text), inputs)
    assert not xla_runtime.vacuous_reason(theirs, inputs)
    # Not NaN: JAX replaces a kernel result whose info is not 0 with NaN.
    assert not any(np.isnan(np.asarray(t, np.float64)).any() for t in theirs if t.dtype.kind == "f")
    c = xla_runtime.compare_outputs(ours, theirs, rtol=1e-4, atol=1e-4)
    assert c.ok, f"{name}: {c.message}"


def test_rng_bit_generator_bits_match_xla(tmp_path):
    """Philox (rng_default, rng_philox) bits and states equal XLA's CPU backend's, bit for bit."""
    path = SMOKE / "rng_bit_generator.hlo"
    out = hlogym("run", path, "--io", tmp_path)
    assert out.returncode == 0, out.stderr
    theirs = xla().run(xla().compile(path.read_text()), xla_runtime.load_io_dir(tmp_path, "inputs"))
    c = xla_runtime.compare_outputs(xla_runtime.load_io_dir(tmp_path, "outputs"), theirs)
    assert c.ok, c.message


RNG_CASES = [
    (alg, state, bits)
    for alg, state in [
        ("rng_philox", "{7, 18446744073709551613}"),
        ("rng_philox", "{7, 18446744073709551613, 41}"),
        ("rng_three_fry", "{12345678901234, 18446744073709551610}"),
    ]
    for bits in ["u32[]", "u32[7]", "u32[3,5]", "u32[3,4,5]", "u64[5]", "u16[9]", "u8[2,3]"]
]


@pytest.mark.parametrize(
    "alg,state,bits", RNG_CASES, ids=[f"{a}-{len(s.split(','))}w-{b}" for a, s, b in RNG_CASES]
)
def test_rng_bit_generator_algorithms_match_xla(alg, state, bits, tmp_path):
    """Philox and ThreeFry, 2- and 3-word states whose counter wraps, narrow and wide results:
    hlogym's evaluator against XLA's CPU backend, bit for bit (a constant state, so the wrap
    is exercised)."""
    words = len(state.split(","))
    text = (
        f"HloModule m\n\nENTRY e {{\n  s = u64[{words}] constant({state})\n"
        f"  ROOT r = (u64[{words}], {bits}) rng-bit-generator(s), algorithm={alg}\n}}\n"
    )
    path = tmp_path / "m.hlo"
    path.write_text(text)
    (tmp_path / "io").mkdir()
    out = hlogym("run", path, "--io", tmp_path / "io")
    assert out.returncode == 0, out.stderr
    theirs = xla().run(xla().compile(text), [])
    c = xla_runtime.compare_outputs(xla_runtime.load_io_dir(tmp_path / "io", "outputs"), theirs)
    assert c.ok, c.message


_ALL_REDUCE_FOR_FOUR = """HloModule four, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add
}
"""


@pytest.mark.parametrize("devices", [4, 1])
def test_compiles_for_the_replicas_a_module_is_written_for(devices):
    """Xla.compile(replicas=N) compiles on N host devices (the probe of PyTorch/XLA's collectives
    needs it); a process with fewer devices gets an error that names the flag that adds them."""
    program = (
        "from hlogym.xla import Xla, XlaError\n"
        "try:\n"
        f"    Xla('cpu').compile({_ALL_REDUCE_FOR_FOUR!r}, replicas=4)\n"
        "    print('compiled')\n"
        "except XlaError as e:\n"
        "    print(e)\n"
    )
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    out = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
    ).stdout
    if devices == 4:
        assert out.strip() == "compiled"
    else:
        assert "needs 4 devices" in out and "xla_force_host_platform_device_count=4" in out, out


@pytest.mark.parametrize("platform", ["cuda", "tpu"])
@pytest.mark.parametrize("name", sorted(set(_lapack_programs()) - {"eig"}))  # CPU only in JAX
def test_accelerator_lowered_linear_algebra_computes_what_the_cpu_lowered_does(
    name, platform, tmp_path
):
    """JAX lowers the same program for GPUs to cuSOLVER's calls (cusolver_getrf_ffi with
    cu_lu_pivots_to_permutation, geqrf, orgqr, syevd, gesvdj, whose fourth result is V rather
    than Vt) and cuSPARSE's gtsv2, and for TPUs to XLA's own (LuDecomposition, Qr, Eigh): the
    evaluator computes them as it does the LAPACK calls, so `hlogym equiv` judges each lowering
    equivalent to the CPU one. No accelerator is needed to lower for one."""
    fn, params = _lapack_programs()[name]
    args = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in params]
    paths = {}
    for target in ("cpu", platform):
        lowered = jax.jit(fn).trace(*args).lower(lowering_platforms=(target,))
        paths[target] = tmp_path / f"{name}_{target}.hlo"
        paths[target].write_text(lowered.as_text(dialect="hlo"))
    out = hlogym("equiv", paths["cpu"], paths[platform])
    assert out.returncode == 0 and out.stdout.startswith("equivalent"), out.stdout + out.stderr


def _ragged_dot_programs():
    import jax.numpy as jnp
    from jax import lax

    dims = lax.RaggedDotDimensionNumbers
    f32, s32 = jnp.float32, jnp.int32
    return {
        # An MoE layer's grouped matmul: rows in group g use expert g's weights.
        "rows": (lax.ragged_dot, [((10, 16), f32), ((3, 16, 8), f32), ((3,), s32)]),
        "rows_batched": (
            lambda x, w, g: lax.ragged_dot_general(
                x,
                w,
                g,
                dims((([2], [2]), ([0], [1])), lhs_ragged_dimensions=[1], rhs_group_dimensions=[0]),
            ),
            [((2, 10, 16), f32), ((3, 2, 16, 8), f32), ((3,), s32)],
        ),
        # Group sizes per outer row: [x, g].
        "rows_outer_sizes": (
            lambda x, w, g: lax.ragged_dot_general(
                x,
                w,
                g,
                dims((([2], [1]), ([], [])), lhs_ragged_dimensions=[1], rhs_group_dimensions=[0]),
            ),
            [((4, 10, 16), f32), ((3, 16, 8), f32), ((4, 3), s32)],
        ),
        # The weight gradient of the grouped matmul: each group sums its own rows.
        "contraction": (
            lambda x, w, g: lax.ragged_dot_general(
                x,
                w,
                g,
                dims((([1], [0]), ([], [])), lhs_ragged_dimensions=[1], rhs_group_dimensions=[]),
            ),
            [((6, 12), f32), ((12, 5), f32), ((3,), s32)],
        ),
    }


@pytest.mark.parametrize("name", sorted(_ragged_dot_programs()))
def test_ragged_dot_computes_what_the_cpu_expansion_does(name, tmp_path):
    """Lowered for TPUs (and GPUs), lax.ragged_dot is XLA's ragged-dot instruction; for CPUs JAX
    expands it into ordinary HLO. `hlogym equiv` judges the two equivalent; before, the evaluator
    could not run ragged-dot and the check was undecided."""
    fn, params = _ragged_dot_programs()[name]
    args = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in params]
    paths = {}
    for target in ("cpu", "tpu"):
        lowered = jax.jit(fn).trace(*args).lower(lowering_platforms=(target,))
        paths[target] = tmp_path / f"{name}_{target}.hlo"
        paths[target].write_text(lowered.as_text(dialect="hlo"))
    assert " ragged-dot(" in paths["tpu"].read_text()
    out = hlogym("equiv", paths["cpu"], paths["tpu"])
    assert out.returncode == 0 and out.stdout.startswith("equivalent"), out.stdout + out.stderr


# Modules written for 4 replicas (datasets/probes): PyTorch/XLA's ZeRO (reduce-scatter and
# all-gather), data-parallel (a variadic all-reduce, over all and over groups), experts
# (all-to-all) and pipeline steps, and pmap's training steps. f32 only: in bf16 the experts' step
# rounds its routing differently.
REPLICATED = [
    "pytorch_collectives/pytorch_collectives/pt_zero_mlp_w64_f32",
    "pytorch_collectives/pytorch_collectives/pt_zero_transformer_w32_f32",
    "pytorch_collectives/pytorch_collectives/pt_dp_all_mlp_w64_f32",
    "pytorch_collectives/pytorch_collectives/pt_dp_groups_transformer_w32_f32",
    "pytorch_collectives/pytorch_collectives/pt_experts_mlp_w32_f32",
    "pytorch_collectives/pytorch_collectives/pt_pipeline_mlp_w64_f32",
    "older_jax_pmap/older_jax_pmap/pmap_mlp_step",
    "older_jax_pmap/older_jax_pmap/pmap_cnn_step",
]

# Run in a process of its own, with 4 host devices: each module on XLA for 4 replicas, replica
# r on the inputs `hlogym run` drew rotated by r elements (what the evaluator's replica r gets,
# src/eval/partitions.h), replica 0's outputs against hlogym's.
_REPLICATED_AGAINST_XLA = """
import json, subprocess, sys
import numpy as np
from hlogym import xla as xla_runtime
x = xla_runtime.Xla("cpu")
hlogym, io, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
verdicts = {}
for k, path in enumerate(paths):
    out = subprocess.run([hlogym, "run", path, "--seed", "0", "--io", f"{io}/{k}"],
                         capture_output=True, text=True)
    if out.returncode:
        verdicts[path] = "hlogym run: " + out.stderr[-300:]
        continue
    inputs = xla_runtime.load_io_dir(f"{io}/{k}", "inputs")
    ours = xla_runtime.load_io_dir(f"{io}/{k}", "outputs")
    rotated = [[np.roll(a.reshape(-1), r).reshape(a.shape) for a in inputs] for r in range(4)]
    exe = x.compile(xla_runtime.read_module_text(path), replicas=4)
    theirs = x.run_replicated(exe, rotated)[0]
    c = xla_runtime.compare_outputs(ours, theirs)
    verdicts[path] = "ok" if c.ok else c.message[:300]
print(json.dumps(verdicts))
"""


def test_replicated_modules_agree_with_xla_on_four_replicas(tmp_path):
    """The evaluator runs a module written for several replicas one copy per replica (every
    collective exchanged, replica-id the copy's index): its outputs are XLA's replica 0's. One
    replica alone could not evaluate the ZeRO steps and took every all-reduce for its operand."""
    paths = [str(REPO / "datasets" / "probes" / f"{name}.hlo.zst") for name in REPLICATED]
    env = dict(
        os.environ,
        XLA_FLAGS="--xla_force_host_platform_device_count=4",
        PYTHONPATH=str(REPO / "python"),
    )
    out = subprocess.run(
        [sys.executable, "-c", _REPLICATED_AGAINST_XLA, str(HLOGYM), str(tmp_path), *paths],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    verdicts = json.loads(out.stdout.strip().splitlines()[-1])
    assert verdicts == {p: "ok" for p in paths}, verdicts


_SPLIT_FOUR_WAYS = """HloModule split, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}
  zero = f32[] constant(0)
  ROOT r = f32[4] reduce(x, zero), dimensions={0}, to_apply=add
}
"""


def test_compiles_for_the_partitions_a_module_is_split_into():
    """Xla.compile(partitions=N) compiles a module of global shapes for N partitions, which XLA's
    SPMD partitioner splits first (compile_with_pinned_xla.py reads N from num_partitions); the
    executable runs on one partition's data: a quarter of the rows."""
    program = (
        "from hlogym.xla import Xla\n"
        f"exe = Xla('cpu').compile({_SPLIT_FOUR_WAYS!r}, partitions=4)\n"
        "print(len(exe.local_devices()) if hasattr(exe, 'local_devices') else 4)\n"
        "print(exe.hlo_modules()[0].to_string().split('\\n', 1)[0])\n"
    )
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    out = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "4", out
    assert "f32[2,4]" in out[1], out  # the parameter as one partition holds it
