#!/usr/bin/env python3
"""How many corpus modules compute nothing meaningful on the verification inputs, per family.

    .venv/bin/python bench/vacuous_inputs.py [--hlogym build/hlogym] [--jobs 2] [--out FILE]

For every corpus module (and smoke module) the original is evaluated by hlogym's evaluator on two
input sets of seed 0:
  - "before": what hlogym.xla.Xla.random_inputs drew until this tree (floats uniform in [-1, 1],
    integers in [0, 7], pred fair coins; every parameter alike);
  - "after": the one generator (src/eval/random_inputs.h) that `hlogym run`, the equivalence
    checker and now hlogym.xla share (positive floats where a parameter reaches sqrt, rsqrt,
    log, a divisor or a power's base; indices in bounds).
A module is *vacuous* on an input set when its outputs say nothing (hlogym.xla.vacuous_reason:
a float output with no finite element, or every output constant while the inputs vary); every
comparison against it is then "not judged". Prints a table per family and writes the reasons.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from hlogym import xla  # noqa: E402


def old_python_inputs(leaves, seed=0):
    """The inputs the Python side drew before the one generator, one array per leaf."""
    import zlib

    out = []
    for i, leaf in enumerate(leaves):
        shape, t = tuple(leaf["shape"]), leaf["type"]
        key = f"{seed}/{i}/{t}{list(shape)}".encode()
        rng = np.random.default_rng([seed & 0xFFFFFFFF, i, zlib.crc32(key)])
        if t == "pred":
            a = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif t[0] in "su" and t[1:].isdigit():
            dt = np.dtype(f"{'i' if t[0] == 's' else 'u'}{int(t[1:]) // 8}")
            a = rng.integers(0, min(7, np.iinfo(dt).max) + 1, size=shape).astype(dt)
        elif t in ("c64", "c128"):
            a = (rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)).astype(
                np.complex64 if t == "c64" else np.complex128
            )
        else:
            a = rng.uniform(-1.0, 1.0, size=shape).astype(
                {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(t, np.float32)
            )
            if t in xla._RAW_TYPES:  # bf16 and f8: stored as raw bits
                a = a.astype(xla._RAW_TYPES[t]).view(f"u{np.dtype(xla._RAW_TYPES[t]).itemsize}")
        out.append(a)
    return out


def check(hlogym, name, path):
    with tempfile.TemporaryDirectory() as d:
        new, old = Path(d) / "new", Path(d) / "old"
        r = subprocess.run(
            [hlogym, "run", str(path), "--seed", "0", "--io", str(new)],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            return {"module": name, "error": r.stderr.strip()[-300:]}
        leaves = xla.io_leaves(new, "inputs")
        old.mkdir()
        for leaf, a in zip(leaves, old_python_inputs(leaves)):
            np.save(old / leaf["file"], a)
        r = subprocess.run(
            [hlogym, "run", str(path), "--inputs", str(old), "--save-outputs", str(old)],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            return {"module": name, "error": r.stderr.strip()[-300:]}
        after = xla.vacuous_reason(xla.load_io_dir(new, "outputs"), xla.load_io_dir(new, "inputs"))
        before = xla.vacuous_reason(
            xla.load_io_dir(old, "outputs"), [np.load(old / leaf["file"]) for leaf in leaves]
        )
        return {"module": name, "before": before, "after": after}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hlogym", default=str(ROOT / "build" / "hlogym"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "build" / "vacuous_inputs.json"))
    args = ap.parse_args()
    manifest = json.loads((ROOT / "datasets" / "corpus" / "manifest.json").read_text())["modules"]
    modules = [
        (n, ROOT / "datasets" / "corpus" / m["path"], m["family"])
        for n, m in sorted(manifest.items())
    ]
    smoke = ROOT / "datasets" / "smoke"
    modules += [
        (p.name.split(".")[0], p, "smoke")
        for p in sorted(smoke.glob("*.hlo"))
        if ".optimized." not in p.name and ".debuginfo." not in p.name
    ]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda m: check(args.hlogym, m[0], m[1]), modules))
    families = {}
    for (name, _, family), r in zip(modules, results):
        r["family"] = family
        f = families.setdefault(family, {"modules": 0, "before": 0, "after": 0, "errors": 0})
        f["modules"] += 1
        if "error" in r:
            f["errors"] += 1
            continue
        f["before"] += bool(r["before"])
        f["after"] += bool(r["after"])
    print(
        "| family | modules | vacuous before (old Python inputs) | vacuous after (one generator) "
        "| not evaluated |"
    )
    print("|---|---|---|---|---|")
    for family, f in sorted(families.items()):
        print(f"| {family} | {f['modules']} | {f['before']} | {f['after']} | {f['errors']} |")
    total = {
        k: sum(f[k] for f in families.values()) for k in ("modules", "before", "after", "errors")
    }
    print(
        f"| all | {total['modules']} | {total['before']} | {total['after']} | {total['errors']} |"
    )
    for r in results:
        if r.get("after") or "error" in r:
            print(f"  {r['module']}: {r.get('after') or r.get('error')}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"families": families, "modules": results}, indent=1))


if __name__ == "__main__":
    main()
