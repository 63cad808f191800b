"""Hand HLO text to real XLA (the XLA inside the pinned jaxlib): parse, compile, run, compare.

This module is the one home of the jaxlib calls in hlogym (tests, bench scripts, ``hlogym.jax``
and ``hlogym.xla_bench`` all go through it)::

    from hlogym import xla
    x = xla.Xla("cpu")                           # 'gpu' when jaxlib has one (never required)
    x.parse(text)                                # XLA's HloParser; raises XlaError on rejection
    exe = x.compile(text)                        # HLO text -> StableHLO -> XLA's full pipeline
    args = x.random_inputs(text, seed=0)         # deterministic numpy inputs, one per leaf
    outs = x.run(exe, args)                      # numpy arrays, one per leaf of the result
    report = xla.compare_outputs(outs, expected) # exact ints/pred, rtol/atol floats, NaN == NaN

The jaxlib 0.10.2 calls this uses (none of them is a public, stable JAX API):
  jaxlib._hlo.hlo_module_from_text(text)                -> HloModule (XLA's parser)
  HloModule.as_serialized_hlo_module_proto()            -> bytes (HloModuleProto)
  jaxlib._hlo.XlaComputation(proto).program_shape()     -> the entry's parameter/result shapes
  jaxlib._jax.mlir.hlo_to_stablehlo(proto_bytes)        -> bytes (StableHLO bytecode)
  jax._src.xla_bridge.get_backend(platform)             -> jaxlib._jax.Client
  Client.compile_and_load(bytecode, DeviceList((dev,)), CompileOptions())
                                                        -> LoadedExecutable (XLA's full pipeline)
  LoadedExecutable.execute([device arrays])             -> one array per leaf of the entry's
                                                           result (tuples flattened)
  jax._src.lax.linalg.initialize_lapack()               -> XLA:CPU's LAPACK custom calls bound
Client.compile_and_load no longer takes an XlaComputation in this jaxlib, hence the StableHLO hop.
Parameters that are tuples are passed flattened, leaf by leaf, in order.

Threads: XLA:CPU sizes its intra-op thread pool from the CPUs the process may run on, when the
backend is first created. ``pin_threads(n)`` (call it before anything touches jax) restricts the
process to n CPUs (``os.sched_setaffinity``) and, for n == 1, also sets
``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` (Eigen's matmul/conv threads).

Inputs and outputs of ``hlogym run --save-inputs/--save-outputs/--io DIR`` (src/eval/npy_io.h)
load with ``load_io_dir``: DIR/inputs.json and DIR/outputs.json list every leaf with its real
element type; bf16 leaves are stored as <u2 bits and viewed as ml_dtypes.bfloat16 here.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import ml_dtypes  # noqa: E402  (a jax dependency)
import numpy as np  # noqa: E402

# Real element types whose .npy files hold raw bits.
_RAW_TYPES = {
    "bf16": ml_dtypes.bfloat16,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e5m2": ml_dtypes.float8_e5m2,
}
LOW_PRECISION = ("bf16", "f16", "f8e4m3fn", "f8e5m2")
_LOW_DTYPES = (
    ml_dtypes.bfloat16,
    np.dtype(np.float16),
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2,
)
PLATFORMS = ("cpu", "gpu")


class XlaError(ValueError):
    """XLA rejected a module (parse or compile), or a call was given unusable input."""


# --- threads ----------------------------------------------------------------------------------


def pin_threads(n: int) -> dict:
    """Restrict this process to n CPUs so that XLA:CPU's intra-op pool has n threads; must run
    before the jax backend is created. Returns what was set (for reports)."""
    if n < 1:
        raise ValueError(f"pin_threads: n must be >= 1, not {n}")
    try:
        import jax._src.xla_bridge as xb

        if getattr(xb, "_backends", None):
            raise RuntimeError("pin_threads: the jax backend already exists; call it first")
    except ImportError:  # pragma: no cover
        pass
    cpus = sorted(os.sched_getaffinity(0))
    if n > len(cpus):
        raise ValueError(f"pin_threads: {n} threads asked, only {len(cpus)} CPUs available")
    chosen = cpus[-n:]  # the highest-numbered CPUs (cpu 0 usually takes the most interrupts)
    os.sched_setaffinity(0, chosen)
    flags = os.environ.get("XLA_FLAGS", "")
    if n == 1 and "xla_cpu_multi_thread_eigen" not in flags:
        flags = (flags + " --xla_cpu_multi_thread_eigen=false").strip()
        os.environ["XLA_FLAGS"] = flags
    return {"threads": n, "cpus": chosen, "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")}


# --- reading modules --------------------------------------------------------------------------


def read_module_text(path: str | os.PathLike) -> str:
    """The text of a .hlo/.txt file, or of a compressed .gz/.zst one (zstd needs the `zstd`
    program)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such HLO file")
    if path.name.endswith(".zst"):
        if shutil.which("zstd") is None:
            raise RuntimeError(f"{path}: reading .zst needs the zstd program")
        out = subprocess.run(["zstd", "-dcq", str(path)], capture_output=True)
        if out.returncode != 0:
            raise XlaError(f"{path}: zstd failed: {out.stderr.decode(errors='replace').strip()}")
        return out.stdout.decode()
    if path.name.endswith(".gz"):
        return gzip.decompress(path.read_bytes()).decode()
    return path.read_text()


