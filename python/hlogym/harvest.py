"""Harvest a program's XLA modules into a dataset: ``hlogym harvest [--out DIR] -- COMMAND ...``.

The program (JAX, PyTorch/XLA or TensorFlow with ``jit_compile=True``: all three honour XLA's
dump settings) runs once on the CPU with its XLA asked to log its passes and dump each module as
the pipeline received it (hlogym.pass_log). DIR then holds, like the datasets the project ships:

- ``<family>/<name>.hlo``: each distinct module once (by hlogym's structural fingerprint), as XLA
  received it, in the order the program compiled them; modules under ``min_instructions``
  (JAX's one-operation helpers) are left out;
- ``xla_reference/<name>.json``: I and X, the instruction count of the module layout-assignment
  received from the program's own XLA (from XLA's dump of it), and, where XLA's pass log prints
  instruction counts, the passes up to layout-assignment and the count they started from;
- ``manifest.json``: the modules (family, frontend, split, I, X, sha256), the command, the
  frontend's versions, and what was left out and why; ``hlogym eval/search/train --suite DIR``,
  ``hlogym.make(benchmark_locs=DIR)``, ``hlogym.datasets.load(DIR)`` and hlogym.ray take it.

The split is deterministic (a quarter of the modules, by their text's hash, are "test"). A
program that fails or compiles nothing leaves no folder behind, and an existing DIR is replaced
only with ``force`` (and only when it is a harvested dataset or empty).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from . import pass_log

GENERATOR = "hlogym harvest"
DEFAULT_MIN_INSTRUCTIONS = 10
TEST_FRACTION_DENOMINATOR = 4  # one module in four is "test"
_LOG_TAIL_LINES = 30

# The frontend a module came from, by the name its frontend gives it.
_FRONTEND_BY_NAME = (
    (re.compile(r"^(jit|pjit|pmap|xmap)_"), "jax"),
    (re.compile(r"^(SyncTensorsGraph|IrToHlo)"), "pytorch"),
    (re.compile(r"^(a_inference_|__inference_|cluster_)"), "tensorflow"),
)
# Distributions whose versions are recorded, for the frontends the modules came from, when the
# command runs a Python.
_FRONTEND_DISTRIBUTIONS = {
    "jax": ("jax", "jaxlib"),
    "pytorch": ("torch", "torch_xla"),
    "tensorflow": ("tensorflow", "tensorflow-cpu"),
}


class HarvestError(RuntimeError):
    """The program failed, compiled nothing that can be kept, or DIR cannot be written."""


def frontend_of(module_name: str) -> str:
    for pattern, frontend in _FRONTEND_BY_NAME:
        if pattern.match(module_name):
            return frontend
    return "unknown"


def _frontend_versions(command: Sequence[str], frontends: set[str]) -> dict[str, str]:
    """The versions of `frontends` in the Python the command runs, when it runs one."""
    wanted = [d for f in sorted(frontends) for d in _FRONTEND_DISTRIBUTIONS.get(f, ())]
    if not wanted or not Path(command[0]).name.startswith("python"):
        return {}
    probe = (
        "import importlib.metadata as m, json\n"
        "v = {}\n"
        f"for d in {wanted!r}:\n"
        "    try: v[d] = m.version(d)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(v))\n"
    )
    try:
        out = subprocess.run([command[0], "-c", probe], capture_output=True, text=True, timeout=60)
        return json.loads(out.stdout) if out.returncode == 0 else {}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}


def _program_messages(log: str) -> str:
    """The program's own stderr: the log without XLA's pass lines."""
    lines = [
        line
        for line in log.splitlines()
        if "hlo_pass_pipeline" not in line and "dump.cc" not in line
    ]
    return "\n".join(lines[-_LOG_TAIL_LINES:])


def _check_output_folder(out: Path, force: bool) -> None:
    if not out.exists():
        return
    if not force:
        raise HarvestError(f"{out} exists; pass --force to replace it")
    if not out.is_dir():
        raise HarvestError(f"{out} exists and is not a folder; not replacing it")
    manifest = out / "manifest.json"
    try:
        harvested = json.loads(manifest.read_text()).get("generator") == GENERATOR
    except (OSError, ValueError):
        harvested = False
    if not harvested and any(out.iterdir()):
        raise HarvestError(
            f"{out} is not a dataset hlogym harvest wrote; --force replaces only those (or an "
            "empty folder)"
        )


def _run_program(command: Sequence[str], dump_dir: Path, log_path: Path) -> None:
    """Runs the program with XLA dumping; an XLA too old to print large constants in full
    gets a second run without asking it to."""
    for large_constants in (True, False):
        env = dict(os.environ)
        dumping = pass_log.dump_environment(
            str(dump_dir), passes=pass_log.STOP_BEFORE, large_constants=large_constants
        )
        # The user's own XLA flags stay; XLA takes the last value of a flag given twice.
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {dumping.pop('XLA_FLAGS')}".strip()
        env.update(dumping)
        # The reference is XLA:CPU's, as for every dataset hlogym ships.
        env.update(JAX_PLATFORMS="cpu", PJRT_DEVICE="CPU", CUDA_VISIBLE_DEVICES="")
        with open(log_path, "w") as log:
            try:
                done = subprocess.run(list(command), env=env, stderr=log, stdin=subprocess.DEVNULL)
            except OSError as e:
                raise HarvestError(f"cannot run {command[0]!r}: {e.strerror}") from None
        if done.returncode == 0:
            return
        log_text = log_path.read_text(errors="replace")
        unknown = re.search(r"Unknown flags in XLA_FLAGS:.*", log_text)
        if not (large_constants and unknown and pass_log.LARGE_CONSTANTS_FLAG in unknown[0]):
            break
        shutil.rmtree(dump_dir, ignore_errors=True)
        dump_dir.mkdir()
    raise HarvestError(
        f"the program exited with status {done.returncode}; nothing was written. Its last "
        f"messages:\n{_program_messages(log_path.read_text(errors='replace'))}"
    )


def _inspect(path: Path) -> tuple[int, str]:
    """(op count, structural fingerprint) of a module file; ValueError when hlogym cannot
    parse or verify it."""
    from . import _hlogym

    env = _hlogym.Env(observation_spaces=["cost"])
    env.reset(str(path))
    return env.initial_op_count, env.fingerprint


def _trajectory(compilation: pass_log.Compilation) -> list[dict]:
    """XLA's passes up to layout-assignment: name, pipeline, changed, op count after."""
    events = compilation.events()
    out = []
    for i, e in enumerate(events):
        if e["pass"] == pass_log.STOP_BEFORE:
            break
        if e["is_pipeline"]:
            continue
        after = next((f["before"] for f in events[i + 1 :] if f["before"] is not None), None)
        out.append(
            {
                "pass": e["pass"],
                "pipeline": e["pipeline"],
                "changed": e["changed"],
                "op_count": after,
            }
        )
    return out


