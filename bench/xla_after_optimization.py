#!/usr/bin/env python3
"""What XLA:CPU makes of each variant of a module: its optimized module's fusions and converts.

    .venv/bin/python bench/xla_after_optimization.py MODULE [MODULE ...]

For each module (a corpus name, a path) the original, xla-cpu-default's output and every list
candidate of `--objective runtime` (hlogym.timing.RUNTIME_CANDIDATES, handed back as
`hlogym opt --for-xla` writes them) are compiled by the pinned jaxlib, and the module XLA ran
its full pipeline to is read back from the executable. Printed per variant: instructions and
fusions in its entry computation, and converts anywhere (inside fusions too): what explains a
run-time difference that the op count before XLA's pipeline does not.
"""

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from hlogym import xla, xla_bench  # noqa: E402

OPCODE = re.compile(r"= \S+ ([\w-]+)\(")


def counts(text: str) -> dict:
    entry = text[text.index("\nENTRY") :]
    entry = entry[: entry.find("\n}") + 2]
    ops = Counter(OPCODE.findall(entry))
    return {
        "entry instructions": sum(ops.values()),
        "entry fusions": ops["fusion"],
        "converts": Counter(OPCODE.findall(text))["convert"],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="+")
    args = ap.parse_args(argv)
    try:
        modules = xla_bench.resolve_modules(args.modules)
    except (ValueError, OSError) as e:
        raise SystemExit(f"xla_after_optimization: {e}") from None
    variants = {
        "original": [],
        "default": ["xla-cpu-default"],
        **{k: v for k, v in xla_bench.RUNTIME_CANDIDATES.items() if isinstance(v, list)},
    }
    hg, x = xla_bench.Hlogym(), xla.Xla("cpu")
    print(f"{'module':52} {'variant':14} {'entry instrs':>12} {'fusions':>8} {'converts':>9}")
    for name, path in modules:
        for label, passes in variants.items():
            exe = x.compile(hg.opt(path, passes))
            c = counts(exe.hlo_modules()[0].to_string())
            print(
                f"{name:52} {label:14} {c['entry instructions']:>12} {c['entry fusions']:>8} "
                f"{c['converts']:>9}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