# Custom calls into the Python process that traced the module (jax.pure_callback,
# jax.debug.callback, io_callback; Equinox's and Optimistix's runtime checks are such callbacks):
# their backend config points at that process's Python callable, so another process running
# them jumps to nothing (a segfault). Compiling them is fine.
PYTHON_CALLBACK_TARGETS = frozenset(
    {
        "xla_ffi_python_cpu_callback",
        "xla_ffi_partitioned_python_cpu_callback",
        "xla_python_cpu_callback",
        "xla_ffi_python_gpu_callback",
        "xla_ffi_partitioned_python_gpu_callback",
        "xla_python_gpu_callback",
    }
)


def python_callbacks(text: str) -> list[str]:
    """The custom-call targets in `text` that call back into the Python process that traced
    the module (sorted, each once); such a module runs only in that process."""
    targets = set(re.findall(r'custom_call_target="([^"]+)"', text))
    return sorted(targets & PYTHON_CALLBACK_TARGETS)


# --- the backend ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """One array leaf of a parameter or of the result."""

    shape: tuple
    dtype: np.dtype
    element_type: str  # XLA's name, e.g. "f32", "bf16", "pred"


def _leaves(shape) -> list[Leaf]:
    if shape.is_tuple():
        return [leaf for s in shape.tuple_shapes() for leaf in _leaves(s)]
    if shape.is_token():
        return []
    et = shape.xla_element_type().name.lower()
    return [Leaf(tuple(shape.dimensions()), np.dtype(shape.numpy_dtype()), et)]


def available_platforms() -> list[str]:
    """The platforms of PLATFORMS that jaxlib can create a client for here."""
    from jax._src import xla_bridge

    out = []
    for p in PLATFORMS:
        try:
            xla_bridge.get_backend(p)
            out.append(p)
        except Exception:  # noqa: BLE001 - jax raises RuntimeError with various messages
            pass
    return out


