"""jax.jit programs on 4 host CPU devices with the batch and the weights split along the same mesh
axis, which XLA's SPMD partitioner reshards itself: FSDP inference (every weight, bias and scale
split along its first dimension: each weight gathered for its product, each bias and scale gathered
for its broadcast), three FSDP layers with biases and layer norms, FSDP layers stacked and scanned
(each step's weight gathered inside the loop), a scanned training step (each step's weight gradient
summed and sliced inside the backward loop), a scanned step of rematerialized residual MLP blocks
with layer norms, FSDP training steps with Adam, with SGD in bf16 (collectives normalized to f32 as
any op), with SGD (an MLP, one with biases, three layers with layer-norm scales: the input
gradient, split as the weight is, moved back to the batch's split by an all-to-all, the weight
gradients summed over the batch and sliced to the weight's split), and a weight split by columns
beside the split batch, where the product cannot keep both (Shardy gives the axis to the larger
operand's dimension: the weight's columns when it is larger, the batch otherwise), once as a
training step whose weight gradient is summed over the batch and sliced back to the columns; the
same weight whose product meets targets split along the batch (which pull it to the batch's split),
and an embedding table split along its rows looked up by tokens split along the batch, with its
step; parameters initialized sharded (jax.jit with out_shardings).
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

mesh = Mesh(np.array(jax.devices()), ("fsdp",))
rng = np.random.default_rng(0)


def put(array, *spec):
    return jax.device_put(jnp.asarray(array, jnp.float32), NamedSharding(mesh, P(*spec)))


def normal(*shape, scale=0.1):
    return rng.standard_normal(shape, dtype=np.float32) * scale


@jax.jit
def fsdp_mlp(w1, w2, x):
    return jax.nn.relu(x @ w1) @ w2


@jax.jit
def fsdp_mlp_with_biases(p, x):
    return jnp.tanh(jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"])


@jax.jit
def fsdp_norm_and_projection(p, x):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return ((x - m) / jnp.sqrt(v + 1e-5) * p["g"]) @ p["w"]


@jax.jit
def fsdp_three_layers(weights, biases, x):
    for w, b in zip(weights, biases):
        x = jax.nn.gelu(x @ w + b)
        x = (x - x.mean(-1, keepdims=True)) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)
    return x


@jax.jit
def fsdp_scanned_layers(stacked, x):
    def layer(h, w):
        return jnp.tanh(h @ w), None

    return jax.lax.scan(layer, x, stacked)[0]


def scanned_loss(stacked, x, y):
    def layer(h, w):
        return jnp.tanh(h @ w), None

    return jnp.mean((jax.lax.scan(layer, x, stacked)[0] - y) ** 2)


@jax.jit
def fsdp_scanned_step(stacked, x, y):
    # The backward scan gathers each step's weight for the input gradient (the carry keeps the
    # batch's split) and sums and slices each step's weight gradient inside the loop.
    return stacked - 0.1 * jax.grad(scanned_loss)(stacked, x, y)


def mlp_block(h, p):
    m = h.mean(-1, keepdims=True)
    v = ((h - m) ** 2).mean(-1, keepdims=True)
    n = (h - m) * jax.lax.rsqrt(v + 1e-5) * p["g"]
    return h + jax.nn.gelu(n @ p["w1"] + p["b1"]) @ p["w2"], None


@jax.jit
def fsdp_scanned_remat_step(p, x, y):
    # MaxText's shape: residual MLP blocks with layer norms, stacked, scanned and
    # rematerialized (jax.checkpoint's optimization barriers), every parameter split as FSDP
    # splits it; the backward scan moves the activation gradients between the batch's split
    # and the features' with all-to-alls and gathers each step's weights.
    def loss(p):
        return jnp.mean((jax.lax.scan(jax.checkpoint(mlp_block), x, p)[0] - y) ** 2)

    return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, jax.grad(loss)(p))


@jax.jit
def fsdp_adam_step(w1, w2, m1, m2, v1, v2, x, y):
    g1, g2 = jax.grad(mlp_loss, argnums=(0, 1))(w1, w2, x, y)
    out = []
    for w, g, m, v in ((w1, g1, m1, v1), (w2, g2, m2, v2)):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        out.append((w - 0.01 * m / (jnp.sqrt(v) + 1e-8), m, v))
    return out


@jax.jit
def fsdp_bf16_step(w1, w2, x, y):
    # Computed in bf16: the gathered weights' all-gathers and the all-to-all run in f32 on
    # XLA:CPU, as every collective of a partitioned module is normalized like other ops.
    def loss(w1, w2):
        h = jax.nn.relu(x.astype(jnp.bfloat16) @ w1.astype(jnp.bfloat16))
        return jnp.mean(((h @ w2.astype(jnp.bfloat16)).astype(jnp.float32) - y) ** 2)

    g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
    return w1 - 0.1 * g1, w2 - 0.1 * g2


@jax.jit
def columns_win(w1, w2, x):
    return jnp.tanh(jnp.tanh(x @ w1) @ w2)


@jax.jit
def batch_wins(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2, axis=1)


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


def mlp_loss(w1, w2, x, y):
    return jnp.mean((jax.nn.relu(x @ w1) @ w2 - y) ** 2)


@jax.jit
def fsdp_step(w1, w2, x, y):
    value, (g1, g2) = jax.value_and_grad(mlp_loss, argnums=(0, 1))(w1, w2, x, y)
    return value, w1 - 0.1 * g1, w2 - 0.1 * g2


def biased_loss(p, x, y):
    h = jax.nn.gelu(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


@jax.jit
def fsdp_step_with_biases(p, x, y):
    value, grads = jax.value_and_grad(biased_loss)(p, x, y)
    return value, jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)


def deep_loss(weights, scales, x, y):
    for w, g in zip(weights, scales):
        x = jnp.tanh(x @ w)
        x = (x - x.mean(-1, keepdims=True)) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5) * g
    return jnp.mean((x - y) ** 2)


@jax.jit
def fsdp_three_layer_step(weights, scales, x, y):
    value, (dw, dg) = jax.value_and_grad(deep_loss, argnums=(0, 1))(weights, scales, x, y)
    return (
        value,
        [w - 0.1 * d for w, d in zip(weights, dw)],
        [g - 0.1 * d for g, d in zip(scales, dg)],
    )


@jax.jit
def batch_wins_step(w, x, y):
    return w - 0.1 * jax.grad(loss)(w, x, y)


@jax.jit
def columns_meet_targets(w, x, y):
    # The targets, split along the batch, pull the product to the batch's split (Shardy
    # propagates through elementwise operations first): the larger weight is gathered.
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


@jax.jit
def columns_meet_targets_step(w, x, y):
    return w - 0.1 * jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)


def embedding_loss(p, tokens):
    return jnp.mean(jnp.tanh(p["table"][tokens] @ p["w"]) ** 2)


@jax.jit
def fsdp_embedding(p, tokens):
    # The table split along its rows, the tokens along the batch: the tokens gathered, each row
    # looked up in the part that holds it, the parts summed and sliced back along the batch.
    return embedding_loss(p, tokens)


@jax.jit
def fsdp_embedding_step(p, tokens):
    grads = jax.grad(embedding_loss)(p, tokens)
    return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "w1": jax.random.normal(k1, (64, 32)) * 0.1,
        "b": jax.random.uniform(k2, (32,)),
        "w2": jax.random.truncated_normal(k3, -2.0, 2.0, (32, 16)),
    }


def main():
    x = put(normal(8, 16, scale=1.0), "fsdp", None)
    fsdp_mlp(put(normal(16, 32), "fsdp", None), put(normal(32, 16), "fsdp", None), x)
    p = {
        "w1": put(normal(16, 64), "fsdp", None),
        "b1": put(np.zeros(64), "fsdp"),
        "w2": put(normal(64, 16), "fsdp", None),
        "b2": put(np.zeros(16), "fsdp"),
    }
    fsdp_mlp_with_biases(p, x)
    fsdp_norm_and_projection(
        {"g": put(np.ones(16), "fsdp"), "w": put(normal(16, 32), "fsdp", None)}, x
    )
    weights = [put(normal(32, 32, scale=0.2), "fsdp", None) for _ in range(3)]
    biases = [put(np.zeros(32), "fsdp") for _ in range(3)]
    fsdp_three_layers(weights, biases, put(normal(16, 32, scale=1.0), "fsdp", None))
    fsdp_scanned_layers(
        put(normal(4, 32, 32, scale=0.2), None, "fsdp", None),
        put(normal(8, 32, scale=1.0), "fsdp", None),
    )
    fsdp_scanned_step(
        put(normal(4, 32, 32, scale=0.2), None, "fsdp", None),
        put(normal(8, 32, scale=1.0), "fsdp", None),
        put(normal(8, 32), "fsdp", None),
    )
    blocks = {
        "g": put(np.ones((3, 32)), None, "fsdp"),
        "w1": put(normal(3, 32, 64), None, "fsdp", None),
        "b1": put(np.zeros((3, 64)), None, "fsdp"),
        "w2": put(normal(3, 64, 32), None, "fsdp", None),
    }
    fsdp_scanned_remat_step(
        blocks, put(normal(8, 32, scale=1.0), "fsdp", None), put(normal(8, 32), "fsdp", None)
    )
    y = put(normal(8, 16), "fsdp", None)
    fsdp_step(put(normal(16, 32), "fsdp", None), put(normal(32, 16), "fsdp", None), x, y)
    fsdp_step_with_biases(p, x, y)
    w1, w2 = put(normal(16, 32), "fsdp", None), put(normal(32, 16), "fsdp", None)
    z1, z2 = put(np.zeros((16, 32)), "fsdp", None), put(np.zeros((32, 16)), "fsdp", None)
    fsdp_adam_step(w1, w2, z1, z2, z1, z2, x, y)
    fsdp_bf16_step(w1, w2, x, y)
    scales = [put(np.ones(32), "fsdp") for _ in range(3)]
    fsdp_three_layer_step(
        weights,
        scales,
        put(normal(16, 32, scale=1.0), "fsdp", None),
        put(normal(16, 32), "fsdp", None),
    )
    columns_win(
        put(normal(64, 256), None, "fsdp"),
        put(normal(256, 64), "fsdp", None),
        put(normal(8, 64, scale=1.0), "fsdp", None),
    )
    targets = put(normal(8, 256), "fsdp", None)
    columns_meet_targets(
        put(normal(64, 256), None, "fsdp"), put(normal(8, 64), "fsdp", None), targets
    )
    columns_meet_targets_step(
        put(normal(64, 256), None, "fsdp"), put(normal(8, 64), "fsdp", None), targets
    )
    tokens = jax.device_put(
        jnp.asarray(rng.integers(0, 64, (8, 4)), jnp.int32), NamedSharding(mesh, P("fsdp", None))
    )
    table = {"table": put(normal(64, 16), "fsdp", None), "w": put(normal(16, 32), "fsdp", None)}
    fsdp_embedding(table, tokens)
    fsdp_embedding_step(table, tokens)
    # Parameters initialized sharded (jax.jit with out_shardings): nothing enters split, the
    # results are returned split, the PRNG's counters made split where they are made.
    shard = {name: NamedSharding(mesh, P("fsdp")) for name in ("w1", "b", "w2")}
    # A raw key (jax.random.key would compile its seeding as a module of its own).
    jax.jit(init, out_shardings=shard)(np.array([0, 42], np.uint32))
    batch = put(normal(256, 16, scale=1.0), "fsdp", None)
    batch_wins(put(normal(16, 32), None, "fsdp"), batch)
    batch_wins_step(
        put(normal(16, 8), None, "fsdp"),
        put(normal(32, 16, scale=1.0), "fsdp", None),
        jnp.asarray(normal(32, 8)),  # uncommitted: placed as the partitioner chooses
    )


if __name__ == "__main__":
    main()
