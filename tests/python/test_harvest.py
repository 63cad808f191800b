"""hlogym harvest and hlogym.datasets: a small JAX training script becomes a dataset that every
entry point takes, with real XLA's X from the program's own pass log."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hlogym
from hlogym import _locate, datasets, harvest, pass_log

# A two-layer MLP's SGD step and its loss, then the same loss again under another name (the same
# module structurally: kept once). JAX also compiles one-instruction helpers (left out).
PROGRAM = """
import jax, jax.numpy as jnp

def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - y) ** 2)

@jax.jit
def train_step(p, x, y):
    g = jax.grad(loss)(p, x, y)
    return jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

p = {"w1": jnp.ones((8, 16)), "b1": jnp.zeros(16), "w2": jnp.ones((16, 1))}
x, y = jnp.ones((4, 8)), jnp.ones((4, 1))
p = train_step(p, x, y)
print(float(jax.jit(loss)(p, x, y)), float(jax.jit(lambda p, x, y: loss(p, x, y))(p, x, y)))
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("program") / "train.py"
    path.write_text(PROGRAM)
    return path


@pytest.fixture(scope="module")
def dataset_dir(program, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("harvest") / "mlp"
    harvest.harvest([sys.executable, str(program)], out)
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_harvest_keeps_each_distinct_module_once(dataset_dir):
    manifest = json.loads((dataset_dir / "manifest.json").read_text())
    assert manifest["generator"] == "hlogym harvest"
    assert set(manifest["modules"]) == {"jit_train_step", "jit_loss"}
    reasons = [d["reason"] for d in manifest["left_out"]]
    assert "same as jit_loss" in reasons  # the lambda: the same structure under another name
    assert any(re.match(r"\d+ instructions \(< 10\)", r) for r in reasons)
    assert manifest["versions"]["jax"] and manifest["versions"]["jaxlib"]
    for name, m in manifest["modules"].items():
        assert m["frontend"] == "jax" and m["family"] == "mlp" and m["split"] in ("train", "test")
        text = (dataset_dir / m["path"]).read_text()
        assert f"HloModule {name}" in text
        env = hlogym.Env(observation_spaces=["cost"])
        env.reset(str(dataset_dir / m["path"]))  # parses and verifies
        assert env.initial_op_count == m["op_count"] >= 10


def test_x_is_what_the_pass_log_says(dataset_dir, program, tmp_path):
    """X read back from a separate run's raw log: the count XLA printed when layout-assignment
    started on jit_train_step."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.update(pass_log.dump_environment(str(tmp_path / "dump"), passes=None))
    log = subprocess.run(
        [sys.executable, str(program)], env=env, capture_output=True, text=True, check=True
    ).stderr
    lines = log.splitlines()
    start = next(i for i, l in enumerate(lines) if "on module jit_train_step:" in l)
    at = next(
        i for i in range(start, len(lines)) if lines[i].endswith("HLO pass layout-assignment")
    )
    x = next(
        int(m.group(1))
        for line in lines[at:]
        if (m := re.search(r"Number of instructions: (\d+)$", line))
    )
    entry = json.loads((dataset_dir / "manifest.json").read_text())["modules"]["jit_train_step"]
    assert entry["X"] == x
    assert entry["xla_initial_op_count"] == entry["op_count"]  # JAX hands XLA the dump itself
    ref = datasets.load(dataset_dir)["jit_train_step"].reference()
    assert ref["X"] == x and ref["passes"] and ref["passes"][-1]["op_count"] == x


def test_harvest_is_deterministic(dataset_dir, program, tmp_path):
    again = harvest.harvest([sys.executable, str(program)], tmp_path / "mlp")
    assert _files(again) == _files(dataset_dir)


def test_cli_eval_and_the_environment_take_the_dataset(dataset_dir, tmp_path):
    out = subprocess.run(
        [str(_locate.cli_binary()), "eval", "--agent", "default", "--suite", str(dataset_dir)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    manifest = json.loads((dataset_dir / "manifest.json").read_text())
    for name, m in manifest["modules"].items():
        row = next(line.split() for line in out.stdout.splitlines() if line.startswith(name))
        assert row[1] == str(m["op_count"]) and row[4] == str(m["X"])  # I, D, R, X columns
    ds = datasets.load(dataset_dir)
    env = hlogym.make(benchmark_locs=ds, traj_limit=2)
    seen = set()
    for _ in range(len(ds)):
        _, info = env.reset()
        seen.add(env.unwrapped.core.benchmark)
    assert seen == set(ds.benchmarks())
    # the same benchmark names resolve in the CLI
    spec = ds["jit_loss"].benchmark
    assert spec == f"{dataset_dir}/mlp/jit_loss"
    assert hlogym.resolve_benchmark(spec) == str(dataset_dir / "mlp" / "jit_loss.hlo")


def test_split_is_the_same_in_python_and_the_cli(dataset_dir):
    ds = datasets.load(dataset_dir)
    for split in ("train", "test"):
        names = {m.name for m in ds if m.split == split}
        assert {m.name for m in ds.split(split)} == names
        if names:
            assert len(
                hlogym.resolve_suite([str(dataset_dir)], "test", dataset_split=split)
            ) == len(names)
    # without a dataset split, the CLI's default corpus split leaves a dataset folder whole
    assert len(hlogym.resolve_suite([str(dataset_dir)], "test", dataset_split="")) == len(ds)


def test_a_failing_program_leaves_nothing(tmp_path):
    with pytest.raises(harvest.HarvestError, match="(?s)exited with status 3.*boom"):
        harvest.harvest(
            [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"],
            tmp_path / "out",
        )
    assert list(tmp_path.iterdir()) == []


# A large constant (XLA's dumps print it as {...} unless asked for it in full), and a stand-in
# for an older XLA that stops at the flag asking for it.
CONSTANT_PROGRAM = """
import jax, jax.numpy as jnp, numpy as np
table = np.arange(64, dtype=np.float32) * 0.5 + 1
print(float(jax.jit(lambda x: jnp.sum(x * table))(jnp.ones(64))))
"""
OLDER_XLA = """
import os, runpy, sys
if "--xla_dump_large_constants" in os.environ.get("XLA_FLAGS", ""):
    sys.exit("F parse_flags_from_env.cc] Unknown flags in XLA_FLAGS: --xla_dump_large_constants")
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def test_large_constants_come_in_full_or_as_an_older_xla_allows(tmp_path):
    program = tmp_path / "constant.py"
    program.write_text(CONSTANT_PROGRAM)
    out = harvest.harvest([sys.executable, str(program)], tmp_path / "new", min_instructions=1)
    texts = [p.read_text() for p in (out / "new").glob("*.hlo")]
    assert any("constant({1, 1.5, 2," in t for t in texts), texts
    assert not any("{...}" in t for t in texts)
    older = tmp_path / "older_xla.py"
    older.write_text(OLDER_XLA)
    out = harvest.harvest(
        [sys.executable, str(older), str(program)], tmp_path / "old", min_instructions=1
    )
    assert any("{...}" in p.read_text() for p in (out / "old").glob("*.hlo"))


def test_a_program_without_xla_leaves_nothing(tmp_path):
    with pytest.raises(harvest.HarvestError, match="compiled nothing with XLA"):
        harvest.harvest([sys.executable, "-c", "print(1)"], tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_kept_without_force(dataset_dir, program, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(harvest.HarvestError, match="exists; pass --force"):
        harvest.harvest([sys.executable, str(program)], mine)
    # --force replaces harvested datasets only
    with pytest.raises(harvest.HarvestError, match="not a dataset hlogym harvest wrote"):
        harvest.harvest([sys.executable, str(program)], mine, force=True)
    assert (mine / "notes.txt").read_text() == "mine"
    copy = tmp_path / "copy"
    harvest.harvest([sys.executable, str(program)], copy, family="mlp")
    (copy / "stale.txt").write_text("old")
    harvest.harvest([sys.executable, str(program)], copy, force=True, family="mlp")
    assert _files(copy) == _files(dataset_dir)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy", "mine"]  # nothing half-made


def test_cli_harvest_reports_bad_input(program, tmp_path):
    cli = str(_locate.cli_binary())
    out = subprocess.run(
        [cli, "harvest", "--out", str(tmp_path / "d"), "--", sys.executable, "-c", "print(1)"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "compiled nothing with XLA" in out.stderr
    out = subprocess.run(
        [cli, "harvest", "--out", str(tmp_path / "d"), "--", sys.executable, str(program)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "jit_train_step: I=" in out.stdout
    assert (tmp_path / "d" / "manifest.json").is_file()


def test_shipped_datasets(monkeypatch, dataset_dir):
    monkeypatch.setenv(datasets.ENV_VAR, str(dataset_dir.parent))
    found = {d.name: d for d in datasets.available()}
    assert {"corpus", "smoke", "xla_optimized", "pytorch", "large_steps", "mlp"} <= set(found)
    corpus = found["corpus"]
    assert len(corpus) == len(hlogym.corpus_benchmarks())
    assert set(corpus.heldout_families) == {m.family for m in corpus.split("heldout")}
    gpt2 = next(m for m in corpus if m.family == "gpt2")
    assert gpt2.benchmark == f"corpus/gpt2/{gpt2.name}"
    assert hlogym.resolve_benchmark(gpt2.benchmark) == str(gpt2.path)
    assert gpt2.reference()["X"] == gpt2.X and gpt2.text().startswith("HloModule")
    pt = datasets.load("pytorch")
    assert pt.benchmarks() == [f"pytorch/{m.family}/{m.name}" for m in pt]
    assert [hlogym.resolve_benchmark(b) for b in pt.benchmarks()] == [str(m.path) for m in pt]
    assert datasets.load("mlp").root == dataset_dir
    with pytest.raises(FileNotFoundError, match="no dataset 'nope'"):
        datasets.load("nope")
    env = hlogym.make(benchmark_locs="pytorch", traj_limit=1)
    assert env.unwrapped.benchmarks == pt.benchmarks()


def _log(prefix: str, module: str, counts: tuple[int, int]) -> list[str]:
    """One compilation as XLA's pass pipeline logs it, with `prefix` before each message."""
    first, x = counts
    return [
        f"{prefix}hlo_pass_pipeline.cc:303] Running HLO pass pipeline on module {module}: pre",
        f"{prefix}hlo_pass_pipeline.cc:181]   HLO pass dce",
        f"{prefix}hlo_pass_pipeline.cc:187]   Number of instructions: {first}",
        f"{prefix}hlo_pass_pipeline.cc:245]   Pass caused changes dce",
        f"{prefix}hlo_pass_pipeline.cc:209] HLO pass: dce time: 1 us",
        f"{prefix}hlo_pass_pipeline.cc:303] Running HLO pass pipeline on module {module}: layout",
        f"{prefix}hlo_pass_pipeline.cc:181]   HLO pass layout-assignment",
        f"{prefix}hlo_pass_pipeline.cc:187]   Number of instructions: {x}",
    ]


def test_the_pass_log_is_cut_into_compilations():
    # jaxlib's prefix names the thread; two compilations of one name follow each other, and a
    # module of another name runs on a second thread in between.
    a = "I1204 14:36:37.892891    1887 "
    b = "I1204 14:36:37.892999    1999 "
    lines = (
        _log(a, "jit_f", (11, 10))[:4] + _log(b, "jit_g", (7, 5)) + _log(a, "jit_f", (11, 10))[4:]
    )
    lines += _log(a, "jit_f", (9, 8))
    found = pass_log.split_compilations("\n".join(lines))
    assert [(c.module, c.counts()) for c in found] == [
        ("jit_f", (11, 10)),
        ("jit_g", (7, 5)),
        ("jit_f", (9, 8)),
    ]
    # PyTorch/XLA's XLA logs without a thread and, at this verbosity, without counts.
    torch = "2026-12-04 14:56:09.041678: I external/xla/xla/hlo/pass/"
    log = [line for line in _log(torch, "SyncTensorsGraph.5", (3, 3)) if "Number of" not in line]
    (only,) = pass_log.split_compilations("\n".join(log))
    assert only.module == "SyncTensorsGraph.5" and only.counts() == (None, None)
    assert [e["pass"] for e in only.events()] == ["dce", "layout-assignment"]
