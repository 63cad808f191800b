"""jax.pmap training steps on 4 host CPU devices as older JAX releases lower them: one module per
step, compiled for 4 replicas (`replica_count=4`), gradients averaged with `pmean` (an
all-reduce over the replicas). An MLP with SGD and momentum, and a small CNN (lax convolutions,
average pooling) with plain SGD. Plain JAX, so that every release from 0.4.13 on runs it;
today's JAX lowers jax.pmap as a shard_map over 4 partitions instead (examples/harvest/
partitioned.py). Run it under `hlogym harvest` (datasets/probes/generate.py does).
"""

import os

# Before jax is imported: the host platform's device count.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
)

from functools import partial  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

DEVICES = 4
rng = np.random.default_rng(0)


def normal(*shape):
    return jnp.asarray(rng.standard_normal(shape, dtype=np.float32) * 0.1)


def replicate(tree):
    return jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (DEVICES,) + a.shape), tree)


def mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    h = jax.nn.relu(h @ params["w2"] + params["b2"])
    return jnp.mean((h @ params["w3"] - y) ** 2)


@partial(jax.pmap, axis_name="d")
def mlp_step(params, momentum, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    grads = jax.lax.pmean(grads, "d")
    momentum = jax.tree_util.tree_map(lambda m, g: 0.9 * m + g, momentum, grads)
    params = jax.tree_util.tree_map(lambda p, m: p - 0.05 * m, params, momentum)
    return params, momentum, jax.lax.pmean(loss, "d")


def cnn_loss(params, images, labels):
    dims = ("NHWC", "HWIO", "NHWC")
    h = jax.lax.conv_general_dilated(images, params["k1"], (1, 1), "SAME", dimension_numbers=dims)
    h = jax.nn.relu(h)
    h = jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    h = jax.lax.conv_general_dilated(h, params["k2"], (1, 1), "SAME", dimension_numbers=dims)
    logits = jax.nn.relu(h).mean(axis=(1, 2)) @ params["w"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))


@partial(jax.pmap, axis_name="d")
def cnn_step(params, images, labels):
    grads = jax.lax.pmean(jax.grad(cnn_loss)(params, images, labels), "d")
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


mlp = {
    "w1": normal(16, 64),
    "b1": jnp.zeros(64),
    "w2": normal(64, 32),
    "b2": jnp.zeros(32),
    "w3": normal(32, 8),
}
zeros = jax.tree_util.tree_map(jnp.zeros_like, mlp)
mlp_step(replicate(mlp), replicate(zeros), normal(DEVICES, 8, 16), normal(DEVICES, 8, 8))

cnn = {"k1": normal(3, 3, 3, 8), "k2": normal(3, 3, 8, 16), "w": normal(16, 10)}
labels = jax.nn.one_hot(jnp.asarray(rng.integers(0, 10, (DEVICES, 4))), 10)
cnn_step(replicate(cnn), normal(DEVICES, 4, 16, 16, 3), labels)
