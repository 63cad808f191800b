"""Transformer variants the corpus's families do not cover, in plain JAX: a Gemma-2-style decoder
(local sliding-window and global attention layers in turn, logit soft-capping, GeGLU, RMSNorm
before and after each block, tied embeddings) as a bf16 mixed-precision training step and as bf16
inference, a Mistral-style sliding-window decoder, a ViT in bf16 inference and an image encoder
with windowed attention and a global block (the shape of a promptable segmentation model's).
Written to run on JAX 0.4.13 too. Run it under `hlogym harvest` (datasets/probes/generate.py does,
with the pinned JAX and with JAX 0.4.13).
"""

import jax
import jax.numpy as jnp

bf16 = jnp.bfloat16


def normal(key, shape, std=0.02):
    return jax.random.normal(key, shape) * std


def rmsnorm(g, x, eps=1e-6):
    x32 = x.astype(jnp.float32)
    x32 = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + eps)
    return (x32 * (1.0 + g)).astype(x.dtype)


def layernorm(p, x, eps=1e-6):
    x32 = x.astype(jnp.float32)
    mean = jnp.mean(x32, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x32 - mean), axis=-1, keepdims=True)
    return ((x32 - mean) * jax.lax.rsqrt(var + eps) * p["g"] + p["b"]).astype(x.dtype)


def attention(q, k, v, mask, softcap=None):
    """q: [B, T, H, D]; k, v: [B, S, KH, D] (grouped: H is a multiple of KH)."""
    groups = q.shape[2] // k.shape[2]
    k = jnp.repeat(k, groups, axis=2)
    v = jnp.repeat(v, groups, axis=2)
    logits = jnp.einsum("bthd,bshd->bhts", q, k).astype(jnp.float32) / jnp.sqrt(q.shape[-1])
    if softcap is not None:
        logits = jnp.tanh(logits / softcap) * softcap
    logits = jnp.where(mask, logits, -1e30)
    probs = jax.nn.softmax(logits, axis=-1).astype(v.dtype)
    return jnp.einsum("bhts,bshd->bthd", probs, v)


def rope(x, positions, base=10000.0):
    d = x.shape[-1] // 2
    freq = 1.0 / base ** (jnp.arange(d) / d)
    angle = positions[:, None] * freq[None, :]
    sin, cos = jnp.sin(angle)[None, :, None, :], jnp.cos(angle)[None, :, None, :]
    x1, x2 = x[..., :d].astype(jnp.float32), x[..., d:].astype(jnp.float32)
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).astype(x.dtype)


def decoder_init(key, vocab, d, layers, heads, kv_heads, ff):
    hd = d // heads
    keys = iter(jax.random.split(key, 1 + 6 * layers))
    blocks = []
    for _ in range(layers):
        blocks.append(
            {
                "q": normal(next(keys), (d, heads * hd)),
                "kv": normal(next(keys), (d, 2 * kv_heads * hd)),
                "o": normal(next(keys), (heads * hd, d)),
                "gate": normal(next(keys), (d, ff)),
                "up": normal(next(keys), (d, ff)),
                "down": normal(next(keys), (ff, d)),
                "norms": jnp.zeros((4, d)),
            }
        )
    return {"embed": normal(next(keys), (vocab, d)), "blocks": blocks, "final": jnp.zeros(d)}


