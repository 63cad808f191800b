"""Corpus families written with the model libraries JAX users run, not hand-written JAX.

Each family is built the way a user of that library writes it, and lowered through the library's
own functional entry point:
  keras_*   Keras 3 applications on the JAX backend (keras.applications, weights=None, logits out):
            MobileNetV3Small, EfficientNetB0, ConvNeXtTiny, DenseNet121 at small resolutions;
            inference through model.stateless_call, training through jax.value_and_grad of it and
            the Keras optimizer's stateless_apply (AdamW); bf16 is Keras's mixed_bfloat16 policy.
  flax_*    Flax: a Llama-style decoder in flax.nnx (RMSNorm, rotary embeddings, grouped-query
            attention, SwiGLU), and a convolutional VAE in flax.linen (reparameterization with a
            PRNG key input, transposed convolutions); optax AdamW.
            For datasets/large_steps: a ResNet-34/50 in flax.linen with BatchNorm statistics as a
            mutable collection (optax SGD with Nesterov momentum or AdamW), and a ViT in flax.nnx
            with nnx.MultiHeadAttention (nnx_vit).
  eqx_*     Equinox: a Mamba-style selective state-space model (input-dependent discretization,
            lax.scan over time), and a WaveNet-style stack of dilated causal convolutions with gated
            activations and skip connections; optax AdamW.

build(family, cfg) returns (function, abstract arguments) like models.build: parameters, optimizer
state and batches are jax.ShapeDtypeStructs, so only the module's structure depends on the library
version (pinned in datasets/corpus/requirements-libraries.txt).
"""

from __future__ import annotations

import os

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax
import jax.numpy as jnp

f32, bf16, i32 = jnp.float32, jnp.bfloat16, jnp.int32
DTYPES = {"f32": f32, "bf16": bf16}


def S(shape, dtype=f32):
    return jax.ShapeDtypeStruct(tuple(shape), dtype)


def abstract(tree):
    return jax.tree_util.tree_map(lambda a: S(a.shape, a.dtype), tree)


def xent(logits, labels):
    logp = jax.nn.log_softmax(logits.astype(f32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], axis=-1))


# ---------------------------------------------------------------------------------------------
# Keras 3 applications (JAX backend)
# ---------------------------------------------------------------------------------------------
KERAS_APPS = {
    "keras_mobilenetv3": ("MobileNetV3Small", dict(include_preprocessing=False)),
    "keras_efficientnet": ("EfficientNetB0", {}),
    "keras_convnext": ("ConvNeXtTiny", dict(include_preprocessing=False)),
    "keras_densenet": ("DenseNet121", {}),
}


def keras_build(family, cfg):
    import keras

    keras.utils.set_random_seed(0)
    keras.mixed_precision.set_global_policy(
        "mixed_bfloat16" if cfg["dtype"] == "bf16" else "float32"
    )
    app, extra = KERAS_APPS[family]
    kwargs = dict(
        weights=None,
        input_shape=(cfg["res"], cfg["res"], 3),
        classes=cfg["classes"],
        classifier_activation=None,
        **extra,
    )
    if "alpha" in cfg:
        kwargs["alpha"] = cfg["alpha"]
    model = getattr(keras.applications, app)(**kwargs)
    tv = [v.value for v in model.trainable_variables]
    ntv = [v.value for v in model.non_trainable_variables]
    images = S((cfg["batch"], cfg["res"], cfg["res"], 3))
    if cfg["mode"] == "infer":

        def infer(tv, ntv, images):
            logits, _ = model.stateless_call(tv, ntv, images, training=False)
            return logits

        return infer, (abstract(tv), abstract(ntv), images)

    optimizer = keras.optimizers.AdamW(learning_rate=1e-3)
    optimizer.build(model.trainable_variables)
    ov = [v.value for v in optimizer.variables]

    def loss_fn(tv, ntv, images, labels):
        logits, ntv = model.stateless_call(tv, ntv, images, training=True)
        return xent(logits, labels), ntv

    def train(tv, ntv, ov, images, labels):
        (loss, ntv), grads = jax.value_and_grad(loss_fn, has_aux=True)(tv, ntv, images, labels)
        tv, ov = optimizer.stateless_apply(ov, grads, tv)
        return loss, tv, ntv, ov

    return train, (abstract(tv), abstract(ntv), abstract(ov), images, S((cfg["batch"],), i32))


