"""Every function, class, method and property of the C++ extension says what it does: help() on
hlogym.Env is what a user reads first."""

import inspect

import pytest

from hlogym import _hlogym


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