def _short_name(xla_name: str) -> str:
    """A file-safe name for a module: TensorFlow's names lose the compile attributes they carry
    ("a_inference_step_660__XlaMustCompile_true_config_proto_..." is "a_inference_step_660")."""
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", re.sub(r"__XlaMustCompile_.*$", "", xla_name))


def _xla_reference(
    name: str,
    op_count: int,
    frontend: str,
    before_stop: Path | None,
    run: pass_log.Compilation | None,
) -> dict:
    """Real XLA's result on a module. X is the op count of the module layout-assignment
    received, from its dump (every XLA version writes it); the passes before it and the count
    they started from come from the pass log where it prints counts (PyTorch/XLA's XLA prints
    module hashes instead)."""
    problems = []
    x = None
    if before_stop is None:
        problems.append("XLA dumped no module before layout-assignment")
    else:
        try:
            x = _inspect(before_stop)[0]
        except ValueError as e:
            problems.append(f"hlogym cannot read the module layout-assignment received: {e}")
    initial, passes = None, []
    if run is None:
        problems.append("the pass log does not show this compilation")
    else:
        initial, log_x = run.counts()
        passes = _trajectory(run)
        if initial is not None and initial != op_count and frontend == "jax":
            # JAX hands XLA the dumped module itself: another count means the log's
            # compilation is not this module's.
            problems.append(f"the pass log starts from {initial} instructions, not {op_count}")
            initial, log_x, passes = None, None, []
        if x is not None and log_x is not None and log_x != x:
            problems.append(f"the pass log says X = {log_x}, the dump before layout-assignment {x}")
        if x is None:
            x = log_x
    return {
        "module": name,
        "I": op_count,
        "X": x,
        "xla_initial_op_count": initial,
        "passes": passes,
        "stop_before": pass_log.STOP_BEFORE,
        "problems": problems,
    }


