"""jax.jit steps on 4 host CPU devices, the batch split (`NamedSharding`), the parameters whole:
XLA's SPMD partitioner places the collectives (an all-reduce after each reduction and gradient
dot or convolution over the batch). An MLP step, a classifier step (layer norm, GELU, one-hot
cross-entropy) and its inference, a CNN step (average pooling), a batch-norm CNN step with
integer-label cross-entropy (a gather and a scatter batched with the labels) and momentum, and the
regression step with its targets given whole (`NamedSharding(mesh, P())`: XLA slices them for the
split batch) or as a NumPy array (uncommitted: XLA's propagation splits the parameter itself), and
the batch-norm step with its integer labels as a NumPy array (split with the batch by XLA, their
bounds check and the gradient's scatter with them), and a small causal language model's step
(an embedding looked up by split token ids: its gradient a scatter-add each device makes of its
part, completed by an all-reduce), and a masked regression step with its per-example mask as a
NumPy array (XLA shards the mask; its count is summed in parts). Loops over the split batch: an
RNN's step and its loss (`lax.scan` over time, its state split from the start and its weight
gradients completed by all-reduces inside the loop), a GRU over time-major inputs, an Euler
solve's step and the solve (`fori_loop`), an MLP step with dropout (the PRNG's loop and an
iota split along its own dimension), Newton's iteration until the whole batch converges (a
`while_loop` whose condition reduces over the split batch), two stacked RNN layers (a scan over
layers around a scan over time), a bf16 RNN step, and an RNN step whose loss accumulates in the
scan's carry. And `out_shardings` asking for whole results (Shardy's result mark; XLA gathers the
split result at the end): the regression step's and the MLP's prediction.
Run it under `hlogym harvest` (datasets/probes/generate.py does).
"""

import os

# Before jax is imported: the host platform's device count.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

mesh = Mesh(np.array(jax.devices()), ("batch",))
whole = NamedSharding(mesh, P())
split = NamedSharding(mesh, P("batch"))
rng = np.random.default_rng(0)


def normal(*shape):
    return jnp.asarray(rng.standard_normal(shape, dtype=np.float32) * 0.1)


