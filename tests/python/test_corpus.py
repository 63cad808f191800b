"""Consistency and reproducibility of the benchmark corpus under datasets/corpus/.

(a) regenerates a few small modules with `generate.py --only ... --out TMP --no-xla` and checks
    their text is byte-identical to the committed ones (sha256 of the text as in the manifest; the
    compressed bytes too when the installed zstd is the one the manifest records);
(b) checks the manifest's invariants: size, families, suites, splits disjoint by configuration,
    every committed file matches its sha256, XLA references and pass pairs present;
(c) the same for XLA's optimized modules of corpus modules (datasets/xla_optimized), one of them
    regenerated;
(d) PyTorch/XLA's modules (datasets/pytorch, the third frontend): files, references and what
    makes them PyTorch/XLA's (regenerating them needs requirements-torch.txt's venv, which the
    project's does not carry).
"""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "datasets" / "corpus"
MANIFEST = CORPUS / "manifest.json"
XLA_OPTIMIZED = REPO / "datasets" / "xla_optimized"
PYTORCH = REPO / "datasets" / "pytorch"
LARGE_STEPS = REPO / "datasets" / "large_steps"
HLOGYM = REPO / "build" / "hlogym"

if not MANIFEST.exists():  # the corpus is committed; its absence is a failure, not a skip
    raise RuntimeError(f"{MANIFEST} is missing")


def unzstd(path: Path) -> bytes:
    return subprocess.run(
        ["zstd", "-d", "-q", "-c", str(path)], check=True, capture_output=True
    ).stdout


@pytest.fixture(scope="module")
def manifest():
    return json.loads(MANIFEST.read_text())


def test_regenerated_modules_are_identical(manifest, tmp_path):
    mods = manifest["modules"]
    # the three smallest modules of three different hand-written families (the library families
    # need requirements-libraries.txt, which the project's venv does not carry)
    picked, fams = [], set()
    for name in sorted(mods, key=lambda n: (mods[n]["bytes"], n)):
        if mods[name]["library"] == "jax" and mods[name]["family"] not in fams:
            picked.append(name)
            fams.add(mods[name]["family"])
        if len(picked) == 3:
            break
    subprocess.run(
        [
            sys.executable,
            str(CORPUS / "generate.py"),
            "--only",
            *picked,
            "--out",
            str(tmp_path),
            "--no-xla",
            "--jobs",
            "1",
        ],
        check=True,
        capture_output=True,
    )
    out = subprocess.run(["zstd", "--version"], capture_output=True, text=True).stdout
    same_zstd = re.search(r"v(\d+\.\d+\.\d+)", out).group(1) == manifest["versions"]["zstd"]
    for name in picked:
        m = mods[name]
        new = tmp_path / m["path"]
        assert hashlib.sha256(unzstd(new)).hexdigest() == m["sha256"], name
        if same_zstd:
            assert new.read_bytes() == (CORPUS / m["path"]).read_bytes(), name


def test_manifest_invariants(manifest):
    mods = manifest["modules"]
    assert len(mods) >= 300
    fams = {m["family"] for m in mods.values()}
    assert len(fams) >= 22
    assert {m["library"] for m in mods.values()} == {
        "jax",
        "keras",
        "flax",
        "equinox",
        "tensorflow",
    }
    assert {m["frontend"] for m in mods.values()} == {"jax", "tensorflow"}
    assert sum("gpt2" in m["suites"] for m in mods.values()) >= 100
    for key in ("jax", "jaxlib", "zstd"):
        assert manifest["versions"][key]
    for name, m in mods.items():
        assert m["path"] == f"{m['family']}/{name}.hlo.zst"
        assert m["split"] in ("train", "test")
        # TensorFlow's graphs come from TF's own lowering; every library above it is JAX's
        assert m["frontend"] == ("tensorflow" if m["library"] == "tensorflow" else "jax"), name
        assert isinstance(m["op_count"], int) and m["op_count"] > 0
        assert isinstance(m["X"], int) and m["X"] > 0, name
        assert not m.get("xla_problems"), (name, m.get("xla_problems"))
    for suite in ("gpt2", "diverse"):
        members = [m for m in mods.values() if suite in m["suites"]]
        train = {m["config_group"] for m in members if m["split"] == "train"}
        test = {m["config_group"] for m in members if m["split"] == "test"}
        assert train and test, suite
        assert not train & test, suite

        # no identical configuration (batch, dtype, ... included) on both sides either
        def key(m):
            return m["family"] + json.dumps(m["config"], sort_keys=True)

        tr = {key(m) for m in members if m["split"] == "train"}
        te = {key(m) for m in members if m["split"] == "test"}
        assert not tr & te, suite
        assert 0.1 <= len([m for m in members if m["split"] == "test"]) / len(members) <= 0.4


