"""Run time on real XLA: original vs xla-cpu-default-optimized vs agent-optimized modules.

    PYTHONPATH=python .venv/bin/python -m hlogym.xla_bench [MODULES...] [--suite FILE.txt]
        [--split test|train|all] [--agent greedy|none | --passes a,b,c | --sequences JSON]
        [--platform cpu|gpu] [--threads N] [--time-budget S] [--shard I/N] [--json OUT|-]
        [--export DIR | --from-export DIR]

For every module (default: datasets/corpus/default_suite.txt; --split picks a corpus split from
datasets/corpus/manifest.json instead; MODULES may be files, corpus/smoke names or .txt suites)
three texts are made with build/hlogym: the original (as printed by `hlogym fmt`), `hlogym opt
--pipeline=xla-cpu-default`, and the agent's (greedy: `hlogym search --algo greedy` per module;
or one --passes list for all; or --sequences: a JSON of `hlogym search/eval --json` or
{name: [passes]}). Each is compiled by XLA (full pipeline, hlogym.xla) and run on the same
deterministic random inputs; outputs of the optimized variants must agree with the original's.
Timing (`measure`, the one place hlogym times XLA): inputs on the device, warm-up runs, then
paired rounds, each running every variant once in a shuffled order, until about --target-seconds
per variant (between --min-rounds and --max-rounds). Each speed-up (default over original, agent
over original, agent over default) is the median of the per-round ratios with a 95% bootstrap
interval, and a verdict: "faster" or "slower" when the interval excludes 1 and the ratio is more
than --margin (5%) from 1, "within noise" otherwise (`speedup`). `--agreement A.json B.json`
says how often two runs reach the same verdicts.
Threads: the process is pinned to --threads CPUs before XLA starts (hlogym.xla.pin_threads),
and with one thread Eigen's own threads are off (--xla_cpu_multi_thread_eigen=false).

Prints per-module medians and speed-ups (+ faster, - slower), then per speed-up the geometric
mean, best, worst and the verdict counts; --json writes everything, every round's times included.
--time-budget stops starting new modules after S seconds (modules are taken round-robin over
families, smallest first, so a budgeted run covers every family). --shard I/N takes every N-th
module from the I-th, for parallel processes (each pinned to its own CPUs with taskset).

On a machine without hlogym (say, one with a GPU): `--export DIR` writes the three texts of
every module here and stops; `--from-export DIR` there compiles, runs and times them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from . import _locate
from .cli import Hlogym
from .timing import (
    MARGIN,
    RUNTIME_CANDIDATES,
    VERDICTS,
    measure,
    medians,
    speedup,
)

# Relative to the data root (a checkout, or an installed share/hlogym; see _locate.py).
DEFAULT_SUITE = "datasets/corpus/default_suite.txt"
FAST_COMPILE = {"xla_backend_optimization_level": 0}


# --- modules ----------------------------------------------------------------------------------


def corpus_dir() -> Path:
    return _locate.data_root() / "datasets" / "corpus"


def corpus_manifest() -> dict:
    """name -> the corpus module's entry, as the C++ core reads the manifest (text/corpus.h);
    "path" is absolute."""
    from . import _hlogym

    modules = _hlogym.corpus_modules()
    if not modules:
        raise FileNotFoundError(f"{corpus_dir() / 'manifest.json'} is missing or unreadable")
    return modules


def family_round_robin(entries: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """Corpus entries (name, manifest entry) reordered round-robin over families (sorted), each
    family smallest first (bytes, then name): any prefix spreads over the families."""
    by_family: dict[str, list] = {}
    for name, m in entries:
        by_family.setdefault(m["family"], []).append((name, m))
    queues = [
        sorted(by_family[f], key=lambda nm: (nm[1]["bytes"], nm[0])) for f in sorted(by_family)
    ]
    out = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def split_modules(split: str) -> list[tuple[str, Path]]:
    if split not in ("test", "train", "all"):
        raise ValueError(f"--split must be test, train or all, not {split!r}")
    entries = [
        (n, m) for n, m in corpus_manifest().items() if split == "all" or m["split"] == split
    ]
    return [(n, corpus_dir() / m["path"]) for n, m in family_round_robin(entries)]


def module_name(path: Path) -> str:
    name = path.name
    for ext in (".zst", ".gz"):
        name = name.removesuffix(ext)
    for ext in (".hlo", ".txt"):
        name = name.removesuffix(ext)
    return name


def resolve_modules(locs: list[str]) -> list[tuple[str, Path]]:
    """Files, corpus/smoke names, folders or .txt suites, through hlogym's own resolver."""
    import hlogym

    out = []
    root = _locate.data_root()
    for loc in locs:
        try:
            paths = hlogym.expand_benchmark_locs([loc])
        except Exception as e:  # noqa: BLE001 - the binding raises ValueError/RuntimeError
            raise ValueError(f"{loc}: not a module file, benchmark name or suite: {e}") from e
        for spec in paths:
            p = Path(spec)
            if not p.exists() and not p.is_absolute() and (root / p).exists():
                p = root / p
            if not p.exists():
                try:
                    p = Path(hlogym.resolve_benchmark(str(spec)))
                except Exception as e:  # noqa: BLE001
                    raise ValueError(str(e)) from e
            out.append((module_name(p), p))
    if not out:
        raise ValueError(f"no modules in {locs}")
    return out