# ---------------------------------------------------------------------------------------------
# Flax
# ---------------------------------------------------------------------------------------------
def rope(x, base=10000.0):
    """Rotary position embedding over the last axis of x[B, T, H, D]."""
    T, D = x.shape[1], x.shape[-1]
    freqs = base ** (-jnp.arange(0, D, 2, dtype=f32) / D)
    angles = jnp.arange(T, dtype=f32)[:, None] * freqs[None, :]
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    x1, x2 = x[..., 0::2].astype(f32), x[..., 1::2].astype(f32)
    out = jnp.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(x.shape)
    return out.astype(x.dtype)


def flax_llama_model(cfg):
    from flax import nnx

    dt = DTYPES[cfg["dtype"]]

    class Attention(nnx.Module):
        def __init__(self, d, heads, kv_heads, rngs):
            self.h, self.kv, self.hd = heads, kv_heads, d // heads
            self.q = nnx.Linear(d, d, use_bias=False, dtype=dt, rngs=rngs)
            self.k = nnx.Linear(d, kv_heads * self.hd, use_bias=False, dtype=dt, rngs=rngs)
            self.v = nnx.Linear(d, kv_heads * self.hd, use_bias=False, dtype=dt, rngs=rngs)
            self.o = nnx.Linear(d, d, use_bias=False, dtype=dt, rngs=rngs)

        def __call__(self, x):
            B, T, _ = x.shape
            q = rope(self.q(x).reshape(B, T, self.h, self.hd))
            k = rope(self.k(x).reshape(B, T, self.kv, self.hd))
            v = self.v(x).reshape(B, T, self.kv, self.hd)
            rep = self.h // self.kv
            k, v = jnp.repeat(k, rep, axis=2), jnp.repeat(v, rep, axis=2)
            s = jnp.einsum("bthd,bshd->bhts", q, k) / jnp.sqrt(self.hd).astype(dt)
            s = jnp.where(jnp.tril(jnp.ones((T, T), bool)), s.astype(f32), -1e9)
            p = jax.nn.softmax(s, axis=-1).astype(dt)
            return self.o(jnp.einsum("bhts,bshd->bthd", p, v).reshape(B, T, -1))

    class Block(nnx.Module):
        def __init__(self, d, heads, kv_heads, ffn, rngs):
            self.n1 = nnx.RMSNorm(d, dtype=dt, rngs=rngs)
            self.att = Attention(d, heads, kv_heads, rngs)
            self.n2 = nnx.RMSNorm(d, dtype=dt, rngs=rngs)
            self.gate = nnx.Linear(d, ffn, use_bias=False, dtype=dt, rngs=rngs)
            self.up = nnx.Linear(d, ffn, use_bias=False, dtype=dt, rngs=rngs)
            self.down = nnx.Linear(ffn, d, use_bias=False, dtype=dt, rngs=rngs)

        def __call__(self, x):
            x = x + self.att(self.n1(x))
            h = self.n2(x)
            return x + self.down(jax.nn.silu(self.gate(h)) * self.up(h))

    class Llama(nnx.Module):
        def __init__(self, rngs):
            d = cfg["d"]
            self.embed = nnx.Embed(cfg["vocab"], d, dtype=dt, rngs=rngs)
            self.blocks = nnx.List(
                [Block(d, cfg["heads"], cfg["kv_heads"], 2 * d, rngs) for _ in range(cfg["layers"])]
            )
            self.norm = nnx.RMSNorm(d, dtype=dt, rngs=rngs)
            self.head = nnx.Linear(d, cfg["vocab"], use_bias=False, dtype=dt, rngs=rngs)

        def __call__(self, tokens):
            x = self.embed(tokens)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.norm(x))

    return Llama(nnx.Rngs(0))