def decoder_logits(params, tokens, heads, kv_heads, window, gemma):
    """Gemma-2-style when `gemma` (local and global layers in turn, soft caps, post-norms);
    else Mistral-style (every layer local, SiLU gate)."""
    B, T = tokens.shape
    d = params["embed"].shape[1]
    hd = d // heads
    x = params["embed"][tokens] * (jnp.sqrt(d) if gemma else 1.0)
    pos = jnp.arange(T)
    causal = pos[:, None] >= pos[None, :]
    local = causal & (pos[:, None] - pos[None, :] < window)
    for i, blk in enumerate(params["blocks"]):
        mask = local if (not gemma or i % 2 == 0) else causal
        h = rmsnorm(blk["norms"][0], x)
        q = (h @ blk["q"]).reshape(B, T, heads, hd)
        kv = (h @ blk["kv"]).reshape(B, T, 2, kv_heads, hd)
        q, k = rope(q, pos), rope(kv[:, :, 0], pos)
        a = attention(q, k, kv[:, :, 1], mask, softcap=50.0 if gemma else None)
        a = a.reshape(B, T, heads * hd) @ blk["o"]
        x = x + (rmsnorm(blk["norms"][1], a) if gemma else a)
        h = rmsnorm(blk["norms"][2], x)
        act = jax.nn.gelu(h @ blk["gate"]) if gemma else jax.nn.silu(h @ blk["gate"])
        f = (act * (h @ blk["up"])) @ blk["down"]
        x = x + (rmsnorm(blk["norms"][3], f) if gemma else f)
    logits = (rmsnorm(params["final"], x) @ params["embed"].T).astype(jnp.float32)
    return jnp.tanh(logits / 30.0) * 30.0 if gemma else logits


def lm_loss(params, tokens, **kw):
    logits = decoder_logits(params, tokens[:, :-1], **kw)
    labels = jax.nn.one_hot(tokens[:, 1:], logits.shape[-1])
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, -1))


def adamw_step(loss_fn, dtype):
    """A mixed-precision training step: f32 master weights cast to `dtype` for the forward and
    backward, global-norm clipping, AdamW."""

    def step(params, m, v, count, *batch):
        low = jax.tree_util.tree_map(lambda p: p.astype(dtype), params)
        value, grads = jax.value_and_grad(loss_fn)(low, *batch)
        grads = jax.tree_util.tree_map(lambda g: g.astype(jnp.float32), grads)
        norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads)))
        grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, 1.0 / (norm + 1e-6)), grads)
        count = count + 1
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = jax.tree_util.tree_map(lambda v, g: 0.95 * v + 0.05 * g * g, v, grads)
        c1, c2 = 1 - 0.9**count, 1 - 0.95**count
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - 1e-3 * (m / c1 / (jnp.sqrt(v / c2) + 1e-8) + 0.01 * p),
            params,
            m,
            v,
        )
        return params, m, v, count, value

    return step


def vit_init(key, patch, d, layers, ff, classes, channels=3):
    keys = iter(jax.random.split(key, 2 + 4 * layers))
    blocks = [
        {
            "ln1": {"g": jnp.ones(d), "b": jnp.zeros(d)},
            "ln2": {"g": jnp.ones(d), "b": jnp.zeros(d)},
            "qkv": normal(next(keys), (d, 3 * d)),
            "o": normal(next(keys), (d, d)),
            "fc1": normal(next(keys), (d, ff)),
            "fc2": normal(next(keys), (ff, d)),
        }
        for _ in range(layers)
    ]
    return {
        "patch": normal(next(keys), (patch * patch * channels, d)),
        "head": normal(next(keys), (d, classes)),
        "blocks": blocks,
        "ln": {"g": jnp.ones(d), "b": jnp.zeros(d)},
    }


