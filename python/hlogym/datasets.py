"""The datasets hlogym ships and those a user harvested, as Python objects.

    import hlogym
    from hlogym import datasets

    for d in datasets.available():          # the shipped datasets and your own
        print(d.name, len(d), d.families)
    pt = datasets.load("pytorch")
    m = pt.modules[0]
    m.text(), m.reference()["X"], m.benchmark   # "pytorch/pt_cnn/pt_cnn_infer_..."
    env = hlogym.make(benchmark_locs=pt.split("test"))

A dataset is a folder with a ``manifest.json`` of the corpus's form (``hlogym harvest`` writes
one; datasets/corpus/README.md describes the fields) or, like datasets/smoke, a folder of HLO
files. Its modules are named ``<dataset>/<family>/<name>`` (a user's dataset by its folder:
``DIR/<family>/<name>``); that name is a benchmark everywhere: ``hlogym eval/search/train``,
``hlogym.make(benchmark_locs=...)`` and hlogym.ray. Splits are the C++ core's (train, test,
heldout, train-seen; hlogym.resolve_suite), so Python and the CLI pick the same modules.

Besides the shipped datasets, :func:`available` lists every dataset found in the folders of the
``HLOGYM_DATASETS`` environment variable (``os.pathsep``-separated; each a dataset or a folder
of datasets).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from . import _hlogym

SHIPPED = ("corpus", "xla_optimized", "pytorch", "large_steps", "smoke")
ENV_VAR = "HLOGYM_DATASETS"


@dataclass(frozen=True)
class Module:
    """One module of a dataset."""

    name: str
    dataset: str  # the dataset's name
    family: str
    split: str  # "train" or "test" ("" in a dataset without splits)
    frontend: str  # jax, tensorflow, pytorch ("" when the dataset does not say)
    heldout: bool  # its family is held out of training
    path: Path
    op_count: int | None  # I
    X: int | None  # real XLA's target-independent op count, when known
    benchmark: str  # its benchmark name: "<dataset>/<family>/<name>" or "DIR/<family>/<name>"
    reference_path: Path | None = None

    def text(self) -> str:
        """The module's HLO text, as XLA's pipeline received it."""
        from .xla import read_module_text  # numpy and ml_dtypes, only when text is read

        return read_module_text(self.path)

    def reference(self) -> dict[str, Any] | None:
        """Real XLA's passes on the module (pass, pipeline, changed, op count after each, up to
        layout-assignment) with I and X; None when the dataset has none."""
        if self.reference_path is None:
            return None
        from .xla import read_module_text

        return json.loads(read_module_text(self.reference_path))


class Dataset:
    """A dataset folder: its modules by name, families, splits and manifest."""

    def __init__(self, root: str | os.PathLike, name: str | None = None):
        self.root = Path(root).absolute()
        if not self.root.is_dir():
            raise FileNotFoundError(f"{root}: no such dataset folder")
        self.name = name or self.root.name
        # Benchmarks of a shipped dataset are named by the dataset; a user's by its folder.
        self._prefix = self.name if name in SHIPPED else str(self.root)
        manifest_path = self.root / "manifest.json"
        self.manifest: dict[str, Any] = {}
        if manifest_path.is_file():
            try:
                self.manifest = json.loads(manifest_path.read_text())
            except ValueError as e:
                raise ValueError(f"{manifest_path}: not JSON: {e}") from None
            self.modules = self._from_manifest()
        else:
            self.modules = self._from_files()
        if not self.modules:
            raise ValueError(
                f"{self.root}: no module hlogym can read (no manifest.json listing one, nor HLO "
                "files)"
            )
        self._by_name = {m.name: m for m in self.modules}

    def _from_manifest(self) -> list[Module]:
        heldout = set(self.manifest.get("heldout_families") or [])
        modules = []
        for name, e in sorted(self.manifest.get("modules", {}).items()):
            if "path" not in e or e.get("hlogym_error"):
                continue  # listed but not readable by hlogym (the generator says why)
            family = e.get("family", "")
            ref = e.get("xla_reference")
            modules.append(
                Module(
                    name=name,
                    dataset=self.name,
                    family=family,
                    split=e.get("split", ""),
                    frontend=e.get("frontend", ""),
                    heldout=family in heldout,
                    path=self.root / e["path"],
                    op_count=e.get("op_count"),
                    X=e.get("X"),
                    benchmark=f"{self._prefix}/{family}/{name}"
                    if family
                    else f"{self._prefix}/{name}",
                    reference_path=self.root / ref if ref else None,
                )
            )
        return modules

    def _from_files(self) -> list[Module]:
        modules = []
        for spec in _hlogym.expand_benchmark_locs([str(self.root)]):
            path = Path(spec)
            name = path.name
            for ext in (".zst", ".gz", ".hlo", ".txt"):
                name = name.removesuffix(ext)
            modules.append(
                Module(
                    name=name,
                    dataset=self.name,
                    family="",
                    split="",
                    frontend="",
                    heldout=False,
                    path=path,
                    op_count=None,
                    X=None,
                    benchmark=f"{self._prefix}/{name}",
                )
            )
        return modules

    @property
    def families(self) -> list[str]:
        return sorted({m.family for m in self.modules if m.family})

    @property
    def heldout_families(self) -> list[str]:
        return sorted(self.manifest.get("heldout_families") or [])

    def split(self, split: str) -> list[Module]:
        """The modules of a split: train, test, heldout (the held-out families), train-seen
        (train without them); the same modules as ``hlogym eval --suite DIR --split SPLIT``."""
        if not self.manifest:
            raise ValueError(f"dataset {self.name} has no manifest, so no splits")
        try:
            paths = {os.path.realpath(p) for p in _hlogym.resolve_suite([str(self.root)], split)}
        except FileNotFoundError:
            return []  # a split without modules
        return [m for m in self.modules if os.path.realpath(m.path) in paths]

    def benchmarks(self, split: str = "") -> list[str]:
        """The modules' benchmark names (all, or a split's)."""
        return [m.benchmark for m in (self.split(split) if split else self.modules)]

    def __len__(self) -> int:
        return len(self.modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self.modules)

    def __getitem__(self, name: str) -> Module:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"dataset {self.name} has no module {name!r}") from None

    def __repr__(self) -> str:
        return f"Dataset({self.name!r}, {len(self)} modules, root={str(self.root)!r})"


def _shipped_root(name: str) -> Path:
    return Path(_hlogym.data_root()) / "datasets" / name


def _user_roots() -> list[Path]:
    roots = []
    for entry in filter(None, os.environ.get(ENV_VAR, "").split(os.pathsep)):
        folder = Path(entry)
        if (folder / "manifest.json").is_file():
            roots.append(folder)
        elif folder.is_dir():
            roots.extend(sorted(p.parent for p in folder.glob("*/manifest.json")))
    return roots


def available() -> list[Dataset]:
    """The shipped datasets present in this installation, then the user's (HLOGYM_DATASETS)."""
    found = [Dataset(_shipped_root(n), n) for n in SHIPPED if _shipped_root(n).is_dir()]
    return found + [Dataset(root) for root in _user_roots()]