def flax_llama_build(cfg):
    from flax import nnx
    import optax

    graphdef, params = nnx.split(flax_llama_model(cfg), nnx.Param)
    tokens = S((cfg["batch"], cfg["seq"]), i32)

    def logits_of(params, tokens):
        return nnx.merge(graphdef, params)(tokens)

    if cfg["mode"] == "infer":
        return logits_of, (abstract(params), tokens)
    tx = optax.adamw(1e-3)

    def train(params, opt_state, tokens, targets):
        loss, grads = jax.value_and_grad(lambda p: xent(logits_of(p, tokens), targets))(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), opt_state

    return train, (abstract(params), jax.eval_shape(tx.init, params), tokens, tokens)


def flax_vae_build(cfg):
    import flax.linen as nn
    import optax

    dt = DTYPES[cfg["dtype"]]
    ch, z = cfg["ch"], cfg["latent"]

    class VAE(nn.Module):
        @nn.compact
        def __call__(self, x, key):
            h = x
            for mult in (1, 2):
                h = nn.gelu(nn.Conv(ch * mult, (3, 3), strides=2, dtype=dt)(h))
            h = h.reshape(h.shape[0], -1)
            mu, logvar = nn.Dense(z, dtype=dt)(h), nn.Dense(z, dtype=dt)(h)
            zs = mu + jnp.exp(0.5 * logvar) * jax.random.normal(key, mu.shape, dt)
            r = cfg["res"] // 4
            h = nn.Dense(r * r * 2 * ch, dtype=dt)(zs).reshape(-1, r, r, 2 * ch)
            h = nn.gelu(nn.ConvTranspose(ch, (3, 3), strides=(2, 2), dtype=dt)(h))
            recon = nn.ConvTranspose(x.shape[-1], (3, 3), strides=(2, 2), dtype=dt)(h)
            return recon, mu, logvar

    model = VAE()
    images = S((cfg["batch"], cfg["res"], cfg["res"], 3))
    key = jax.eval_shape(lambda: jax.random.key(0))
    params = jax.eval_shape(
        lambda: model.init(jax.random.key(0), jnp.zeros(images.shape), jax.random.key(1))
    )

    def loss_fn(params, images, key):
        recon, mu, logvar = model.apply(params, images, key)
        rec = jnp.mean((recon.astype(f32) - images) ** 2)
        mu, logvar = mu.astype(f32), logvar.astype(f32)
        kl = -0.5 * jnp.mean(1 + logvar - mu**2 - jnp.exp(logvar))
        return rec + kl

    if cfg["mode"] == "infer":
        return loss_fn, (params, images, key)
    tx = optax.adamw(1e-3)

    def train(params, opt_state, images, key):
        loss, grads = jax.value_and_grad(loss_fn)(params, images, key)
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), opt_state

    return train, (params, jax.eval_shape(tx.init, params), images, key)