def mse(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


@jax.jit
def regression_step(params, x, y):
    loss, grads = jax.value_and_grad(mse)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


def layer_norm(x, scale, bias):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias


def logits(params, x):
    h = jax.nn.gelu(layer_norm(x @ params["w1"], params["scale"], params["bias"]))
    return h @ params["w2"]


def cross_entropy(params, x, labels):
    log_probs = jax.nn.log_softmax(logits(params, x))
    return -jnp.mean(jnp.sum(log_probs * jax.nn.one_hot(labels, 10), -1))


@jax.jit
def classifier_step(params, x, labels):
    loss, grads = jax.value_and_grad(cross_entropy)(params, x, labels)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


regression = jax.device_put({"w1": normal(16, 32), "b1": jnp.zeros(32), "w2": normal(32, 8)}, whole)
regression_step(
    regression, jax.device_put(normal(32, 16), split), jax.device_put(normal(32, 8), split)
)

classifier = jax.device_put(
    {"w1": normal(16, 32), "scale": jnp.ones(32), "bias": jnp.zeros(32), "w2": normal(32, 10)},
    whole,
)
images = jax.device_put(normal(32, 16), split)
labels = jax.device_put(jnp.asarray(rng.integers(0, 10, 32)), split)
classifier_step(classifier, images, labels)
jax.jit(logits)(classifier, images)


def cnn(params, images):
    dims = ("NHWC", "HWIO", "NHWC")
    h = jax.lax.conv_general_dilated(images, params["k1"], (1, 1), "SAME", dimension_numbers=dims)
    h = jax.nn.relu(h)
    h = jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    h = jax.lax.conv_general_dilated(h, params["k2"], (1, 1), "SAME", dimension_numbers=dims)
    return jax.nn.relu(h).mean(axis=(1, 2)) @ params["w"]


@jax.jit
def cnn_step(params, images, targets):
    loss, grads = jax.value_and_grad(lambda p: jnp.mean((cnn(p, images) - targets) ** 2))(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


conv_params = jax.device_put(
    {"k1": normal(3, 3, 3, 8), "k2": normal(3, 3, 8, 16), "w": normal(16, 10)}, whole
)
cnn_step(
    conv_params, jax.device_put(normal(8, 16, 16, 3), split), jax.device_put(normal(8, 10), split)
)


def batch_norm_cnn(params, stats, images):
    dims = ("NHWC", "HWIO", "NHWC")
    h = jax.lax.conv_general_dilated(images, params["k1"], (1, 1), "SAME", dimension_numbers=dims)
    mean, var = h.mean(axis=(0, 1, 2)), h.var(axis=(0, 1, 2))
    h = (h - mean) * jax.lax.rsqrt(var + 1e-5) * params["gamma"] + params["beta"]
    h = jax.nn.relu(h).mean(axis=(1, 2)) @ params["w"]
    running = {"mean": 0.9 * stats["mean"] + 0.1 * mean, "var": 0.9 * stats["var"] + 0.1 * var}
    return h, running


def integer_label_loss(params, stats, images, labels):
    logits, running = batch_norm_cnn(params, stats, images)
    log_probs = jax.nn.log_softmax(logits)
    picked = jnp.take_along_axis(log_probs, labels[:, None], axis=-1)
    return -picked.mean(), running


@jax.jit
def batch_norm_step(params, stats, velocity, images, labels):
    (loss, running), grads = jax.value_and_grad(integer_label_loss, has_aux=True)(
        params, stats, images, labels
    )
    velocity = jax.tree_util.tree_map(lambda v, g: 0.9 * v + g, velocity, grads)
    params = jax.tree_util.tree_map(lambda p, v: p - 0.1 * v, params, velocity)
    return params, running, velocity, loss


bn_params = {
    "k1": normal(3, 3, 3, 8),
    "gamma": jnp.ones(8),
    "beta": jnp.zeros(8),
    "w": normal(8, 10),
}
batch_norm_step(
    jax.device_put(bn_params, whole),
    jax.device_put({"mean": jnp.zeros(8), "var": jnp.ones(8)}, whole),
    jax.device_put(jax.tree_util.tree_map(jnp.zeros_like, bn_params), whole),
    jax.device_put(normal(8, 16, 16, 3), split),
    jax.device_put(jnp.asarray(rng.integers(0, 10, 8)), split),
)

# The regression step's targets given whole, then as a NumPy array (uncommitted), the batch split.
targets = np.asarray(normal(32, 8))
regression_step(regression, jax.device_put(normal(32, 16), split), jax.device_put(targets, whole))
regression_step(regression, jax.device_put(normal(32, 16), split), targets)

# The batch-norm step's integer labels as a NumPy array (uncommitted), the images split.
batch_norm_step(
    jax.device_put(bn_params, whole),
    jax.device_put({"mean": jnp.zeros(8), "var": jnp.ones(8)}, whole),
    jax.device_put(jax.tree_util.tree_map(jnp.zeros_like, bn_params), whole),
    jax.device_put(normal(8, 16, 16, 3), split),
    rng.integers(0, 10, 8).astype(np.int32),
)


def lm_loss(params, tokens, targets):
    h = params["embedding"][tokens]
    scores = jnp.einsum("bsd,btd->bst", h @ params["query"], h) / 4.0
    causal = jnp.tril(jnp.ones((tokens.shape[1],) * 2, bool))
    h = jax.nn.softmax(jnp.where(causal, scores, -1e9), -1) @ h
    log_probs = jax.nn.log_softmax(h @ params["unembedding"])
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], -1))


lm_params = jax.device_put(
    {"embedding": normal(50, 16), "query": normal(16, 16), "unembedding": normal(16, 50)}, whole
)
jax.jit(jax.value_and_grad(lm_loss))(
    lm_params,
    jax.device_put(jnp.asarray(rng.integers(0, 50, (8, 8)), jnp.int32), split),
    jax.device_put(jnp.asarray(rng.integers(0, 50, (8, 8)), jnp.int32), split),
)


def masked_mse(params, x, y, mask):
    per_example = jnp.mean((jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] - y) ** 2, -1)
    return jnp.sum(jnp.where(mask, per_example, 0.0)) / jnp.maximum(mask.sum(), 1)


jax.jit(jax.value_and_grad(masked_mse))(
    regression,
    jax.device_put(normal(32, 16), split),
    jax.device_put(normal(32, 8), split),
    rng.random(32) > 0.3,
)


def rnn_loss(params, xs, ys):
    def cell(h, x):
        h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h @ params["wo"]

    h0 = jnp.zeros((xs.shape[0], params["wh"].shape[0]))
    _, out = jax.lax.scan(cell, h0, jnp.swapaxes(xs, 0, 1))
    return jnp.mean((jnp.swapaxes(out, 0, 1) - ys) ** 2)


@jax.jit
def rnn_step(params, xs, ys):
    loss, grads = jax.value_and_grad(rnn_loss)(params, xs, ys)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


rnn = jax.device_put(
    {"wx": normal(8, 16), "wh": normal(16, 16), "b": jnp.zeros(16), "wo": normal(16, 4)}, whole
)
sequences, sequence_targets = (
    jax.device_put(normal(8, 6, 8), split),
    jax.device_put(normal(8, 6, 4), split),
)
rnn_step(rnn, sequences, sequence_targets)
jax.jit(rnn_loss)(rnn, sequences, sequence_targets)