class Xla:
    """One jaxlib client (and its first device), reused for every compile."""

    def __init__(self, platform: str = "cpu"):
        if platform not in PLATFORMS:
            raise ValueError(f"platform must be one of {PLATFORMS}, not {platform!r}")
        import jax
        from jax._src import xla_bridge
        from jax._src.lib import xla_client
        from jaxlib import _hlo
        import jaxlib._jax as _jax

        self._jax = jax
        self._hlo = _hlo
        self._mlir = _jax.mlir
        self._xc = xla_client
        self.platform = platform
        try:
            self.backend = xla_bridge.get_backend(platform)
        except Exception as e:  # noqa: BLE001
            raise RuntimeError(f"XLA platform {platform!r} is not available here: {e}") from e
        self.device = self.backend.local_devices()[0]
        self._devices = xla_client.DeviceList((self.device,))
        if platform == "cpu":
            # JAX binds XLA:CPU's LAPACK custom calls (lapack_ssyevd_ffi, lapack_spotrf_ffi, ...)
            # to SciPy's LAPACK when it lowers a linear-algebra op; a module read from text skips
            # that, and running its eigh or Cholesky then jumps to a null function (segfault).
            # JAX's deserialization of exported modules initializes them the same way.
            from jax._src.lax import linalg

            linalg.initialize_lapack()

    def __repr__(self):
        return f"Xla({self.platform!r}, device={self.device})"

    # parse / compile
    def parse(self, text: str):
        """XLA's own HLO parser; raises XlaError when it rejects the text."""
        if not isinstance(text, str):
            raise TypeError(f"parse: HLO text must be a str, not {type(text).__name__}")
        try:
            return self._hlo.hlo_module_from_text(text)
        except Exception as e:  # noqa: BLE001 - jaxlib raises XlaRuntimeError
            raise XlaError(f"XLA rejected the HLO text: {str(e).strip()[:2000]}") from e

    def signature(self, text_or_module) -> tuple[list[Leaf], list[Leaf]]:
        """(parameter leaves, result leaves) of the entry computation, tuples flattened."""
        module = self.parse(text_or_module) if isinstance(text_or_module, str) else text_or_module
        ps = self._hlo.XlaComputation(module.as_serialized_hlo_module_proto()).program_shape()
        params = [leaf for s in ps.parameter_shapes() for leaf in _leaves(s)]
        return params, _leaves(ps.result_shape())

    def compile(
        self,
        text_or_module,
        options: dict | None = None,
        replicas: int = 1,
        partitions: int = 1,
    ):
        """Compile with XLA's full pipeline for this platform; raises XlaError on failure.
        options: XLA debug options for this compile only (DebugOptions field names, as in
        XLA_FLAGS without the dashes), e.g. {"xla_backend_optimization_level": 0} to skip
        LLVM's optimizations (several times faster to compile; same HLO passes).
        replicas: compile for that many replicas, one per device (a module whose collectives
        are written for them; on the CPU the process needs that many host devices, from
        XLA_FLAGS=--xla_force_host_platform_device_count=N before jax starts).
        partitions: compile for that many partitions with SPMD partitioning (a module whose
        header says num_partitions=N: XLA's partitioner splits it first), one per device too."""
        module = self.parse(text_or_module) if isinstance(text_or_module, str) else text_or_module
        opts = self._xc.CompileOptions()
        devices = self._devices
        if replicas > 1 or partitions > 1:
            needed = replicas * partitions
            available = self.backend.local_devices()
            if len(available) < needed:
                raise XlaError(
                    f"compiling for {replicas} replicas x {partitions} partitions needs {needed} "
                    f"devices; this process has {len(available)} (on the CPU: XLA_FLAGS="
                    f"--xla_force_host_platform_device_count={needed})"
                )
            build = opts.executable_build_options
            build.num_replicas = replicas
            build.num_partitions = partitions
            build.use_spmd_partitioning = partitions > 1
            build.device_assignment = self._xc.DeviceAssignment.create(
                np.arange(needed).reshape(replicas, partitions)
            )
            devices = self._xc.DeviceList(tuple(available[:needed]))
        if options:

            def value(v):  # jaxlib takes bools as bools, the rest as text
                return v if isinstance(v, bool) else str(v)

            opts.env_option_overrides = [(str(k), value(v)) for k, v in options.items()]
        try:
            stablehlo = self._mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
            return self.backend.compile_and_load(stablehlo, devices, opts)
        except Exception as e:  # noqa: BLE001
            raise XlaError(f"XLA failed to compile the module: {str(e).strip()[:2000]}") from e

    # inputs / run / time
    def random_inputs(self, text_or_module, seed: int = 0) -> list[np.ndarray]:
        """Deterministic inputs, one per parameter leaf (tuples flattened): the C++ generator
        that `hlogym run --seed` and the equivalence checker use (src/eval/random_inputs.h
        states its rules: floats in [-1, 1] except those reaching sqrt/rsqrt/log, a divisor or
        a power's base, and float scalars (step counts, learning rates), which are drawn from
        [0.5, 1.5]; indices in bounds), so the same seed
        gives the same inputs on both sides."""
        text = text_or_module if isinstance(text_or_module, str) else text_or_module.to_string()
        inputs = random_inputs(text, seed)
        params, _ = self.signature(text_or_module)
        if [tuple(a.shape) for a in inputs] != [tuple(p.shape) for p in params]:
            raise XlaError(
                f"hlogym's inputs {[a.shape for a in inputs]} do not fit XLA's "
                f"parameters {[p.shape for p in params]}"
            )
        return inputs

    def put(self, inputs: Sequence[np.ndarray]) -> list:
        # 64-bit leaves stay 64-bit (jax would narrow them to 32 bits without x64: a TF
        # optimizer's s64 step counter would no longer fit the executable's parameter)
        with self._jax.enable_x64(True):
            return [self._jax.device_put(np.asarray(a), self.device) for a in inputs]

    def execute(self, executable, buffers: list) -> list:
        outs = executable.execute(buffers)
        for o in outs:
            o.block_until_ready()
        return outs

    def run(self, executable, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run on numpy inputs (one per parameter leaf); numpy outputs, one per result leaf."""
        return [np.asarray(r) for r in self.execute(executable, self.put(inputs))]

    def run_replicated(
        self, executable, inputs: Sequence[Sequence[np.ndarray]]
    ) -> list[list[np.ndarray]]:
        """Run an executable compiled for len(inputs) replicas (compile(replicas=N)), replica r
        on inputs[r] (one array per parameter leaf); every replica's outputs, replica by replica.
        """
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        replicas = len(inputs)
        devices = self.backend.local_devices()[:replicas]
        # One array per parameter whose copy on device r is replica r's input: a "replicated"
        # sharding whose copies differ, which is what a replicated executable reads.
        sharding = NamedSharding(Mesh(np.array(devices), ("replicas",)), PartitionSpec())
        with self._jax.enable_x64(True):
            arrays = [
                self._jax.make_array_from_single_device_arrays(
                    np.shape(inputs[0][i]),
                    sharding,
                    [
                        self._jax.device_put(np.asarray(inputs[r][i]), devices[r])
                        for r in range(replicas)
                    ],
                )
                for i in range(len(inputs[0]))
            ]
        results = executable.execute_sharded(arrays)
        per_output = results.disassemble_into_single_device_arrays()
        return [[np.asarray(output[r]) for output in per_output] for r in range(replicas)]


def random_inputs(text: str, seed: int = 0) -> list[np.ndarray]:
    """The seeded inputs of hlogym's generator for a module's entry parameters, one array per
    leaf (needs the C++ extension, not jaxlib); XlaError when hlogym cannot parse the text."""
    import io

    from . import _hlogym

    try:
        leaves = _hlogym.random_inputs(text, seed)
    except ValueError as e:
        raise XlaError(f"hlogym cannot read the module to draw its inputs: {e}") from e
    out = []
    for element_type, npy in leaves:
        a = np.load(io.BytesIO(npy), allow_pickle=False)
        raw = _RAW_TYPES.get(element_type)
        out.append(a.view(raw) if raw is not None else a)
    return out


# --- hlogym's .npy exchange -------------------------------------------------------------------


def _leaf_array(directory: Path, leaf: dict) -> np.ndarray:
    a = np.load(directory / leaf["file"], allow_pickle=False)
    raw = _RAW_TYPES.get(leaf["type"])
    if raw is not None:
        a = a.view(raw)
    if list(a.shape) != list(leaf["shape"]):
        raise XlaError(
            f"{directory / leaf['file']}: shape {list(a.shape)}, manifest says {leaf['shape']}"
        )
    return a


def io_leaves(directory: Path | str, kind: str) -> list[dict]:
    """The manifest entries of `kind` ("inputs" or "outputs") in flattened order."""
    if kind not in ("inputs", "outputs"):
        raise ValueError(f"kind must be 'inputs' or 'outputs', not {kind!r}")
    directory = Path(directory)
    manifest = json.loads((directory / f"{kind}.json").read_text())
    if kind == "inputs":
        return [leaf for p in manifest["parameters"] for leaf in p["leaves"]]
    return manifest["leaves"]


def load_io_dir(directory: Path | str, kind: str) -> list[np.ndarray]:
    directory = Path(directory)
    return [_leaf_array(directory, leaf) for leaf in io_leaves(directory, kind)]


# --- comparing outputs ------------------------------------------------------------------------


@dataclass
class Comparison:
    ok: bool = True
    message: str = ""
    # |a - b| / max(|a|, |b|) over float elements whose magnitude is at least 1e-3 of the
    # array's largest finite magnitude (tiny elements are covered by the absolute tolerance).
    max_rel_err: float = 0.0
    max_rel_err_low_precision: float = 0.0  # the same over leaves compared as low precision
    # max |a - b| / (the array's largest finite magnitude), over float leaves: the error at the
    # scale of the array (the meaningful figure for bf16, whose small elements are noise).
    max_scaled_err: float = 0.0
    max_scaled_err_low_precision: float = 0.0
    # The largest |a - b| / (atol + rtol * max(|a|, |b|)) seen: <= 1 passes.
    max_tolerance_ratio: float = 0.0
    leaves: int = 0
    mismatches: list = field(default_factory=list)
    # Set by agree(): the outputs differ from the original's but agree with the original
    # computed without rounding to low precision (see widened_to_f32).
    excess_precision: bool = False
    # Set by agree(): the f32 outputs differ from the original's by more than the tolerance but
    # are as close to the original computed in f64 as the original's are (rounding).
    rounding: bool = False
    # Set by agree(): False when the original's outputs are vacuous on these inputs
    # (vacuous_reason), so equal outputs are no evidence; ok is False then too.
    judged: bool = True


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind in "fc" or a.dtype in (
        ml_dtypes.bfloat16,
        ml_dtypes.float8_e4m3fn,
        ml_dtypes.float8_e5m2,
    )


def compare_outputs(
    actual: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    *,
    rtol=1e-4,
    atol=1e-5,
    low_rtol=2e-2,
    low_atol=1e-2,
    all_low_precision: bool = False,
) -> Comparison:
    """Exact for integers and pred; floats within atol + rtol * max(|a|, |b|), NaN equal to NaN,
    infinities equal. For bf16/f16 the tolerance is low_rtol/low_atol and the absolute tolerance
    is at least low_rtol times the array's largest finite magnitude (as `hlogym equiv` does).
    all_low_precision compares f32/f64 leaves that way too: for graphs that compute in bf16/f16,
    where XLA rounds intermediates differently (it keeps some bf16 chains in f32) and the
    difference reaches f32 outputs."""
    actual = [np.asarray(a) for a in actual]
    expected = [np.asarray(e) for e in expected]
    c = Comparison(leaves=len(expected))
    if len(actual) != len(expected):
        c.ok = False
        c.message = f"{len(actual)} output leaves vs {len(expected)}"
        return c
    for i, (a, e) in enumerate(zip(actual, expected)):
        if tuple(a.shape) != tuple(e.shape) or a.dtype != e.dtype:
            c.ok = False
            c.mismatches.append(f"leaf {i}: {a.dtype}{list(a.shape)} vs {e.dtype}{list(e.shape)}")
            continue
        if not _is_float(a):
            bad = np.flatnonzero(a.reshape(-1) != e.reshape(-1))
            if bad.size:
                c.ok = False
                j = int(bad[0])
                c.mismatches.append(
                    f"leaf {i} {a.dtype}{list(a.shape)}: {bad.size} elements "
                    f"differ, first [{j}]: {a.reshape(-1)[j]} vs "
                    f"{e.reshape(-1)[j]}"
                )
            continue
        if a.size == 0:
            continue
        low = all_low_precision or a.dtype in _LOW_DTYPES
        if a.dtype.kind == "c":
            pairs = [
                (a.real.astype(np.float64), e.real.astype(np.float64)),
                (a.imag.astype(np.float64), e.imag.astype(np.float64)),
            ]
        else:
            pairs = [(a.astype(np.float64), e.astype(np.float64))]
        for x, y in pairs:
            x, y = x.reshape(-1), y.reshape(-1)
            nan_x, nan_y = np.isnan(x), np.isnan(y)
            inf_x, inf_y = np.isinf(x), np.isinf(y)
            bad = (nan_x != nan_y) | ((inf_x | inf_y) & ~(nan_x | nan_y) & (x != y))
            fin = np.isfinite(x) & np.isfinite(y)
            fx, fy = x[fin], y[fin]
            scale = np.maximum(np.abs(fx), np.abs(fy))
            big = float(scale.max()) if scale.size else 0.0
            r, t = (low_rtol, max(low_atol, low_rtol * big)) if low else (rtol, atol)
            diff = np.abs(fx - fy)
            lim = t + r * scale
            ratio = float((diff / lim).max()) if diff.size else 0.0
            c.max_tolerance_ratio = max(c.max_tolerance_ratio, ratio)
            sig = scale >= 1e-3 * big if big > 0 else np.zeros_like(scale, dtype=bool)
            rel = float((diff[sig] / scale[sig]).max()) if sig.any() else 0.0
            scaled = float(diff.max()) / big if big > 0 and diff.size else 0.0
            if low:
                c.max_rel_err_low_precision = max(c.max_rel_err_low_precision, rel)
                c.max_scaled_err_low_precision = max(c.max_scaled_err_low_precision, scaled)
            else:
                c.max_rel_err = max(c.max_rel_err, rel)
                c.max_scaled_err = max(c.max_scaled_err, scaled)
            fail = np.zeros_like(x, dtype=bool)
            fail[fin] = diff > lim
            fail |= bad
            if fail.any():
                c.ok = False
                j = int(np.flatnonzero(fail)[0])
                c.mismatches.append(
                    f"leaf {i} {a.dtype}{list(a.shape)}: {int(fail.sum())} elements outside "
                    f"tolerance, first [{j}]: {x[j]!r} vs {y[j]!r} (max tolerance ratio "
                    f"{ratio:.3g})"
                )
    if c.mismatches:
        c.message = "; ".join(c.mismatches[:4])
    if math.isnan(c.max_rel_err):
        c.max_rel_err = 0.0
    return c


def vacuous_reason(reference: Sequence[np.ndarray], inputs: Sequence[np.ndarray]) -> str:
    """Why comparing against `reference` (the original module's outputs on `inputs`) would be
    vacuous, or "" when it is not; the same rule as the C++ VacuousOutputReason
    (src/eval/equivalence.h): a float output leaf with no finite element, or every output leaf
    constant (one of them with two or more elements) while some input varies. (The C++ rule also
    excuses a module whose root reads no parameter; here the caller passes real models.)"""
    reference = [np.asarray(r) for r in reference]
    for i, r in enumerate(reference):
        if r.size and _is_float(r):
            x = np.abs(r.astype(np.complex128 if r.dtype.kind == "c" else np.float64))
            if not np.isfinite(x).any():
                nans = int(np.isnan(x).sum())
                what = "NaN" if nans == r.size else "infinite" if nans == 0 else "NaN or infinite"
                return f"output {i} {r.dtype}{list(r.shape)} of the original is all {what}"

    def constant(a):
        flat = np.ascontiguousarray(a).reshape(-1)
        return flat.size < 2 or bool(
            (flat.view(np.uint8).reshape(flat.size, -1) == flat[:1].view(np.uint8)).all()
        )

    if not reference or not all(constant(r) for r in reference):
        return ""
    if not any(r.size >= 2 for r in reference):
        return ""
    if all(constant(a) for a in inputs):
        return ""
    first = reference[0].reshape(-1)
    return (
        f"every output of the original is constant (output 0 is all "
        f"{first[0] if first.size else 'empty'}) although the inputs vary"
    )


def computes_in_low_precision(text: str) -> bool:
    """Whether any shape in the module text is bf16/f16/f8 (then every float output is
    compared at the low-precision tolerance)."""
    return re.search(r"\b(bf16|f16|f8e\w*)\[", text) is not None


def widened_to_f32(text: str) -> str | None:
    """The module with every bf16/f16 shape made f32: what it computes when intermediates are
    not rounded to low precision. XLA allows such "excess precision" (it is why
    simplify-fp-conversions may drop f32->bf16->f32 round trips), so an optimized bf16 graph
    may legitimately move towards this reference. None when the module reinterprets bits
    (bitcast-convert), which widening would change."""
    if "bitcast-convert(" in text:
        return None
    return re.sub(r"\b(?:bf16|f16)\[", "f32[", text)


def strip_entry_layout(text: str) -> str:
    """The module text without the header's entry_computation_layout (XLA then takes the
    layouts of the entry's parameters and root), for texts whose types are rewritten."""
    header, rest = text.split("\n", 1)
    key = "entry_computation_layout={"
    i = header.find(key)
    if i < 0:
        return text
    depth, j = 0, i + len(key) - 1
    while j < len(header):
        depth += {"{": 1, "}": -1}.get(header[j], 0)
        j += 1
        if depth == 0:
            break
    start = i - 2 if header[i - 2 : i] == ", " else i
    return header[:start] + header[j:] + "\n" + rest


def run_in_f64(
    x: "Xla", text: str, inputs: Sequence[np.ndarray], options: dict | None = None
) -> list[np.ndarray]:
    """XLA's outputs for `text` with every bf16/f16/f32 array made f64, on the same inputs
    widened: the reference that says how far rounding alone moves an f32 result."""
    text64 = re.sub(r"\b(bf16|f16|f32)\[", "f64[", strip_entry_layout(text))
    return x.run(
        x.compile(text64, options),
        [
            a.astype(np.float64) if a.dtype.kind == "f" or a.dtype in _LOW_DTYPES else a
            for a in inputs
        ],
    )


def f64_reference_check(
    got: Sequence[np.ndarray], want: Sequence[np.ndarray], reference: Sequence[np.ndarray]
) -> tuple[bool, str]:
    """Whether every float leaf of `got` is no farther from the f64 `reference` than twice
    `want` is (both f32 roundings of the same ill-conditioned computation; a NaN counts as
    infinitely far, and where the reference is not finite `got` must equal `want`), integers
    equal; and the distances per leaf."""
    notes = []
    for i, (a, b, r) in enumerate(zip(got, want, reference)):
        if a.dtype.kind not in "fc" and a.dtype not in _LOW_DTYPES:
            if not np.array_equal(a, b):
                return False, f"leaf {i}: integers differ"
            continue
        wide = np.complex128 if a.dtype.kind == "c" else np.float64
        r, a64, b64 = (np.asarray(v).astype(wide) for v in (r, a, b))
        # Where the f64 result is NaN or infinite, only the original's own value will do.
        odd = ~np.isfinite(r)
        if not np.array_equal(a64[odd], b64[odd], equal_nan=True):
            return False, f"leaf {i}: differs where the f64 result is not finite"
        err_got, err_want = (
            float(np.nan_to_num(np.abs(v[~odd] - r[~odd]), nan=np.inf).max())
            if v[~odd].size
            else 0.0
            for v in (a64, b64)
        )
        notes.append(f"leaf {i}: |optimized - f64| {err_got:.3g}, |original - f64| {err_want:.3g}")
        if not math.isfinite(err_want) or err_got > max(2 * err_want, 1e-6):
            return False, "; ".join(notes)
    return True, "; ".join(notes)


def agree(
    x: "Xla",
    got: Sequence[np.ndarray],
    want: Sequence[np.ndarray],
    original: str,
    inputs: Sequence[np.ndarray],
    options: dict | None = None,
) -> Comparison:
    """compare_outputs(got, want) for outputs of an optimized module and of its original: not
    judged (ok and judged False) when the original's outputs are vacuous (vacuous_reason), and
    a second look at outputs that miss the original's:
      - low-precision graphs: outputs within tolerance of the original computed in f32
        (widened_to_f32, same inputs) agree, and the result says so (excess_precision);
      - f32 graphs: outputs no farther from the original computed in f64 than twice the
        original's own outputs are (f64_reference_check) agree as rounding (rounding)."""
    low = computes_in_low_precision(original)
    c = compare_outputs(got, want, all_low_precision=low)
    vacuous = vacuous_reason(want, inputs)
    if c.ok and vacuous:
        c.ok, c.judged = False, False
        c.message = f"not judged: {vacuous} on these inputs, so equal outputs are no evidence"
        return c
    if not low and not c.ok and "bitcast-convert(" not in original:
        try:
            same, notes = f64_reference_check(got, want, run_in_f64(x, original, inputs, options))
        except XlaError as e:
            c.message += f" (no f64 reference: {str(e)[:200]})"
            return c
        if not same:
            c.message += f"; and against the original in f64: {notes}"
            return c
        c.ok, c.rounding = True, True
        c.message = (
            f"differs from the original's outputs, but is as close to the original "
            f"computed in f64 as they are ({notes}): {c.message}"
        )
        return c
    widened = widened_to_f32(original) if low and not c.ok else None
    if widened is None:
        return c
    try:
        exe = x.compile(widened, options)
        ref = x.run(
            exe, [np.asarray(a, np.float32) if a.dtype in _LOW_DTYPES else a for a in inputs]
        )
    except XlaError as e:
        c.message += f" (no f32 reference: {str(e)[:200]})"
        return c
    ref = [np.asarray(r).astype(g.dtype) for r, g in zip(ref, got)]
    second = compare_outputs(got, ref, all_low_precision=True)
    if not second.ok:
        c.message += f"; and against the original in f32: {second.message}"
        return c
    second.excess_precision = True
    second.message = (
        "differs from the original's outputs but agrees with the original "
        f"computed in f32 (excess precision): {c.message}"
    )
    return second


__all__ = [
    "Xla",
    "XlaError",
    "Leaf",
    "Comparison",
    "agree",
    "available_platforms",
    "compare_outputs",
    "computes_in_low_precision",
    "widened_to_f32",
    "io_leaves",
    "load_io_dir",
    "pin_threads",
    "f64_reference_check",
    "run_in_f64",
    "strip_entry_layout",
    "random_inputs",
    "read_module_text",
    "vacuous_reason",
    "PLATFORMS",
    "LOW_PRECISION",
]
