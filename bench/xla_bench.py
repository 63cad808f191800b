#!/usr/bin/env python3
"""Thin caller of `python -m hlogym.xla_bench` (run time of original, xla-cpu-default- and
agent-optimized modules on real XLA); see python/hlogym/xla_bench.py for the flags.

    .venv/bin/python bench/xla_bench.py --split test --json build/xla_bench.json
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from hlogym.xla_bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
