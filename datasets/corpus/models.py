"""Real model code in plain JAX for the hlogym corpus (see generate.py).

Every family provides
  init(cfg, key)          -> parameters (and, for ResNet, batch-norm state); only ever traced
                             through jax.eval_shape, so nothing big is materialized
  loss(params, batch, cfg)-> scalar loss (training) [plus auxiliary outputs]
  infer(params, batch, cfg)-> inference outputs
  batch(cfg)              -> dict of jax.ShapeDtypeStruct inputs

The architectures follow the standard published designs at toy sizes: GPT-2 (pre-LN decoder, tied
LM head), BERT (post-LN encoder, masked-LM head with transform + tied decoder, pooler), ResNet-18
(basic blocks) and ResNet-50 (bottleneck blocks) with batch norm, ViT (patch conv, class token,
pre-LN encoder), T5 (RMSNorm, relative position buckets, encoder-decoder with cross attention),
MLP-Mixer, LSTM/GRU language models with lax.scan, a DDPM UNet (GroupNorm res blocks, timestep
embedding, self-attention at the lowest resolution, skip connections), a GraphNet style message
passing network (gather + segment_sum), and a Switch/GShard style mixture-of-experts decoder (top-k
routing, capacity, scatter dispatch and gather combine, load-balancing loss).

Training steps: value_and_grad of the loss, global-norm gradient clipping, then AdamW (default) or
SGD with momentum; mixed precision (bf16) casts f32 master weights to bf16 for the forward pass.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import lax

f32, bf16, i32 = jnp.float32, jnp.bfloat16, jnp.int32
DTYPES = {"f32": f32, "bf16": bf16}


def S(shape, dtype=f32):
    return jax.ShapeDtypeStruct(tuple(shape), dtype)


class Keys:
    """Hands out fresh PRNG keys (only ever traced)."""

    def __init__(self, key):
        self.key = key

    def __call__(self):
        self.key, k = jax.random.split(self.key)
        return k


def normal(keys, shape, std=0.02):
    return std * jax.random.normal(keys(), shape, f32)


def dense_init(keys, din, dout, bias=True, std=None):
    p = {"w": normal(keys, (din, dout), std if std is not None else 1.0 / math.sqrt(din))}
    if bias:
        p["b"] = jnp.zeros((dout,), f32)
    return p


def dense(p, x):
    y = jnp.dot(x, p["w"].astype(x.dtype))
    return y + p["b"].astype(x.dtype) if "b" in p else y


def ln_init(d):
    return {"g": jnp.ones((d,), f32), "b": jnp.zeros((d,), f32)}


def layernorm(p, x, eps=1e-5):
    xf = x.astype(f32)
    m = xf.mean(-1, keepdims=True)
    v = jnp.mean(jnp.square(xf - m), -1, keepdims=True)
    y = (xf - m) * lax.rsqrt(v + eps)
    return (y * p["g"].astype(f32) + p["b"].astype(f32)).astype(x.dtype)


def rmsnorm(g, x, eps=1e-6):
    xf = x.astype(f32)
    y = xf * lax.rsqrt(jnp.mean(jnp.square(xf), -1, keepdims=True) + eps)
    return (y * g.astype(f32)).astype(x.dtype)


def cast_floats(tree, dtype):
    return jax.tree_util.tree_map(
        lambda a: a.astype(dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree
    )


def cross_entropy(logits, labels, weights=None):
    logits = logits.astype(f32)
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[..., None], axis=-1)[..., 0]
    nll = lse - picked
    if weights is None:
        return jnp.mean(nll)
    return jnp.sum(nll * weights) / (jnp.sum(weights) + 1e-6)


# ---------------------------------------------------------------------------------------------
# Multi-head attention (shared by the transformer families)
# ---------------------------------------------------------------------------------------------
def mha_init(keys, d, bias=True, fused=True):
    if fused:
        return {"qkv": dense_init(keys, d, 3 * d, bias), "o": dense_init(keys, d, d, bias)}
    return {
        "q": dense_init(keys, d, d, bias),
        "k": dense_init(keys, d, d, bias),
        "v": dense_init(keys, d, d, bias),
        "o": dense_init(keys, d, d, bias),
    }


def split_heads(t, h):
    B, T, D = t.shape
    return t.reshape(B, T, h, D // h).transpose(0, 2, 1, 3)


def merge_heads(t):
    B, H, T, hd = t.shape
    return t.transpose(0, 2, 1, 3).reshape(B, T, H * hd)


def attend(q, k, v, mask=None, bias=None, scale=True):
    """q,k,v: [B,H,T,hd]; mask broadcastable to [B,H,Tq,Tk] (True = keep)."""
    hd = q.shape[-1]
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k)
    if scale:
        s = s / jnp.sqrt(jnp.asarray(hd, q.dtype))
    s = s.astype(f32)
    if bias is not None:
        s = s + bias.astype(f32)
    if mask is not None:
        s = jnp.where(mask, s, jnp.finfo(f32).min)
    a = jax.nn.softmax(s, axis=-1).astype(q.dtype)
    return jnp.einsum("bhqk,bhkd->bhqd", a, v)


def self_attention(p, x, h, mask=None, bias=None):
    if "qkv" in p:
        q, k, v = jnp.split(dense(p["qkv"], x), 3, axis=-1)
    else:
        q, k, v = dense(p["q"], x), dense(p["k"], x), dense(p["v"], x)
    y = attend(split_heads(q, h), split_heads(k, h), split_heads(v, h), mask, bias)
    return dense(p["o"], merge_heads(y))


def causal_mask(T):
    return jnp.tril(jnp.ones((T, T), bool))[None, None]


def maybe_remat(fn, cfg):
    return jax.checkpoint(fn) if cfg.get("remat") else fn


# ---------------------------------------------------------------------------------------------
# GPT-2
# ---------------------------------------------------------------------------------------------
def gpt2_init(cfg, key):
    k = Keys(key)
    d, V, T = cfg["d"], cfg["vocab"], cfg["seq"]
    blocks = [
        {
            "ln1": ln_init(d),
            "attn": mha_init(k, d),
            "ln2": ln_init(d),
            "fc": dense_init(k, d, 4 * d),
            "proj": dense_init(k, 4 * d, d),
        }
        for _ in range(cfg["layers"])
    ]
    return {
        "wte": normal(k, (V, d)),
        "wpe": normal(k, (T, d), 0.01),
        "blocks": blocks,
        "lnf": ln_init(d),
    }


def gpt2_block(blk, x, h):
    T = x.shape[1]
    x = x + self_attention(blk["attn"], layernorm(blk["ln1"], x), h, causal_mask(T))
    y = jax.nn.gelu(dense(blk["fc"], layernorm(blk["ln2"], x)), approximate=True)
    return x + dense(blk["proj"], y)


def gpt2_forward(params, tokens, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    T = tokens.shape[1]
    x = params["wte"][tokens] + params["wpe"][:T][None]
    block = maybe_remat(lambda b, x: gpt2_block(b, x, cfg["heads"]), cfg)
    for blk in params["blocks"]:
        x = block(blk, x)
    x = layernorm(params["lnf"], x)
    return x @ params["wte"].T


def gpt2_loss(params, batch, cfg):
    return cross_entropy(gpt2_forward(params, batch["tokens"], cfg), batch["targets"])


def gpt2_infer(params, batch, cfg):
    logits = gpt2_forward(params, batch["tokens"], cfg)
    return logits, jnp.argmax(logits[:, -1], axis=-1)


def gpt2_batch(cfg):
    return {
        "tokens": S((cfg["batch"], cfg["seq"]), i32),
        "targets": S((cfg["batch"], cfg["seq"]), i32),
    }


# ---------------------------------------------------------------------------------------------
# BERT (masked LM)
# ---------------------------------------------------------------------------------------------
def bert_init(cfg, key):
    k = Keys(key)
    d, V, T = cfg["d"], cfg["vocab"], cfg["seq"]
    layers = [
        {
            "attn": mha_init(k, d, fused=False),
            "ln1": ln_init(d),
            "ff1": dense_init(k, d, 4 * d),
            "ff2": dense_init(k, 4 * d, d),
            "ln2": ln_init(d),
        }
        for _ in range(cfg["layers"])
    ]
    return {
        "tok": normal(k, (V, d)),
        "pos": normal(k, (T, d)),
        "typ": normal(k, (2, d)),
        "ln_emb": ln_init(d),
        "layers": layers,
        "mlm": {"dense": dense_init(k, d, d), "ln": ln_init(d), "bias": jnp.zeros((V,), f32)},
        "pool": dense_init(k, d, d),
    }


def bert_encode(params, batch, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    tok, typ = batch["tokens"], batch["token_types"]
    T = tok.shape[1]
    x = params["tok"][tok] + params["pos"][:T][None] + params["typ"][typ]
    x = layernorm(params["ln_emb"], x, 1e-12)
    mask = (batch["attention_mask"] > 0)[:, None, None, :]

    def layer(lp, x):
        x = layernorm(lp["ln1"], x + self_attention(lp["attn"], x, cfg["heads"], mask), 1e-12)
        y = dense(lp["ff2"], jax.nn.gelu(dense(lp["ff1"], x), approximate=False))
        return layernorm(lp["ln2"], x + y, 1e-12)

    layer = maybe_remat(layer, cfg)
    for lp in params["layers"]:
        x = layer(lp, x)
    return params, x


def bert_mlm_logits(params, x):
    h = jax.nn.gelu(dense(params["mlm"]["dense"], x), approximate=False)
    h = layernorm(params["mlm"]["ln"], h, 1e-12)
    return h @ params["tok"].T + params["mlm"]["bias"]


def bert_loss(params, batch, cfg):
    p, x = bert_encode(params, batch, cfg)
    picked = jnp.take_along_axis(x, batch["masked_positions"][..., None], axis=1)
    logits = bert_mlm_logits(p, picked)
    return cross_entropy(logits, batch["masked_ids"], batch["masked_weights"])


def bert_infer(params, batch, cfg):
    p, x = bert_encode(params, batch, cfg)
    pooled = jnp.tanh(dense(p["pool"], x[:, 0]))
    return bert_mlm_logits(p, x), pooled


def bert_batch(cfg):
    B, T = cfg["batch"], cfg["seq"]
    P = max(1, T // 8)
    return {
        "tokens": S((B, T), i32),
        "token_types": S((B, T), i32),
        "attention_mask": S((B, T), i32),
        "masked_positions": S((B, P), i32),
        "masked_ids": S((B, P), i32),
        "masked_weights": S((B, P), f32),
    }


# ---------------------------------------------------------------------------------------------
# ResNet-18 / ResNet-50 (NHWC, batch norm)
# ---------------------------------------------------------------------------------------------
DN = ("NHWC", "HWIO", "NHWC")
RESNET_BLOCKS = {
    18: ("basic", (2, 2, 2, 2)),
    34: ("basic", (3, 4, 6, 3)),
    50: ("bottleneck", (3, 4, 6, 3)),
    26: ("bottleneck", (2, 2, 2, 2)),
}


def conv_init(keys, kh, kw, cin, cout):
    return normal(keys, (kh, kw, cin, cout), math.sqrt(2.0 / (kh * kw * cin)))


def conv(x, w, stride=1, padding="SAME", groups=1):
    return lax.conv_general_dilated(
        x,
        w.astype(x.dtype),
        (stride, stride),
        padding,
        dimension_numbers=DN,
        feature_group_count=groups,
    )


def bn_init(c):
    return {"scale": jnp.ones((c,), f32), "bias": jnp.zeros((c,), f32)}, {
        "mean": jnp.zeros((c,), f32),
        "var": jnp.ones((c,), f32),
    }


def batchnorm(p, s, x, train, momentum=0.9, eps=1e-5):
    if train:
        xf = x.astype(f32)
        mean = xf.mean((0, 1, 2))
        var = jnp.mean(jnp.square(xf), (0, 1, 2)) - jnp.square(mean)
        new_s = {
            "mean": momentum * s["mean"] + (1 - momentum) * lax.stop_gradient(mean),
            "var": momentum * s["var"] + (1 - momentum) * lax.stop_gradient(var),
        }
    else:
        mean, var, new_s = s["mean"], s["var"], s
    y = (x.astype(f32) - mean) * lax.rsqrt(var + eps) * p["scale"] + p["bias"]
    return y.astype(x.dtype), new_s


def resnet_init(cfg, key):
    k = Keys(key)
    kind, stages = RESNET_BLOCKS[cfg["depth"]]
    w = cfg["width"]
    params, state = {}, {}
    stem_k = 7 if cfg["stem"] == "imagenet" else 3
    params["stem"] = conv_init(k, stem_k, stem_k, 3, w)
    params["stem_bn"], state["stem_bn"] = bn_init(w)
    cin = w
    expansion = 4 if kind == "bottleneck" else 1
    blocks_p, blocks_s = [], []
    for si, n in enumerate(stages):
        cmid = w * (2**si)
        cout = cmid * expansion
        for bi in range(n):
            p, s = {}, {}
            if kind == "basic":
                p["c1"] = conv_init(k, 3, 3, cin, cmid)
                p["c2"] = conv_init(k, 3, 3, cmid, cout)
                names = ["bn1", "bn2"]
                chans = [cmid, cout]
            else:
                p["c1"] = conv_init(k, 1, 1, cin, cmid)
                p["c2"] = conv_init(k, 3, 3, cmid, cmid)
                p["c3"] = conv_init(k, 1, 1, cmid, cout)
                names = ["bn1", "bn2", "bn3"]
                chans = [cmid, cmid, cout]
            for nm, c in zip(names, chans):
                p[nm], s[nm] = bn_init(c)
            if cin != cout or (bi == 0 and si > 0):
                p["proj"] = conv_init(k, 1, 1, cin, cout)
                p["proj_bn"], s["proj_bn"] = bn_init(cout)
            blocks_p.append(p)
            blocks_s.append(s)
            cin = cout
    params["blocks"], state["blocks"] = blocks_p, blocks_s
    params["head"] = dense_init(k, cin, cfg["classes"])
    return params, state


def resnet_forward(params, state, x, cfg, train):
    kind, stages = RESNET_BLOCKS[cfg["depth"]]
    dt = DTYPES[cfg["dtype"]]
    params = cast_floats(params, dt)
    x = x.astype(dt)
    new_state = {"blocks": []}
    if cfg["stem"] == "imagenet":
        x = conv(x, params["stem"], 2)
    else:
        x = conv(x, params["stem"], 1)
    x, new_state["stem_bn"] = batchnorm(params["stem_bn"], state["stem_bn"], x, train)
    x = jax.nn.relu(x)
    if cfg["stem"] == "imagenet":
        x = lax.reduce_window(
            x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (1, 1), (0, 0))
        )
    i = 0
    for si, n in enumerate(stages):
        for bi in range(n):
            p, s = params["blocks"][i], state["blocks"][i]
            ns = {}
            stride = 2 if (bi == 0 and si > 0) else 1
            if kind == "basic":
                y, ns["bn1"] = batchnorm(p["bn1"], s["bn1"], conv(x, p["c1"], stride), train)
                y = jax.nn.relu(y)
                y, ns["bn2"] = batchnorm(p["bn2"], s["bn2"], conv(y, p["c2"]), train)
            else:
                y, ns["bn1"] = batchnorm(p["bn1"], s["bn1"], conv(x, p["c1"]), train)
                y = jax.nn.relu(y)
                y, ns["bn2"] = batchnorm(p["bn2"], s["bn2"], conv(y, p["c2"], stride), train)
                y = jax.nn.relu(y)
                y, ns["bn3"] = batchnorm(p["bn3"], s["bn3"], conv(y, p["c3"]), train)
            if "proj" in p:
                sc, ns["proj_bn"] = batchnorm(
                    p["proj_bn"], s["proj_bn"], conv(x, p["proj"], stride), train
                )
            else:
                sc = x
            x = jax.nn.relu(y + sc)
            new_state["blocks"].append(ns)
            i += 1
    x = jnp.mean(x.astype(f32), axis=(1, 2)).astype(dt)
    return dense(params["head"], x), new_state


def resnet_loss(params, state, batch, cfg):
    logits, new_state = resnet_forward(params, state, batch["images"], cfg, True)
    return cross_entropy(logits, batch["labels"]), new_state


def resnet_infer(params, state, batch, cfg):
    logits, _ = resnet_forward(params, state, batch["images"], cfg, False)
    return jax.nn.softmax(logits.astype(f32)), jnp.argmax(logits, -1)


def resnet_batch(cfg):
    r = cfg["res"]
    return {"images": S((cfg["batch"], r, r, 3)), "labels": S((cfg["batch"],), i32)}


# ---------------------------------------------------------------------------------------------
# ViT
# ---------------------------------------------------------------------------------------------
def vit_init(cfg, key):
    k = Keys(key)
    d, P = cfg["d"], cfg["patch"]
    n = (cfg["res"] // P) ** 2
    blocks = [
        {
            "ln1": ln_init(d),
            "attn": mha_init(k, d),
            "ln2": ln_init(d),
            "fc1": dense_init(k, d, 4 * d),
            "fc2": dense_init(k, 4 * d, d),
        }
        for _ in range(cfg["layers"])
    ]
    return {
        "patch": {"w": conv_init(k, P, P, 3, d), "b": jnp.zeros((d,), f32)},
        "cls": jnp.zeros((1, 1, d), f32),
        "pos": normal(k, (1, n + 1, d)),
        "blocks": blocks,
        "ln": ln_init(d),
        "head": dense_init(k, d, cfg["classes"]),
    }


def vit_forward(params, images, cfg):
    dt = DTYPES[cfg["dtype"]]
    params = cast_floats(params, dt)
    x = conv(images.astype(dt), params["patch"]["w"], cfg["patch"], "VALID") + params["patch"]["b"]
    B, gh, gw, d = x.shape
    x = x.reshape(B, gh * gw, d)
    x = jnp.concatenate([jnp.broadcast_to(params["cls"], (B, 1, d)), x], axis=1) + params["pos"]

    def block(bp, x):
        x = x + self_attention(bp["attn"], layernorm(bp["ln1"], x, 1e-6), cfg["heads"])
        y = dense(
            bp["fc2"],
            jax.nn.gelu(dense(bp["fc1"], layernorm(bp["ln2"], x, 1e-6)), approximate=False),
        )
        return x + y

    block = maybe_remat(block, cfg)
    for bp in params["blocks"]:
        x = block(bp, x)
    return dense(params["head"], layernorm(params["ln"], x, 1e-6)[:, 0])


def vit_loss(params, batch, cfg):
    logits = vit_forward(params, batch["images"], cfg)
    # label smoothing 0.1, as in the ViT training recipe
    n = logits.shape[-1]
    onehot = jax.nn.one_hot(batch["labels"], n) * 0.9 + 0.1 / n
    return -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(logits.astype(f32)), -1))


def vit_infer(params, batch, cfg):
    logits = vit_forward(params, batch["images"], cfg)
    return lax.top_k(logits.astype(f32), min(5, cfg["classes"]))


def vit_batch(cfg):
    r = cfg["res"]
    return {"images": S((cfg["batch"], r, r, 3)), "labels": S((cfg["batch"],), i32)}


# ---------------------------------------------------------------------------------------------
# T5 (encoder-decoder)
# ---------------------------------------------------------------------------------------------
def t5_bucket(rel, bidirectional, num_buckets=32, max_distance=128):
    ret = 0
    n = -rel
    if bidirectional:
        num_buckets //= 2
        ret = (n < 0).astype(i32) * num_buckets
        n = jnp.abs(n)
    else:
        n = jnp.maximum(n, 0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_large = max_exact + (
        jnp.log(jnp.maximum(n, 1).astype(f32) / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).astype(i32)
    val_large = jnp.minimum(val_large, num_buckets - 1)
    return ret + jnp.where(is_small, n, val_large)


def t5_rel_bias(table, Tq, Tk, bidirectional):
    ctx = jnp.arange(Tq)[:, None]
    mem = jnp.arange(Tk)[None, :]
    buckets = t5_bucket(mem - ctx, bidirectional)
    return table[buckets].transpose(2, 0, 1)[None]  # [1, H, Tq, Tk]


def t5_ff_init(k, d, ff, gated):
    if gated:
        return {
            "wi0": dense_init(k, d, ff, False),
            "wi1": dense_init(k, d, ff, False),
            "wo": dense_init(k, ff, d, False),
        }
    return {"wi": dense_init(k, d, ff, False), "wo": dense_init(k, ff, d, False)}


def t5_ff(p, x):
    if "wi0" in p:
        h = jax.nn.gelu(dense(p["wi0"], x), approximate=True) * dense(p["wi1"], x)
    else:
        h = jax.nn.relu(dense(p["wi"], x))
    return dense(p["wo"], h)


def t5_init(cfg, key):
    k = Keys(key)
    d, H, ff, g = cfg["d"], cfg["heads"], cfg["ff"], cfg["gated"]
    enc = [
        {
            "ln1": jnp.ones((d,)),
            "attn": mha_init(k, d, False, False),
            "ln2": jnp.ones((d,)),
            "ff": t5_ff_init(k, d, ff, g),
        }
        for _ in range(cfg["enc_layers"])
    ]
    dec = [
        {
            "ln1": jnp.ones((d,)),
            "attn": mha_init(k, d, False, False),
            "ln2": jnp.ones((d,)),
            "cross": mha_init(k, d, False, False),
            "ln3": jnp.ones((d,)),
            "ff": t5_ff_init(k, d, ff, g),
        }
        for _ in range(cfg["dec_layers"])
    ]
    return {
        "emb": normal(k, (cfg["vocab"], d), 1.0),
        "enc": enc,
        "dec": dec,
        "enc_rel": normal(k, (32, H), 0.1),
        "dec_rel": normal(k, (32, H), 0.1),
        "enc_ln": jnp.ones((d,)),
        "dec_ln": jnp.ones((d,)),
    }


def t5_attention(p, xq, xkv, h, mask=None, bias=None):
    q, kk, v = dense(p["q"], xq), dense(p["k"], xkv), dense(p["v"], xkv)
    y = attend(split_heads(q, h), split_heads(kk, h), split_heads(v, h), mask, bias, scale=False)
    return dense(p["o"], merge_heads(y))


def t5_forward(params, batch, cfg):
    dt = DTYPES[cfg["dtype"]]
    params = cast_floats(params, dt)
    H = cfg["heads"]
    src, tgt_in = batch["inputs"], batch["decoder_inputs"]
    Ts, Tt = src.shape[1], tgt_in.shape[1]
    enc_mask = (src > 0)[:, None, None, :]
    x = params["emb"][src]
    eb = t5_rel_bias(params["enc_rel"], Ts, Ts, True)

    def enc_layer(lp, x):
        x = x + t5_attention(
            lp["attn"], rmsnorm(lp["ln1"], x), rmsnorm(lp["ln1"], x), H, enc_mask, eb
        )
        return x + t5_ff(lp["ff"], rmsnorm(lp["ln2"], x))

    def dec_layer(lp, y, mem):
        n = rmsnorm(lp["ln1"], y)
        y = y + t5_attention(lp["attn"], n, n, H, causal_mask(Tt), db)
        y = y + t5_attention(lp["cross"], rmsnorm(lp["ln2"], y), mem, H, enc_mask)
        return y + t5_ff(lp["ff"], rmsnorm(lp["ln3"], y))

    enc_layer, dec_layer = maybe_remat(enc_layer, cfg), maybe_remat(dec_layer, cfg)
    for lp in params["enc"]:
        x = enc_layer(lp, x)
    mem = rmsnorm(params["enc_ln"], x)
    db = t5_rel_bias(params["dec_rel"], Tt, Tt, False)
    y = params["emb"][tgt_in]
    for lp in params["dec"]:
        y = dec_layer(lp, y, mem)
    y = rmsnorm(params["dec_ln"], y) * (cfg["d"] ** -0.5)
    return y @ params["emb"].T


def t5_loss(params, batch, cfg):
    logits = t5_forward(params, batch, cfg)
    w = (batch["targets"] > 0).astype(f32)
    return cross_entropy(logits, batch["targets"], w)


def t5_infer(params, batch, cfg):
    logits = t5_forward(params, batch, cfg)
    return jnp.argmax(logits, -1), jax.nn.log_softmax(logits.astype(f32))[:, -1]


def t5_batch(cfg):
    B = cfg["batch"]
    return {
        "inputs": S((B, cfg["src_len"]), i32),
        "decoder_inputs": S((B, cfg["tgt_len"]), i32),
        "targets": S((B, cfg["tgt_len"]), i32),
    }


# ---------------------------------------------------------------------------------------------
# MLP-Mixer
# ---------------------------------------------------------------------------------------------
def mixer_init(cfg, key):
    k = Keys(key)
    C, P = cfg["d"], cfg["patch"]
    S_ = (cfg["res"] // P) ** 2
    blocks = [
        {
            "ln1": ln_init(C),
            "tok1": dense_init(k, S_, cfg["tok_mlp"]),
            "tok2": dense_init(k, cfg["tok_mlp"], S_),
            "ln2": ln_init(C),
            "ch1": dense_init(k, C, cfg["ch_mlp"]),
            "ch2": dense_init(k, cfg["ch_mlp"], C),
        }
        for _ in range(cfg["layers"])
    ]
    return {
        "stem": {"w": conv_init(k, P, P, 3, C), "b": jnp.zeros((C,))},
        "blocks": blocks,
        "ln": ln_init(C),
        "head": dense_init(k, C, cfg["classes"]),
    }


def mixer_forward(params, images, cfg):
    dt = DTYPES[cfg["dtype"]]
    params = cast_floats(params, dt)
    x = conv(images.astype(dt), params["stem"]["w"], cfg["patch"], "VALID") + params["stem"]["b"]
    B, gh, gw, C = x.shape
    x = x.reshape(B, gh * gw, C)

    def block(bp, x):
        y = layernorm(bp["ln1"], x).transpose(0, 2, 1)
        y = dense(bp["tok2"], jax.nn.gelu(dense(bp["tok1"], y)))
        x = x + y.transpose(0, 2, 1)
        y = layernorm(bp["ln2"], x)
        return x + dense(bp["ch2"], jax.nn.gelu(dense(bp["ch1"], y)))

    block = maybe_remat(block, cfg)
    for bp in params["blocks"]:
        x = block(bp, x)
    x = layernorm(params["ln"], x).mean(axis=1)
    return dense(params["head"], x)


def mixer_loss(params, batch, cfg):
    return cross_entropy(mixer_forward(params, batch["images"], cfg), batch["labels"])


def mixer_infer(params, batch, cfg):
    logits = mixer_forward(params, batch["images"], cfg)
    return jax.nn.softmax(logits.astype(f32)), jnp.argmax(logits, -1)


mixer_batch = vit_batch


# ---------------------------------------------------------------------------------------------
# LSTM / GRU language model with lax.scan
# ---------------------------------------------------------------------------------------------
def rnn_init(cfg, key):
    k = Keys(key)
    H, E, V = cfg["hidden"], cfg["embed"], cfg["vocab"]
    gates = 4 if cfg["cell"] == "lstm" else 3
    layers = []
    din = E
    for _ in range(cfg["layers"]):
        layers.append(
            {
                "wx": normal(k, (din, gates * H), 1 / math.sqrt(din)),
                "wh": normal(k, (H, gates * H), 1 / math.sqrt(H)),
                "b": jnp.zeros((gates * H,)),
            }
        )
        din = H
    return {"emb": normal(k, (V, E), 0.1), "layers": layers, "out": dense_init(k, H, V)}


def lstm_cell(p, carry, x):
    h, c = carry
    z = x @ p["wx"] + h @ p["wh"] + p["b"]
    i, f, g, o = jnp.split(z, 4, axis=-1)
    c = jax.nn.sigmoid(f + 1.0) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return (h, c), h


def gru_cell(p, carry, x):
    (h,) = carry
    H = h.shape[-1]
    zx = x @ p["wx"] + p["b"]
    zh = h @ p["wh"]
    r = jax.nn.sigmoid(zx[:, :H] + zh[:, :H])
    u = jax.nn.sigmoid(zx[:, H : 2 * H] + zh[:, H : 2 * H])
    n = jnp.tanh(zx[:, 2 * H :] + r * zh[:, 2 * H :])
    h = (1 - u) * n + u * h
    return (h,), h


def rnn_forward(params, tokens, cfg):
    dt = DTYPES[cfg["dtype"]]
    params = cast_floats(params, dt)
    B = tokens.shape[0]
    H = cfg["hidden"]
    xs = params["emb"][tokens.T]  # [T, B, E]
    cell = lstm_cell if cfg["cell"] == "lstm" else gru_cell
    for lp in params["layers"]:
        n_state = 2 if cfg["cell"] == "lstm" else 1
        init = tuple(jnp.zeros((B, H), dt) for _ in range(n_state))
        step = maybe_remat(lambda c, x, lp=lp: cell(lp, c, x), cfg)
        _, xs = lax.scan(step, init, xs, unroll=cfg.get("unroll", 1))
    return dense(params["out"], xs.transpose(1, 0, 2))


def rnn_loss(params, batch, cfg):
    return cross_entropy(rnn_forward(params, batch["tokens"], cfg), batch["targets"])


def rnn_infer(params, batch, cfg):
    logits = rnn_forward(params, batch["tokens"], cfg)
    return jax.nn.log_softmax(logits.astype(f32), -1)[:, -1], jnp.argmax(logits, -1)


rnn_batch = gpt2_batch


# ---------------------------------------------------------------------------------------------
# Diffusion UNet (DDPM epsilon prediction)
# ---------------------------------------------------------------------------------------------
def groupnorm(p, x, groups, eps=1e-5):
    B, Hh, W, C = x.shape
    xf = x.astype(f32).reshape(B, Hh, W, groups, C // groups)
    m = xf.mean((1, 2, 4), keepdims=True)
    v = jnp.mean(jnp.square(xf - m), (1, 2, 4), keepdims=True)
    y = ((xf - m) * lax.rsqrt(v + eps)).reshape(B, Hh, W, C)
    return (y * p["g"] + p["b"]).astype(x.dtype)


def resblock_init(k, cin, cout, temb):
    p = {
        "gn1": ln_init(cin),
        "c1": conv_init(k, 3, 3, cin, cout),
        "t": dense_init(k, temb, cout),
        "gn2": ln_init(cout),
        "c2": conv_init(k, 3, 3, cout, cout),
    }
    if cin != cout:
        p["skip"] = conv_init(k, 1, 1, cin, cout)
    return p


def resblock(p, x, temb, groups):
    h = conv(jax.nn.silu(groupnorm(p["gn1"], x, groups)), p["c1"])
    h = h + dense(p["t"], jax.nn.silu(temb))[:, None, None, :]
    h = conv(jax.nn.silu(groupnorm(p["gn2"], h, groups)), p["c2"])
    return h + (conv(x, p["skip"]) if "skip" in p else x)


def unet_init(cfg, key):
    k = Keys(key)
    ch, mults = cfg["ch"], cfg["mults"]
    temb = 4 * ch
    p = {
        "t1": dense_init(k, ch, temb),
        "t2": dense_init(k, temb, temb),
        "in": conv_init(k, 3, 3, 3, ch),
        "down": [],
        "up": [],
    }
    chans = []
    c = ch
    for li, m in enumerate(mults):
        blk = {"res": resblock_init(k, c, ch * m, temb)}
        c = ch * m
        chans.append(c)
        if li + 1 < len(mults):
            blk["ds"] = conv_init(k, 3, 3, c, c)
        p["down"].append(blk)
    p["mid1"] = resblock_init(k, c, c, temb)
    if cfg["attn"]:
        p["attn"] = {"gn": ln_init(c), "qkv": dense_init(k, c, 3 * c), "o": dense_init(k, c, c)}
    p["mid2"] = resblock_init(k, c, c, temb)
    for li, m in reversed(list(enumerate(mults))):
        skip_c = chans.pop()
        blk = {"res": resblock_init(k, c + skip_c, ch * m, temb)}
        c = ch * m
        if li > 0:
            blk["us"] = conv_init(k, 3, 3, c, c)
        p["up"].append(blk)
    p["out_gn"] = ln_init(c)
    p["out"] = conv_init(k, 3, 3, c, 3)
    return p


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = jnp.exp(-math.log(10000.0) * jnp.arange(half, dtype=f32) / half)
    args = t.astype(f32)[:, None] * freqs[None]
    return jnp.concatenate([jnp.sin(args), jnp.cos(args)], axis=-1)


def unet_forward(params, x, t, cfg):
    dt = DTYPES[cfg["dtype"]]
    params = cast_floats(params, dt)
    G = cfg["groups"]
    temb = timestep_embedding(t, cfg["ch"]).astype(dt)
    temb = dense(params["t2"], jax.nn.silu(dense(params["t1"], temb)))
    h = conv(x.astype(dt), params["in"])
    skips = []
    for blk in params["down"]:
        h = resblock(blk["res"], h, temb, G)
        skips.append(h)
        if "ds" in blk:
            h = conv(h, blk["ds"], 2)
    h = resblock(params["mid1"], h, temb, G)
    if "attn" in params:
        a = params["attn"]
        B, Hh, W, C = h.shape
        n = groupnorm(a["gn"], h, G).reshape(B, Hh * W, C)
        q, k_, v = jnp.split(dense(a["qkv"], n), 3, -1)
        y = attend(q[:, None], k_[:, None], v[:, None])[:, 0]
        h = h + dense(a["o"], y).reshape(B, Hh, W, C)
    h = resblock(params["mid2"], h, temb, G)
    for blk in params["up"]:
        h = resblock(blk["res"], jnp.concatenate([h, skips.pop()], -1), temb, G)
        if "us" in blk:
            h = jnp.repeat(jnp.repeat(h, 2, axis=1), 2, axis=2)  # nearest-neighbour upsample
            h = conv(h, blk["us"])
    h = conv(jax.nn.silu(groupnorm(params["out_gn"], h, G)), params["out"])
    return h


def ddpm_schedule(T=1000):
    betas = jnp.linspace(1e-4, 0.02, T, dtype=f32)
    alphas = 1.0 - betas
    return betas, alphas, jnp.cumprod(alphas)


def unet_loss(params, batch, cfg):
    _, _, abar = ddpm_schedule()
    a = abar[batch["t"]][:, None, None, None]
    xt = jnp.sqrt(a) * batch["x0"] + jnp.sqrt(1 - a) * batch["noise"]
    eps = unet_forward(params, xt, batch["t"], cfg)
    return jnp.mean(jnp.square(eps.astype(f32) - batch["noise"]))


def unet_infer(params, batch, cfg):
    """One ancestral sampling step x_t -> x_{t-1}."""
    betas, alphas, abar = ddpm_schedule()
    t = batch["t"]
    eps = unet_forward(params, batch["x0"], t, cfg).astype(f32)
    b, a, ab = (v[t][:, None, None, None] for v in (betas, alphas, abar))
    mean = (batch["x0"] - b / jnp.sqrt(1 - ab) * eps) / jnp.sqrt(a)
    return mean + jnp.where(t[:, None, None, None] > 0, jnp.sqrt(b), 0.0) * batch["noise"]


def unet_batch(cfg):
    B, r = cfg["batch"], cfg["res"]
    return {"x0": S((B, r, r, 3)), "noise": S((B, r, r, 3)), "t": S((B,), i32)}


# ---------------------------------------------------------------------------------------------
# Graph network (GraphNet style: edge, node and global updates; gather + segment_sum)
# ---------------------------------------------------------------------------------------------
def mlp_init(k, sizes):
    return [dense_init(k, a, b) for a, b in zip(sizes[:-1], sizes[1:])]


def mlp(ps, x, act=jax.nn.relu):
    for i, p in enumerate(ps):
        x = dense(p, x)
        if i + 1 < len(ps):
            x = act(x)
    return x


def gnn_init(cfg, key):
    k = Keys(key)
    Hd, Fn, Fe = cfg["hidden"], cfg["node_feat"], cfg["edge_feat"]
    p = {"enc_n": mlp_init(k, [Fn, Hd, Hd]), "enc_e": mlp_init(k, [Fe, Hd, Hd]), "layers": []}
    for _ in range(cfg["layers"]):
        p["layers"].append(
            {
                "edge": mlp_init(k, [3 * Hd + Hd, Hd, Hd]),
                "node": mlp_init(k, [2 * Hd + Hd, Hd, Hd]),
                "glob": mlp_init(k, [2 * Hd + Hd, Hd, Hd]),
                "ln_e": ln_init(Hd),
                "ln_n": ln_init(Hd),
            }
        )
    p["dec"] = mlp_init(k, [Hd, Hd, cfg["targets"]])
    return p


def gnn_forward(params, batch, cfg):
    dt = DTYPES[cfg["dtype"]]
    params = cast_floats(params, dt)
    G = cfg["graphs"]
    snd, rcv, ng = batch["senders"], batch["receivers"], batch["node_graph"]
    eg = ng[snd]
    N = batch["nodes"].shape[0]
    h = mlp(params["enc_n"], batch["nodes"].astype(dt))
    e = mlp(params["enc_e"], batch["edges"].astype(dt))
    u = jnp.zeros((G, cfg["hidden"]), dt)
    for lp in params["layers"]:
        e_in = jnp.concatenate([e, h[snd], h[rcv], u[eg]], -1)
        e = e + layernorm(lp["ln_e"], mlp(lp["edge"], e_in))
        agg = jax.ops.segment_sum(e, rcv, num_segments=N)
        h = h + layernorm(lp["ln_n"], mlp(lp["node"], jnp.concatenate([h, agg, u[ng]], -1)))
        cnt = jax.ops.segment_sum(jnp.ones_like(ng, dt), ng, num_segments=G)[:, None]
        n_mean = jax.ops.segment_sum(h, ng, num_segments=G) / jnp.maximum(cnt, 1)
        e_sum = jax.ops.segment_sum(e, eg, num_segments=G)
        u = u + mlp(lp["glob"], jnp.concatenate([u, n_mean, e_sum], -1))
    return mlp(params["dec"], u)


def gnn_loss(params, batch, cfg):
    pred = gnn_forward(params, batch, cfg).astype(f32)
    return jnp.mean(jnp.square(pred - batch["y"]))


def gnn_infer(params, batch, cfg):
    return gnn_forward(params, batch, cfg)


def gnn_batch(cfg):
    N, E = cfg["nodes"], cfg["edges"]
    return {
        "nodes": S((N, cfg["node_feat"])),
        "edges": S((E, cfg["edge_feat"])),
        "senders": S((E,), i32),
        "receivers": S((E,), i32),
        "node_graph": S((N,), i32),
        "y": S((cfg["graphs"], cfg["targets"])),
    }


# ---------------------------------------------------------------------------------------------
# Mixture of experts decoder (top-k routing with capacity; scatter dispatch, gather combine)
# ---------------------------------------------------------------------------------------------
def moe_init(cfg, key):
    k = Keys(key)
    d, E, F, V = cfg["d"], cfg["experts"], cfg["ffn"], cfg["vocab"]
    blocks = [
        {
            "ln1": ln_init(d),
            "attn": mha_init(k, d),
            "ln2": ln_init(d),
            "router": normal(k, (d, E)),
            "w1": normal(k, (E, d, F), 1 / math.sqrt(d)),
            "b1": jnp.zeros((E, F)),
            "w2": normal(k, (E, F, d), 1 / math.sqrt(F)),
            "b2": jnp.zeros((E, d)),
        }
        for _ in range(cfg["layers"])
    ]
    return {
        "wte": normal(k, (V, d)),
        "wpe": normal(k, (cfg["seq"], d), 0.01),
        "blocks": blocks,
        "lnf": ln_init(d),
    }


def moe_ffn(bp, x, cfg):
    B, T, d = x.shape
    E, K = cfg["experts"], cfg["top_k"]
    N = B * T
    cap = max(1, int(math.ceil(cfg["capacity"] * N * K / E)))
    xt = x.reshape(N, d)
    logits = (xt @ bp["router"].astype(x.dtype)).astype(f32)
    probs = jax.nn.softmax(logits, -1)
    gate, idx = lax.top_k(probs, K)  # [N, K]
    gate = gate / jnp.sum(gate, -1, keepdims=True)
    # load-balancing auxiliary loss (Switch Transformer)
    frac = jnp.mean(jax.nn.one_hot(idx[:, 0], E), 0)
    aux = E * jnp.sum(frac * jnp.mean(probs, 0))
    # slot of every (token, choice) in its expert's buffer, in priority order choice-major
    flat_e = idx.T.reshape(-1)  # [K*N]
    onehot = jax.nn.one_hot(flat_e, E, dtype=i32)
    pos = jnp.sum((jnp.cumsum(onehot, 0) - 1) * onehot, -1)
    keep = pos < cap
    slot = jnp.where(keep, flat_e * cap + pos, E * cap)  # dropped -> out of range
    tok = jnp.tile(jnp.arange(N), K)
    buf = jnp.zeros((E * cap, d), x.dtype).at[slot].set(xt[tok], mode="drop")
    buf = buf.reshape(E, cap, d)
    h = jax.nn.gelu(
        jnp.einsum("ecd,edf->ecf", buf, bp["w1"].astype(x.dtype))
        + bp["b1"].astype(x.dtype)[:, None]
    )
    y = jnp.einsum("ecf,efd->ecd", h, bp["w2"].astype(x.dtype)) + bp["b2"].astype(x.dtype)[:, None]
    y = y.reshape(E * cap, d)
    out_k = jnp.take(y, slot, axis=0, mode="fill", fill_value=0)  # [K*N, d]
    w = (gate.T.reshape(-1) * keep).astype(x.dtype)[:, None]
    out = jnp.sum((out_k * w).reshape(K, N, d), 0)
    return out.reshape(B, T, d), aux


def moe_forward(params, tokens, cfg):
    params = cast_floats(params, DTYPES[cfg["dtype"]])
    T = tokens.shape[1]
    x = params["wte"][tokens] + params["wpe"][:T][None]
    aux_total = 0.0

    def block(bp, x):
        x = x + self_attention(bp["attn"], layernorm(bp["ln1"], x), cfg["heads"], causal_mask(T))
        y, aux = moe_ffn(bp, layernorm(bp["ln2"], x), cfg)
        return x + y, aux

    block = maybe_remat(block, cfg)
    for bp in params["blocks"]:
        x, aux = block(bp, x)
        aux_total = aux_total + aux
    return layernorm(params["lnf"], x) @ params["wte"].T, aux_total


def moe_loss(params, batch, cfg):
    logits, aux = moe_forward(params, batch["tokens"], cfg)
    return cross_entropy(logits, batch["targets"]) + 0.01 * aux


def moe_infer(params, batch, cfg):
    logits, _ = moe_forward(params, batch["tokens"], cfg)
    return logits, jnp.argmax(logits[:, -1], -1)


moe_batch = gpt2_batch


# ---------------------------------------------------------------------------------------------
# Optimizers and steps
# ---------------------------------------------------------------------------------------------
def clip_by_global_norm(grads, max_norm=1.0):
    leaves = jax.tree_util.tree_leaves(grads)
    gnorm = jnp.sqrt(sum(jnp.sum(jnp.square(g.astype(f32))) for g in leaves))
    scale = jnp.minimum(1.0, max_norm / (gnorm + 1e-6))
    return jax.tree_util.tree_map(lambda g: (g * scale).astype(g.dtype), grads), gnorm


def adamw_init(params):
    z = jax.tree_util.tree_map(lambda p: jnp.zeros_like(p), params)
    return {"m": z, "v": z, "step": jnp.zeros((), i32)}


def adamw_update(params, grads, st, lr=3e-4, b1=0.9, b2=0.999, eps=1e-8, wd=0.01):
    step = st["step"] + 1
    m = jax.tree_util.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, st["m"], grads)
    v = jax.tree_util.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * jnp.square(g), st["v"], grads)
    c1 = 1 - b1 ** step.astype(f32)
    c2 = 1 - b2 ** step.astype(f32)
    # cosine learning-rate schedule with warm-up
    warm = jnp.minimum(1.0, step.astype(f32) / 100.0)
    lr_t = lr * warm * 0.5 * (1 + jnp.cos(jnp.pi * jnp.minimum(step.astype(f32) / 10000.0, 1.0)))

    def upd(p, m_, v_):
        decay = wd * p if p.ndim >= 2 else 0.0  # no decay on biases and norms
        return p - lr_t * ((m_ / c1) / (jnp.sqrt(v_ / c2) + eps) + decay)

    return jax.tree_util.tree_map(upd, params, m, v), {"m": m, "v": v, "step": step}


def sgd_init(params):
    return {"mom": jax.tree_util.tree_map(lambda p: jnp.zeros_like(p), params)}


def sgd_update(params, grads, st, lr=0.1, mu=0.9, wd=1e-4):
    mom = jax.tree_util.tree_map(lambda m_, g, p: mu * m_ + g + wd * p, st["mom"], grads, params)
    new = jax.tree_util.tree_map(lambda p, m_: p - lr * m_, params, mom)
    return new, {"mom": mom}


OPTIMIZERS = {"adamw": (adamw_init, adamw_update), "sgd": (sgd_init, sgd_update)}


def make_train_step(loss_fn, cfg, has_state=False):
    _, update = OPTIMIZERS[cfg.get("opt", "adamw")]
    if has_state:

        def step(params, state, opt_state, batch):
            (loss, new_state), grads = jax.value_and_grad(loss_fn, has_aux=True)(
                params, state, batch, cfg
            )
            grads, gnorm = clip_by_global_norm(grads)
            params, opt_state = update(params, grads, opt_state)
            return params, new_state, opt_state, {"loss": loss, "grad_norm": gnorm}
    else:

        def step(params, opt_state, batch):
            loss, grads = jax.value_and_grad(loss_fn)(params, batch, cfg)
            grads, gnorm = clip_by_global_norm(grads)
            params, opt_state = update(params, grads, opt_state)
            return params, opt_state, {"loss": loss, "grad_norm": gnorm}

    return step


FAMILIES = {
    # name: (init, loss, infer, batch, has_state)
    "gpt2": (gpt2_init, gpt2_loss, gpt2_infer, gpt2_batch, False),
    "bert": (bert_init, bert_loss, bert_infer, bert_batch, False),
    "resnet": (resnet_init, resnet_loss, resnet_infer, resnet_batch, True),
    "vit": (vit_init, vit_loss, vit_infer, vit_batch, False),
    "t5": (t5_init, t5_loss, t5_infer, t5_batch, False),
    "mixer": (mixer_init, mixer_loss, mixer_infer, mixer_batch, False),
    "rnn": (rnn_init, rnn_loss, rnn_infer, rnn_batch, False),
    "unet": (unet_init, unet_loss, unet_infer, unet_batch, False),
    "gnn": (gnn_init, gnn_loss, gnn_infer, gnn_batch, False),
    "moe": (moe_init, moe_loss, moe_infer, moe_batch, False),
}


def build(family, cfg):
    """(function, abstract args) for one module configuration."""
    init, loss, infer, batch_fn, has_state = FAMILIES[family]
    shapes = jax.eval_shape(lambda: init(cfg, jax.random.key(0)))
    batch = batch_fn(cfg)
    if has_state:
        params, state = shapes
    else:
        params, state = shapes, None
    if cfg["mode"] == "train":
        opt_init, _ = OPTIMIZERS[cfg.get("opt", "adamw")]
        opt_state = jax.eval_shape(opt_init, params)
        fn = make_train_step(loss, cfg, has_state)
        args = (params, state, opt_state, batch) if has_state else (params, opt_state, batch)
        return fn, args
    # inference: parameters stored in the compute dtype
    params = jax.tree_util.tree_map(
        lambda a: S(a.shape, DTYPES[cfg["dtype"]]) if jnp.issubdtype(a.dtype, jnp.floating) else a,
        params,
    )
    batch = {
        k: v
        for k, v in batch.items()
        if k not in ("targets", "labels", "y", "masked_ids", "masked_weights")
    }
    if has_state:

        def fn(params, state, batch):
            return infer(params, state, batch, cfg)

        return fn, (params, state, batch)

    def fn(params, batch):
        return infer(params, batch, cfg)

    return fn, (params, batch)