def load(name_or_path: str | os.PathLike) -> Dataset:
    """A dataset by folder, by shipped name (corpus, xla_optimized, pytorch, large_steps,
    smoke), or by the name of a folder in HLOGYM_DATASETS."""
    path = Path(name_or_path)
    if path.is_dir():
        return Dataset(path)
    name = os.fspath(name_or_path)
    if name in SHIPPED and _shipped_root(name).is_dir():
        return Dataset(_shipped_root(name), name)
    for root in _user_roots():
        if root.name == name:
            return Dataset(root)
    known = [d.name for d in available()]
    raise FileNotFoundError(f"no dataset {name!r}: not a folder, nor one of {known}")


def benchmark_locs(value: Any) -> list[str]:
    """What hlogym.make's ``benchmark_locs`` and hlogym.ray take, as benchmark names and paths: a
    Dataset (its modules), a Module, a shipped dataset's name, or a list of any of these and
    of benchmark names, folders and suite files."""
    if isinstance(value, Dataset):
        return value.benchmarks()
    if isinstance(value, Module):
        return [value.benchmark]
    if isinstance(value, (str, os.PathLike)):
        name = os.fspath(value)
        if name in SHIPPED and not Path(name).exists() and _shipped_root(name).is_dir():
            return load(name).benchmarks()
        return [name]
    if isinstance(value, Sequence):
        return [loc for item in value for loc in benchmark_locs(item)]
    raise TypeError(
        f"benchmark_locs takes benchmark names, paths, datasets or modules, not {type(value)}"
    )
