"""The linear-algebra, scan and control passes' output on real XLA (jaxlib's CPU backend).

Each case is a small module the corpus does not exercise, a pass list that expands or rewrites
it, and a reference: "xla" when XLA itself runs the original (triangular-solve, cholesky, scan,
all-reduce-start/done, control_dep) or "hlogym" when only hlogym's evaluator can (the Qr, Householder
product and Eigh custom calls JAX emits for platforms without LAPACK). The rewritten text must
parse, compile and compute the reference's outputs on the inputs `hlogym run --io` drew.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
HLOGYM = REPO / "build" / "hlogym"
if not HLOGYM.exists():  # scripts/test.sh builds it; a missing binary is a failure, not a skip
    raise RuntimeError(f"{HLOGYM} is not built; run scripts/setup.sh")

from hlogym import xla as xla_runtime  # noqa: E402


@functools.lru_cache(maxsize=None)
def xla() -> xla_runtime.Xla:
    return xla_runtime.Xla("cpu")


def hlogym(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(HLOGYM), *map(str, args)], capture_output=True, text=True, timeout=300
    )


def diagonally_dominant(n: int, name: str = "a") -> str:
    """Instructions making `name` = parameter p + n*I (well conditioned for any p in [-1, 1])."""
    return (
        f"  p = f32[{n},{n}] parameter(0)\n"
        f"  r = s32[{n},{n}] iota(), iota_dimension=0\n"
        f"  c = s32[{n},{n}] iota(), iota_dimension=1\n"
        f"  eq = pred[{n},{n}] compare(r, c), direction=EQ\n"
        f"  big = f32[] constant({n})\n"
        f"  bigs = f32[{n},{n}] broadcast(big), dimensions={{}}\n"
        f"  zero = f32[] constant(0)\n"
        f"  zeros = f32[{n},{n}] broadcast(zero), dimensions={{}}\n"
        f"  d = f32[{n},{n}] select(eq, bigs, zeros)\n"
        f"  {name} = f32[{n},{n}] add(p, d)\n"
    )


TRIANGULAR = (
    "HloModule tri\nENTRY e {\n" + diagonally_dominant(6) + "  b = f32[3,6] parameter(1)\n"
    "  ROOT x = f32[3,6] triangular-solve(a, b), left_side=false, lower=false,"
    " transpose_a=TRANSPOSE\n}\n"
)

# n = 130 > 128: the blocked Cholesky solves its panels with triangular-solve.
CHOLESKY = (
    "HloModule chol\nENTRY e {\n"
    + diagonally_dominant(130, "s")
    + "  st = f32[130,130] transpose(s), dimensions={1,0}\n"
    "  a = f32[130,130] add(s, st)\n"
    "  ROOT l = f32[130,130] cholesky(a), lower=true\n}\n"
)

SCAN = """HloModule scan
step {
  x = f32[3] parameter(0)
  carry = f32[3] parameter(1)
  sum = f32[3] add(x, carry)
  ROOT out = (f32[3], f32[3]) tuple(sum, sum)
}
ENTRY e {
  v = f32[7,3] parameter(0)
  init = f32[3] parameter(1)
  ROOT r = (f32[7,3], f32[3]) scan(v, init), dimensions={0}, num_carries=1, is_reverse=true, to_apply=step
}
"""

QR = """HloModule qr
ENTRY e {
  a = f32[2,5,3] parameter(0)
  qr = (f32[2,5,3], f32[2,3]) custom-call(a), custom_call_target="Qr"
  packed = f32[2,5,3] get-tuple-element(qr), index=0
  taus = f32[2,3] get-tuple-element(qr), index=1
  q = f32[2,5,3] custom-call(packed, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT t = (f32[2,5,3], f32[2,3], f32[2,5,3]) tuple(packed, taus, q)
}
"""

EIGH = (
    "HloModule eigh\nENTRY e {\n"
    + diagonally_dominant(5, "s")
    + "  st = f32[5,5] transpose(s), dimensions={1,0}\n"
    "  a = f32[5,5] add(s, st)\n"
    "  ROOT e = (f32[5,5], f32[5]) custom-call(a), custom_call_target=\"Eigh\","
    " backend_config=\"1,1,100,1e-06\"\n}\n"
)

ASYNC_ALL_REDUCE = """HloModule ar
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  start = f32[4] all-reduce-start(p), replica_groups={}, to_apply=sum
  done = f32[4] all-reduce-done(start)
  ROOT n = f32[4] negate(done)
}
"""

CONTROL_DEP = """HloModule cd
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  s = f32[3] sine(a)
  l = f32[3] exponential(b)
  order = () custom-call(s, l), custom_call_target="control_dep"
  ROOT t = (f32[3], f32[3]) tuple(s, l)
}
"""

CASES = [
    ("triangular_solve", TRIANGULAR, "triangular_solve_expander", "xla"),
    ("cholesky_130", CHOLESKY, "cholesky_expander,triangular_solve_expander", "xla"),
    ("scan", SCAN, "scan_expander", "xla"),
    ("qr", QR, "qr_expander", "hlogym"),
    ("eigh", EIGH, "eigh_expander", "hlogym"),
    ("all_reduce_start", ASYNC_ALL_REDUCE, "async-collective-replacer", "xla"),
    ("control_dep", CONTROL_DEP, "control-dep-rewriter", "hlogym"),
]


@pytest.mark.parametrize("name,text,passes,reference", CASES, ids=[c[0] for c in CASES])
def test_rewritten_module_runs_on_xla(name, text, passes, reference, tmp_path):
    original = tmp_path / "original.hlo"
    original.write_text(text)
    out = hlogym("opt", original, f"--passes={passes}", "--verify-each")
    assert out.returncode == 0, out.stderr
    rewritten = out.stdout
    for op in (
        "triangular-solve(",
        "cholesky(",
        " scan(",
        '"Qr"',
        '"Eigh"',
        "-start(",
        '"control_dep"',
    ):
        assert op not in rewritten, f"{passes} left {op!r}"
    io = tmp_path / "io"
    out = hlogym("run", original, "--seed", "0", "--io", io)
    assert out.returncode == 0, out.stderr
    inputs = xla_runtime.load_io_dir(io, "inputs")
    if reference == "xla":
        want = xla().run(xla().compile(text), inputs)
    else:
        want = xla_runtime.load_io_dir(io, "outputs")
    got = xla().run(xla().compile(rewritten), inputs)
    c = xla_runtime.compare_outputs(got, want, rtol=1e-3, atol=1e-4)
    assert c.ok, f"{name}: {c.message}"
