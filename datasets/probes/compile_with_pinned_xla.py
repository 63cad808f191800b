"""Compiles every module in harvested datasets' family folders with the pinned jaxlib's XLA
(hlogym.xla.Xla), so that `hlogym harvest` around this script records the pinned XLA's result on
modules another frontend version lowered:

    hlogym harvest --out DIR -- .venv/bin/python datasets/probes/compile_with_pinned_xla.py DIR...
"""

import sys
from pathlib import Path

from hlogym.xla import Xla, read_module_text


def main(folders: list[str]) -> None:
    xla = Xla("cpu")
    for folder in folders:
        paths = sorted(Path(folder).glob("*.hlo*"))
        if not paths:
            raise SystemExit(f"{folder}: no .hlo or .hlo.zst module")
        for path in paths:
            xla.compile(read_module_text(path))


if __name__ == "__main__":
    main(sys.argv[1:])
