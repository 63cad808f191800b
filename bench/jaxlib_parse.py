#!/usr/bin/env python3
"""Times jaxlib's own HLO text parser (XLA's C++ HloParser) on HLO files.

    .venv/bin/python bench/jaxlib_parse.py datasets/smoke/*.hlo* [--reps N] [--warmup W] [--json]
    .venv/bin/python bench/jaxlib_parse.py FILES... --hlogym-json build/bench.json

Entry point: jaxlib._hlo.hlo_module_from_text(str) -> HloModule (also reachable as
jax._src.lib.xla_client.hlo.hlo_module_from_text).  It runs XLA's ParseAndReturnUnverifiedModule:
lexing, parsing, shape inference for the text's shapes and building the HloModule, without the
HLO verifier.  Only the parse call is timed: reading and decompressing the file is not.

For every file: warm-up parses, then N timed parses; the median is reported as MB/s (of the
decompressed text, 1 MB = 1e6 bytes) and instructions/s, where the instruction count is the number
of lines that define an instruction (`[ROOT] name = shape opcode(...)`).

--hlogym-json FILE reads Google Benchmark JSON output (--benchmark_format=json or
--benchmark_out=FILE) of hlogym's own parser benchmark and prints hlogym/jaxlib throughput ratios.
A benchmark is matched to an input file when its name or label contains the file's name without
its .gz/.zst suffix (e.g. label "gpt2_train.hlo.gz"); for a match the ratio uses the benchmark's
wall time per iteration (real_time), like the jaxlib timing.  Benchmarks reporting
bytes_per_second that match no file are compared with jaxlib's aggregate rate over all files.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

INSTR_RE = re.compile(r"^\s*(?:ROOT\s+)?%?[A-Za-z_][\w.\-]*\s+=\s+\S", re.M)


def load_parser():
    try:
        from jaxlib import _hlo  # jaxlib >= 0.5 layout

        return _hlo.hlo_module_from_text, "jaxlib._hlo.hlo_module_from_text"
    except (ImportError, AttributeError):
        from jax._src.lib import xla_client  # older layouts

        return (
            xla_client._xla.hlo_module_from_text,
            "jax._src.lib.xla_client._xla.hlo_module_from_text",
        )


def read_text(path: Path) -> str:
    name = path.name
    if name.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return f.read().decode()
    if name.endswith(".zst"):
        out = subprocess.run(["zstd", "-dcq", str(path)], check=True, capture_output=True)
        return out.stdout.decode()
    return path.read_text()


def strip_compression(name: str) -> str:
    for ext in (".gz", ".zst"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def time_file(parse, text: str, warmup: int, reps: int, min_time: float) -> list[float]:
    for _ in range(warmup):
        parse(text)
    times = []
    start = time.perf_counter()
    # At least `reps` runs; more for tiny files until min_time has elapsed (capped).
    while len(times) < reps or (time.perf_counter() - start < min_time and len(times) < 50 * reps):
        t0 = time.perf_counter()
        parse(text)
        times.append(time.perf_counter() - t0)
    return times


def load_hlogym(path: Path) -> list[dict]:
    data = json.loads(path.read_text())
    out = []
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        if b.get("error_occurred"):
            continue
        out.append(b)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path, help="HLO text files (.hlo/.txt, .gz, .zst)")
    ap.add_argument("--reps", type=int, default=10, help="timed parses per file (default 10)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed parses first (default 2)")
    ap.add_argument(
        "--min-time",
        type=float,
        default=0.2,
        help="keep repeating small files until this many seconds (default 0.2)",
    )
    ap.add_argument("--json", action="store_true", help="print machine-readable JSON only")
    ap.add_argument("--hlogym-json", type=Path, help="Google Benchmark JSON of hlogym's parser")
    args = ap.parse_args(argv)

    parse, entry = load_parser()
    results, failures = [], []
    for path in args.files:
        try:
            text = read_text(path)
        except (OSError, UnicodeDecodeError, subprocess.CalledProcessError) as e:
            failures.append({"file": str(path), "error": f"read: {e}"})
            continue
        try:
            parse(text)
        except Exception as e:  # noqa: BLE001 - jaxlib raises its own XlaRuntimeError
            failures.append({"file": str(path), "error": str(e).splitlines()[0][:300]})
            continue
        times = time_file(parse, text, args.warmup, args.reps, args.min_time)
        med = statistics.median(times)
        nbytes = len(text.encode())
        ninstr = len(INSTR_RE.findall(text))
        results.append(
            {
                "file": str(path),
                "bytes": nbytes,
                "instructions": ninstr,
                "runs": len(times),
                "median_s": med,
                "min_s": min(times),
                "mb_per_s": nbytes / med / 1e6,
                "instructions_per_s": ninstr / med,
            }
        )

    total = None
    if results:
        tb = sum(r["bytes"] for r in results)
        ti = sum(r["instructions"] for r in results)
        ts = sum(r["median_s"] for r in results)
        total = {
            "files": len(results),
            "bytes": tb,
            "instructions": ti,
            "median_s_sum": ts,
            "mb_per_s": tb / ts / 1e6,
            "instructions_per_s": ti / ts,
        }

    comparison = None
    if args.hlogym_json:
        comparison = compare(results, total, load_hlogym(args.hlogym_json))

    import jaxlib

    report = {
        "parser": entry,
        "jaxlib": jaxlib.__version__,
        "warmup": args.warmup,
        "reps": args.reps,
        "results": results,
        "total": total,
        "failures": failures,
    }
    if comparison is not None:
        report["hlogym_comparison"] = comparison

    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"jaxlib {jaxlib.__version__} parser: {entry}  (median of >= {args.reps} runs, "
            f"{args.warmup} warm-up)"
        )
        w = max([len(r["file"]) for r in results] + [4])
        print(
            f"{'file':<{w}}  {'KB':>8}  {'instrs':>7}  {'median ms':>10}  {'MB/s':>8}  "
            f"{'Minstr/s':>9}"
        )
        for r in results:
            print(
                f"{r['file']:<{w}}  {r['bytes'] / 1e3:8.1f}  {r['instructions']:7d}  "
                f"{r['median_s'] * 1e3:10.3f}  {r['mb_per_s']:8.2f}  "
                f"{r['instructions_per_s'] / 1e6:9.3f}"
            )
        if total:
            print(
                f"{'TOTAL':<{w}}  {total['bytes'] / 1e3:8.1f}  {total['instructions']:7d}  "
                f"{total['median_s_sum'] * 1e3:10.3f}  {total['mb_per_s']:8.2f}  "
                f"{total['instructions_per_s'] / 1e6:9.3f}"
            )
        for f in failures:
            print(f"FAILED {f['file']}: {f['error']}", file=sys.stderr)
        if comparison is not None:
            print_comparison(comparison)
    return 1 if failures or not results else 0


def compare(results, total, benches):
    rows, unmatched = [], []
    for b in benches:
        # Only parse throughput is comparable with jaxlib's parser.
        if "Parse" not in b.get("name", ""):
            continue
        hay = f"{b.get('name', '')} {b.get('label', '')}"
        hits = [r for r in results if strip_compression(Path(r["file"]).name) in hay]
        # the longest file name wins ("mlp_train.hlo" over "train.hlo")
        match = max(hits, key=lambda r: len(Path(r["file"]).name), default=None)
        bps = b.get("bytes_per_second")
        ips = b.get("items_per_second")
        if match is None:
            if bps and total:
                unmatched.append(
                    {
                        "benchmark": b.get("name"),
                        "hlogym_mb_per_s": bps / 1e6,
                        "ratio_vs_jaxlib_total": bps / 1e6 / total["mb_per_s"],
                    }
                )
            continue
        row = {
            "benchmark": b.get("name"),
            "file": match["file"],
            "jaxlib_mb_per_s": match["mb_per_s"],
        }
        if b.get("real_time"):
            # Wall time per parse, like jaxlib's timing (Google Benchmark's bytes_per_second is
            # per CPU second, which reads higher on a loaded machine).
            unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
            secs = b["real_time"] * unit
            row["hlogym_mb_per_s"] = match["bytes"] / secs / 1e6
            row["ratio"] = match["median_s"] / secs
            if bps:
                row["hlogym_mb_per_cpu_s"] = bps / 1e6
        elif bps:
            row["hlogym_mb_per_s"] = bps / 1e6
            row["ratio"] = bps / 1e6 / match["mb_per_s"]
        if ips:
            row["hlogym_items_per_s"] = ips
        rows.append(row)
    ratios = [r["ratio"] for r in rows if r.get("ratio")]
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else None
    return {"per_file": rows, "unmatched": unmatched, "geomean_ratio": geo}


def print_comparison(c):
    print("\nhlogym vs jaxlib (ratio > 1: hlogym faster)")
    for r in c["per_file"]:
        if r.get("ratio"):
            print(
                f"  {r['file']}: hlogym {r['hlogym_mb_per_s']:.2f} MB/s, "
                f"jaxlib {r['jaxlib_mb_per_s']:.2f} MB/s, ratio {r['ratio']:.2f}x"
            )
    for r in c["unmatched"]:
        print(
            f"  {r['benchmark']}: hlogym {r['hlogym_mb_per_s']:.2f} MB/s, "
            f"{r['ratio_vs_jaxlib_total']:.2f}x jaxlib's aggregate rate"
        )
    if c["geomean_ratio"]:
        print(f"  geomean ratio over matched files: {c['geomean_ratio']:.2f}x")
    if not c["per_file"] and not c["unmatched"]:
        print("  (no benchmark in the JSON matched an input file or reported bytes_per_second)")


if __name__ == "__main__":
    sys.exit(main())