def _unique_name(base: str, taken: set[str]) -> str:
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _collect(dump_dir: Path, log: str, stage: Path, family: str, min_instructions: int) -> dict:
    """Writes the kept modules and their references under `stage`; returns the manifest's
    "modules" and "left_out"."""
    dumps = []
    for p in dump_dir.iterdir():
        m = pass_log.DUMP_BEFORE_OPTIMIZATIONS.match(p.name)
        if m:
            dumps.append((int(m.group("id")), m.group("mod"), p))
    dumps.sort()
    before_stop: dict[int, Path] = {}  # module id -> the module layout-assignment received
    for p in sorted(dump_dir.iterdir()):
        m = pass_log.DUMP_BEFORE_STOP.match(p.name)
        if m:
            before_stop.setdefault(int(m.group("id")), p)
    if not dumps:
        raise HarvestError(
            "the program compiled nothing with XLA (no module was dumped): is it a JAX, "
            "PyTorch/XLA or TensorFlow (jit_compile=True) program that runs a computation?"
        )
    # The k-th compilation of a name in the log is the k-th dump of that name.
    compilations: dict[str, list[pass_log.Compilation]] = {}
    for c in pass_log.split_compilations(log):
        compilations.setdefault(c.module, []).append(c)
    seen_of_name: dict[str, int] = {}
    fingerprints: dict[str, str] = {}  # fingerprint -> kept name
    modules: dict[str, dict] = {}
    left_out: list[dict] = []
    taken: set[str] = set()
    for module_id, xla_name, path in dumps:
        k = seen_of_name.get(xla_name, 0)
        seen_of_name[xla_name] = k + 1
        source = path.name
        try:
            op_count, fingerprint = _inspect(path)
        except ValueError as e:
            left_out.append({"source": source, "reason": f"hlogym cannot read it: {e}"})
            continue
        if op_count < min_instructions:
            left_out.append(
                {"source": source, "reason": f"{op_count} instructions (< {min_instructions})"}
            )
            continue
        if fingerprint in fingerprints:
            left_out.append({"source": source, "reason": f"same as {fingerprints[fingerprint]}"})
            continue
        name = _unique_name(_short_name(xla_name), taken)
        fingerprints[fingerprint] = name
        text = path.read_bytes()
        sha = hashlib.sha256(text).hexdigest()
        rel = Path(family) / f"{name}.hlo"
        (stage / rel).parent.mkdir(parents=True, exist_ok=True)
        (stage / rel).write_bytes(text)
        entry = {
            "family": family,
            "frontend": frontend_of(xla_name),
            "path": str(rel),
            "op_count": op_count,
            "sha256": sha,
            "bytes": len(text),
            "split": "test" if int(sha, 16) % TEST_FRACTION_DENOMINATOR == 0 else "train",
            "source": source,
            "X": None,
            "xla_initial_op_count": None,
        }
        runs = compilations.get(xla_name, [])
        reference = _xla_reference(
            name,
            op_count,
            entry["frontend"],
            before_stop.get(module_id),
            runs[k] if k < len(runs) else None,
        )
        ref_rel = Path("xla_reference") / f"{name}.json"
        (stage / ref_rel).parent.mkdir(parents=True, exist_ok=True)
        (stage / ref_rel).write_text(json.dumps(reference, sort_keys=True, indent=1) + "\n")
        entry["X"] = reference["X"]
        entry["xla_initial_op_count"] = reference["xla_initial_op_count"]
        entry["xla_reference"] = str(ref_rel)
        if reference["problems"]:
            entry["xla_problems"] = reference["problems"]
        modules[name] = entry
    if not modules:
        reasons = "; ".join(f"{d['source']}: {d['reason']}" for d in left_out[:5])
        raise HarvestError(
            f"no module was kept ({len(left_out)} left out: {reasons}); lower "
            "--min-instructions to keep small ones"
        )
    return {"modules": modules, "left_out": left_out}


