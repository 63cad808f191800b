"""Reading what XLA writes when asked to show its passes: the pass log and the dump folder.

XLA prints one line per pass it runs, with the instruction count before it and whether it
changed the module, when its pass pipeline logs at verbosity 3 (``TF_CPP_VMODULE=
hlo_pass_pipeline=3``); ``--xla_dump_to=DIR --xla_dump_hlo_as_text`` writes each module as the
pipeline received it (``module_NNNN.NAME.before_optimizations.txt``) and, with
``--xla_dump_hlo_pass_re=.*``, after every pass that changed it. JAX, PyTorch/XLA and TensorFlow
all honour these settings. The corpus generator (datasets/corpus/generate.py) and
``hlogym harvest`` (hlogym.harvest) read them with this module.

X, XLA's target-independent result, is the instruction count before layout-assignment (the first
pass that is not target-independent; docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

STOP_BEFORE = "layout-assignment"


# The flag that prints large constants in full in XLA's dumps (by default they are {...},
# which leaves a module that can be neither run nor simplified as XLA simplifies it). Older
# XLA (jaxlib 0.4.13's) does not know it and stops at the unknown flag.
LARGE_CONSTANTS_FLAG = "--xla_dump_large_constants"


def dump_environment(
    dump_dir: str, *, passes: str | None = ".*", large_constants: bool = True
) -> dict[str, str]:
    """Environment variables that make a process's XLA log its passes (to stderr) and dump its
    modules (constants in full with `large_constants`) into `dump_dir` as received, and around
    every pass whose name matches the regular expression `passes` (".*": after each pass that
    changed the module; STOP_BEFORE: just before and after layout-assignment, which gives X;
    None: no pass dumps)."""
    flags = f"--xla_dump_to={dump_dir} --xla_dump_hlo_as_text"
    if large_constants:
        flags += f" {LARGE_CONSTANTS_FLAG}"
    if passes is not None:
        flags += f" --xla_dump_hlo_pass_re={passes}"
    return {
        "XLA_FLAGS": flags,
        "TF_CPP_VMODULE": "hlo_pass_pipeline=3",
        "TF_CPP_MIN_LOG_LEVEL": "0",
    }


_LOG_RUN = re.compile(r"Running HLO pass pipeline on module (\S+): (.*)$")
_LOG_START = re.compile(r"\]\s+HLO pass (.*)$")
_LOG_COUNT = re.compile(r"\]\s+Number of instructions: (\d+)$")
_LOG_CHANGED = re.compile(r"\]\s+Pass caused changes (.*)$")
_LOG_END = re.compile(r"\] HLO pass: (.*) time: ")
# The thread that wrote a log line: "I1204 14:36:37.892891    1887 file.cc:303] ...".
_LOG_THREAD = re.compile(r"^[IWEF]\d{4} \S+\s+(\d+) ")
# A dump after a pass that changed the module.
DUMP_AFTER_PASS = re.compile(
    r"^module_\d+\.(?P<mod>[^.]+)\.(?P<seq>\d{4})\.(?P<pipe>.+?)\.after_(?P<after>.+?)"
    r"(?:\.before_(?P<before>.+))?\.txt$"
)
# A module as XLA's pipeline received it (module names may hold dots: PyTorch/XLA's do).
DUMP_BEFORE_OPTIMIZATIONS = re.compile(
    r"^module_(?P<id>\d+)\.(?P<mod>.+)\.before_optimizations\.txt$"
)
# A module as layout-assignment received it: its instruction count is X.
DUMP_BEFORE_STOP = re.compile(
    r"^module_(?P<id>\d+)\..*\.(?P<seq>\d{4})\.[^.]+\.after_[^.]+\.before_"
    + re.escape(STOP_BEFORE)
    + r"\.txt$"
)


def parse_pass_log(log: str) -> list[dict]:
    """Every pass run, in order: dict(pass, pipeline, before, changed, is_pipeline). `log` holds
    one compilation (see split_compilations for a program's whole log)."""
    events: list[dict] = []
    open_stack: list[int] = []  # indices into events of passes that have started and not ended
    top_pipeline = None
    for line in log.splitlines():
        m = _LOG_RUN.search(line)
        if m:
            p = m.group(2).strip()
            if open_stack and events[open_stack[-1]]["pass"] == p:
                events[open_stack[-1]]["is_pipeline"] = True
            elif not open_stack:
                top_pipeline = p
            continue
        m = _LOG_END.search(line)
        if m:
            name = m.group(1)
            for j in range(len(open_stack) - 1, -1, -1):
                if events[open_stack[j]]["pass"] == name:
                    del open_stack[j:]
                    break
            continue
        m = _LOG_START.search(line)
        if m:
            name = m.group(1).strip()
            path = [top_pipeline or ""] + [
                events[j]["pass"] for j in open_stack if events[j]["is_pipeline"]
            ]
            events.append(
                {
                    "pass": name,
                    "pipeline": "/".join(path),
                    "before": None,
                    "changed": False,
                    "is_pipeline": False,
                }
            )
            open_stack.append(len(events) - 1)
            continue
        m = _LOG_COUNT.search(line)
        if m and events and events[-1]["before"] is None:
            events[-1]["before"] = int(m.group(1))
            continue
        m = _LOG_CHANGED.search(line)
        if m:
            name = m.group(1).strip()
            for j in range(len(events) - 1, -1, -1):
                if events[j]["pass"] == name:
                    events[j]["changed"] = True
                    break
    return events


@dataclass
class Compilation:
    """One module's run through XLA's pipelines, as the log tells it."""

    module: str  # the module's name as XLA logs it (the dump's NAME)
    lines: list[str] = field(default_factory=list)
    first_pipeline: str = ""

    def events(self) -> list[dict]:
        return parse_pass_log("\n".join(self.lines))

    def counts(self) -> tuple[int | None, int | None]:
        """(the instruction count XLA's passes started from, X: the count before
        layout-assignment); None where the log does not say."""
        events = self.events()
        initial = next((e["before"] for e in events if e["before"] is not None), None)
        x = next((e["before"] for e in events if e["pass"] == STOP_BEFORE), None)
        return initial, x


def split_compilations(log: str) -> list[Compilation]:
    """A program's pass log cut into compilations, in the order they started. Lines are grouped
    by the thread that wrote them; on one thread a compilation ends where another module's
    pipeline starts or where the first pipeline of the current one starts again (a second
    compilation of a module with the same name)."""
    done: list[Compilation] = []
    current: dict[str, Compilation] = {}  # thread -> its compilation in progress
    for line in log.splitlines():
        if "hlo_pass_pipeline" not in line:
            continue
        t = _LOG_THREAD.match(line)
        thread = t.group(1) if t else ""
        run = _LOG_RUN.search(line)
        if run:
            module, pipeline = run.group(1), run.group(2).strip()
            c = current.get(thread)
            if c is None or c.module != module or pipeline == c.first_pipeline:
                c = Compilation(module=module, first_pipeline=pipeline)
                current[thread] = c
                done.append(c)
        c = current.get(thread)
        if c is not None:
            c.lines.append(line)
    return done
