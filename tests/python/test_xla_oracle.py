"""hlogym against real XLA (jaxlib's HLO parser and CPU backend), issues 4 and 9.

(a) XLA parses hlogym's printed text: for every smoke module and every corpus module (whatever
    datasets/corpus/manifest.json lists and exists), `hlogym fmt`, `hlogym opt
    --pipeline=xla-cpu-default` and seeded random pass sequences (passes from `hlogym list-passes
    --json`) must all be accepted by jaxlib._hlo.hlo_module_from_text.
(b) Same results on XLA: `hlogym run --seed 0 --io DIR` saves the inputs and hlogym's outputs as
    .npy files; XLA compiles the module (HLO text -> StableHLO -> CPU executable, see
    bench/xla_runtime.py) and runs it on those inputs; outputs must agree (integers and pred
    exactly, f32 within rtol 1e-4 / atol 1e-5, bf16/f16 within 2e-2 of the array's scale; NaN ==
    NaN; modules that compute in bf16/f16 get the bf16 tolerance on their f32 outputs too). For every smoke module and a sample of corpus modules (at least 50 in all), on the
    original module; for the smoke modules also XLA(original) vs XLA(after xla-cpu-default).
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
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HLOGYM = REPO / "build" / "hlogym"
SMOKE = REPO / "datasets" / "smoke"
CORPUS = REPO / "datasets" / "corpus"
REPORT = REPO / "build" / "xla_oracle_report.json"
sys.path.insert(0, str(REPO / "bench"))

jax = pytest.importorskip("jax")
if not HLOGYM.exists():  # scripts/test.sh builds it; a missing binary is a failure, not a skip
    raise RuntimeError(f"{HLOGYM} is not built; run scripts/setup.sh")

import xla_runtime  # noqa: E402

FULL = os.environ.get("HLOGYM_ORACLE_FULL") == "1"
# Corpus modules compared on XLA by default (besides the smoke modules), spread over families.
CORPUS_SAMPLE = int(os.environ.get("HLOGYM_ORACLE_CORPUS_SAMPLE", "36"))
RANDOM_SEQUENCES_SMOKE = 3
RANDOM_SEQUENCES_CORPUS = 1

# Opcodes whose values hlogym's evaluator does not reproduce bit for bit (documented in
# src/eval/evaluator.h / other_ops.cc): modules using them are not compared element-wise on
# XLA; they are listed in the report, and test_known_divergence_rng_bit_generator keeps the
# divergence visible.
NOT_BIT_COMPATIBLE = {
    "rng-bit-generator(": "hlogym's rng-bit-generator is a hash, not XLA's Philox/ThreeFry stream",
    " rng(": "hlogym's rng draws from its own generator",
}


# --- modules ------------------------------------------------------------------------------

def smoke_modules() -> list[Path]:
    return sorted(p for p in SMOKE.iterdir()
                  if p.name.endswith((".hlo", ".hlo.gz")) and ".optimized." not in p.name
                  and ".debuginfo." not in p.name)


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
    queues = [sorted(by_family[fam], key=lambda nm: (nm[1]["bytes"], nm[0]))
              for fam in sorted(by_family)]
    out = []
    while len(out) < k and any(queues):
        for q in queues:
            if q and len(out) < k:
                out.append(q.pop(0))
    return out


SMOKE_MODULES = smoke_modules()
CORPUS_ENTRIES = corpus_entries()
ALL_MODULES = [(f"smoke/{p.name}", p) for p in SMOKE_MODULES] + \
              [(f"corpus/{n}", CORPUS / m["path"]) for n, m in CORPUS_ENTRIES]
COMPARED = [(f"smoke/{p.name}", p, True) for p in SMOKE_MODULES] + \
           [(f"corpus/{n}", CORPUS / m["path"], FULL)
            for n, m in (CORPUS_ENTRIES if FULL else corpus_sample(CORPUS_ENTRIES, CORPUS_SAMPLE))]


# --- helpers ------------------------------------------------------------------------------

def hlogym(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(HLOGYM), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def read_module_text(path: Path) -> str:
    name = path.name
    if name.endswith(".zst"):
        return subprocess.run(["zstd", "-dcq", str(path)], check=True,
                              capture_output=True).stdout.decode()
    if name.endswith(".gz"):
        import gzip
        return gzip.decompress(path.read_bytes()).decode()
    return path.read_text()


@functools.lru_cache(maxsize=None)
def xla() -> xla_runtime.XlaCpu:
    return xla_runtime.XlaCpu()


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
    assert out.returncode == 0, f"hlogym opt --pipeline=xla-cpu-default {path}: {out.stderr[-2000:]}"
    return out.stdout


class Report:
    """Collected across tests; written at the end of the session (see the fixture below)."""
    data = {"parse": {"modules": 0, "texts": 0, "rejected": []},
            "results": {"compared_original": 0, "compared_optimized": 0, "mismatches": [],
                        "not_compared": [], "max_rel_err_f32": 0.0,
                        "max_rel_err_f32_module": None, "max_rel_err_bf16": 0.0,
                        "max_rel_err_bf16_module": None, "max_scaled_err_f32": 0.0,
                        "max_scaled_err_bf16": 0.0, "max_scaled_err_bf16_module": None,
                        "max_tolerance_ratio": 0.0, "max_tolerance_ratio_module": None,
                        "optimized_max_rel_err_f32": 0.0, "optimized_max_rel_err_bf16": 0.0,
                        "per_module": {}}}

    @classmethod
    def note_comparison(cls, key: str, kind: str, c: xla_runtime.Comparison):
        r = cls.data["results"]
        r["per_module"].setdefault(key, {})[kind] = {
            "ok": c.ok, "max_rel_err": c.max_rel_err,
            "max_rel_err_low_precision": c.max_rel_err_low_precision,
            "max_scaled_err": c.max_scaled_err,
            "max_scaled_err_low_precision": c.max_scaled_err_low_precision,
            "max_tolerance_ratio": c.max_tolerance_ratio, "message": c.message}
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
            r["optimized_max_rel_err_bf16"] = max(r["optimized_max_rel_err_bf16"],
                                                  c.max_rel_err_low_precision)
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
    print(f"\n[xla oracle] parse: {p['texts']} texts of {p['modules']} modules, "
          f"{len(p['rejected'])} rejected by XLA")
    print(f"[xla oracle] results: {r['compared_original']} modules compared with XLA "
          f"(original), {r['compared_optimized']} after xla-cpu-default; "
          f"{len(r['mismatches'])} mismatches, {len(r['not_compared'])} not compared")
    print(f"[xla oracle] largest relative error hlogym vs XLA, f32 modules: "
          f"{r['max_rel_err_f32']:.3g} ({r['max_rel_err_f32_module']}); bf16 modules: "
          f"{r['max_rel_err_bf16']:.3g} element-wise ({r['max_rel_err_bf16_module']}), "
          f"{r['max_scaled_err_bf16']:.3g} of the array's scale "
          f"({r['max_scaled_err_bf16_module']})")
    print(f"[xla oracle] XLA original vs hlogym-optimized: f32 "
          f"{r['optimized_max_rel_err_f32']:.3g}, bf16 {r['optimized_max_rel_err_bf16']:.3g}; "
          f"largest error/tolerance {r['max_tolerance_ratio']:.3g} "
          f"({r['max_tolerance_ratio_module']})")
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


def test_enough_modules_compared():
    assert len(COMPARED) >= 50 or not CORPUS_ENTRIES, len(COMPARED)


# Known, not yet root-caused differences from XLA, kept visible as xfail (non-strict, so a fix
# shows up as XPASS): tracked in the evaluator issue.
KNOWN_MISMATCHES = {
    "corpus/rnn_infer_gru_L1_H64_E32_s32_b2_u1_f32":
        "f32 GRU after 32 recurrent steps differs by ~4x the f32 tolerance (4e-4 relative); "
        "suspected XLA:CPU's tanh/logistic approximations compounding over the recurrence",
    "corpus/t5_infer_e1_x1_d32_h4_ff64_g1_s16_t16_b2_bf16":
        "one argmax token differs (bf16 near-tie in the logits)",
}


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
    if why:
        Report.data["results"]["not_compared"].append({"module": key, "reason": why})
    else:
        c = xla_runtime.compare_outputs(ours, theirs, all_low_precision=low)
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


@pytest.mark.xfail(strict=True, reason="hlogym's rng-bit-generator is not XLA's bit stream "
                                       "(src/eval/other_ops.cc); flips when it is")
def test_known_divergence_rng_bit_generator(tmp_path):
    path = SMOKE / "rng_bit_generator.hlo"
    out = hlogym("run", path, "--io", tmp_path)
    assert out.returncode == 0, out.stderr
    theirs = xla().run(xla().compile(path.read_text()),
                       xla_runtime.load_io_dir(tmp_path, "inputs"))
    c = xla_runtime.compare_outputs(xla_runtime.load_io_dir(tmp_path, "outputs"), theirs)
    assert c.ok, c.message