def flax_resnet_build(cfg):
    """A Flax Linen ResNet (basic blocks for depth 34, bottlenecks for 50) with BatchNorm whose
    running statistics are a mutable collection, trained as users of Flax's examples do: weight
    decay in the loss, optax SGD with Nesterov momentum or AdamW."""
    from functools import partial

    import flax.linen as nn
    import optax

    dt = DTYPES[cfg["dtype"]]
    norm = partial(nn.BatchNorm, momentum=0.9, epsilon=1e-5, dtype=dt)
    conv = partial(nn.Conv, use_bias=False, dtype=dt)
    zero_scale = dict(scale_init=nn.initializers.zeros)  # each block starts as the identity

    class Basic(nn.Module):
        filters: int
        strides: int = 1

        @nn.compact
        def __call__(self, x, train):
            y = conv(self.filters, (3, 3), self.strides)(x)
            y = nn.relu(norm(use_running_average=not train)(y))
            y = norm(use_running_average=not train, **zero_scale)(conv(self.filters, (3, 3))(y))
            if x.shape != y.shape:
                x = norm(use_running_average=not train)(conv(self.filters, (1, 1), self.strides)(x))
            return nn.relu(x + y)

    class Bottleneck(nn.Module):
        filters: int
        strides: int = 1

        @nn.compact
        def __call__(self, x, train):
            y = nn.relu(norm(use_running_average=not train)(conv(self.filters, (1, 1))(x)))
            y = conv(self.filters, (3, 3), self.strides)(y)
            y = nn.relu(norm(use_running_average=not train)(y))
            y = norm(use_running_average=not train, **zero_scale)(conv(4 * self.filters, (1, 1))(y))
            if x.shape != y.shape:
                x = conv(4 * self.filters, (1, 1), self.strides)(x)
                x = norm(use_running_average=not train)(x)
            return nn.relu(x + y)

    sizes, block = {34: ([3, 4, 6, 3], Basic), 50: ([3, 4, 6, 3], Bottleneck)}[cfg["depth"]]

    class ResNet(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            x = nn.relu(
                norm(use_running_average=not train)(conv(cfg["width"], (3, 3))(x.astype(dt)))
            )
            for i, n in enumerate(sizes):
                for j in range(n):
                    x = block(cfg["width"] * 2**i, 2 if i > 0 and j == 0 else 1)(x, train)
            return nn.Dense(cfg["classes"], dtype=dt)(jnp.mean(x, axis=(1, 2)))

    model = ResNet()
    images = S((cfg["batch"], cfg["res"], cfg["res"], 3))
    variables = jax.eval_shape(
        lambda: model.init(jax.random.key(0), jnp.zeros(images.shape), train=False)
    )
    params, stats = variables["params"], variables["batch_stats"]
    tx = optax.sgd(0.1, momentum=0.9, nesterov=True) if cfg["opt"] == "sgd" else optax.adamw(1e-3)

    def loss_fn(params, stats, images, labels):
        logits, updated = model.apply(
            {"params": params, "batch_stats": stats}, images, train=True, mutable=["batch_stats"]
        )
        decay = sum(jnp.sum(p.astype(f32) ** 2) for p in jax.tree_util.tree_leaves(params))
        return xent(logits, labels) + 5e-4 * decay, updated["batch_stats"]

    def train(params, stats, opt_state, images, labels):
        grad_fn = jax.value_and_grad(loss_fn, has_aux=True)
        (loss, stats), grads = grad_fn(params, stats, images, labels)
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), stats, opt_state

    labels = S((cfg["batch"],), i32)
    return train, (params, stats, jax.eval_shape(tx.init, params), images, labels)


def nnx_vit_build(cfg):
    """A ViT in flax.nnx (patch convolution, class token, nnx.MultiHeadAttention, pre-norm MLP
    blocks), trained with optax AdamW or SGD with momentum."""
    from flax import nnx
    import optax

    dt = DTYPES[cfg["dtype"]]
    d, p = cfg["d"], cfg["patch"]

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.n1 = nnx.LayerNorm(d, dtype=dt, rngs=rngs)
            self.att = nnx.MultiHeadAttention(cfg["heads"], d, dtype=dt, decode=False, rngs=rngs)
            self.n2 = nnx.LayerNorm(d, dtype=dt, rngs=rngs)
            self.fc1 = nnx.Linear(d, 4 * d, dtype=dt, rngs=rngs)
            self.fc2 = nnx.Linear(4 * d, d, dtype=dt, rngs=rngs)

        def __call__(self, x):
            x = x + self.att(self.n1(x))
            return x + self.fc2(nnx.gelu(self.fc1(self.n2(x))))

    class ViT(nnx.Module):
        def __init__(self, rngs):
            self.embed = nnx.Conv(3, d, (p, p), strides=(p, p), dtype=dt, rngs=rngs)
            tokens = (cfg["res"] // p) ** 2 + 1
            self.cls = nnx.Param(jnp.zeros((1, 1, d)))
            self.pos = nnx.Param(0.02 * jax.random.normal(jax.random.key(1), (1, tokens, d)))
            self.blocks = nnx.List([Block(rngs) for _ in range(cfg["layers"])])
            self.norm = nnx.LayerNorm(d, dtype=dt, rngs=rngs)
            self.head = nnx.Linear(d, cfg["classes"], dtype=dt, rngs=rngs)

        def __call__(self, images):
            x = self.embed(images.astype(dt))
            x = x.reshape(x.shape[0], -1, d)
            cls = jnp.broadcast_to(self.cls[...].astype(dt), (x.shape[0], 1, d))
            x = jnp.concatenate([cls, x], axis=1) + self.pos[...].astype(dt)
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x)[:, 0])

    graphdef, params = nnx.split(ViT(nnx.Rngs(0)), nnx.Param)
    tx = optax.adamw(1e-3) if cfg["opt"] == "adamw" else optax.sgd(0.05, momentum=0.9)

    def train(params, opt_state, images, labels):
        loss_fn = lambda p: xent(nnx.merge(graphdef, p)(images), labels)  # noqa: E731
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), opt_state

    images = S((cfg["batch"], cfg["res"], cfg["res"], 3))
    labels = S((cfg["batch"],), i32)
    return train, (abstract(params), jax.eval_shape(tx.init, params), images, labels)


