"""Programs compiled for several devices (4 host CPU devices), whose modules XLA's SPMD
partitioner splits before its passes: jax.pmap training steps (an MLP with Adam, a CNN with
SGD, one with replicated parameters), jax.shard_map steps on a 1-D mesh (data parallel), on a
2x2 mesh (data and tensor parallel, Megatron-style), ZeRO-style (parameters sharded, gathered
for the forward pass, gradients reduce-scattered) and with a ring of collective permutes; the
1-D step once more with Shardy off (GSPMD's form of the same program). Every one is manual
work (shard_map, which today's pmap is built on). Run it under `hlogym harvest`
(datasets/probes/generate.py does).
"""

import os

# Before jax is imported: the host platform's device count.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
)

from functools import partial  # noqa: E402

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

DEVICES = 4
rng = np.random.default_rng(0)


def normal(*shape):
    return jnp.asarray(rng.standard_normal(shape, dtype=np.float32) * 0.1)


def replicate(tree):
    return jax.tree.map(lambda a: jnp.broadcast_to(a, (DEVICES,) + a.shape), tree)


def mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


def mlp_params(d_in=16, width=64, d_out=8):
    return {"w1": normal(d_in, width), "b1": jnp.zeros(width), "w2": normal(width, d_out)}


def pmap_adam_mlp():
    opt = optax.adam(1e-3)

    @partial(jax.pmap, axis_name="d")
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        grads = jax.lax.pmean(grads, "d")
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, jax.lax.pmean(loss, "d")

    params = mlp_params()
    step(
        replicate(params),
        replicate(opt.init(params)),
        normal(DEVICES, 8, 16),
        normal(DEVICES, 8, 8),
    )


class SmallCnn(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(8, (3, 3))(x))
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Conv(16, (3, 3))(x))
        return nn.Dense(10)(x.mean(axis=(1, 2)))


def pmap_sgd_cnn():
    model = SmallCnn()
    opt = optax.sgd(0.1, momentum=0.9)

    def loss(params, x, labels):
        logits = model.apply(params, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    @partial(jax.pmap, axis_name="d")
    def step(params, state, x, labels):
        grads = jax.lax.pmean(jax.grad(loss)(params, x, labels), "d")
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, 16, 16, 3)))
    labels = jnp.asarray(rng.integers(0, 10, (DEVICES, 4)), dtype=jnp.int32)
    step(replicate(params), replicate(opt.init(params)), normal(DEVICES, 4, 16, 16, 3), labels)


def pmap_replicated_params():
    # in_axes=None: the parameters reach every device whole (a replicated sharding).
    @partial(jax.pmap, axis_name="d", in_axes=(None, 0, 0))
    def grads(params, x, y):
        return jax.lax.psum(jax.grad(mlp_loss)(params, x, y), "d")

    grads(mlp_params(), normal(DEVICES, 8, 16), normal(DEVICES, 8, 8))


def data_parallel_step(mesh):
    @jax.jit
    @partial(
        jax.shard_map,
        mesh=mesh,
        in_specs=(P(), P("d"), P("d")),
        out_specs=(P(), P()),
    )
    def step(params, x, y):
        loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
        grads = jax.lax.pmean(grads, "d")
        new = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
        return new, jax.lax.pmean(loss, "d")

    return step


def shard_map_data_parallel():
    mesh = Mesh(np.array(jax.devices()), ("d",))
    data_parallel_step(mesh)(mlp_params(), normal(32, 16), normal(32, 8))


def shard_map_gspmd_form():
    # The same program as GSPMD writes it (Sharding and SPMDFullToShardShape custom calls).
    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        mesh = Mesh(np.array(jax.devices()), ("d",))
        data_parallel_step(mesh)(mlp_params(d_in=12), normal(32, 12), normal(32, 8))
    finally:
        jax.config.update("jax_use_shardy_partitioner", True)


def shard_map_data_and_tensor_parallel():
    # Data parallel over "x", each MLP's hidden layer split over "y": the first
    # matrix by columns, the second by rows, the partial products summed.
    mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("x", "y"))

    def loss(w1, w2, x, y):
        partial_out = jax.nn.gelu(x @ w1) @ w2
        return jnp.mean((jax.lax.psum(partial_out, "y") - y) ** 2)

    @jax.jit
    @partial(
        jax.shard_map,
        mesh=mesh,
        in_specs=(P(None, "y"), P("y", None), P("x"), P("x")),
        out_specs=(P(None, "y"), P("y", None)),
    )
    def step(w1, w2, x, y):
        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2, x, y)
        g1, g2 = jax.lax.pmean(g1, "x"), jax.lax.pmean(g2, "x")
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    step(normal(16, 64), normal(64, 8), normal(16, 16), normal(16, 8))


def shard_map_zero():
    # Parameters and optimizer state split over the devices, gathered whole for
    # the forward pass; gradients reduce-scattered back to each device's part.
    mesh = Mesh(np.array(jax.devices()), ("d",))

    @jax.jit
    @partial(
        jax.shard_map,
        mesh=mesh,
        in_specs=(P("d"), P("d"), P("d"), P("d"), P("d")),
        out_specs=(P("d"), P("d"), P("d")),
    )
    def step(w1_part, w2_part, momentum_part, x, y):
        w1 = jax.lax.all_gather(w1_part, "d", tiled=True)
        w2 = jax.lax.all_gather(w2_part, "d", tiled=True)
        g1, g2 = jax.grad(lambda a, b: jnp.mean((jnp.tanh(x @ a) @ b - y) ** 2), argnums=(0, 1))(
            w1, w2
        )
        g1 = jax.lax.psum_scatter(g1, "d", scatter_dimension=0, tiled=True) / DEVICES
        g2 = jax.lax.psum_scatter(g2, "d", scatter_dimension=0, tiled=True) / DEVICES
        momentum_part = 0.9 * momentum_part + g1
        return w1_part - 0.1 * momentum_part, w2_part - 0.1 * g2, momentum_part

    step(normal(16, 32), normal(32, 8), jnp.zeros((16, 32)), normal(16, 16), normal(16, 8))


def shard_map_ring():
    # A ring pass of blocks (as ring attention moves keys and values).
    mesh = Mesh(np.array(jax.devices()), ("d",))
    perm = [(i, (i + 1) % DEVICES) for i in range(DEVICES)]

    @jax.jit
    @partial(jax.shard_map, mesh=mesh, in_specs=(P("d"), P("d")), out_specs=P("d"))
    def ring_scores(q, k):
        def body(_, carry):
            k_block, total = carry
            total = total + jax.nn.softmax(q @ k_block.T, axis=-1).sum(axis=-1, keepdims=True)
            return jax.lax.ppermute(k_block, "d", perm), total

        # Zeros from q: a value that varies over the devices, as the loop's carry must.
        _, total = jax.lax.fori_loop(0, DEVICES, body, (k, jnp.zeros_like(q[:, :1])))
        return q * total

    ring_scores(normal(32, 16), normal(32, 16))


for program in (
    pmap_adam_mlp,
    pmap_sgd_cnn,
    pmap_replicated_params,
    shard_map_data_parallel,
    shard_map_gspmd_form,
    shard_map_data_and_tensor_parallel,
    shard_map_zero,
    shard_map_ring,
):
    program()
