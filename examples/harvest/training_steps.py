"""Training steps written by hand, as a user without a model library writes them, in plain JAX:
AdamW with global-norm clipping whose step count is an f32 argument (its bias correction turns NaN
for a negative count, so the verification inputs draw float scalars positive), a GPT-style language
model with its layers unrolled and with them stacked and scanned under remat (bf16 and f32), a
ResNet-style CNN with batch norm in training mode and SGD with momentum (f32 and bf16), an
MLP-Mixer, a VAE and a diffusion U-Net drawing their noise in the graph, a selective scan
(lax.associative_scan) and an encoder-decoder with cross-attention, dropout and label smoothing:
522 to 2,951 instructions each. Written to run on JAX 0.4.13 too. Run it under `hlogym harvest`
(datasets/probes/generate.py does, with the pinned JAX and with JAX 0.4.13).
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

rng = np.random.default_rng(0)


def normal(*s, dt=jnp.float32, sc=0.1):
    return jnp.asarray(rng.standard_normal(s, dtype=np.float32) * sc).astype(dt)


def adamw(params, grads, m, v, t, lr=1e-3, wd=0.01):
    gn = jnp.sqrt(
        sum(jnp.sum(jnp.square(g.astype(jnp.float32))) for g in jax.tree_util.tree_leaves(grads))
    )
    scale = jnp.minimum(1.0, 1.0 / (gn + 1e-6))
    grads = jax.tree_util.tree_map(lambda g: g * scale.astype(g.dtype), grads)
    m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g.astype(jnp.float32), m, grads)
    v = jax.tree_util.tree_map(
        lambda v, g: 0.999 * v + 0.001 * jnp.square(g.astype(jnp.float32)), v, grads
    )
    bc1 = 1 - 0.9**t
    bc2 = 1 - 0.999**t
    params = jax.tree_util.tree_map(
        lambda p, m, v: (
            p.astype(jnp.float32)
            - lr * (m / bc1 / (jnp.sqrt(v / bc2) + 1e-8) + wd * p.astype(jnp.float32))
        ).astype(p.dtype),
        params,
        m,
        v,
    )
    return params, m, v


# 1. GPT-like LM, layers unrolled, bf16 compute, f32 loss, AdamW with global-norm clipping
D, H, S, V, B, L = 64, 4, 32, 256, 4, 4


def ln(x, g, b):
    x32 = x.astype(jnp.float32)
    m = x32.mean(-1, keepdims=True)
    va = ((x32 - m) ** 2).mean(-1, keepdims=True)
    return ((x32 - m) * lax.rsqrt(va + 1e-5) * g + b).astype(x.dtype)


def block(p, x, mask):
    h = ln(x, p["g1"], p["b1"])
    qkv = h @ p["qkv"]
    q, k, v = jnp.split(qkv, 3, -1)
    q = q.reshape(B, S, H, D // H)
    k = k.reshape(B, S, H, D // H)
    v = v.reshape(B, S, H, D // H)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / np.sqrt(D // H)
    s = jnp.where(mask, s, -1e9)
    a = jax.nn.softmax(s, -1).astype(x.dtype)
    o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, S, D)
    x = x + o @ p["o"]
    h = ln(x, p["g2"], p["b2"])
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def gpt_params(dt):
    def layer():
        return {
            "g1": jnp.ones(D),
            "b1": jnp.zeros(D),
            "qkv": normal(D, 3 * D, dt=dt),
            "o": normal(D, D, dt=dt),
            "g2": jnp.ones(D),
            "b2": jnp.zeros(D),
            "w1": normal(D, 4 * D, dt=dt),
            "w2": normal(4 * D, D, dt=dt),
        }

    return {
        "emb": normal(V, D, dt=dt),
        "pos": normal(S, D, dt=dt),
        "layers": [layer() for _ in range(L)],
        "gf": jnp.ones(D),
        "bf": jnp.zeros(D),
    }


def gpt_loss(p, tok):
    mask = jnp.tril(jnp.ones((S, S), bool))
    x = p["emb"][tok] + p["pos"]
    for lp in p["layers"]:
        x = block(lp, x, mask)
    x = ln(x, p["gf"], p["bf"])
    logits = (x @ p["emb"].T).astype(jnp.float32)
    lp = jax.nn.log_softmax(logits[:, :-1])
    tgt = tok[:, 1:]
    return -jnp.mean(jnp.take_along_axis(lp, tgt[..., None], -1))


def gpt_step(p, m, v, t, tok):
    loss, g = jax.value_and_grad(gpt_loss)(p, tok)
    p, m, v = adamw(p, g, m, v, t)
    return loss, p, m, v


tok = jnp.asarray(rng.integers(0, V, (B, S)), jnp.int32)
for dt in (jnp.bfloat16, jnp.float32):
    p = gpt_params(dt)
    z = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, jnp.float32), p)
    jax.jit(gpt_step)(p, z, z, 1.0, tok)


# 2. same, layers stacked and scanned with remat
def gpt_scan_loss(p, tok):
    mask = jnp.tril(jnp.ones((S, S), bool))
    x = p["emb"][tok] + p["pos"]
    f = jax.checkpoint(lambda x, lp: (block(lp, x, mask), None))
    x, _ = lax.scan(f, x, p["layers"])
    x = ln(x, p["gf"], p["bf"])
    logits = (x @ p["emb"].T).astype(jnp.float32)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits[:, :-1]), tok[:, 1:, None], -1))


def gpt_scan_step(p, m, v, t, tok):
    loss, g = jax.value_and_grad(gpt_scan_loss)(p, tok)
    p, m, v = adamw(p, g, m, v, t)
    return loss, p, m, v


for dt in (jnp.bfloat16, jnp.float32):
    p = gpt_params(dt)
    p["layers"] = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *p["layers"])
    z = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, jnp.float32), p)
    jax.jit(gpt_scan_step)(p, z, z, 1.0, tok)


# 3. ResNet-ish CNN, batch norm in training mode with running stats, SGD momentum
def bn(x, g, b, rm, rv):
    mu = x.mean((0, 1, 2))
    var = x.var((0, 1, 2))
    y = (x - mu) * lax.rsqrt(var + 1e-5) * g + b
    return y, 0.9 * rm + 0.1 * mu, 0.9 * rv + 0.1 * var


def conv(x, k, s=1):
    return lax.conv_general_dilated(
        x, k, (s, s), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def cnn_loss(p, st, x, y):
    new = {}
    h = conv(x, p["c0"])
    h, new["m0"], new["v0"] = bn(h, p["g0"], p["b0"], st["m0"], st["v0"])
    h = jax.nn.relu(h)
    for i in range(1, 4):
        r = h
        h = conv(h, p[f"c{i}a"])
        h, new[f"m{i}a"], new[f"v{i}a"] = bn(
            h, p[f"g{i}a"], p[f"b{i}a"], st[f"m{i}a"], st[f"v{i}a"]
        )
        h = jax.nn.relu(h)
        h = conv(h, p[f"c{i}b"])
        h, new[f"m{i}b"], new[f"v{i}b"] = bn(
            h, p[f"g{i}b"], p[f"b{i}b"], st[f"m{i}b"], st[f"v{i}b"]
        )
        h = jax.nn.relu(h + r)
        h = (
            lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")
            if i < 3
            else h
        )
    logits = h.mean((1, 2)) @ p["fc"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 10), -1)), new


def cnn_step(p, mom, st, x, y):
    (loss, new), g = jax.value_and_grad(cnn_loss, has_aux=True)(p, st, x, y)
    mom = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g, mom, g)
    p = jax.tree_util.tree_map(lambda p, m: p - 0.01 * m, p, mom)
    return loss, p, mom, new


C = 16
cp = {"c0": normal(3, 3, 3, C), "g0": jnp.ones(C), "b0": jnp.zeros(C), "fc": normal(C, 10)}
cs = {"m0": jnp.zeros(C), "v0": jnp.ones(C)}
for i in range(1, 4):
    for s in "ab":
        cp[f"c{i}{s}"] = normal(3, 3, C, C)
        cp[f"g{i}{s}"] = jnp.ones(C)
        cp[f"b{i}{s}"] = jnp.zeros(C)
        cs[f"m{i}{s}"] = jnp.zeros(C)
        cs[f"v{i}{s}"] = jnp.ones(C)
xs = normal(4, 16, 16, 3, sc=1.0)
ys = jnp.asarray(rng.integers(0, 10, 4), jnp.int32)
jax.jit(cnn_step)(cp, jax.tree_util.tree_map(jnp.zeros_like, cp), cs, xs, ys)
jax.jit(cnn_step)(
    jax.tree_util.tree_map(lambda a: a.astype(jnp.bfloat16), cp),
    jax.tree_util.tree_map(lambda a: jnp.zeros_like(a, jnp.bfloat16), cp),
    cs,
    xs.astype(jnp.bfloat16),
    ys,
)


# 4. MLP-Mixer training step
def mixer_loss(p, x, y):
    h = x @ p["in"]
    for lp in p["layers"]:
        t = ln(h, lp["g1"], lp["b1"]).swapaxes(1, 2)
        h = h + (jax.nn.gelu(t @ lp["t1"]) @ lp["t2"]).swapaxes(1, 2)
        c = ln(h, lp["g2"], lp["b2"])
        h = h + jax.nn.gelu(c @ lp["c1"]) @ lp["c2"]
    return jnp.mean(optax_like_ce(h.mean(1) @ p["out"], y))


def optax_like_ce(logits, y):
    return jax.nn.logsumexp(logits, -1) - jnp.take_along_axis(logits, y[:, None], -1)[:, 0]


P, Dm = 16, 32
mp = {
    "in": normal(48, Dm),
    "out": normal(Dm, 10),
    "layers": [
        {
            "g1": jnp.ones(Dm),
            "b1": jnp.zeros(Dm),
            "t1": normal(P, 64),
            "t2": normal(64, P),
            "g2": jnp.ones(Dm),
            "b2": jnp.zeros(Dm),
            "c1": normal(Dm, 64),
            "c2": normal(64, Dm),
        }
        for _ in range(4)
    ],
}


def mixer_step(p, m, v, t, x, y):
    loss, g = jax.value_and_grad(mixer_loss)(p, x, y)
    p, m, v = adamw(p, g, m, v, t)
    return loss, p, m, v


z = jax.tree_util.tree_map(jnp.zeros_like, mp)
jax.jit(mixer_step)(
    mp, z, z, 1.0, normal(8, P, 48, sc=1.0), jnp.asarray(rng.integers(0, 10, 8), jnp.int32)
)


# 5. VAE step with in-graph PRNG (threefry) and KL
def vae_loss(p, key, x):
    h = jax.nn.relu(x @ p["e1"])
    mu = h @ p["mu"]
    lv = h @ p["lv"]
    z = mu + jnp.exp(0.5 * lv) * jax.random.normal(key, mu.shape)
    r = jax.nn.sigmoid(jax.nn.relu(z @ p["d1"]) @ p["d2"])
    rec = -jnp.sum(x * jnp.log(r + 1e-7) + (1 - x) * jnp.log(1 - r + 1e-7), -1)
    kl = -0.5 * jnp.sum(1 + lv - mu**2 - jnp.exp(lv), -1)
    return jnp.mean(rec + kl)


vp = {
    "e1": normal(64, 128),
    "mu": normal(128, 16),
    "lv": normal(128, 16),
    "d1": normal(16, 128),
    "d2": normal(128, 64),
}


def vae_step(p, m, v, t, key, x):
    key, sub = jax.random.split(key)
    loss, g = jax.value_and_grad(vae_loss)(p, sub, x)
    p, m, v = adamw(p, g, m, v, t)
    return loss, p, m, v, key


z = jax.tree_util.tree_map(jnp.zeros_like, vp)
jax.jit(vae_step)(
    vp, z, z, 1.0, jax.random.PRNGKey(0), jnp.asarray(rng.random((16, 64)), jnp.float32)
)


# 6. selective-scan (Mamba-like) with associative_scan, training step
def ssm_loss(p, x, y):
    a = -jnp.exp(p["A"])
    dt = jax.nn.softplus(x @ p["dt"])  # [B,T,N]
    da = jnp.exp(dt * a)
    bx = dt * (x @ p["B"])

    def comb(l, r):
        return (l[0] * r[0], r[0] * l[1] + r[1])

    _, h = lax.associative_scan(comb, (da, bx), axis=1)
    out = (h * (x @ p["C"])) @ p["out"]
    return jnp.mean((out - y) ** 2)


sp = {
    "A": normal(16),
    "dt": normal(24, 16),
    "B": normal(24, 16),
    "C": normal(24, 16),
    "out": normal(16, 24),
}


def ssm_step(p, m, v, t, x, y):
    loss, g = jax.value_and_grad(ssm_loss)(p, x, y)
    p, m, v = adamw(p, g, m, v, t)
    return loss, p, m, v


z = jax.tree_util.tree_map(jnp.zeros_like, sp)
jax.jit(ssm_step)(sp, z, z, 1.0, normal(4, 64, 24, sc=1.0), normal(4, 64, 24, sc=1.0))


# 7. diffusion UNet-ish: group norm, time embedding, resize up/down, noise in-graph
def gn(x, g, b, G=4):
    B_, Hh, W, Cc = x.shape
    xr = x.reshape(B_, Hh, W, G, Cc // G)
    m = xr.mean((1, 2, 4), keepdims=True)
    va = xr.var((1, 2, 4), keepdims=True)
    return ((xr - m) * lax.rsqrt(va + 1e-5)).reshape(x.shape) * g + b


def unet_loss(p, key, x0):
    k1, k2 = jax.random.split(key)
    t = jax.random.uniform(k1, (x0.shape[0],))
    eps = jax.random.normal(k2, x0.shape)
    ab = jnp.cos(t * np.pi / 2)[:, None, None, None] ** 2
    xt = jnp.sqrt(ab) * x0 + jnp.sqrt(1 - ab) * eps
    temb = (
        jnp.concatenate(
            [jnp.sin(t[:, None] * jnp.arange(1, 9)), jnp.cos(t[:, None] * jnp.arange(1, 9))], -1
        )
        @ p["temb"]
    )
    h1 = jax.nn.silu(gn(conv(xt, p["c1"]), p["g1"], p["b1"])) + temb[:, None, None, :]
    h2 = jax.nn.silu(gn(conv(h1, p["c2"], 2), p["g2"], p["b2"]))
    u = jax.image.resize(h2, h1.shape[:3] + (h2.shape[3],), "nearest")
    h3 = jax.nn.silu(gn(conv(jnp.concatenate([u, h1], -1), p["c3"]), p["g3"], p["b3"]))
    return jnp.mean((conv(h3, p["c4"]) - eps) ** 2)


up = {
    "temb": normal(16, 16),
    "c1": normal(3, 3, 3, 16),
    "g1": jnp.ones(16),
    "b1": jnp.zeros(16),
    "c2": normal(3, 3, 16, 32),
    "g2": jnp.ones(32),
    "b2": jnp.zeros(32),
    "c3": normal(3, 3, 48, 16),
    "g3": jnp.ones(16),
    "b3": jnp.zeros(16),
    "c4": normal(3, 3, 16, 3),
}


def unet_step(p, m, v, t, key, x):
    key, sub = jax.random.split(key)
    loss, g = jax.value_and_grad(unet_loss)(p, sub, x)
    p, m, v = adamw(p, g, m, v, t)
    return loss, p, m, v, key


z = jax.tree_util.tree_map(jnp.zeros_like, up)
jax.jit(unet_step)(up, z, z, 1.0, jax.random.PRNGKey(1), normal(4, 16, 16, 3, sc=1.0))


# 8. encoder-decoder transformer, cross attention, dropout, label smoothing, f32
def mha(p, xq, xkv, mask=None):
    q = (xq @ p["q"]).reshape(*xq.shape[:2], 4, 16)
    k = (xkv @ p["k"]).reshape(*xkv.shape[:2], 4, 16)
    v = (xkv @ p["v"]).reshape(*xkv.shape[:2], 4, 16)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / 4.0
    if mask is not None:
        s = jnp.where(mask, s, -1e9)
    return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s), v).reshape(*xq.shape[:2], 64) @ p["o"]


def drop(key, x, r=0.1):
    return jnp.where(jax.random.bernoulli(key, 1 - r, x.shape), x / (1 - r), 0)


def ed_loss(p, key, src, tgt):
    ks = jax.random.split(key, 8)
    e = p["emb"][src]
    for i in range(2):
        e = ln(e + drop(ks[i], mha(p[f"enc{i}"], e, e)), 1.0, 0.0)
        e = ln(e + jax.nn.relu(e @ p[f"ef{i}a"]) @ p[f"ef{i}b"], 1.0, 0.0)
    d = p["emb"][tgt[:, :-1]]
    mask = jnp.tril(jnp.ones((d.shape[1], d.shape[1]), bool))
    for i in range(2):
        d = ln(d + drop(ks[2 + i], mha(p[f"dself{i}"], d, d, mask)), 1.0, 0.0)
        d = ln(d + mha(p[f"dx{i}"], d, e), 1.0, 0.0)
        d = ln(d + drop(ks[4 + i], jax.nn.relu(d @ p[f"df{i}a"]) @ p[f"df{i}b"]), 1.0, 0.0)
    logits = d @ p["emb"].T
    lab = jax.nn.one_hot(tgt[:, 1:], 128) * 0.9 + 0.1 / 128
    return -jnp.mean(jnp.sum(lab * jax.nn.log_softmax(logits), -1))


def att():
    return {"q": normal(64, 64), "k": normal(64, 64), "v": normal(64, 64), "o": normal(64, 64)}


ep = {"emb": normal(128, 64)}
for i in range(2):
    ep[f"enc{i}"] = att()
    ep[f"dself{i}"] = att()
    ep[f"dx{i}"] = att()
    ep[f"ef{i}a"] = normal(64, 128)
    ep[f"ef{i}b"] = normal(128, 64)
    ep[f"df{i}a"] = normal(64, 128)
    ep[f"df{i}b"] = normal(128, 64)


def ed_step(p, m, v, t, key, src, tgt):
    key, sub = jax.random.split(key)
    loss, g = jax.value_and_grad(ed_loss)(p, sub, src, tgt)
    p, m, v = adamw(p, g, m, v, t)
    return loss, p, m, v, key


z = jax.tree_util.tree_map(jnp.zeros_like, ep)
jax.jit(ed_step)(
    ep,
    z,
    z,
    1.0,
    jax.random.PRNGKey(2),
    jnp.asarray(rng.integers(0, 128, (4, 16)), jnp.int32),
    jnp.asarray(rng.integers(0, 128, (4, 17)), jnp.int32),
)