# ---------------------------------------------------------------------------------------------
# Equinox
# ---------------------------------------------------------------------------------------------
def eqx_mamba_model(cfg):
    import equinox as eqx

    dt = DTYPES[cfg["dtype"]]
    d, n, e = cfg["d"], cfg["state"], 2 * cfg["d"]

    class Mixer(eqx.Module):
        inp: eqx.nn.Linear
        conv: eqx.nn.Conv1d
        x_proj: eqx.nn.Linear
        dt_proj: eqx.nn.Linear
        out: eqx.nn.Linear
        norm: eqx.nn.RMSNorm
        A_log: jax.Array
        D: jax.Array

        def __init__(self, key):
            k = jax.random.split(key, 5)
            self.inp = eqx.nn.Linear(d, 2 * e, use_bias=False, key=k[0])
            self.conv = eqx.nn.Conv1d(e, e, 4, padding=((3, 0),), groups=e, key=k[1])
            self.x_proj = eqx.nn.Linear(e, 1 + 2 * n, use_bias=False, key=k[2])
            self.dt_proj = eqx.nn.Linear(1, e, key=k[3])
            self.out = eqx.nn.Linear(e, d, use_bias=False, key=k[4])
            self.norm = eqx.nn.RMSNorm(d)
            self.A_log = jnp.log(jnp.tile(jnp.arange(1, n + 1, dtype=f32), (e, 1)))
            self.D = jnp.ones((e,), f32)

        def __call__(self, x):  # x[T, d]
            h = jax.vmap(self.norm)(x)
            xz = jax.vmap(self.inp)(h.astype(dt))
            u, gate = jnp.split(xz, 2, axis=-1)
            u = jax.nn.silu(self.conv(u.T).T)
            proj = jax.vmap(self.x_proj)(u).astype(f32)
            delta = jax.nn.softplus(jax.vmap(self.dt_proj)(proj[:, :1]))
            B, C = proj[:, 1 : 1 + n], proj[:, 1 + n :]
            A = -jnp.exp(self.A_log)

            def scan_step(s, inp):
                dlt, b, c, ut = inp
                s = jnp.exp(dlt[:, None] * A) * s + (dlt * ut)[:, None] * b[None, :]
                return s, s @ c

            _, y = jax.lax.scan(scan_step, jnp.zeros((e, n), f32), (delta, B, C, u.astype(f32)))
            y = (y + u.astype(f32) * self.D).astype(dt) * jax.nn.silu(gate)
            return x + jax.vmap(self.out)(y).astype(x.dtype)

    class Mamba(eqx.Module):
        embed: eqx.nn.Embedding
        layers: list
        head: eqx.nn.Linear

        def __init__(self, key):
            k = jax.random.split(key, cfg["layers"] + 2)
            self.embed = eqx.nn.Embedding(cfg["vocab"], d, key=k[0])
            self.layers = [Mixer(k[i + 1]) for i in range(cfg["layers"])]
            self.head = eqx.nn.Linear(d, cfg["vocab"], use_bias=False, key=k[-1])

        def __call__(self, tokens):  # tokens[T]
            x = jax.vmap(self.embed)(tokens)
            for layer in self.layers:
                x = layer(x)
            return jax.vmap(self.head)(x.astype(dt))

    return Mamba(jax.random.key(0))