def gru(params, xs):
    def cell(h, x):
        z = jax.nn.sigmoid(x @ params["wz"] + h @ params["uz"])
        r = jax.nn.sigmoid(x @ params["wr"] + h @ params["ur"])
        c = jnp.tanh(x @ params["wc"] + (r * h) @ params["uc"])
        return (1 - z) * h + z * c, None

    h, _ = jax.lax.scan(cell, jnp.zeros((xs.shape[1], 16)), xs)
    return h @ params["wo"]


gru_params = {name: normal(8, 16) for name in ("wz", "wr", "wc")}
gru_params |= {name: normal(16, 16) for name in ("uz", "ur", "uc")}
gru_params["wo"] = normal(16, 4)
jax.jit(gru)(
    jax.device_put(gru_params, whole),
    jax.device_put(normal(6, 8, 8), NamedSharding(mesh, P(None, "batch"))),
)


def euler(params, x0):
    def step(i, x):
        return x + 0.1 * jnp.tanh(x @ params["w"] + params["b"])

    return jax.lax.fori_loop(0, 8, step, x0)


@jax.jit
def euler_step(params, x0, target):
    loss, grads = jax.value_and_grad(lambda p: jnp.mean((euler(p, x0) - target) ** 2))(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


field = jax.device_put({"w": normal(16, 16), "b": jnp.zeros(16)}, whole)
starts = jax.device_put(normal(32, 16), split)
euler_step(field, starts, jax.device_put(normal(32, 16), split))


@jax.jit
def euler_readout(params, x0):
    return jnp.tanh(euler(params, x0)) @ params["w"]


euler_readout(field, starts)


def dropout_mse(params, x, y, key):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    h = jnp.where(jax.random.bernoulli(key, 0.9, h.shape), h / 0.9, 0.0)
    return jnp.mean((h @ params["w2"] - y) ** 2)


jax.jit(jax.value_and_grad(dropout_mse))(
    regression,
    jax.device_put(normal(32, 16), split),
    jax.device_put(normal(32, 8), split),
    jax.random.key(0),
)


@jax.jit
def newton_sqrt(x):
    def unconverged(state):
        y, i = state
        return (jnp.max(jnp.abs(y * y - x)) > 1e-4) & (i < 20)

    def step(state):
        y, i = state
        return 0.5 * (y + x / y), i + 1

    y, _ = jax.lax.while_loop(unconverged, step, (jnp.ones_like(x), 0))
    return (2.0 * jnp.log(y) - jnp.log(x)) / x  # ~0 where converged


newton_sqrt(jax.device_put(jnp.abs(normal(32, 8)) + 1.0, split))

time_major = NamedSharding(mesh, P(None, "batch"))


def stacked_rnn(weights, xs):
    def layer(inputs, w):
        def cell(h, x):
            h = jnp.tanh(x @ w + h)
            return h, h

        _, outputs = jax.lax.scan(cell, jnp.zeros((inputs.shape[1], w.shape[1])), inputs)
        return outputs, None

    outputs, _ = jax.lax.scan(layer, xs, weights)
    return jnp.mean(outputs**2)


jax.jit(jax.value_and_grad(stacked_rnn))(
    jax.device_put(normal(3, 8, 8), whole), jax.device_put(normal(5, 8, 8), time_major)
)


def bf16_rnn(params, xs):
    def cell(h, x):
        h = jnp.tanh(
            (x @ params["wx"]).astype(jnp.float32)
            + (h.astype(jnp.bfloat16) @ params["wh"]).astype(jnp.float32)
        )
        return h, h

    _, hs = jax.lax.scan(cell, jnp.zeros((xs.shape[1], 16), jnp.float32), xs)
    return jnp.mean(hs)


jax.jit(jax.value_and_grad(bf16_rnn))(
    jax.device_put(
        {"wx": normal(8, 16).astype(jnp.bfloat16), "wh": normal(16, 16).astype(jnp.bfloat16)},
        whole,
    ),
    jax.device_put(normal(6, 8, 8).astype(jnp.bfloat16), time_major),
)


def carried_loss(w, xs, ys):
    def step(carry, xy):
        h, total = carry
        x, y = xy
        h = jnp.tanh(x @ w + h)
        return (h, total + jnp.sum((h - y) ** 2)), None

    (_, total), _ = jax.lax.scan(step, (jnp.zeros((xs.shape[1], 8)), 0.0), (xs, ys))
    return total / xs.size


jax.jit(jax.value_and_grad(carried_loss))(
    jax.device_put(normal(8, 8), whole),
    jax.device_put(normal(5, 8, 8), time_major),
    jax.device_put(normal(5, 8, 8), time_major),
)


# Whole results asked for by out_shardings: the work stays split, the result is gathered.
regression_step_whole = jax.jit(regression_step.__wrapped__, out_shardings=(whole, whole))
regression_step_whole(
    regression, jax.device_put(normal(32, 16), split), jax.device_put(normal(32, 8), split)
)
jax.jit(
    lambda params, x: jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"],
    out_shardings=whole,
)(regression, jax.device_put(normal(32, 16), split))
