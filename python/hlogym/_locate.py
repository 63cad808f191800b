"""Where hlogym's parts are, for a checkout and for an installed package alike.

From a checkout (python/hlogym/ beside CMakeLists.txt) the command line is build/hlogym and the
data is datasets/; after ``pip install`` the command line is in the environment's bin/ and the
data in its share/hlogym/datasets/ (pyproject.toml, CMakeLists.txt's install rules). Where the
extension is built, the data root is the C++ core's own answer.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parents[1]


def checkout() -> Path | None:
    """The repository this package runs from, or None when it is installed."""
    if (_CHECKOUT / "CMakeLists.txt").is_file() and _CHECKOUT / "python" / "hlogym" == _PACKAGE:
        return _CHECKOUT
    return None


def _install_dirs(kind: str) -> list[Path]:
    """sysconfig's `kind` folder ('scripts', 'data') for this environment and the user scheme."""
    dirs = [Path(sysconfig.get_path(kind))]
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        dirs.append(Path(sysconfig.get_path(kind, user_scheme)))
    return dirs


def data_root() -> Path:
    """The folder holding datasets/: the C++ core's DataRoot() (src/text/module_locator.h) when
    the extension is built; without it ($HLOGYM_ROOT,) the checkout or the installed
    share/hlogym."""
    try:
        from . import _hlogym
    except ImportError:
        pass
    else:
        return Path(_hlogym.data_root())
    if os.environ.get("HLOGYM_ROOT"):
        return Path(os.environ["HLOGYM_ROOT"])
    if (repo := checkout()) is not None:
        return repo
    for data in _install_dirs("data"):
        if (data / "share" / "hlogym" / "datasets").is_dir():
            return data / "share" / "hlogym"
    raise FileNotFoundError(
        "hlogym: no datasets/ found (not a checkout, and no share/hlogym/ "
        "in this environment); set HLOGYM_ROOT"
    )


def cli_binary() -> Path:
    """The hlogym command line: $HLOGYM_BUILD_DIR/hlogym, the checkout's build/hlogym, or the
    one installed with this package (the environment's bin/, else PATH)."""
    if os.environ.get("HLOGYM_BUILD_DIR"):
        return Path(os.environ["HLOGYM_BUILD_DIR"]) / "hlogym"
    if (repo := checkout()) is not None:
        return repo / "build" / "hlogym"
    for scripts in _install_dirs("scripts"):
        if (scripts / "hlogym").is_file():
            return scripts / "hlogym"
    found = shutil.which("hlogym")
    if found is None:
        raise FileNotFoundError(
            "hlogym: the command line is not installed in this environment "
            "(pip install hlogym) and not on PATH"
        )
    return Path(found)
