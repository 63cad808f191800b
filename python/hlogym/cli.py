"""The hlogym command line from Python: one subprocess per call, its output as text, a failure as
an exception naming the command and its stderr. hlogym.xla_bench, the tests and hlogym.jax (for
the learned policies, which live in the command line's LibTorch plugin) drive the command through
it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from . import _locate


class Hlogym:
    def __init__(self, binary: str | os.PathLike | None = None):
        self.binary = Path(binary) if binary else _locate.cli_binary()
        if not self.binary.exists():
            raise FileNotFoundError(f"{self.binary} is not built; run scripts/setup.sh")

    def __call__(self, *args, stdin: str | None = None, timeout: float = 1800) -> str:
        out = subprocess.run(
            [str(self.binary), *map(str, args)],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if out.returncode != 0:
            cmd = " ".join(map(str, args))
            raise RuntimeError(f"hlogym {cmd}: exit {out.returncode}: {out.stderr.strip()[-2000:]}")
        return out.stdout

    def fmt(self, path: Path) -> str:
        return self("fmt", path)

    def pass_names(self) -> set[str]:
        """Every name a pass list may hold: the registered passes and the pipelines."""
        listing = json.loads(self("list-passes", "--json"))
        return {p["name"] for p in listing["passes"] + listing["pipelines"]}

    # default and opt make modules for XLA to compile, hence `opt --for-xla` (what XLA:CPU
    # rewrites only after its own convolution canonicalization is left to XLA).
    def default(self, path: Path) -> str:
        return self("opt", path, "--pipeline=xla-cpu-default", "--for-xla")

    def opt(self, path: Path, passes: list[str]) -> str:
        if not passes:
            return self.fmt(path)
        return self("opt", path, "--passes=" + ",".join(passes), "--for-xla")

    def search(
        self, path: Path, algo: str, seed: int = 0, budget: int | None = None
    ) -> list[str] | None:
        """The pass sequence `hlogym search --algo ALGO` finds (budget: its --budget); None when
        it failed hlogym's own equivalence check."""
        extra = ["--budget", budget] if budget else []
        report = json.loads(
            self("search", path, "--algo", algo, "--json", "-q", "--seed", seed, *extra)
        )
        (b,) = report["benchmarks"]
        return None if b.get("valid") is False else list(b["passes"])

    def greedy(self, path: Path, seed: int = 0) -> list[str]:
        return self.search(path, "greedy", seed) or []

    def op_count(self, text: str) -> int:
        data = json.loads(self("stats", "-", "--json", stdin=text))
        return int((data[0] if isinstance(data, list) else data)["op_count"])