def patchify(images, patch):
    B, H, W, C = images.shape
    x = images.reshape(B, H // patch, patch, W // patch, patch, C)
    return x.transpose(0, 1, 3, 2, 4, 5).reshape(B, (H // patch) * (W // patch), -1)


def encoder_block(blk, x, heads, mask=None):
    B, T, d = x.shape
    h = layernorm(blk["ln1"], x)
    q, k, v = jnp.split((h @ blk["qkv"]).reshape(B, T, 3 * heads, d // heads), 3, axis=2)
    full = jnp.ones((T, T), bool) if mask is None else mask
    x = x + attention(q, k, v, full).reshape(B, T, d) @ blk["o"]
    h = layernorm(blk["ln2"], x)
    return x + jax.nn.gelu(h @ blk["fc1"]) @ blk["fc2"]


def vit_logits(params, images, patch, heads):
    x = patchify(images, patch) @ params["patch"]
    for blk in params["blocks"]:
        x = encoder_block(blk, x, heads)
    return jnp.mean(layernorm(params["ln"], x), axis=1) @ params["head"]


def windowed_encoder(params, images, patch, heads, window):
    """Every block but the last attends within non-overlapping windows of the patch grid (a
    reshape into windows and back, as segmentation image encoders do); the last is global. The
    output is a per-patch mask logit, upsampled by a transposed convolution."""
    B, H, W, _ = images.shape
    gh, gw = H // patch, W // patch
    x = patchify(images, patch) @ params["patch"]
    d = x.shape[-1]
    for blk in params["blocks"][:-1]:
        w = x.reshape(B, gh // window, window, gw // window, window, d)
        w = w.transpose(0, 1, 3, 2, 4, 5).reshape(-1, window * window, d)
        w = encoder_block(blk, w, heads)
        w = w.reshape(B, gh // window, gw // window, window, window, d)
        x = w.transpose(0, 1, 3, 2, 4, 5).reshape(B, gh * gw, d)
    x = encoder_block(params["blocks"][-1], x, heads)
    feat = layernorm(params["ln"], x).reshape(B, gh, gw, d)
    up = jax.lax.conv_transpose(
        feat, params["head"][None, None, :, :1].repeat(2, 0).repeat(2, 1), (2, 2), "SAME"
    )
    return up[..., 0]


def main():
    key = jax.random.PRNGKey(0)
    tokens = jax.random.randint(key, (2, 65), 0, 512)
    for gemma, window in ((True, 16), (False, 24)):
        kw = {"heads": 4, "kv_heads": 2, "window": window, "gemma": gemma}
        params = decoder_init(key, 512, 128, 4, 4, 2, 256)
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        loss = lambda p, t, kw=kw: lm_loss(p, t, **kw)  # noqa: E731
        for dtype in (bf16, jnp.float32):
            step = jax.jit(adamw_step(loss, dtype))
            jax.block_until_ready(step(params, zeros, zeros, jnp.int32(0), tokens))
        low = jax.tree_util.tree_map(lambda p: p.astype(bf16), params)
        infer = jax.jit(lambda p, t, kw=kw: jnp.argmax(decoder_logits(p, t, **kw), -1))
        jax.block_until_ready(infer(low, tokens[:, :-1]))

    images = jax.random.normal(key, (2, 64, 64, 3))
    vit = vit_init(key, 8, 128, 4, 256, 10)
    for dtype in (bf16, jnp.float32):
        low = jax.tree_util.tree_map(lambda p, dtype=dtype: p.astype(dtype), vit)
        infer = jax.jit(lambda p, x: jnp.argmax(vit_logits(p, x, 8, 4), -1))
        jax.block_until_ready(infer(low, images.astype(dtype)))
    sam = vit_init(key, 4, 64, 3, 128, 64)
    seg = jax.jit(lambda p, x: windowed_encoder(p, x, 4, 4, 4))
    jax.block_until_ready(seg(sam, images))
    low = jax.tree_util.tree_map(lambda p: p.astype(bf16), sam)
    jax.block_until_ready(seg(low, images.astype(bf16)))

    def seg_loss(p, x, target):
        return jnp.mean(jnp.square(windowed_encoder(p, x, 4, 4, 4) - target))

    target = jnp.zeros((2, 32, 32))
    zeros = jax.tree_util.tree_map(jnp.zeros_like, sam)
    step = jax.jit(adamw_step(seg_loss, jnp.float32))
    jax.block_until_ready(step(sam, zeros, zeros, jnp.int32(0), images, target))


if __name__ == "__main__":
    main()