def test_leave_families_out(manifest):
    mods = manifest["modules"]
    held = set(manifest["heldout_families"])
    assert held <= {m["family"] for m in mods.values()}
    # a whole frontend and a whole library are held out, and a family of every other library
    tf_fams = {m["family"] for m in mods.values() if m["frontend"] == "tensorflow"}
    assert tf_fams and tf_fams <= held
    libs = {m["library"] for m in mods.values()} - {"tensorflow"}
    by_lib = {lib: {m["family"] for m in mods.values() if m["library"] == lib} for lib in libs}
    assert any(fams <= held for fams in by_lib.values())
    assert not all(fams <= held for fams in by_lib.values())
    assert all(fams & held for fams in by_lib.values())
    # what the shipped agents train on (--split train-seen) shares no family with them
    seen = {m["family"] for m in mods.values() if m["split"] == "train" and m["family"] not in held}
    assert seen and not seen & held
    assert sum(m["family"] in held for m in mods.values()) >= 50


def test_committed_files_match_manifest(manifest):
    for name, m in manifest["modules"].items():
        data = unzstd(CORPUS / m["path"])
        assert data.startswith(b"HloModule "), name
        assert len(data) == m["bytes"], name
        assert hashlib.sha256(data).hexdigest() == m["sha256"], name
        assert (CORPUS / m["xla_reference"]).is_file(), name
    listed = {m["path"] for m in manifest["modules"].values()}
    present = {str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*.hlo.zst")}
    assert listed == present


def test_xla_references(manifest):
    mods = manifest["modules"]
    # a sample (decompressing every reference is slow): every 10th module
    for name in sorted(mods)[::10]:
        ref = json.loads(unzstd(CORPUS / mods[name]["xla_reference"]))
        assert ref["I"] == mods[name]["op_count"], name
        if mods[name]["frontend"] == "tensorflow":
            # jaxlib's StableHLO import canonicalizes TF's text before XLA's passes see it
            assert 0 < ref["xla_initial_op_count"] <= ref["I"], name
        else:
            assert ref["xla_initial_op_count"] == ref["I"], name
        assert ref["X"] == mods[name]["X"], name
        assert ref["passes"], name
        assert ref["passes"][-1]["op_count"] == ref["X"], name
        assert all(e["pass"] != "layout-assignment" for e in ref["passes"])
        for e in ref["passes"]:
            assert sum(e["histogram"].values()) == e["op_count"], (name, e["pass"])


def test_default_suite_and_pass_pairs(manifest):
    lines = [l.strip() for l in (CORPUS / "default_suite.txt").read_text().splitlines()]
    entries = [l for l in lines if l and not l.startswith("#")]
    assert 8 <= len(entries) <= 16
    by_path = {f"datasets/corpus/{m['path']}": m for m in manifest["modules"].values()}
    for e in entries:
        assert e in by_path and by_path[e]["family"] == "gpt2", e
    index = json.loads((CORPUS / "xla_pass_pairs" / "index.json").read_text())
    assert len(index) >= 10
    for pass_name, pairs in index.items():
        assert 1 <= len(pairs) <= 3
        for p in pairs:
            assert (CORPUS / p["before"]).is_file() and (CORPUS / p["after"]).is_file()


def test_corpus_size_budget():
    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    assert total <= 40 * 1024 * 1024


@pytest.fixture(scope="module")
def optimized():
    return json.loads((XLA_OPTIMIZED / "manifest.json").read_text())


def test_xla_optimized_modules(manifest, optimized):
    sys.path.insert(0, str(CORPUS))
    from generate import has_non_default_layout, xla_optimized_selection

    mods, rejected = optimized["modules"], optimized["xla_rejected"]
    selected = set(xla_optimized_selection(manifest["modules"]))
    assert set(mods) | set(rejected) == selected and not set(mods) & set(rejected)
    assert len(mods) >= 0.9 * len(selected)
    with_layouts = 0
    for name, m in mods.items():
        text = unzstd(XLA_OPTIMIZED / m["path"]).decode()
        assert hashlib.sha256(text.encode()).hexdigest() == m["sha256"], name
        assert m["source"] == manifest["modules"][name]["path"], name
        assert " fusion(" in text, name  # XLA's output, not the corpus module
        with_layouts += has_non_default_layout(text)
        ref = json.loads(unzstd(XLA_OPTIMIZED / m["xla_reference"]))
        # stored as XLA receives it: XLA's passes start from I
        assert ref["I"] == m["op_count"] == ref["xla_initial_op_count"], name
        assert ref["X"] == m["X"] == ref["passes"][-1]["op_count"], name
        assert all(e["pass"] != "layout-assignment" for e in ref["passes"]), name
    assert with_layouts >= len(mods) // 2
    listed = {m["path"] for m in mods.values()}
    assert listed == {str(p.relative_to(XLA_OPTIMIZED)) for p in XLA_OPTIMIZED.glob("*/*.hlo.zst")}


def test_xla_optimized_module_regenerates(optimized, tmp_path):
    mods = optimized["modules"]
    name = min(mods, key=lambda n: (mods[n]["bytes"], n))
    r = subprocess.run(
        [
            sys.executable,
            str(CORPUS / "generate.py"),
            "--xla-optimized",
            "--only",
            name,
            "--out",
            str(tmp_path),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    new = json.loads((tmp_path / "manifest.json").read_text())["modules"][name]
    for key in ("sha256", "op_count", "X", "xla_initial_op_count", "path"):
        assert new[key] == mods[name][key], key


def test_pytorch_modules():
    sys.path.insert(0, str(CORPUS))
    from generate import all_configs

    pt = json.loads((PYTORCH / "manifest.json").read_text())
    mods = pt["modules"]
    assert set(mods) == {n for n, _, _ in all_configs("pytorch")}
    families = {m["family"] for m in mods.values()}
    assert families == {"pt_mlp", "pt_transformer", "pt_cnn"}
    assert set(pt["heldout_families"]) == families  # no agent trains on any of it
    assert pt["versions"]["torch"] and pt["versions"]["torch_xla"] and pt["versions"]["jaxlib"]
    assert {m["split"] for m in mods.values()} == {"train", "test"}
    for name, m in mods.items():
        assert m["frontend"] == "pytorch" and m["library"] == "torch", name
        text = unzstd(PYTORCH / m["path"]).decode()
        assert hashlib.sha256(text.encode()).hexdigest() == m["sha256"], name
        assert len(text) == m["bytes"], name
        assert text.startswith(f"HloModule {name},"), name
        # what PyTorch/XLA prints: aten op names, no source paths
        assert 'op_type="aten__' in text and "source_file=" not in text, name
        ref = json.loads(unzstd(PYTORCH / m["xla_reference"]))
        assert ref["I"] == m["op_count"], name
        # jaxlib's StableHLO import canonicalizes PyTorch/XLA's text before XLA's passes see it
        assert 0 < ref["xla_initial_op_count"] == m["xla_initial_op_count"] <= ref["I"], name
        assert ref["X"] == m["X"] == ref["passes"][-1]["op_count"], name
        assert all(e["pass"] != "layout-assignment" for e in ref["passes"]), name
        assert not m.get("xla_problems") and not m.get("hlogym_error"), name
    assert sum(m["config"]["mode"] == "train" for m in mods.values()) >= len(mods) // 2
    listed = {m["path"] for m in mods.values()}
    assert listed == {str(p.relative_to(PYTORCH)) for p in PYTORCH.glob("*/*.hlo.zst")}


def test_large_steps_modules():
    """datasets/large_steps: training steps of 5,000-10,000 instructions, held out entirely, each
    with XLA's reference, and hlogym's default pipeline ends at XLA's op count on every one."""
    sys.path.insert(0, str(CORPUS))
    from generate import all_configs

    large = json.loads((LARGE_STEPS / "manifest.json").read_text())
    mods = large["modules"]
    assert set(mods) == {n for n, _, _ in all_configs("large_steps")}
    assert len(mods) >= 20
    assert set(large["heldout_families"]) == {m["family"] for m in mods.values()}
    for name, m in mods.items():
        assert m["config"]["mode"] == "train" and 5000 <= m["op_count"] <= 10000, name
        text = unzstd(LARGE_STEPS / m["path"]).decode()
        assert hashlib.sha256(text.encode()).hexdigest() == m["sha256"], name
        ref = json.loads(unzstd(LARGE_STEPS / m["xla_reference"]))
        assert ref["I"] == m["op_count"] == ref["xla_initial_op_count"], name
        assert ref["X"] == m["X"] == ref["passes"][-1]["op_count"], name
        assert not m.get("xla_problems") and not m.get("hlogym_error"), name
    out = subprocess.run(
        [HLOGYM, "eval", "--agent", "default", "--suite", "large_steps", "--json", "-q"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads(out.stdout)["benchmarks"]
    assert len(rows) == len(mods)
    assert [r["name"] for r in rows if r["D"] != r["X"]] == []
