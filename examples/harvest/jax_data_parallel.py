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
NumPy array (XLA shards the mask; its count is summed in parts).
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