def harvest(
    command: Sequence[str],
    out: str | os.PathLike,
    *,
    force: bool = False,
    family: str | None = None,
    min_instructions: int = DEFAULT_MIN_INSTRUCTIONS,
) -> Path:
    """Runs `command` and writes its XLA modules as a dataset in `out` (see the module's
    docstring). Returns the dataset's folder; raises HarvestError, leaving `out` as it was."""
    command = [os.fspath(c) for c in command]
    if not command:
        raise HarvestError("no command given (hlogym harvest [--out DIR] -- COMMAND ...)")
    out = Path(out).absolute()
    family = family or re.sub(r"[^A-Za-z0-9_\-]", "_", out.name)
    _check_output_folder(out, force)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hlogym-harvest-") as tmp:
        dump_dir, log_path = Path(tmp) / "dump", Path(tmp) / "xla.log"
        dump_dir.mkdir()
        _run_program(command, dump_dir, log_path)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
        umask = os.umask(0)
        os.umask(umask)
        stage.chmod(0o777 & ~umask)  # mkdtemp's folder is private; the dataset is not
        try:
            found = _collect(
                dump_dir, log_path.read_text(errors="replace"), stage, family, min_instructions
            )
            manifest = {
                "generator": GENERATOR,
                "command": command,
                "versions": _frontend_versions(
                    command, {m["frontend"] for m in found["modules"].values()}
                ),
                "op_count_rule": "every instruction of every computation (hlogym's op count)",
                "heldout_families": [],
                **found,
            }
            (stage / "manifest.json").write_text(
                json.dumps(manifest, sort_keys=True, indent=1) + "\n"
            )
            _replace(out, stage)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
    return out


def _replace(out: Path, stage: Path) -> None:
    """Moves the finished `stage` to `out`; the old `out` goes only once the new one is in."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        old.rmdir()
        out.rename(old)
    stage.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hlogym harvest",
        description="Run a JAX, PyTorch/XLA or TensorFlow program and keep the modules it "
        "hands to XLA, with XLA's own result, as a dataset hlogym's commands take.",
    )
    parser.add_argument("--out", default="harvested", help="dataset folder (default ./harvested)")
    parser.add_argument("--force", action="store_true", help="replace an existing harvested DIR")
    parser.add_argument("--family", help="family of the modules (default: DIR's name)")
    parser.add_argument(
        "--min-instructions",
        type=int,
        default=DEFAULT_MIN_INSTRUCTIONS,
        help=f"leave out smaller modules (default {DEFAULT_MIN_INSTRUCTIONS})",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        out = harvest(
            command,
            args.out,
            force=args.force,
            family=args.family,
            min_instructions=args.min_instructions,
        )
    except HarvestError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2  # the CLI's status for bad input
    manifest = json.loads((out / "manifest.json").read_text())
    kept, left = manifest["modules"], manifest["left_out"]
    print(f"{out}: {len(kept)} module(s) kept, {len(left)} left out")
    for name, m in kept.items():
        print(f"  {name}: I={m['op_count']} X={m['X']} ({m['frontend']}, {m['split']})")
    print(f"evaluate: hlogym eval --suite {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
