"""Compile and run HLO text on real XLA (jaxlib's CPU client), in-process.

    from xla_runtime import XlaCpu, load_io_dir, compare_outputs
    xla = XlaCpu()
    module = xla.parse(text)                    # XLA's HloParser (raises on rejection)
    exe = xla.compile(text)                     # HLO text -> StableHLO -> CPU executable
    outs = xla.run(exe, load_io_dir(d, "inputs"))
    report = compare_outputs(outs, load_io_dir(d, "outputs"))

The jaxlib 0.10.2 calls this uses (none of them is a public, stable JAX API):
  jaxlib._hlo.hlo_module_from_text(text)                -> HloModule (XLA's parser)
  HloModule.as_serialized_hlo_module_proto()            -> bytes (HloModuleProto)
  jaxlib._jax.mlir.hlo_to_stablehlo(proto_bytes)        -> bytes (StableHLO bytecode)
  jax._src.xla_bridge.get_backend("cpu")                -> jaxlib._jax.Client
  Client.compile_and_load(bytecode, xla_client.DeviceList((dev,)), xla_client.CompileOptions())
                                                        -> LoadedExecutable (XLA's full CPU pipeline)
  LoadedExecutable.execute([jax.device_put(np_array, dev), ...]) -> list of jax arrays, one per
                                                           leaf of the entry's result (tuples flattened)
Client.compile_and_load no longer takes an XlaComputation in this jaxlib, hence the StableHLO hop.

Inputs and outputs travel as the .npy files `hlogym run --save-inputs/--save-outputs/--io DIR`
writes (src/eval/npy_io.h): DIR/inputs.json and DIR/outputs.json list every leaf with its real
element type; bf16 leaves are stored as <u2 bits and viewed as ml_dtypes.bfloat16 here.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

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


class XlaCpu:
    """One jaxlib CPU client, reused for every compile."""

    def __init__(self):
        import jax
        from jax._src import xla_bridge
        from jax._src.lib import xla_client
        from jaxlib import _hlo
        import jaxlib._jax as _jax

        self._jax = jax
        self._hlo = _hlo
        self._mlir = _jax.mlir
        self._xc = xla_client
        self.backend = xla_bridge.get_backend("cpu")
        self.device = self.backend.local_devices()[0]
        self._devices = xla_client.DeviceList((self.device,))

    def parse(self, text: str):
        """XLA's own HLO parser; raises (XlaRuntimeError/ValueError) when it rejects the text."""
        return self._hlo.hlo_module_from_text(text)

    def compile(self, text: str):
        module = self.parse(text)
        stablehlo = self._mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
        return self.backend.compile_and_load(stablehlo, self._devices, self._xc.CompileOptions())

    def run(self, executable, inputs: list[np.ndarray]) -> list[np.ndarray]:
        buffers = [self._jax.device_put(a, self.device) for a in inputs]
        return [np.asarray(r) for r in executable.execute(buffers)]


def _leaf_array(directory: Path, leaf: dict) -> np.ndarray:
    a = np.load(directory / leaf["file"], allow_pickle=False)
    raw = _RAW_TYPES.get(leaf["type"])
    if raw is not None:
        a = a.view(raw)
    assert list(a.shape) == list(leaf["shape"]), (leaf, a.shape)
    return a


def io_leaves(directory: Path | str, kind: str) -> list[dict]:
    """The manifest entries of `kind` ("inputs" or "outputs") in flattened order."""
    directory = Path(directory)
    manifest = json.loads((directory / f"{kind}.json").read_text())
    if kind == "inputs":
        return [leaf for p in manifest["parameters"] for leaf in p["leaves"]]
    return manifest["leaves"]


def load_io_dir(directory: Path | str, kind: str) -> list[np.ndarray]:
    directory = Path(directory)
    return [_leaf_array(directory, leaf) for leaf in io_leaves(directory, kind)]


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


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind in "fc" or a.dtype in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                                ml_dtypes.float8_e5m2)


def compare_outputs(actual: list[np.ndarray], expected: list[np.ndarray], *, rtol=1e-4,
                    atol=1e-5, low_rtol=2e-2, low_atol=1e-2,
                    all_low_precision: bool = False) -> Comparison:
    """Exact for integers and pred; floats within atol + rtol * max(|a|, |b|), NaN equal to NaN,
    infinities equal. For bf16/f16 the tolerance is low_rtol/low_atol and the absolute tolerance
    is at least low_rtol times the array's largest finite magnitude (as `hlogym equiv` does).
    all_low_precision compares f32/f64 leaves that way too: for graphs that compute in bf16/f16,
    where XLA rounds intermediates differently (it keeps some bf16 chains in f32) and the
    difference reaches f32 outputs."""
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
                c.mismatches.append(f"leaf {i} {a.dtype}{list(a.shape)}: {bad.size} elements "
                                    f"differ, first [{j}]: {a.reshape(-1)[j]} vs "
                                    f"{e.reshape(-1)[j]}")
            continue
        if a.size == 0:
            continue
        low = all_low_precision or a.dtype in (ml_dtypes.bfloat16, np.float16,
                                               ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)
        if a.dtype.kind == "c":
            pairs = [(a.real.astype(np.float64), e.real.astype(np.float64)),
                     (a.imag.astype(np.float64), e.imag.astype(np.float64))]
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
                    f"{ratio:.3g})")
    if c.mismatches:
        c.message = "; ".join(c.mismatches[:4])
    if math.isnan(c.max_rel_err):
        c.max_rel_err = 0.0
    return c
