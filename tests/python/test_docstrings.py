"""Every function, class, method and property of the C++ extension says what it does: help() on
hlogym.Env is what a user reads first. Its type stubs (python/hlogym/_hlogym.pyi, generated from
the extension by pybind11-stubgen) are current and installed with py.typed."""

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import hlogym
from hlogym import _hlogym

REPO = Path(__file__).resolve().parents[2]


def _text(obj) -> str:
    """The docstring without pybind11's signature lines (a callable's first line is its
    signature, `name(args) -> result`)."""
    doc = inspect.getdoc(obj) or ""
    if isinstance(obj, property):
        return doc.strip()
    name = getattr(obj, "__name__", "")
    lines = [line for line in doc.splitlines() if not line.startswith(f"{name}(")]
    return "\n".join(lines).strip()


def _public(namespace) -> list[tuple[str, object]]:
    return [
        (name, value)
        for name, value in vars(namespace).items()
        if (not name.startswith("_") or name == "__init__")
        and (callable(value) or isinstance(value, property))
    ]


def _undocumented(namespace, prefix: str) -> list[str]:
    return [f"{prefix}{name}" for name, value in _public(namespace) if not _text(value)]


def test_every_binding_is_documented():
    missing = _undocumented(_hlogym, "")
    for cls in (_hlogym.Env, _hlogym.VecEnv):
        if not _text(cls):
            missing.append(cls.__name__)
        missing += _undocumented(cls, cls.__name__ + ".")
    assert not missing, f"bindings without a docstring: {missing}"


def test_the_check_sees_a_missing_docstring():
    """The test above would catch a binding with only its signature."""

    class Fake:
        def documented(self):
            """Does something."""

        def bare(self):
            pass

        @property
        def bare_property(self):
            return 1

    assert _undocumented(Fake, "Fake.") == ["Fake.bare", "Fake.bare_property"]


@pytest.mark.parametrize("name", ["Env", "VecEnv"])
def test_help_shows_the_class_text(name):
    assert "environment" in (inspect.getdoc(getattr(_hlogym, name)) or "").lower()


def test_stubs_match_the_extension(tmp_path):
    """The committed stubs are what pybind11-stubgen makes of the extension now."""
    subprocess.run(
        [sys.executable, "-m", "pybind11_stubgen", "hlogym._hlogym", "-o", str(tmp_path)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    made = (tmp_path / "hlogym" / "_hlogym.pyi").read_text()
    committed = (REPO / "python" / "hlogym" / "_hlogym.pyi").read_text()
    assert made == committed, (
        "python/hlogym/_hlogym.pyi is stale: regenerate it (docs/contributing.md, the stub command)"
    )
    assert "def reset(self, benchmark: str) -> dict:" in committed


def test_the_package_is_typed():
    package = Path(hlogym.__file__).parent
    assert (package / "py.typed").exists()
    assert (package / "_hlogym.pyi").exists()