def eqx_wavenet_model(cfg):
    import equinox as eqx

    dt = DTYPES[cfg["dtype"]]
    c = cfg["ch"]

    class Layer(eqx.Module):
        dil: eqx.nn.Conv1d
        res: eqx.nn.Conv1d
        skip: eqx.nn.Conv1d

        def __init__(self, dilation, key):
            k = jax.random.split(key, 3)
            self.dil = eqx.nn.Conv1d(
                c, 2 * c, 2, dilation=dilation, padding=((dilation, 0),), key=k[0]
            )
            self.res = eqx.nn.Conv1d(c, c, 1, key=k[1])
            self.skip = eqx.nn.Conv1d(c, c, 1, key=k[2])

        def __call__(self, x):  # x[c, T]
            a, b = jnp.split(self.dil(x.astype(dt)), 2, axis=0)
            h = jnp.tanh(a) * jax.nn.sigmoid(b)
            return x + self.res(h).astype(x.dtype), self.skip(h)

    class WaveNet(eqx.Module):
        inp: eqx.nn.Conv1d
        layers: list
        out1: eqx.nn.Conv1d
        out2: eqx.nn.Conv1d

        def __init__(self, key):
            k = jax.random.split(key, cfg["layers"] + 3)
            self.inp = eqx.nn.Conv1d(1, c, 1, key=k[0])
            self.layers = [Layer(2 ** (i % cfg["cycle"]), k[i + 1]) for i in range(cfg["layers"])]
            self.out1 = eqx.nn.Conv1d(c, c, 1, key=k[-2])
            self.out2 = eqx.nn.Conv1d(c, cfg["classes"], 1, key=k[-1])

        def __call__(self, audio):  # audio[T]
            x = self.inp(audio[None, :].astype(dt))
            skips = 0
            for layer in self.layers:
                x, s = layer(x)
                skips = skips + s
            return self.out2(jax.nn.relu(self.out1(jax.nn.relu(skips)))).T  # [T, classes]

    return WaveNet(jax.random.key(0))


