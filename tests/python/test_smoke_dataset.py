"""Consistency of datasets/smoke/: the files exist, are what VERSIONS.json lists, and XLA's own
parser (jaxlib) accepts every one of them."""

import gzip
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "datasets" / "smoke"
sys.path.insert(0, str(REPO / "bench"))

import jaxlib_parse  # noqa: E402


def smoke_files():
    return sorted(
        p
        for p in SMOKE.rglob("*")
        if p.is_file()
        and p.name.endswith((".hlo", ".hlo.gz", ".txt", ".txt.gz"))
        and p.name != "default_suite.txt"
    )


def test_default_suite_files_exist():
    lines = [l.strip() for l in (SMOKE / "default_suite.txt").read_text().splitlines()]
    entries = [l for l in lines if l and not l.startswith("#")]
    assert entries
    for e in entries:
        assert (REPO / e).is_file(), e


def test_versions_json_lists_every_file():
    v = json.loads((SMOKE / "VERSIONS.json").read_text())
    listed = {f for files in v["modules"].values() for f in files}
    listed |= {"dumps/" + f for files in v["dump_files"].values() for f in files}
    present = {str(p.relative_to(SMOKE)) for p in smoke_files()}
    assert listed == present


def test_large_files_are_compressed():
    for p in smoke_files():
        if not p.name.endswith(".gz"):
            assert p.stat().st_size <= 200 * 1024, p
        else:
            with gzip.open(p) as f:
                assert f.read(9) == b"HloModule"


@pytest.mark.parametrize("path", smoke_files(), ids=lambda p: str(p.relative_to(SMOKE)))
def test_jaxlib_parses(path):
    parse, _ = jaxlib_parse.load_parser()
    text = jaxlib_parse.read_text(path)
    module = parse(text)
    assert module.name
    assert len(jaxlib_parse.INSTR_RE.findall(text)) > 0
