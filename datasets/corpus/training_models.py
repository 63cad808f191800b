"""More model families in plain JAX, for the generated training set (generate.py --training).

They widen what a learned pass orderer trains on beyond the corpus's ten training families, with
structure those families lack: loops of a fixed-step ODE solver (lax.fori_loop), parallel scans
(lax.associative_scan), transposed convolutions, coupling flows, set pooling with masks, windowed
attention with shifted windows (rolls and window reshapes), causal linear attention (cumulative
sums), cross-attention to a learned latent array, volume rendering (cumulative products along rays),
vector quantization (argmin over a codebook), contrastive losses over a batch similarity matrix, a
GRU encoder-decoder with additive attention, and depthwise 1-D convolutions. None of them is the
architecture of a held-out family.

Every family provides init / loss / infer / batch as models.py describes; training steps are
models.make_train_step's (global-norm clipping, AdamW or SGD with momentum), bf16 is mixed precision
(f32 master weights cast for the forward pass). Importing this module adds the families to
models.FAMILIES, so models.build lowers them.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import lax

import models
from models import (
    DTYPES,
    Keys,
    S,
    attend,
    cast_floats,
    conv,
    cross_entropy,
    dense,
    dense_init,
    f32,
    i32,
    layernorm,
    ln_init,
    maybe_remat,
    mha_init,
    normal,
    self_attention,
    split_heads,
    merge_heads,
)

DN = models.DN


def _mlp_init(k, sizes):
    return [dense_init(k, a, b) for a, b in zip(sizes[:-1], sizes[1:])]


def _prenorm_blocks(k, d, layers, hidden):
    """Parameters of `layers` pre-norm transformer blocks: attention, then an MLP of width
    `hidden`."""
    return [
        {
            "ln1": ln_init(d),
            "attn": mha_init(k, d),
            "ln2": ln_init(d),
            "ff": _mlp_init(k, [d, hidden, d]),
        }
        for _ in range(layers)
    ]


def _mlp(layers, x, act=jax.nn.relu):
    for i, p in enumerate(layers):
        x = dense(p, x)
        if i < len(layers) - 1:
            x = act(x)
    return x


def _images(cfg, channels=3):
    return S((cfg["batch"], cfg["res"], cfg["res"], channels))


def _classify_batch(x):
    def batch(cfg):
        return {"x": x(cfg), "labels": S((cfg["batch"],), i32)}

    return batch


def _classify_loss(forward):
    def loss(params, batch, cfg):
        return cross_entropy(forward(params, batch["x"], cfg), batch["labels"])

    return loss


def _classify_infer(forward):
    def infer(params, batch, cfg):
        logits = forward(params, batch["x"], cfg)
        return jax.nn.softmax(logits.astype(f32), -1), jnp.argmax(logits, -1)

    return infer


def _lm_batch(cfg):
    return {
        "tokens": S((cfg["batch"], cfg["seq"]), i32),
        "targets": S((cfg["batch"], cfg["seq"]), i32),
    }


def _lm_loss(forward):
    def loss(params, batch, cfg):
        return cross_entropy(forward(params, batch["tokens"], cfg), batch["targets"])

    return loss


def _lm_infer(forward):
    def infer(params, batch, cfg):
        logits = forward(params, batch["tokens"], cfg)
        return jax.nn.log_softmax(logits[:, -1].astype(f32), -1), jnp.argmax(logits, -1)

    return infer


# --- residual MLP classifier
def mlp_init(cfg, key):
    k = Keys(key)
    w = cfg["width"]
    return {
        "inp": dense_init(k, cfg["features"], w),
        "blocks": [
            {"ln": ln_init(w), "fc1": dense_init(k, w, 2 * w), "fc2": dense_init(k, 2 * w, w)}
            for _ in range(cfg["layers"])
        ],
        "out": dense_init(k, w, cfg["classes"]),
    }


def mlp_forward(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    h = dense(params["inp"], x.astype(DTYPES[cfg["dtype"]]))
    block = maybe_remat(
        lambda b, h: h + dense(b["fc2"], jax.nn.silu(dense(b["fc1"], layernorm(b["ln"], h)))), cfg
    )
    for b in params["blocks"]:
        h = block(b, h)
    return dense(params["out"], h)


# --- VGG-style CNN
def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def vgg_init(cfg, key):
    k = Keys(key)
    convs, cin = [], 3
    for w in cfg["widths"]:
        convs.append([normal(k, (3, 3, cin, w), 0.1), normal(k, (3, 3, w, w), 0.1)])
        cin = w
    side = cfg["res"] >> len(cfg["widths"])
    return {"convs": convs, "head": _mlp_init(k, [cin * side * side, 64, cfg["classes"]])}


def vgg_forward(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    x = x.astype(DTYPES[cfg["dtype"]])
    for w1, w2 in params["convs"]:
        x = max_pool(jax.nn.relu(conv(jax.nn.relu(conv(x, w1)), w2)))
    return _mlp(params["head"], x.reshape(x.shape[0], -1))


# --- convolutional autoencoder (strided and transposed convolutions)
def conv_ae_init(cfg, key):
    k = Keys(key)
    enc, dec, cin = [], [], 3
    for w in cfg["widths"]:
        enc.append(normal(k, (3, 3, cin, w), 0.1))
        cin = w
    for w in reversed([3] + list(cfg["widths"][:-1])):
        dec.append(normal(k, (3, 3, cin, w), 0.1))
        cin = w
    return {"enc": enc, "dec": dec}


def conv_ae_forward(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    h = x.astype(DTYPES[cfg["dtype"]])
    for w in params["enc"]:
        h = jax.nn.gelu(conv(h, w, stride=2))
    for i, w in enumerate(params["dec"]):
        h = lax.conv_transpose(h, w.astype(h.dtype), (2, 2), "SAME", dimension_numbers=DN)
        h = jax.nn.gelu(h) if i < len(params["dec"]) - 1 else jax.nn.sigmoid(h)
    return h


def conv_ae_loss(params, batch, cfg):
    recon = conv_ae_forward(params, batch["x"], cfg).astype(f32)
    return jnp.mean(jnp.square(recon - batch["x"]))


def conv_ae_infer(params, batch, cfg):
    recon = conv_ae_forward(params, batch["x"], cfg)
    return recon, jnp.mean(jnp.square(recon.astype(f32) - batch["x"]), axis=(1, 2, 3))


# --- neural ODE: fixed-step RK4 in a loop
def node_init(cfg, key):
    k = Keys(key)
    d = cfg["width"]
    return {
        "inp": dense_init(k, cfg["features"], d),
        "field": _mlp_init(k, [d + 1, 2 * d, d]),
        "out": dense_init(k, d, cfg["classes"]),
    }


def node_forward(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    h = jnp.tanh(dense(params["inp"], x.astype(DTYPES[cfg["dtype"]])))
    dt = 1.0 / cfg["steps"]

    def field(t, y):
        tt = jnp.full(y.shape[:-1] + (1,), t, y.dtype)
        return jnp.tanh(_mlp(params["field"], jnp.concatenate([y, tt], -1), jnp.tanh))

    def rk4(i, y):
        t = (i * dt).astype(y.dtype)
        k1 = field(t, y)
        k2 = field(t + dt / 2, y + dt / 2 * k1)
        k3 = field(t + dt / 2, y + dt / 2 * k2)
        k4 = field(t + dt, y + dt * k3)
        return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    h = lax.fori_loop(0, cfg["steps"], rk4, h)
    return dense(params["out"], h)


# --- RealNVP: affine coupling flow
def realnvp_init(cfg, key):
    k = Keys(key)
    d, half = cfg["features"], cfg["features"] // 2
    return [
        {"net": _mlp_init(k, [half, cfg["width"], cfg["width"], 2 * (d - half)])}
        for _ in range(cfg["couplings"])
    ]


def realnvp_log_prob(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    z = x.astype(DTYPES[cfg["dtype"]])
    half = cfg["features"] // 2
    log_det = jnp.zeros(x.shape[0], f32)
    for i, c in enumerate(params):
        a, b = (z[:, :half], z[:, half:]) if i % 2 == 0 else (z[:, -half:], z[:, :-half])
        shift, raw = jnp.split(_mlp(c["net"], a, jnp.tanh), 2, axis=-1)
        scale = jnp.tanh(raw)
        b = b * jnp.exp(scale) + shift
        log_det = log_det + jnp.sum(scale.astype(f32), -1)
        z = jnp.concatenate([a, b], -1) if i % 2 == 0 else jnp.concatenate([b, a], -1)
    zf = z.astype(f32)
    base = -0.5 * jnp.sum(zf * zf, -1) - 0.5 * cfg["features"] * math.log(2 * math.pi)
    return base + log_det


def realnvp_loss(params, batch, cfg):
    return -jnp.mean(realnvp_log_prob(params, batch["x"], cfg))


def realnvp_infer(params, batch, cfg):
    return (realnvp_log_prob(params, batch["x"], cfg),)


def realnvp_batch(cfg):
    return {"x": S((cfg["batch"], cfg["features"]))}


# --- Perceiver: cross-attention from a latent array
def perceiver_init(cfg, key):
    k = Keys(key)
    d = cfg["d"]
    blocks = _prenorm_blocks(k, d, cfg["layers"], 2 * d)
    return {
        "inp": dense_init(k, cfg["features"], d),
        "latents": normal(k, (cfg["latents"], d)),
        "cross": mha_init(k, d, fused=False),
        "ln_x": ln_init(d),
        "ln_z": ln_init(d),
        "blocks": blocks,
        "out": dense_init(k, d, cfg["classes"]),
    }


def perceiver_forward(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    h = cfg["heads"]
    x = layernorm(params["ln_x"], dense(params["inp"], x.astype(DTYPES[cfg["dtype"]])))
    z = jnp.broadcast_to(params["latents"], (x.shape[0],) + params["latents"].shape)
    c = params["cross"]
    q = split_heads(dense(c["q"], layernorm(params["ln_z"], z)), h)
    y = attend(q, split_heads(dense(c["k"], x), h), split_heads(dense(c["v"], x), h))
    z = z + dense(c["o"], merge_heads(y))
    for b in params["blocks"]:
        z = z + self_attention(b["attn"], layernorm(b["ln1"], z), h)
        z = z + _mlp(b["ff"], layernorm(b["ln2"], z), jax.nn.gelu)
    return dense(params["out"], z.mean(1))


# --- Deep Sets with one set-attention block and a mask of valid elements
def deepsets_init(cfg, key):
    k = Keys(key)
    d = cfg["d"]
    return {
        "phi": _mlp_init(k, [cfg["features"], d, d]),
        "sab": mha_init(k, d),
        "ln": ln_init(d),
        "rho": _mlp_init(k, [d, d, cfg["classes"]]),
    }


def deepsets_forward(params, x, cfg, mask):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    h = _mlp(params["phi"], x.astype(DTYPES[cfg["dtype"]]))
    pair = (mask[:, :, None] & mask[:, None, :])[:, None]
    h = h + self_attention(params["sab"], layernorm(params["ln"], h), cfg["heads"], pair)
    m = mask[..., None].astype(h.dtype)
    pooled = jnp.sum(h * m, 1) / jnp.maximum(jnp.sum(m, 1), 1)
    return _mlp(params["rho"], pooled)


def deepsets_loss(params, batch, cfg):
    return cross_entropy(deepsets_forward(params, batch["x"], cfg, batch["mask"]), batch["labels"])


def deepsets_infer(params, batch, cfg):
    return (jnp.argmax(deepsets_forward(params, batch["x"], cfg, batch["mask"]), -1),)


def deepsets_batch(cfg):
    return {
        "x": S((cfg["batch"], cfg["set"], cfg["features"])),
        "mask": S((cfg["batch"], cfg["set"]), jnp.bool_),
        "labels": S((cfg["batch"],), i32),
    }


# --- NeRF-style MLP with positional encoding and volume rendering
def nerf_init(cfg, key):
    k = Keys(key)
    enc = 3 * 2 * cfg["freqs"] + 3
    return {"trunk": _mlp_init(k, [enc] + [cfg["width"]] * cfg["layers"] + [4])}


def nerf_render(params, origins, dirs, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    t = jnp.linspace(0.1, 4.0, cfg["samples"], dtype=f32)
    pts = origins[:, None, :] + t[None, :, None] * dirs[:, None, :]  # [R, S, 3]
    scales = 2.0 ** jnp.arange(cfg["freqs"], dtype=f32)
    ang = (pts[..., None, :] * scales[:, None]).reshape(pts.shape[:-1] + (-1,))
    enc = jnp.concatenate([pts, jnp.sin(ang), jnp.cos(ang)], -1).astype(DTYPES[cfg["dtype"]])
    out = _mlp(params["trunk"], enc).astype(f32)
    rgb, sigma = jax.nn.sigmoid(out[..., :3]), jax.nn.softplus(out[..., 3])
    delta = jnp.concatenate([t[1:] - t[:-1], jnp.full((1,), 1e3, f32)])
    alpha = 1 - jnp.exp(-sigma * delta)
    trans = jnp.cumprod(
        jnp.concatenate([jnp.ones_like(alpha[:, :1]), 1 - alpha[:, :-1] + 1e-10], -1), -1
    )
    weights = alpha * trans
    return jnp.sum(weights[..., None] * rgb, 1), jnp.sum(weights * t, -1)


def nerf_loss(params, batch, cfg):
    color, _ = nerf_render(params, batch["origins"], batch["dirs"], cfg)
    return jnp.mean(jnp.square(color - batch["y"]))


def nerf_infer(params, batch, cfg):
    return nerf_render(params, batch["origins"], batch["dirs"], cfg)


def nerf_batch(cfg):
    return {"origins": S((cfg["rays"], 3)), "dirs": S((cfg["rays"], 3)), "y": S((cfg["rays"], 3))}


# --- causal linear attention (cumulative sums instead of a softmax)
def linattn_init(cfg, key):
    k = Keys(key)
    d = cfg["d"]
    blocks = _prenorm_blocks(k, d, cfg["layers"], 4 * d)
    return {"emb": normal(k, (cfg["vocab"], d)), "blocks": blocks, "lnf": ln_init(d)}


def linear_attention(p, x, h):
    q, k, v = (split_heads(t, h) for t in jnp.split(dense(p["qkv"], x), 3, axis=-1))
    q, k = jax.nn.elu(q) + 1, jax.nn.elu(k) + 1
    kv = jnp.cumsum(jnp.einsum("bhtd,bhte->bhtde", k.astype(f32), v.astype(f32)), axis=2)
    num = jnp.einsum("bhtd,bhtde->bhte", q.astype(f32), kv)
    den = jnp.einsum("bhtd,bhtd->bht", q.astype(f32), jnp.cumsum(k.astype(f32), axis=2))
    return dense(p["o"], merge_heads((num / (den[..., None] + 1e-6)).astype(x.dtype)))


def linattn_forward(params, tokens, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    x = params["emb"][tokens]
    for b in params["blocks"]:
        x = x + linear_attention(b["attn"], layernorm(b["ln1"], x), cfg["heads"])
        x = x + _mlp(b["ff"], layernorm(b["ln2"], x), jax.nn.gelu)
    return layernorm(params["lnf"], x) @ params["emb"].T


# --- Swin-style windowed attention with shifted windows
def swin_init(cfg, key):
    k = Keys(key)
    d = cfg["d"]
    blocks = [
        {
            "ln1": ln_init(d),
            "attn": mha_init(k, d),
            "bias": normal(k, (cfg["heads"], cfg["window"] ** 2, cfg["window"] ** 2)),
            "ln2": ln_init(d),
            "ff": _mlp_init(k, [d, 4 * d, d]),
        }
        for _ in range(cfg["layers"])
    ]
    return {
        "patch": normal(k, (cfg["patch"], cfg["patch"], 3, d), 0.1),
        "blocks": blocks,
        "ln": ln_init(d),
        "out": dense_init(k, d, cfg["classes"]),
    }


def window_attention(b, x, cfg, shift):
    B, Hh, W, C = x.shape
    w = cfg["window"]
    if shift:
        x = jnp.roll(x, (-(w // 2), -(w // 2)), axis=(1, 2))
    win = x.reshape(B, Hh // w, w, W // w, w, C).transpose(0, 1, 3, 2, 4, 5).reshape(-1, w * w, C)
    y = self_attention(b["attn"], win, cfg["heads"], bias=b["bias"][None])
    y = y.reshape(B, Hh // w, W // w, w, w, C).transpose(0, 1, 3, 2, 4, 5).reshape(B, Hh, W, C)
    if shift:
        y = jnp.roll(y, (w // 2, w // 2), axis=(1, 2))
    return y


def swin_forward(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    x = conv(x.astype(DTYPES[cfg["dtype"]]), params["patch"], stride=cfg["patch"], padding="VALID")
    for i, b in enumerate(params["blocks"]):
        x = x + window_attention(b, layernorm(b["ln1"], x), cfg, shift=i % 2 == 1)
        x = x + _mlp(b["ff"], layernorm(b["ln2"], x), jax.nn.gelu)
    return dense(params["out"], layernorm(params["ln"], x).mean((1, 2)))


# --- GRU encoder-decoder with additive (Bahdanau) attention
def seq2seq_init(cfg, key):
    k = Keys(key)
    E, H, V = cfg["embed"], cfg["hidden"], cfg["vocab"]

    def gru(din):
        return {
            "wx": normal(k, (din, 3 * H), 1 / math.sqrt(din)),
            "wh": normal(k, (H, 3 * H), 1 / math.sqrt(H)),
            "b": jnp.zeros((3 * H,)),
        }

    return {
        "src_emb": normal(k, (V, E), 0.1),
        "tgt_emb": normal(k, (V, E), 0.1),
        "enc": gru(E),
        "dec": gru(E + H),
        "wq": dense_init(k, H, H, bias=False),
        "wk": dense_init(k, H, H, bias=False),
        "v": normal(k, (H,), 0.1),
        "out": dense_init(k, 2 * H, V),
    }


def seq2seq_forward(params, batch, cfg):
    dt = DTYPES[cfg["dtype"]]
    params = cast_floats(params, dt)
    B, H = batch["src"].shape[0], cfg["hidden"]
    gru = models.gru_cell
    h0 = (jnp.zeros((B, H), dt),)
    _, enc = lax.scan(lambda c, x: gru(params["enc"], c, x), h0, params["src_emb"][batch["src"].T])
    keys = dense(params["wk"], enc)  # [S, B, H]

    def dec_step(carry, y):
        (h,) = carry
        e = jnp.tanh(keys + dense(params["wq"], h)[None]) @ params["v"]  # [S, B]
        a = jax.nn.softmax(e.astype(f32), 0).astype(dt)
        ctx = jnp.sum(a[..., None] * enc, 0)
        (h,), _ = gru(params["dec"], (h,), jnp.concatenate([y, ctx], -1))
        return (h,), jnp.concatenate([h, ctx], -1)

    _, outs = lax.scan(maybe_remat(dec_step, cfg), (enc[-1],), params["tgt_emb"][batch["tgt_in"].T])
    return dense(params["out"], outs.transpose(1, 0, 2))


def seq2seq_loss(params, batch, cfg):
    return cross_entropy(seq2seq_forward(params, batch, cfg), batch["targets"])


def seq2seq_infer(params, batch, cfg):
    return (jnp.argmax(seq2seq_forward(params, batch, cfg), -1),)


def seq2seq_batch(cfg):
    return {
        "src": S((cfg["batch"], cfg["src_len"]), i32),
        "tgt_in": S((cfg["batch"], cfg["tgt_len"]), i32),
        "targets": S((cfg["batch"], cfg["tgt_len"]), i32),
    }


# --- SimCLR-style contrastive learning (NT-Xent over two views)
def simclr_init(cfg, key):
    k = Keys(key)
    w = cfg["width"]
    return {
        "enc": _mlp_init(k, [cfg["features"]] + [w] * cfg["layers"]),
        "proj": _mlp_init(k, [w, w, cfg["proj"]]),
    }


def simclr_embed(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    h = jax.nn.relu(_mlp(params["enc"], x.astype(DTYPES[cfg["dtype"]])))
    z = _mlp(params["proj"], h).astype(f32)
    return h, z / jnp.linalg.norm(z, axis=-1, keepdims=True)


def simclr_loss(params, batch, cfg):
    _, z1 = simclr_embed(params, batch["x"], cfg)
    _, z2 = simclr_embed(params, batch["x2"], cfg)
    z = jnp.concatenate([z1, z2], 0)
    n = z1.shape[0]
    sim = z @ z.T / cfg["temperature"]
    sim = jnp.where(jnp.eye(2 * n, dtype=bool), -1e9, sim)
    positives = jnp.concatenate([jnp.arange(n, 2 * n), jnp.arange(n)])
    return cross_entropy(sim, positives)


def simclr_infer(params, batch, cfg):
    return simclr_embed(params, batch["x"], cfg)


def simclr_batch(cfg):
    return {"x": S((cfg["batch"], cfg["features"])), "x2": S((cfg["batch"], cfg["features"]))}


# --- linear recurrent unit: a diagonal recurrence computed by a parallel scan
def lru_init(cfg, key):
    k = Keys(key)
    d, n = cfg["d"], cfg["state"]
    layers = [
        {
            "ln": ln_init(d),
            "nu": normal(k, (n,), 0.5),
            "b": dense_init(k, d, n, bias=False),
            "c": dense_init(k, n, d, bias=False),
            "ff": _mlp_init(k, [d, 2 * d, d]),
        }
        for _ in range(cfg["layers"])
    ]
    return {"emb": normal(k, (cfg["vocab"], d)), "layers": layers, "lnf": ln_init(d)}


def lru_forward(params, tokens, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    x = params["emb"][tokens]  # [B, T, d]
    for p in params["layers"]:
        u = dense(p["b"], layernorm(p["ln"], x)).astype(f32)
        a = jnp.broadcast_to(jnp.exp(-jnp.exp(p["nu"].astype(f32))), u.shape)

        def combine(left, right):
            return right[0] * left[0], right[0] * left[1] + right[1]

        _, h = lax.associative_scan(combine, (a, u), axis=1)
        x = x + dense(p["c"], h.astype(x.dtype))
        x = x + _mlp(p["ff"], x, jax.nn.gelu)
    return layernorm(params["lnf"], x) @ params["emb"].T


# --- VQ autoencoder: nearest codebook entry, straight-through gradient
def vq_init(cfg, key):
    k = Keys(key)
    return {
        "enc": _mlp_init(k, [cfg["features"], cfg["width"], cfg["code_dim"]]),
        "codebook": normal(k, (cfg["codes"], cfg["code_dim"]), 1.0),
        "dec": _mlp_init(k, [cfg["code_dim"], cfg["width"], cfg["features"]]),
    }


def vq_forward(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    z = _mlp(params["enc"], x.astype(DTYPES[cfg["dtype"]])).astype(f32)
    book = params["codebook"].astype(f32)
    dist = jnp.sum(z * z, -1, keepdims=True) - 2 * z @ book.T + jnp.sum(book * book, -1)
    idx = jnp.argmin(dist, -1)
    q = book[idx]
    st = z + lax.stop_gradient(q - z)
    recon = _mlp(params["dec"], st.astype(DTYPES[cfg["dtype"]])).astype(f32)
    return recon, z, q, idx


def vq_loss(params, batch, cfg):
    recon, z, q, _ = vq_forward(params, batch["x"], cfg)
    commit = jnp.mean(jnp.square(z - lax.stop_gradient(q)))
    book = jnp.mean(jnp.square(lax.stop_gradient(z) - q))
    return jnp.mean(jnp.square(recon - batch["x"])) + book + 0.25 * commit


def vq_infer(params, batch, cfg):
    recon, _, _, idx = vq_forward(params, batch["x"], cfg)
    return recon, idx


def vq_batch(cfg):
    return {"x": S((cfg["batch"], cfg["features"]))}


# --- Conformer block: feed-forward halves, self-attention, a depthwise 1-D convolution
def conformer_init(cfg, key):
    k = Keys(key)
    d = cfg["d"]
    blocks = [
        {
            "ff1": {"ln": ln_init(d), "mlp": _mlp_init(k, [d, 4 * d, d])},
            "ln_a": ln_init(d),
            "attn": mha_init(k, d),
            "ln_c": ln_init(d),
            "pw1": dense_init(k, d, 2 * d),
            "dw": normal(k, (cfg["kernel"], 1, d), 0.1),
            "pw2": dense_init(k, d, d),
            "ff2": {"ln": ln_init(d), "mlp": _mlp_init(k, [d, 4 * d, d])},
            "ln": ln_init(d),
        }
        for _ in range(cfg["layers"])
    ]
    return {
        "inp": dense_init(k, cfg["features"], d),
        "blocks": blocks,
        "out": dense_init(k, d, cfg["classes"]),
    }


def conformer_forward(params, x, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    x = dense(params["inp"], x.astype(DTYPES[cfg["dtype"]]))
    for b in params["blocks"]:
        x = x + 0.5 * _mlp(b["ff1"]["mlp"], layernorm(b["ff1"]["ln"], x), jax.nn.silu)
        x = x + self_attention(b["attn"], layernorm(b["ln_a"], x), cfg["heads"])
        c = jax.nn.glu(dense(b["pw1"], layernorm(b["ln_c"], x)), axis=-1)
        c = lax.conv_general_dilated(
            c,
            b["dw"].astype(c.dtype),
            (1,),
            "SAME",
            dimension_numbers=("NWC", "WIO", "NWC"),
            feature_group_count=c.shape[-1],
        )
        x = x + dense(b["pw2"], jax.nn.silu(c))
        x = x + 0.5 * _mlp(b["ff2"]["mlp"], layernorm(b["ff2"]["ln"], x), jax.nn.silu)
        x = layernorm(b["ln"], x)
    return dense(params["out"], x.mean(1))


def _classifier(init, forward, inputs):
    """The FAMILIES entry of a classifier: cross-entropy on "labels", softmax and argmax."""
    return (init, _classify_loss(forward), _classify_infer(forward), _classify_batch(inputs), False)


def _language_model(init, forward):
    return (init, _lm_loss(forward), _lm_infer(forward), _lm_batch, False)


def _vectors(cfg):
    return S((cfg["batch"], cfg["features"]))


FAMILIES = {
    # name: (init, loss, infer, batch, has_state)
    "mlp": _classifier(mlp_init, mlp_forward, _vectors),
    "vgg": _classifier(vgg_init, vgg_forward, _images),
    "conv_ae": (conv_ae_init, conv_ae_loss, conv_ae_infer, lambda c: {"x": _images(c)}, False),
    "neural_ode": _classifier(node_init, node_forward, _vectors),
    "realnvp": (realnvp_init, realnvp_loss, realnvp_infer, realnvp_batch, False),
    "perceiver": _classifier(
        perceiver_init, perceiver_forward, lambda c: S((c["batch"], c["inputs"], c["features"]))
    ),
    "deepsets": (deepsets_init, deepsets_loss, deepsets_infer, deepsets_batch, False),
    "nerf": (nerf_init, nerf_loss, nerf_infer, nerf_batch, False),
    "linattn": _language_model(linattn_init, linattn_forward),
    "swin": _classifier(swin_init, swin_forward, _images),
    "seq2seq": (seq2seq_init, seq2seq_loss, seq2seq_infer, seq2seq_batch, False),
    "simclr": (simclr_init, simclr_loss, simclr_infer, simclr_batch, False),
    "lru": _language_model(lru_init, lru_forward),
    "vq": (vq_init, vq_loss, vq_infer, vq_batch, False),
    "conformer": _classifier(
        conformer_init, conformer_forward, lambda c: S((c["batch"], c["seq"], c["features"]))
    ),
}
models.FAMILIES.update(FAMILIES)
build = models.build
