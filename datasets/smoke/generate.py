#!/usr/bin/env python3
"""Generates the smoke-test HLO modules under datasets/smoke/ from small, real JAX programs.

Run from anywhere with the project's venv:

    .venv/bin/python datasets/smoke/generate.py

For every model function it writes
  NAME.hlo            pre-optimization HLO: jax.jit(f).lower(*args).as_text(dialect="hlo")
  NAME.optimized.hlo  XLA:CPU post-optimization HLO: jax.jit(f).lower(*args).compile().as_text()
(files over 200 KB are written gzip-compressed as NAME[.optimized].hlo.gz), a few
NAME.debuginfo.hlo files (the same pre-optimization text with debug_info=True: metadata and the
FileNames/FunctionNames/FileLocations/StackFrames tables), a handful of per-pass XLA dumps under
dumps/, VERSIONS.json and default_suite.txt.

The output is deterministic: arguments are abstract (shapes only), gzip headers carry no time
stamp, and absolute paths of this checkout inside debug metadata are rewritten relative to the
repository root.  Everything this script generated before is removed first, so reruns are clean.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
GZIP_OVER = 200 * 1024

f32, bf16, i32, u32 = jnp.float32, jnp.bfloat16, jnp.int32, jnp.uint32


def S(shape, dtype=f32):
    return jax.ShapeDtypeStruct(tuple(shape), dtype)


def tree_cast(tree, dtype):
    return jax.tree_util.tree_map(lambda a: S(a.shape, dtype), tree)


# ----------------------------------------------------------------------------------------------
# GPT-2 style decoder
# ----------------------------------------------------------------------------------------------
GPT = dict(vocab=64, seq=16, d=32, heads=4, layers=2, batch=2)


def gpt2_init(key):
    V, T, D, L = GPT["vocab"], GPT["seq"], GPT["d"], GPT["layers"]
    keys = jax.random.split(key, 2 + 4 * L)
    n = lambda k, s: 0.02 * jax.random.normal(k, s, f32)  # noqa: E731
    blocks = []
    for i in range(L):
        k0, k1, k2, k3 = keys[2 + 4 * i : 6 + 4 * i]
        blocks.append(
            dict(
                ln1_g=jnp.ones((D,)),
                ln1_b=jnp.zeros((D,)),
                w_qkv=n(k0, (D, 3 * D)),
                b_qkv=jnp.zeros((3 * D,)),
                w_o=n(k1, (D, D)),
                b_o=jnp.zeros((D,)),
                ln2_g=jnp.ones((D,)),
                ln2_b=jnp.zeros((D,)),
                w_fc=n(k2, (D, 4 * D)),
                b_fc=jnp.zeros((4 * D,)),
                w_proj=n(k3, (4 * D, D)),
                b_proj=jnp.zeros((D,)),
            )
        )
    return dict(
        wte=n(keys[0], (V, D)),
        wpe=n(keys[1], (T, D)),
        blocks=blocks,
        lnf_g=jnp.ones((D,)),
        lnf_b=jnp.zeros((D,)),
    )


def layernorm(x, g, b, eps=1e-5):
    xf = x.astype(f32)
    m = xf.mean(-1, keepdims=True)
    v = ((xf - m) ** 2).mean(-1, keepdims=True)
    return ((xf - m) * lax.rsqrt(v + eps)).astype(x.dtype) * g + b


def attention(x, blk, H):
    B, T, D = x.shape
    hd = D // H
    qkv = x @ blk["w_qkv"] + blk["b_qkv"]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    heads = lambda t: t.reshape(B, T, H, hd).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = heads(q), heads(k), heads(v)
    att = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(jnp.asarray(hd, x.dtype))
    mask = jnp.tril(jnp.ones((T, T), bool))
    att = jnp.where(mask, att, jnp.finfo(x.dtype).min)
    att = jax.nn.softmax(att.astype(f32), axis=-1).astype(x.dtype)
    y = jnp.einsum("bhqk,bhkd->bhqd", att, v)
    y = y.transpose(0, 2, 1, 3).reshape(B, T, D)
    return y @ blk["w_o"] + blk["b_o"]


def gpt2_forward(params, tokens):
    B, T = tokens.shape
    x = params["wte"][tokens] + params["wpe"][jnp.arange(T)][None]
    for blk in params["blocks"]:
        x = x + attention(layernorm(x, blk["ln1_g"], blk["ln1_b"]), blk, GPT["heads"])
        h = layernorm(x, blk["ln2_g"], blk["ln2_b"])
        h = jax.nn.gelu(h @ blk["w_fc"] + blk["b_fc"], approximate=True)
        x = x + h @ blk["w_proj"] + blk["b_proj"]
    x = layernorm(x, params["lnf_g"], params["lnf_b"])
    return x @ params["wte"].T  # tied LM head


def cross_entropy(logits, targets):
    logits = logits.astype(f32)
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(lse - picked)


def gpt2_loss(params, tokens, targets):
    return cross_entropy(gpt2_forward(params, tokens), targets)


def adamw(params, grads, state, lr=3e-4, b1=0.9, b2=0.95, eps=1e-8, wd=0.1):
    m, v, step = state
    step = step + 1
    m = jax.tree_util.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
    c1 = 1 - b1 ** step.astype(f32)
    c2 = 1 - b2 ** step.astype(f32)

    def upd(p, m_, v_):
        return p - lr * ((m_ / c1) / (jnp.sqrt(v_ / c2) + eps) + wd * p)

    return jax.tree_util.tree_map(upd, params, m, v), (m, v, step)


def gpt2_train_step(params, opt_state, tokens, targets):
    loss, grads = jax.value_and_grad(gpt2_loss)(params, tokens, targets)
    gnorm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads)))
    grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, 1.0 / (gnorm + 1e-6)), grads)
    params, opt_state = adamw(params, grads, opt_state)
    return params, opt_state, loss


def gpt2_infer(params, tokens):
    logits = gpt2_forward(params, tokens)
    return logits, jnp.argmax(logits[:, -1, :], axis=-1)


def gpt2_args():
    params = jax.eval_shape(lambda: gpt2_init(jax.random.key(0)))  # traced only, nothing runs
    tok = S((GPT["batch"], GPT["seq"]), i32)
    return params, tok


# ----------------------------------------------------------------------------------------------
# MLP
# ----------------------------------------------------------------------------------------------
MLP_SIZES = [(64, 128), (128, 128), (128, 10)]


def mlp_params(dtype=f32):
    return [(S((a, b), dtype), S((b,), dtype)) for a, b in MLP_SIZES]


def mlp_forward(params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i + 1 < len(params):
            x = jax.nn.relu(x)
    return x


def mlp_train_step(params, x, labels):
    def loss_fn(p):
        logits = mlp_forward(p, x)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, 10), -1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    new = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return new, loss


def mlp_bf16_train_step(params, x, labels):
    """Mixed precision: f32 master weights, bf16 compute, f32 loss."""

    def loss_fn(p):
        pb = jax.tree_util.tree_map(lambda a: a.astype(bf16), p)
        logits = mlp_forward(pb, x.astype(bf16)).astype(f32)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, 10), -1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    new = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return new, loss


# ----------------------------------------------------------------------------------------------
# Small CNN
# ----------------------------------------------------------------------------------------------
DN = ("NHWC", "HWIO", "NHWC")


def cnn_forward(p, x):
    x = lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=DN)
    mean = x.mean(axis=(0, 1, 2))
    var = x.var(axis=(0, 1, 2))
    x = (x - mean) * lax.rsqrt(var + 1e-5) * p["g1"] + p["b1"]
    x = jax.nn.relu(x)
    x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    x = lax.conv_general_dilated(
        x, p["c2"], (1, 1), "SAME", rhs_dilation=(2, 2), dimension_numbers=DN
    )
    x = jax.nn.relu(x)
    x = lax.conv_general_dilated(
        x, p["c3"], (2, 2), ((1, 1), (1, 1)), dimension_numbers=DN, feature_group_count=2
    )
    x = x.mean(axis=(1, 2))
    return x @ p["w"] + p["b"]


def cnn_params():
    return dict(
        c1=S((3, 3, 3, 8)),
        g1=S((8,)),
        b1=S((8,)),
        c2=S((3, 3, 8, 16)),
        c3=S((3, 3, 8, 16)),
        w=S((16, 10)),
        b=S((10,)),
    )


def cnn_train_step(params, x, labels):
    def loss_fn(p):
        return cross_entropy(cnn_forward(p, x), labels)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads), loss


# ----------------------------------------------------------------------------------------------
# LSTM with lax.scan (a while loop in HLO)
# ----------------------------------------------------------------------------------------------
def lstm_params():
    I, H = 8, 16
    return dict(wx=S((I, 4 * H)), wh=S((H, 4 * H)), b=S((4 * H,)), wo=S((H, 1)))


def lstm_forward(p, xs):  # xs: [T, B, I]
    B = xs.shape[1]
    H = p["wh"].shape[0]

    def cell(carry, x):
        h, c = carry
        z = x @ p["wx"] + h @ p["wh"] + p["b"]
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    (h, _), hs = lax.scan(cell, (jnp.zeros((B, H)), jnp.zeros((B, H))), xs)
    return h @ p["wo"], hs


def lstm_infer(p, xs):
    return lstm_forward(p, xs)


def lstm_train_step(p, xs, ys):
    def loss_fn(p):
        y, _ = lstm_forward(p, xs)
        return jnp.mean((y[:, 0] - ys) ** 2)

    loss, g = jax.value_and_grad(loss_fn)(p)
    return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), loss


# ----------------------------------------------------------------------------------------------
# Graph network: gather + segment_sum (scatter)
# ----------------------------------------------------------------------------------------------
GN = dict(nodes=12, edges=32, feat=8, hidden=16)


def gnn_params():
    F, Hd = GN["feat"], GN["hidden"]
    return dict(we=S((2 * F, Hd)), be=S((Hd,)), wn=S((F + Hd, F)), bn=S((F,)), wr=S((F, 1)))


def gnn_forward(p, h, senders, receivers):
    for _ in range(2):
        msg = jnp.concatenate([h[senders], h[receivers]], axis=-1)
        msg = jax.nn.relu(msg @ p["we"] + p["be"])
        agg = jax.ops.segment_sum(msg, receivers, num_segments=GN["nodes"])
        h = jnp.tanh(jnp.concatenate([h, agg], axis=-1) @ p["wn"] + p["bn"])
    return jnp.sum(h @ p["wr"])


def gnn_train_step(p, h, senders, receivers, target):
    loss, g = jax.value_and_grad(lambda p: (gnn_forward(p, h, senders, receivers) - target) ** 2)(p)
    return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), loss


# ----------------------------------------------------------------------------------------------
# Sorting family, scans, control flow, random numbers, dynamic slicing, einsum, fft
# ----------------------------------------------------------------------------------------------
def topk_sort(x, keys_i):
    vals, idx = lax.top_k(x, 5)
    s = jnp.sort(x, axis=-1)
    a = jnp.argsort(x, axis=0)
    m = jnp.argmax(x, axis=-1)
    mn = jnp.min(x, axis=0)
    k2, v2 = lax.sort((keys_i, x), dimension=1, num_keys=1)
    return vals, idx, s, a, m, mn, k2, v2


def cumulative(x, xi):
    return (
        jnp.cumsum(x, axis=1),
        jnp.cumprod(x, axis=0),
        lax.cummax(x, axis=1),
        jnp.cumsum(xi, axis=-1),
        jnp.cumsum(x[:, ::-1], axis=1)[:, ::-1],
    )


def control_flow(x, pred, idx, n):
    y = lax.cond(pred, lambda v: jnp.sin(v) * 2.0, lambda v: jnp.cos(v) - 1.0, x)
    y = lax.switch(idx, [lambda v: v + 1.0, lambda v: v * v, lambda v: jnp.exp(-v)], y)
    # fori_loop with a traced trip count: a plain while loop
    y = lax.fori_loop(0, n, lambda i, v: v * 0.9 + i.astype(f32), y)
    # fori_loop with static bounds: lowered through scan
    acc = lax.fori_loop(0, 5, lambda i, a: a + jnp.sum(y) * i, jnp.float32(0))

    # Newton iteration for sqrt until converged: data-dependent while
    def cond(s):
        it, r = s
        return jnp.logical_and(it < 50, jnp.max(jnp.abs(r * r - jnp.abs(y) - 1.0)) > 1e-4)

    def body(s):
        it, r = s
        return it + 1, 0.5 * (r + (jnp.abs(y) + 1.0) / r)

    _, r = lax.while_loop(cond, body, (0, jnp.ones_like(y)))
    return y, acc, r


def random_ops(seed, x):
    key = jax.random.key(seed)
    k1, k2, k3, k4, k5 = jax.random.split(key, 5)
    noise = jax.random.normal(k1, x.shape)
    u = jax.random.uniform(k2, x.shape, minval=-1.0, maxval=1.0)
    keep = jax.random.bernoulli(k3, 0.9, x.shape)
    dropped = jnp.where(keep, x / 0.9, 0.0)
    ints = jax.random.randint(k4, (16,), 0, 100)
    perm = jax.random.permutation(k5, 16)
    bits = jax.random.bits(k5, (8,), jnp.uint32)
    return dropped + noise * u, ints, perm, bits


def rng_bit_generator(state):
    new_state, bits = lax.rng_bit_generator(state, (4, 8), dtype=jnp.uint32)
    s2, fbits = lax.rng_bit_generator(
        new_state, (16,), dtype=jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_PHILOX
    )
    return s2, bits, fbits


def kv_cache_step(cache_k, cache_v, pos, q, k_new, v_new):
    """One decode step: write the new key/value at pos, attend over the valid prefix."""
    cache_k = lax.dynamic_update_slice(cache_k, k_new[None], (pos, 0))
    cache_v = lax.dynamic_update_slice(cache_v, v_new[None], (pos, 0))
    scores = cache_k @ q
    scores = jnp.where(jnp.arange(cache_k.shape[0]) <= pos, scores, -1e30)
    out = jax.nn.softmax(scores) @ cache_v
    window = lax.dynamic_slice(cache_k, (jnp.maximum(pos - 3, 0), 0), (4, cache_k.shape[1]))
    row = cache_v[pos]
    bumped = cache_v.at[pos].add(1.0)
    return cache_k, cache_v, out, window, row, bumped


def einsums(a, b, q, k, t, u, x, y):
    return (
        jnp.einsum("bij,bjk->bik", a, b),
        jnp.einsum("bhqd,bhkd->bhqk", q, k),
        jnp.einsum("abcd,cde->abe", t, u),
        jnp.einsum("bi,bi->b", x, y),
        jnp.einsum("i,j->ij", x[0], y[0]),
        jnp.einsum("bhqd->bqhd", q),
    )


def fft_ops(x, z):
    fz = jnp.fft.fft(z)
    iz = jnp.fft.ifft(fz * jnp.conj(fz))
    r = jnp.fft.rfft(x)
    back = jnp.fft.irfft(r * (1.0 + 0.5j), n=x.shape[-1])
    f2 = jnp.fft.fft2(z.reshape(4, 8))
    return jnp.abs(iz), jnp.angle(fz), jnp.real(f2) + jnp.imag(f2), back, (z * 1j).conj()


def bf16_of(params):
    return tree_cast(params, bf16)


# ----------------------------------------------------------------------------------------------
# The table of modules: name -> (function, abstract args, static argnums)
# ----------------------------------------------------------------------------------------------
def modules():
    gp, tok = gpt2_args()
    opt_state = (gp, gp, S((), i32))
    B, T = GPT["batch"], GPT["seq"]
    mlp = mlp_params()
    G = GN
    return {
        "gpt2_train": (gpt2_train_step, (gp, opt_state, tok, tok)),
        "gpt2_infer": (gpt2_infer, (gp, tok)),
        "gpt2_infer_bf16": (gpt2_infer, (bf16_of(gp), tok)),
        "mlp_train": (mlp_train_step, (mlp, S((32, 64)), S((32,), i32))),
        "mlp_infer": (mlp_forward, (mlp, S((32, 64)))),
        "mlp_bf16_train": (mlp_bf16_train_step, (mlp, S((32, 64)), S((32,), i32))),
        "cnn_train": (cnn_train_step, (cnn_params(), S((4, 16, 16, 3)), S((4,), i32))),
        "lstm_infer": (lstm_infer, (lstm_params(), S((10, 2, 8)))),
        "lstm_train": (lstm_train_step, (lstm_params(), S((10, 2, 8)), S((2,)))),
        "gnn_train": (
            gnn_train_step,
            (
                gnn_params(),
                S((G["nodes"], G["feat"])),
                S((G["edges"],), i32),
                S((G["edges"],), i32),
                S(()),
            ),
        ),
        "topk_sort": (topk_sort, (S((4, 32)), S((4, 32), i32))),
        "cumulative": (cumulative, (S((4, 16)), S((4, 16), i32))),
        "control_flow": (control_flow, (S((8,)), S((), jnp.bool_), S((), i32), S((), i32))),
        "random": (random_ops, (S((), u32), S((4, 8)))),
        "rng_bit_generator": (rng_bit_generator, (S((4,), u32),)),
        "kv_cache": (kv_cache_step, (S((T, 8)), S((T, 8)), S((), i32), S((8,)), S((8,)), S((8,)))),
        "kv_cache_bf16": (
            kv_cache_step,
            (
                S((T, 8), bf16),
                S((T, 8), bf16),
                S((), i32),
                S((8,), bf16),
                S((8,), bf16),
                S((8,), bf16),
            ),
        ),
        "einsum": (
            einsums,
            (
                S((B, 4, 5)),
                S((B, 5, 6)),
                S((B, 2, 3, 4)),
                S((B, 2, 7, 4)),
                S((2, 3, 4, 5)),
                S((4, 5, 6)),
                S((3, 7)),
                S((3, 7)),
            ),
        ),
        "fft": (fft_ops, (S((4, 16)), S((32,), jnp.complex64))),
    }


# Modules that also get a NAME.debuginfo.hlo (pre-optimization text with debug_info=True).
DEBUGINFO = ["gpt2_train", "cnn_train"]
DEFAULT_SUITE = [
    "gpt2_train",
    "gpt2_infer",
    "mlp_train",
    "cnn_train",
    "lstm_train",
    "gnn_train",
    "control_flow",
    "topk_sort",
]
# Dump files kept per dumped module: substrings of XLA's dump file names (first match wins).
DUMP_PICKS = {
    "mlp_train": [
        ".before_optimizations.txt",
        ".after_algsimp.",
        ".after_dce.",
        ".after_layout-assignment.",
        ".after_fusion.",
    ],
    "lstm_train": [
        ".after_while-loop-invariant-code-motion.",
        ".after_simplify-while-loops.",
        ".after_cse.",
        ".after_while-loop-trip-count-annotator.",
        ".after_removing_unnecessary_copies.",
        ".cpu_after_optimizations.txt",
    ],
}
DUMPED = list(DUMP_PICKS)


def normalize(text: str) -> str:
    """Makes absolute paths of this checkout in debug metadata relative to the repo root."""
    return text.replace(str(REPO) + os.sep, "")


def write_text(path: Path, text: str) -> Path:
    data = normalize(text).encode()
    if len(data) > GZIP_OVER:
        path = path.with_name(path.name + ".gz")
        with open(path, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
                gz.write(data)
    else:
        path.write_bytes(data)
    return path


def lower(name):
    fn, args = modules()[name]
    return jax.jit(fn).lower(*args)


def clean_outputs():
    for p in HERE.iterdir():
        if p.is_file() and (
            p.name.endswith((".hlo", ".hlo.gz")) or p.name in ("VERSIONS.json", "default_suite.txt")
        ):
            p.unlink()
    shutil.rmtree(HERE / "dumps", ignore_errors=True)


def pick_dumps(name: str, dump_dir: Path, out_dir: Path) -> list[str]:
    fn_name = modules()[name][0].__name__
    # Only HLO module texts of this jit (not buffer assignments, memory reports, LLVM IR, ...).
    pat = re.compile(rf"module_\d+\.jit_{re.escape(fn_name)}\.(.*\.txt)$")
    candidates = []
    for p in sorted(dump_dir.iterdir()):
        m = pat.match(p.name)
        if m and p.read_text(errors="replace").startswith("HloModule"):
            candidates.append((p, m.group(1)))
    written = []
    for pick in DUMP_PICKS[name]:
        hit = next(((p, rest) for p, rest in candidates if pick in "." + rest), None)
        if hit is None:
            print(f"warning: no dump of {name} matches {pick!r}", file=sys.stderr)
            continue
        # module_0000.jit_mlp_train_step.0009.simplification.after_dce.before_gather_expander.txt
        # -> mlp_train.0009.simplification.after_dce.before_gather_expander.txt
        out = write_text(out_dir / f"{name}.{hit[1]}", hit[0].read_text())
        written.append(out.name)
    return written


def run_dump(name: str, dump_dir: Path) -> None:
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_dump_to={dump_dir} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=.*"
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--compile-only", name], env=env, check=True
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compile-only", metavar="NAME", help="(internal) lower+compile one module")
    ap.add_argument("--only", nargs="*", help="generate only these modules (no cleanup)")
    args = ap.parse_args()

    if args.compile_only:
        lower(args.compile_only).compile()
        return

    names = list(modules())
    if args.only:
        names = args.only
    else:
        clean_outputs()
    produced = {}
    for name in names:
        lowered = lower(name)
        pre = write_text(HERE / f"{name}.hlo", lowered.as_text(dialect="hlo"))
        opt = write_text(HERE / f"{name}.optimized.hlo", lowered.compile().as_text())
        produced[name] = [pre.name, opt.name]
        if name in DEBUGINFO:
            dbg = write_text(
                HERE / f"{name}.debuginfo.hlo", lowered.as_text(dialect="hlo", debug_info=True)
            )
            produced[name].append(dbg.name)
        print(f"{name}: {', '.join(produced[name])}", flush=True)

    dumps = {}
    if not args.only:
        (HERE / "dumps").mkdir()
        for name in DUMPED:
            with tempfile.TemporaryDirectory() as tmp:
                run_dump(name, Path(tmp))
                dumps[name] = pick_dumps(name, Path(tmp), HERE / "dumps")
            print(f"dumps/{name}: {len(dumps[name])} files", flush=True)

        suite = [produced[n][0] for n in DEFAULT_SUITE]
        (HERE / "default_suite.txt").write_text(
            "# Default benchmark suite of scripts/quickstart.sh; paths relative to the repository"
            " root.\n# Written by datasets/smoke/generate.py.\n"
            + "".join(f"datasets/smoke/{f}\n" for f in suite)
        )

        import jaxlib
        import numpy

        versions = {
            "jax": jax.__version__,
            "jaxlib": jaxlib.__version__,
            "numpy": numpy.__version__,
            "python": ".".join(map(str, sys.version_info[:3])),
            "backend": jax.default_backend(),
            "generator": "datasets/smoke/generate.py",
            "pre_optimization": 'jax.jit(f).lower(*args).as_text(dialect="hlo")',
            "debuginfo": 'jax.jit(f).lower(*args).as_text(dialect="hlo", debug_info=True)',
            "optimized": "jax.jit(f).lower(*args).compile().as_text()",
            "dumps": "XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text "
            "--xla_dump_hlo_pass_re=.* (a sample of the files, renamed)",
            "notes": "absolute paths of the generating checkout are made relative to the repo "
            "root; files over 200 KB are gzip-compressed (.gz, no time stamp)",
            "modules": produced,
            "dump_files": dumps,
        }
        (HERE / "VERSIONS.json").write_text(json.dumps(versions, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
