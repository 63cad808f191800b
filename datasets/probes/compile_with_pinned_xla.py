"""Compiles every module in harvested datasets' family folders with the pinned jaxlib's XLA
(hlogym.xla.Xla), so that `hlogym harvest` around this script records the pinned XLA's result on
modules another frontend version lowered:

    hlogym harvest --out DIR -- .venv/bin/python datasets/probes/compile_with_pinned_xla.py DIR...

--each-in-a-child compiles each module in a process of its own, for modules on which XLA stops
the process after its HLO passes (XLA:CPU's emitter aborts on some of an older XLA's optimized
modules, which already hold fusions): the pass log and the dumps that give X are written before
that, and the next module still compiles. A child's dumps are renumbered into the dump folder in
compilation order, since every fresh process numbers its modules from 0.

A module whose header says `replica_count=N` (collectives written for N replicas, such as
examples/harvest/torch_collectives.py writes) is compiled for N replicas, on N host devices; one
whose header says `num_partitions=N` (PyTorch/XLA's SPMD, jax.jit with sharded inputs) for N
partitions, which XLA's SPMD partitioner splits first.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hlogym.xla import Xla, read_module_text

_DUMP_TO = re.compile(r"--xla_dump_to=(\S+)")
_MODULE_ID = re.compile(r"^module_(\d+)\.")
_REPLICA_COUNT = re.compile(r"\breplica_count=(\d+)")
_NUM_PARTITIONS = re.compile(r"\bnum_partitions=(\d+)")


def module_paths(folders: list[str]) -> list[Path]:
    paths = []
    for folder in folders:
        found = sorted(Path(folder).glob("*.hlo*"))
        if not found:
            raise SystemExit(f"{folder}: no .hlo or .hlo.zst module")
        paths += found
    return paths


def compile_each_in_a_child(paths: list[Path]) -> None:
    flags = os.environ.get("XLA_FLAGS", "")
    dump_to = _DUMP_TO.search(flags)
    next_id = 0
    for path in paths:
        with tempfile.TemporaryDirectory(prefix="hlogym-compile-") as own:
            env = dict(os.environ)
            if dump_to:
                env["XLA_FLAGS"] = _DUMP_TO.sub(f"--xla_dump_to={own}", flags)
            # stderr (the pass log) is this process's: the harvest reads it.
            child = subprocess.run([sys.executable, __file__, str(path)], env=env)
            if child.returncode != 0:
                print(f"{path.name}: XLA stopped with status {child.returncode}", file=sys.stderr)
            if not dump_to:
                continue
            ids = sorted({int(m[1]) for f in os.listdir(own) if (m := _MODULE_ID.match(f))})
            renumbered = {old: next_id + i for i, old in enumerate(ids)}
            next_id += len(ids)
            for name in os.listdir(own):
                m = _MODULE_ID.match(name)
                new = f"module_{renumbered[int(m[1])]:04d}." + name[m.end() :] if m else name
                shutil.move(os.path.join(own, name), os.path.join(dump_to[1], new))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", help="folders of modules, or module files")
    parser.add_argument("--each-in-a-child", action="store_true")
    args = parser.parse_args(argv)
    paths = [
        p for f in args.folders for p in ([Path(f)] if Path(f).is_file() else module_paths([f]))
    ]
    if args.each_in_a_child:
        compile_each_in_a_child(paths)
        return
    texts = [read_module_text(path) for path in paths]

    def header_count(pattern: re.Pattern, text: str) -> int:
        m = pattern.search(text.split("\n", 1)[0])
        return int(m[1]) if m else 1

    replicas = [header_count(_REPLICA_COUNT, t) for t in texts]
    partitions = [header_count(_NUM_PARTITIONS, t) for t in texts]
    most = max((r * p for r, p in zip(replicas, partitions)), default=1)
    flags = os.environ.get("XLA_FLAGS", "")
    if most > 1 and "xla_force_host_platform_device_count" not in flags:
        # before jax starts (Xla imports it): one host device per replica
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={most}"
    xla = Xla("cpu")
    for text, r, p in zip(texts, replicas, partitions):
        xla.compile(text, replicas=r, partitions=p)


if __name__ == "__main__":
    main(sys.argv[1:])