def load_sequences(path: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """({module name: passes}, {module name: why it is not handed back}) from `hlogym
    search/eval --json` output or a plain {name: [..]}. A result that failed hlogym's own
    equivalence check (eval's "valid": false) is never handed to XLA."""
    data = json.loads(Path(path).read_text())
    out, rejected = {}, {}
    if isinstance(data, dict) and isinstance(data.get("benchmarks"), list):
        for b in data["benchmarks"]:
            names = {b["name"], module_name(Path(b.get("benchmark", b["name"])))}
            if b.get("valid") is False:
                for n in names:
                    rejected[n] = f"failed hlogym's equivalence check ({b.get('equivalence')})"
            elif "passes" in b:
                for n in names:
                    out[n] = list(b["passes"])
    elif isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
        out = {k: [str(p) for p in v] for k, v in data.items()}
    else:
        raise ValueError(f"{path}: expected `hlogym search --json` output or {{name: [passes]}}")
    return out, rejected


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def distribution(rows: list[dict], key: str) -> dict | None:
    """Geomean, best, worst and verdict counts of the speed-up `key` over the rows that have it."""
    vals = [(r["speedups"][key], r["module"]) for r in rows if key in r.get("speedups", {})]
    if not vals:
        return None
    best = max(vals, key=lambda v: v[0]["ratio"])
    worst = min(vals, key=lambda v: v[0]["ratio"])
    return {
        "modules": len(vals),
        "geomean": geomean([v["ratio"] for v, _ in vals]),
        "best": best[0]["ratio"],
        "best_module": best[1],
        "worst": worst[0]["ratio"],
        "worst_module": worst[1],
        "verdicts": {k: sum(v["verdict"] == k for v, _ in vals) for k in VERDICTS},
    }


# --- the benchmark ----------------------------------------------------------------------------


def module_texts(hg: Hlogym, name: str, path: Path, passes: list[str] | None) -> dict:
    """The module's variants as hlogym prints them: original, xla-cpu-default and (with
    passes) the agent's, with their op counts."""
    row: dict = {"module": name, "path": os.path.relpath(path, _locate.data_root())}
    texts = {"original": hg.fmt(path), "default": hg.default(path)}
    if passes is not None:
        row["passes"] = passes
        texts["agent"] = hg.opt(path, passes)
    row["op_count"] = {k: hg.op_count(t) for k, t in texts.items()}
    row["texts"] = texts
    return row


def add_runtime_candidates(hg: Hlogym, row: dict, path: Path, seed: int) -> dict:
    """--objective runtime: adds the texts of RUNTIME_CANDIDATES (as `cand:NAME`, one per
    distinct text; a candidate whose text another variant already has is left out), which
    bench_module times against each other to choose the agent variant."""
    texts = row["texts"]
    row["candidates"] = {"original": [], "default": ["xla-cpu-default"]}
    if "agent" in texts:
        row["candidates"]["agent"] = row["passes"]
    seen = set(texts.values())
    for name, how in RUNTIME_CANDIDATES.items():
        passes = hg.search(path, how, seed) if isinstance(how, str) else how
        if passes is None:  # failed hlogym's own check: never a candidate
            continue
        text = hg.opt(path, passes)
        if text not in seen:
            seen.add(text)
            texts["cand:" + name] = text
            row["candidates"]["cand:" + name] = passes
            row["op_count"]["cand:" + name] = hg.op_count(text)
    return row


def bench_module(x, row: dict, args) -> dict:
    """Compiles, runs and compares (and unless --no-time, times) the variants of `row`
    (made by module_texts or read from an export); the texts are dropped from the result."""
    from . import xla

    texts = row.pop("texts")
    partitions = re.search(r"\bnum_partitions=(\d+)", texts["original"].split("\n", 1)[0])
    if partitions and int(partitions[1]) > 1:
        raise NotOneDevice(
            f"{row['module']}: compiled for {partitions[1]} partitions; this harness compiles and "
            "runs every variant on one device (skipped)"
        )
    callbacks = xla.python_callbacks(texts["original"])
    if callbacks:
        raise CallsBackIntoPython(
            f"{row['module']}: calls back into the Python process that traced it "
            f"({', '.join(callbacks)}); this process cannot run those calls (skipped)"
        )
    inputs = row.pop("inputs", None)  # drawn on the exporting machine (read_export)
    exes, row["compile_s"] = {}, {}
    for k, t in texts.items():
        t0 = time.perf_counter()
        exes[k] = x.compile(t, FAST_COMPILE if args.fast_compile else None)
        row["compile_s"][k] = time.perf_counter() - t0
    if inputs is None:
        inputs = x.random_inputs(texts["original"], seed=args.seed)
    outs = {k: x.run(e, inputs) for k, e in exes.items()}
    row["agree"] = {}
    for k in exes:
        if k == "original":
            continue
        c = xla.agree(
            x,
            outs[k],
            outs["original"],
            texts["original"],
            inputs,
            FAST_COMPILE if args.fast_compile else None,
        )
        row["agree"][k] = {
            "ok": c.ok,
            "judged": c.judged,
            "max_tolerance_ratio": c.max_tolerance_ratio,
            "excess_precision": c.excess_precision,
            "rounding": c.rounding,
            "message": c.message,
        }
    if args.no_time:
        return row
    timing = dict(
        warmup=args.warmup,
        min_rounds=args.min_rounds,
        max_rounds=args.max_rounds,
        target_seconds=args.target_seconds,
    )
    if "candidates" in row:
        exes = choose_fastest(x, row, exes, inputs, timing, args)
    times = measure(x, exes, inputs, **timing, seed=args.seed)
    row["rounds"] = len(times["original"])
    row["times_s"] = times
    row["median_s"] = medians(times)
    row["speedups"] = speedups(times, args.margin)
    return row


def choose_fastest(x, row: dict, exes: dict, inputs, timing: dict, args) -> dict:
    """--objective runtime: times every candidate whose outputs agree with the original's,
    makes the fastest the agent variant when it is faster than the original beyond this
    measurement's noise (Speedup.gain), else the original; returns the executables of original,
    default and agent for the confirming measurement, which draws its own rounds (so the winner's
    luck in this one does not carry over)."""
    ok = {k: e for k, e in exes.items() if k == "original" or row["agree"].get(k, {}).get("ok")}
    times = measure(x, ok, inputs, **timing, seed=args.seed + 1_000_003)
    median_s = medians(times)
    fastest = min(median_s, key=median_s.get)
    gains = {
        k: speedup(times["original"], v, margin=args.margin)
        for k, v in times.items()
        if k != "original"
    }
    chosen = fastest if fastest == "original" or gains[fastest].gain else "original"
    verdicts = {k: g.as_dict() for k, g in gains.items()}
    agree = row["agree"]
    row["selection"] = {
        "median_s": median_s,
        "over_original": verdicts,
        "chosen": chosen,
        "agree": {k: agree.pop(k) for k in list(agree) if k.startswith("cand:")},
    }
    row["passes"] = row["candidates"][chosen]
    row["op_count"]["agent"] = row["op_count"][chosen]
    if chosen == "original":
        agree.pop("agent", None)  # nothing to compare
    else:
        agree["agent"] = {**agree, **row["selection"]["agree"]}[chosen]
    return {"original": exes["original"], "default": exes["default"], "agent": exes[chosen]}


SPEEDUPS = {
    "default_over_original": ("original", "default"),
    "agent_over_original": ("original", "agent"),
    "agent_over_default": ("default", "agent"),
}


def speedups(times: dict[str, list[float]], margin: float = MARGIN) -> dict[str, dict]:
    """The SPEEDUPS of a module whose variants `measure` timed (those whose variants it has)."""
    return {
        key: speedup(times[base], times[new], margin=margin).as_dict()
        for key, (base, new) in SPEEDUPS.items()
        if base in times and new in times
    }


# --- exports: the texts made here, benchmarked on a machine without hlogym ---------------------

EXPORT_INDEX = "export.json"


def write_export(directory: Path, rows: list[dict], config: dict, seed: int) -> None:
    """DIR/<module>.<variant>.hlo.gz per text, DIR/<module>.inputs.npz (hlogym's seeded inputs,
    drawn here: the other machine has no hlogym) plus DIR/export.json (op counts, passes)."""
    from . import xla

    directory.mkdir(parents=True, exist_ok=True)
    index = []
    for row in rows:
        entry = {k: v for k, v in row.items() if k != "texts"}
        entry["files"] = {}
        for variant, text in row["texts"].items():
            file = f"{row['module']}.{variant}.hlo.gz"
            (directory / file).write_bytes(gzip.compress(text.encode(), mtime=0))
            entry["files"][variant] = file
        inputs = xla.random_inputs(row["texts"]["original"], seed)
        entry["inputs"] = {
            "file": f"{row['module']}.inputs.npz",
            "seed": seed,
            "dtypes": [str(a.dtype) for a in inputs],
        }
        # Raw bits for the types numpy cannot store (bf16, f8): viewed back by read_export.
        with open(directory / entry["inputs"]["file"], "wb") as f:
            np.savez(
                f, *[a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "V" else a for a in inputs]
            )
        index.append(entry)
    tmp = directory / (EXPORT_INDEX + ".tmp")
    tmp.write_text(json.dumps({"config": config, "modules": index}, indent=1) + "\n")
    tmp.replace(directory / EXPORT_INDEX)


def read_export(directory: Path) -> list[dict]:
    """Rows as module_texts makes them, with the inputs drawn there, from write_export's
    folder."""
    import ml_dtypes  # noqa: F401  (registers bfloat16 and the f8 types with numpy)

    index = directory / EXPORT_INDEX
    if not index.is_file():
        raise FileNotFoundError(f"{index} is missing (make one with --export {directory})")
    rows = []
    for entry in json.loads(index.read_text())["modules"]:
        files = entry.pop("files")
        entry["texts"] = {
            v: gzip.decompress((directory / f).read_bytes()).decode() for v, f in files.items()
        }
        saved = entry.pop("inputs")
        with np.load(directory / saved["file"], allow_pickle=False) as npz:
            arrays = [npz[f"arr_{i}"] for i in range(len(saved["dtypes"]))]
        entry["inputs"] = [a.view(np.dtype(t)) for a, t in zip(arrays, saved["dtypes"])]
        rows.append(entry)
    return rows


def shard_arg(value: str) -> tuple[int, int]:
    try:
        i, n = (int(v) for v in value.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected I/N (e.g. 0/4), not {value!r}") from None
    if not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"need 0 <= I < N, not {value!r}")
    return i, n


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m hlogym.xla_bench", description=__doc__.splitlines()[0]
    )
    ap.add_argument("modules", nargs="*", help="module files, names or .txt suites")
    ap.add_argument("--suite", action="append", default=[], help="a .txt suite (repeatable)")
    ap.add_argument(
        "--split",
        choices=("test", "train", "all"),
        help="corpus split from the manifest (instead of the default suite)",
    )
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--agent", choices=("greedy", "none"), default="greedy")
    g.add_argument(
        "--passes", help="one comma-separated list of passes and pipelines for every module"
    )
    g.add_argument("--sequences", help="JSON of `hlogym search/eval --json` or {name: [passes]}")
    ap.add_argument(
        "--objective",
        choices=("ops", "runtime"),
        default="ops",
        help="runtime: the agent variant is whichever of the agent's, auto's, "
        "greedy's, xla-cpu-default(-exact)'s, xla-cpu-default's with "
        "simplify-fp-conversions and the original module runs "
        "fastest here (timed against each other, then timed again)",
    )
    ap.add_argument("--platform", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPUs the process (and XLA:CPU's intra-op pool) may use; 0: no pinning",
    )
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--min-rounds", type=int, default=10)
    ap.add_argument("--max-rounds", type=int, default=1000)
    ap.add_argument(
        "--target-seconds",
        type=float,
        default=1.0,
        help="timed seconds per variant and module (sets the rounds)",
    )
    ap.add_argument(
        "--margin",
        type=float,
        default=MARGIN,
        help="speed-ups within this of 1 are 'within noise' whatever their interval",
    )
    ap.add_argument("--seed", type=int, default=0, help="random inputs (and greedy) seed")
    ap.add_argument("--limit", type=int, help="at most this many modules")
    ap.add_argument("--time-budget", type=float, help="start no module after this many seconds")
    ap.add_argument("--no-time", action="store_true", help="compile, run and compare only")
    ap.add_argument(
        "--fast-compile",
        action="store_true",
        help="compile with xla_backend_optimization_level=0 (XLA's HLO passes in "
        "full, LLVM's optimizations skipped); for --no-time checks",
    )
    ap.add_argument(
        "--shard",
        type=shard_arg,
        metavar="I/N",
        help="only every N-th module from the I-th (0-based), for parallel runs",
    )
    ap.add_argument(
        "--export",
        metavar="DIR",
        help="write the texts (and op counts) to DIR for a later --from-export run "
        "on another machine, and stop (XLA is not used)",
    )
    ap.add_argument(
        "--from-export",
        metavar="DIR",
        help="take the texts from an --export folder (no hlogym binary needed)",
    )
    ap.add_argument(
        "--merge",
        nargs="+",
        metavar="JSON",
        help="merge the --json reports of several (sharded) runs and print the "
        "summary of all of them (nothing is run)",
    )
    ap.add_argument(
        "--agreement",
        nargs=2,
        metavar="JSON",
        help="how often two --json reports of the same modules reach the same "
        "verdicts (faster, slower, within noise); nothing is run",
    )
    ap.add_argument("--json", help="write the report here ('-' for stdout)")
    ap.add_argument(
        "--hlogym",
        help="the hlogym command line (default: the checkout's build/hlogym, or the installed one)",
    )
    args = ap.parse_args(argv)
    for k in ("warmup", "min_rounds", "max_rounds"):
        if getattr(args, k) < (0 if k == "warmup" else 1):
            ap.error(f"--{k.replace('_', '-')} is too small: {getattr(args, k)}")
    if args.min_rounds > args.max_rounds:
        ap.error("--min-rounds is larger than --max-rounds")
    if not 0 <= args.margin < 1:
        ap.error(f"--margin must be in [0, 1), not {args.margin}")
    if args.threads < 0:
        ap.error("--threads must be >= 0")
    if args.split and (args.modules or args.suite):
        ap.error("--split and module/suite arguments exclude each other")
    if args.export and args.from_export:
        ap.error("--export and --from-export exclude each other")
    if args.objective == "runtime" and (args.no_time or args.export or args.from_export):
        ap.error(
            "--objective runtime times the candidates here: not with --no-time, "
            "--export or --from-export"
        )
    return args


class NotOneDevice(Exception):
    """The module is compiled for several partitions: skipped, the harness runs one device."""


class CallsBackIntoPython(Exception):
    """The module calls back into the Python process that traced it (xla.python_callbacks):
    skipped, since running those calls anywhere else crashes."""


class MissingSequence(LookupError):
    """--sequences has no (valid) pass list for a module (it is skipped)."""


def agent_passes(args, hg: Hlogym, name: str, path: Path, fixed, sequences):
    """The agent's passes for one module; None for no agent variant; raises MissingSequence
    when --sequences has no entry for the module."""
    if fixed is not None:
        return fixed
    if sequences is not None:
        if name not in sequences:
            raise MissingSequence(f"{name}: no sequence in {args.sequences}")
        return sequences[name]
    return hg.greedy(path, args.seed) if args.agent == "greedy" else None


def select(items: list, args) -> list:
    """--shard I/N (every N-th from I), then --limit."""
    if args.shard:
        i, n = args.shard
        items = items[i::n]
    return items[: args.limit] if args.limit else items


def merge_reports(paths: list[str]) -> dict:
    """One report from several --json reports (e.g. shards): modules concatenated, the
    configs kept, the summary recomputed."""
    reports = [json.loads(Path(p).read_text()) for p in paths]
    rows = [r for rep in reports for r in rep["modules"]]
    skipped = [m for rep in reports for m in rep["summary"]["skipped"]]
    seconds = max(rep["summary"]["wall_seconds"] for rep in reports)
    return {
        "config": [rep["config"] for rep in reports],
        "modules": rows,
        "summary": summarize(rows, skipped, seconds),
    }


def verdict_agreement(first: dict, second: dict) -> dict:
    """Per speed-up, over the modules both reports timed: how many reach the same verdict, and
    the ones that do not. A speed-up of the agent variant counts only where both runs timed the
    same passes (with --objective runtime each run chooses its own)."""

    def rows(report):
        return {r["module"]: r for r in report["modules"] if "speedups" in r}

    a, b = rows(first), rows(second)
    out = {}
    for key, variants in SPEEDUPS.items():
        both = [
            m
            for m in a
            if key in a[m]["speedups"]
            and key in b.get(m, {}).get("speedups", {})
            and ("agent" not in variants or a[m].get("passes") == b[m].get("passes"))
        ]
        differ = [
            {"module": m, "first": a[m]["speedups"][key], "second": b[m]["speedups"][key]}
            for m in both
            if a[m]["speedups"][key]["verdict"] != b[m]["speedups"][key]["verdict"]
        ]
        if both:
            out[key] = {"modules": len(both), "same": len(both) - len(differ), "differ": differ}
    return out


def print_agreement(agreement: dict) -> None:
    for key, a in agreement.items():
        print(
            f"# {key.replace('_', ' ')}: the same verdict on {a['same']} of {a['modules']} "
            f"modules ({a['same'] / a['modules']:.0%})"
        )
        for d in a["differ"]:
            f, s = d["first"], d["second"]
            print(
                f"#   {d['module']}: {f['verdict']} {f['ratio']:.3f} [{f['low']:.3f}, "
                f"{f['high']:.3f}] vs {s['verdict']} {s['ratio']:.3f} [{s['low']:.3f}, "
                f"{s['high']:.3f}]"
            )


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.agreement:
        try:
            first, second = (json.loads(Path(p).read_text()) for p in args.agreement)
            agreement = verdict_agreement(first, second)
        except (OSError, ValueError, KeyError) as e:
            raise SystemExit(f"xla_bench: --agreement: {e}") from None
        print_agreement(agreement)
        if args.json:
            Path(args.json).write_text(json.dumps(agreement, indent=1) + "\n")
        return 0
    if args.merge:
        try:
            report = merge_reports(args.merge)
        except (OSError, ValueError, KeyError) as e:
            raise SystemExit(f"xla_bench: --merge: {e}") from None
        print_summary(report["summary"])
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
        s = report["summary"]
        return 0 if s["errors"] == 0 and s["disagree"] == 0 else 1
    t_start = time.perf_counter()
    skipped: list[str] = []
    if args.from_export:
        # Texts made elsewhere: no hlogym binary is needed here.
        try:
            prepared = select(read_export(Path(args.from_export)), args)
        except (OSError, ValueError, KeyError) as e:
            raise SystemExit(f"xla_bench: {args.from_export}: {e}") from None
        work = [(r["module"], (lambda r=r: r)) for r in prepared]
        agent = f"export:{args.from_export}"
    else:
        hg = Hlogym(args.hlogym)
        try:
            if args.split:
                modules = split_modules(args.split)
            else:
                modules = resolve_modules(args.modules + args.suite or [DEFAULT_SUITE])
            sequences, rejected = load_sequences(args.sequences) if args.sequences else (None, {})
        except (ValueError, OSError) as e:
            raise SystemExit(f"xla_bench: {e}") from None
        modules = select(modules, args)
        fixed = [p for p in args.passes.split(",") if p] if args.passes else None
        if fixed:
            known = hg.pass_names()
            unknown = [p for p in fixed if p not in known]
            if unknown:
                raise SystemExit(f"xla_bench: unknown passes: {', '.join(unknown)}")

        def make(name=None, path=None):
            if name in rejected:  # original and default only
                print(
                    f"# {name}: the agent's result {rejected[name]}; not handed to XLA",
                    file=sys.stderr,
                )
                return {**module_texts(hg, name, path, None), "agent_rejected": rejected[name]}
            row = module_texts(hg, name, path, agent_passes(args, hg, name, path, fixed, sequences))
            if args.objective == "runtime":
                add_runtime_candidates(hg, row, path, args.seed)
            return row

        work = [(name, (lambda name=name, path=path: make(name, path))) for name, path in modules]
        agent = (
            "passes"
            if fixed is not None
            else f"sequences:{args.sequences}"
            if sequences is not None
            else args.agent
        )

    if args.export:
        rows = []
        for name, prepare in work:
            try:
                rows.append(prepare())
            except MissingSequence as e:
                skipped.append(name)
                print(f"# {e.args[0]}", file=sys.stderr)
        write_export(Path(args.export), rows, {"agent": agent, "skipped": skipped}, args.seed)
        print(f"# exported {len(rows)} modules ({len(skipped)} skipped) to {args.export}")
        return 0

    from . import xla

    pinned = xla.pin_threads(args.threads) if args.threads else {"threads": "unpinned"}
    x = xla.Xla(args.platform)
    import jaxlib

    config = {
        "platform": args.platform,
        "device": str(x.device),
        "jaxlib": jaxlib.__version__,
        "pinning": pinned,
        "warmup": args.warmup,
        "min_rounds": args.min_rounds,
        "max_rounds": args.max_rounds,
        "target_seconds": args.target_seconds,
        "margin": args.margin,
        "seed": args.seed,
        "fast_compile": args.fast_compile,
        "agent": agent,
        "objective": args.objective,
        "shard": args.shard,
    }
    print(
        f"# XLA {args.platform} ({x.device}), jaxlib {jaxlib.__version__}, threads "
        f"{pinned}; agent {agent}; {len(work)} modules",
        file=sys.stderr,
    )
    rows = []
    hdr = (
        f"{'module':58} {'I':>6} {'D':>6} {'R':>6} {'orig ms':>9} {'def ms':>9} "
        f"{'agent ms':>9} {'d/o':>7} {'a/o':>7} {'a/d':>7} agree  (+ faster, - slower)"
    )
    if not args.json == "-":
        print(hdr)
    for name, prepare in work:
        if args.time_budget and time.perf_counter() - t_start > args.time_budget:
            skipped.append(name)
            continue
        try:
            row = bench_module(x, prepare(), args)
        except (MissingSequence, NotOneDevice, CallsBackIntoPython) as e:
            skipped.append(name)
            print(f"# {e.args[0]}", file=sys.stderr)
            continue
        except Exception as e:  # noqa: BLE001 - one module's failure is reported, not fatal
            row = {"module": name, "error": f"{type(e).__name__}: {e}"[:2000]}
        rows.append(row)
        if args.json != "-":
            print(format_row(row), flush=True)
    summary = summarize(rows, skipped, time.perf_counter() - t_start)
    report = {"config": config, "modules": rows, "summary": summary}
    if args.json == "-":
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        print_summary(summary)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0 if summary["errors"] == 0 and summary["disagree"] == 0 else 1


VERDICT_MARK = {"faster": "+", "slower": "-", "within noise": " "}


def format_row(r: dict) -> str:
    if "error" in r:
        return f"{r['module'][:58]:58} ERROR {r['error'][:200]}"
    oc = r["op_count"]
    m = r.get("median_s", {})

    def ms(k):
        return f"{m[k] * 1e3:9.3f}" if k in m else f"{'-':>9}"

    def ratio(k):
        sp = r.get("speedups", {}).get(k)
        return f"{sp['ratio']:6.3f}{VERDICT_MARK[sp['verdict']]}" if sp else f"{'-':>7}"

    agree = ",".join(f"{k}:{'ok' if v['ok'] else 'DIFF'}" for k, v in r["agree"].items())
    return (
        f"{r['module'][:58]:58} {oc['original']:6} {oc['default']:6} "
        f"{oc.get('agent', '-'):>6} {ms('original')} {ms('default')} {ms('agent')} "
        f"{ratio('default_over_original')} {ratio('agent_over_original')} "
        f"{ratio('agent_over_default')} {agree}"
    )


def summarize(rows: list[dict], skipped: list[str], seconds: float) -> dict:
    ok = [r for r in rows if "error" not in r]
    compared = [(r["module"], k, v) for r in ok for k, v in r["agree"].items()]
    return {
        "modules": len(rows),
        "errors": sum("error" in r for r in rows),
        "error_modules": [r["module"] for r in rows if "error" in r],
        "skipped": skipped,
        "compared": len(compared),
        "agent_rejected": [r["module"] for r in rows if "agent_rejected" in r],
        "excess_precision": sum(bool(v.get("excess_precision")) for _, _, v in compared),
        "rounding": sum(bool(v.get("rounding")) for _, _, v in compared),
        "not_judged": sum(not v.get("judged", True) for _, _, v in compared),
        "disagree": sum(not v["ok"] and v.get("judged", True) for _, _, v in compared),
        "disagreements": [
            {"module": m, "variant": k, "message": v["message"]}
            for m, k, v in compared
            if not v["ok"]
        ],  # not-judged ones included
        **{key: distribution(ok, key) for key in SPEEDUPS},
        "wall_seconds": seconds,
    }


def print_summary(s: dict) -> None:
    print(
        f"# {s['modules']} modules ({s['errors']} errors, {len(s['skipped'])} skipped), "
        f"{s['compared']} optimized outputs compared with the original's on XLA: "
        f"{s['compared'] - s['disagree'] - s.get('not_judged', 0)} agree, "
        f"{s.get('not_judged', 0)} not judged (the original's outputs are vacuous); "
        f"{s['wall_seconds']:.0f} s"
    )
    if s.get("excess_precision"):
        print(
            f"#   {s['excess_precision']} of them agree only with the original computed in f32 "
            "(excess precision, see hlogym.xla.agree)"
        )
    if s.get("rounding"):
        print(
            f"#   {s['rounding']} of them agree only as rounding: as close to the original "
            "computed in f64 as the original is (see hlogym.xla.agree)"
        )
    for m in s.get("agent_rejected", []):
        print(f"#   {m}: the agent's result failed hlogym's equivalence check; not handed back")
    for d in s["disagreements"]:
        what = "NOT JUDGED" if d["message"].startswith("not judged") else "DIFF"
        print(f"#   {what} {d['module']} ({d['variant']}): {d['message'][:300]}")
    for m in s["error_modules"]:
        print(f"#   ERROR {m}")
    for key in SPEEDUPS:
        d = s.get(key)
        if d:
            counts = ", ".join(f"{n} {v}" for v, n in d["verdicts"].items())
            print(
                f"# speedup {key.replace('_', ' ')}: geomean {d['geomean']:.4f}x, best "
                f"{d['best']:.3f}x ({d['best_module']}), worst {d['worst']:.3f}x "
                f"({d['worst_module']}); of {d['modules']}: {counts}"
            )


if __name__ == "__main__":
    sys.exit(main())