def eqx_build(model, cfg, inputs, targets):
    import equinox as eqx
    import optax

    params, static = eqx.partition(model, eqx.is_array)

    dt = DTYPES[cfg["dtype"]]

    def logits_of(params, x):
        # mixed precision: f32 master weights, the forward pass in the compute dtype
        params = jax.tree_util.tree_map(lambda a: a.astype(dt), params)
        return jax.vmap(eqx.combine(params, static))(x)

    if cfg["mode"] == "infer":
        return logits_of, (abstract(params), inputs)
    tx = optax.adamw(1e-3)

    def train(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(lambda p: xent(logits_of(p, x), y))(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), opt_state

    return train, (abstract(params), jax.eval_shape(tx.init, params), inputs, targets)


def eqx_lstm_model(cfg):
    """For the generated training set: an Equinox LSTM text classifier (eqx.nn.LSTMCell stepped
    by lax.scan, the mean hidden state classified)."""
    import equinox as eqx

    dt = DTYPES[cfg["dtype"]]

    class Classifier(eqx.Module):
        embed: eqx.nn.Embedding
        cells: list
        head: eqx.nn.Linear

        def __init__(self, key):
            k = jax.random.split(key, cfg["layers"] + 2)
            self.embed = eqx.nn.Embedding(cfg["vocab"], cfg["embed"], key=k[0])
            sizes = [cfg["embed"]] + [cfg["hidden"]] * cfg["layers"]
            self.cells = [
                eqx.nn.LSTMCell(a, b, key=kk) for a, b, kk in zip(sizes, sizes[1:], k[1:])
            ]
            self.head = eqx.nn.Linear(cfg["hidden"], cfg["classes"], key=k[-1])

        def __call__(self, tokens):  # tokens[T]
            xs = jax.vmap(self.embed)(tokens).astype(dt)
            for cell in self.cells:
                zeros = jnp.zeros((cell.hidden_size,), dt)

                def step(carry, x, cell=cell):
                    h, c = cell(x, carry)
                    return (h, c), h

                _, xs = jax.lax.scan(step, (zeros, zeros), xs)
            return self.head(xs.mean(0))

    return Classifier(jax.random.key(0))


def flax_cnn_build(cfg):
    """For the generated training set: a Flax Linen CNN with BatchNorm (running statistics as a
    mutable collection) and Dropout (a PRNG key input), trained with optax SGD with momentum."""
    import flax.linen as nn
    import optax

    dt = DTYPES[cfg["dtype"]]

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            x = x.astype(dt)
            for width in cfg["widths"]:
                x = nn.Conv(width, (3, 3), use_bias=False, dtype=dt)(x)
                x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9, dtype=dt)(x))
                x = nn.max_pool(x, (2, 2), (2, 2))
            x = nn.Dropout(cfg["dropout"], deterministic=not train)(x.reshape(x.shape[0], -1))
            return nn.Dense(cfg["classes"], dtype=dt)(x)

    model = CNN()
    images = S((cfg["batch"], cfg["res"], cfg["res"], 3))
    variables = jax.eval_shape(
        lambda: model.init(jax.random.key(0), jnp.zeros(images.shape), train=False)
    )
    params, stats = abstract(variables["params"]), abstract(variables["batch_stats"])
    if cfg["mode"] == "infer":

        def infer(params, stats, x):
            return model.apply({"params": params, "batch_stats": stats}, x, train=False)

        return infer, (params, stats, images)
    tx = optax.sgd(0.05, momentum=0.9)
    labels = S((cfg["batch"],), i32)

    def train(params, stats, opt_state, x, y, key):
        def loss_fn(p):
            logits, updated = model.apply(
                {"params": p, "batch_stats": stats},
                x,
                train=True,
                mutable=["batch_stats"],
                rngs={"dropout": key},
            )
            return xent(logits, y), updated["batch_stats"]

        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return loss, optax.apply_updates(params, updates), stats, opt_state

    key = jax.eval_shape(lambda: jax.random.key(0))
    return train, (params, stats, jax.eval_shape(tx.init, params), images, labels, key)


# ---------------------------------------------------------------------------------------------
def build(family, cfg):
    """(function, abstract args) for one configuration of a library family."""
    if family in KERAS_APPS:
        return keras_build(family, cfg)
    if family == "flax_llama":
        return flax_llama_build(cfg)
    if family == "flax_vae":
        return flax_vae_build(cfg)
    if family == "flax_resnet":
        return flax_resnet_build(cfg)
    if family == "nnx_vit":
        return nnx_vit_build(cfg)
    if family == "eqx_mamba":
        tokens = S((cfg["batch"], cfg["seq"]), i32)
        return eqx_build(eqx_mamba_model(cfg), cfg, tokens, tokens)
    if family == "eqx_wavenet":
        return eqx_build(
            eqx_wavenet_model(cfg),
            cfg,
            S((cfg["batch"], cfg["seq"])),
            S((cfg["batch"], cfg["seq"]), i32),
        )
    if family == "eqx_lstm":
        tokens = S((cfg["batch"], cfg["seq"]), i32)
        return eqx_build(eqx_lstm_model(cfg), cfg, tokens, S((cfg["batch"],), i32))
    if family == "flax_cnn":
        return flax_cnn_build(cfg)
    raise KeyError(family)


LIBRARY = {
    **{f: "keras" for f in KERAS_APPS},
    "flax_llama": "flax",
    "flax_vae": "flax",
    "flax_resnet": "flax",
    "nnx_vit": "flax",
    "eqx_mamba": "equinox",
    "eqx_wavenet": "equinox",
    "eqx_lstm": "equinox",
    "flax_cnn": "flax",
}
