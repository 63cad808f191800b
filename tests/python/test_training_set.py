"""The generated training set (datasets/corpus/generate.py --training, scripts/training_data.sh):
what it is made of, checked from its configurations without generating it (that needs three venvs
and about 25 minutes), and one module of each hand-written JAX family lowered with the project's
jax and read by hlogym.
"""

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "datasets" / "corpus"
HLOGYM = REPO / "build" / "hlogym"
sys.path.insert(0, str(CORPUS))

import generate  # noqa: E402


@pytest.fixture(scope="module")
def training():
    return generate.all_configs("training")


@pytest.fixture(scope="module")
def corpus_manifest():
    return json.loads((CORPUS / "manifest.json").read_text())


def test_with_the_corpus_training_split_it_is_1000_graphs_of_30_families(training, corpus_manifest):
    train_seen = [
        m
        for m in corpus_manifest["modules"].values()
        if m["split"] == "train" and m["family"] not in corpus_manifest["heldout_families"]
    ]
    families = {f for _, f, _ in training} | {m["family"] for m in train_seen}
    assert len(training) + len(train_seen) >= 1000
    assert len(families) >= 30
    frontends = {generate.FAMILY_SPECS[f].get("frontend", "jax") for f in families}
    assert frontends == {"jax", "tensorflow", "pytorch"}
    per_family = collections.Counter(f for _, f, _ in training)
    assert min(per_family.values()) >= 16, per_family


def test_nothing_held_out_or_judged_on_is_in_it(training, corpus_manifest):
    families = {f for _, f, _ in training}
    assert not families & set(corpus_manifest["heldout_families"])
    judged_on = {f for f, s in generate.FAMILY_SPECS.items() if s.get("dataset") == "pytorch"}
    assert not families & judged_on
    assert all(generate.FAMILY_SPECS[f].get("library") != "keras" for f in families)
    # no corpus module again, and no configuration of an architecture in the corpus's test split
    corpus = generate.all_configs("corpus")
    assert not {n for n, _, _ in training} & {n for n, _, _ in corpus}
    split_of = generate.assign_splits(corpus)
    assert all(split_of.get(generate.arch_key(f, c)) != "test" for _, f, c in training)


def test_it_is_the_same_every_time(training):
    assert generate.all_configs("training") == training


def test_each_hand_written_family_lowers_to_hlo_that_hlogym_reads(training, tmp_path):
    firsts = {}
    for name, family, cfg in training:
        if generate.FAMILY_SPECS[family].get("module") == "training_models":
            firsts.setdefault(family, (name, cfg))
    assert len(firsts) >= 15
    for family, (name, cfg) in sorted(firsts.items()):
        text = generate.lower_text(name, family, cfg).as_text(dialect="hlo")
        path = tmp_path / f"{name}.hlo"
        path.write_text(text)
        stats = subprocess.run(
            [str(HLOGYM), "stats", str(path)], capture_output=True, text=True, check=False
        )
        assert stats.returncode == 0, f"{name}: {stats.stderr}"
        op_count = int(stats.stdout.split("op count:")[1].split()[0])
        assert op_count == generate.count_ops(text)[0], name
