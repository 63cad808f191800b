"""jax.jit programs on 4 host CPU devices laid out as a 2 x 2 mesh ("data", "model"), the usual way
to combine data and tensor parallelism: the batch split along "data", Megatron-style weights split
along "model" (the first layer's by columns, the second's by rows, so that each block ends with one
all-reduce over "model"), attention heads split along "model", a vocabulary-parallel cross-entropy
(one-hot and integer labels), an embedding split along its features, weights split along both axes
(FSDP beside tensor parallelism), a scan over such layers, whole inputs sliced for values split
along one axis or both, the batch split over both axes at once, sharding constraints inside the
program, grouped-query attention, weights initialized sharded (out_shardings), and training steps
(SGD in f32 and bf16, Adam) whose weight gradients are summed over "data". XLA's SPMD partitioner
splits these along both axes; its collectives run over one axis's groups each.
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

mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("data", "model"))
rng = np.random.default_rng(0)


def put(array, *spec):
    return jax.device_put(jnp.asarray(array, jnp.float32), NamedSharding(mesh, P(*spec)))


def normal(*shape, scale=0.1):
    return rng.standard_normal(shape, dtype=np.float32) * scale


def megatron_block(p, x):
    return jax.nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


@jax.jit
def megatron_mlp(p, x):
    return megatron_block(p, x)


def block_loss(p, x, y):
    return jnp.mean((megatron_block(p, x) - y) ** 2)


@jax.jit
def megatron_step(p, x, y):
    value, grads = jax.value_and_grad(block_loss)(p, x, y)
    return value, jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)


@jax.jit
def data_parallel_on_2d_mesh(w, x):
    return jnp.tanh(x @ w)


def attention(p, x, heads):
    b, s, d = x.shape
    q, k, v = (
        (x @ p[name]).reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)
        for name in ("wq", "wk", "wv")
    )
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d // heads)
    out = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
    return out.transpose(0, 2, 1, 3).reshape(b, s, d) @ p["wo"]


@jax.jit
def attention_heads_split(p, x):
    return x + attention(p, x, heads=4)


def layer_norm(x, g):
    m = x.mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5) * g


@jax.jit
def transformer_layer(p, x):
    h = x + attention(p, layer_norm(x, p["g1"]), heads=4)
    return h + megatron_block(p, layer_norm(h, p["g2"]))


def layer_loss(p, x, y):
    return jnp.mean((transformer_layer(p, x) - y) ** 2)


@jax.jit
def transformer_layer_step(p, x, y):
    value, grads = jax.value_and_grad(layer_loss)(p, x, y)
    return value, jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)


def vocab_loss(w, h, labels):
    # One-hot labels (optax.softmax_cross_entropy's form): the vocabulary stays split.
    logits = h @ w
    one_hot = jax.nn.one_hot(labels, logits.shape[-1])
    return -jnp.mean(jnp.sum(one_hot * jax.nn.log_softmax(logits), axis=-1))


@jax.jit
def vocab_parallel_cross_entropy(w, h, labels):
    return vocab_loss(w, h, labels)


@jax.jit
def vocab_parallel_step(w, h, labels):
    return w - 0.1 * jax.grad(vocab_loss)(w, h, labels)


def integer_label_loss(w, h, labels):
    # optax.softmax_cross_entropy_with_integer_labels' form: take_along_axis over the vocabulary.
    log_p = jax.nn.log_softmax(h @ w)
    return -jnp.mean(jnp.take_along_axis(log_p, labels[:, None], axis=-1))


@jax.jit
def vocab_parallel_integer_labels(w, h, labels):
    return integer_label_loss(w, h, labels)


@jax.jit
def vocab_parallel_integer_labels_step(w, h, labels):
    return w - 0.1 * jax.grad(integer_label_loss)(w, h, labels)


@jax.jit
def scanned_megatron_layers(stacked, x):
    def layer(h, p):
        return h + jnp.tanh(h @ p["w1"]) @ p["w2"], None

    return jax.lax.scan(layer, x, stacked)[0]


@jax.jit
def megatron_step_bf16(p, x, y):
    # bf16 compute, f32 master weights.
    def loss(p):
        low = jax.tree_util.tree_map(lambda a: a.astype(jnp.bfloat16), p)
        out = megatron_block(low, x.astype(jnp.bfloat16)).astype(jnp.float32)
        return jnp.mean((out - y) ** 2)

    grads = jax.grad(loss)(p)
    return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)


@jax.jit
def megatron_adam_step(p, m, v, x, y):
    grads = jax.grad(block_loss)(p, x, y)
    m = jax.tree_util.tree_map(lambda a, g: 0.9 * a + 0.1 * g, m, grads)
    v = jax.tree_util.tree_map(lambda a, g: 0.999 * a + 0.001 * g * g, v, grads)
    p = jax.tree_util.tree_map(lambda a, mi, vi: a - 1e-3 * mi / (jnp.sqrt(vi) + 1e-8), p, m, v)
    return p, m, v


@jax.jit
def embedding_split_along_features(table, tokens):
    return jnp.tanh(jnp.take(table, tokens, axis=0))


@jax.jit
def weights_split_along_both_axes(p, x):
    # FSDP beside tensor parallelism: each weight also split along "data", gathered for its dot.
    return megatron_block(p, x)


@jax.jit
def replicated_inputs_meet_splits(x, pos, y, z):
    # x and pos whole on every device: sliced for the batch's split (pos: partly replicated, its
    # offset read from the partition's coordinate) and, x, into tiles of both axes at once.
    return jnp.tanh(x) * y + jnp.sin(z), jnp.tanh(y + pos) * 2.0 - 1.0


@jax.jit
def gradient_sliced_after_its_sum(w, x, y):
    # The weight's gradient summed over "data" and sliced back to the weight's split.
    def loss(w):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)

    return w - 0.1 * jax.grad(loss)(w)


@jax.jit
def batch_over_both_axes(w, x):
    # The batch split over both axes at once, the weights whole: data parallelism over 4.
    return jnp.tanh(jnp.tanh(x @ w) @ w.T)


def constrained_block(p, x):
    # MaxText-style constraints on the activations inside the program.
    h = jax.nn.relu(x @ p["w1"])
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("data", "model")))
    return jax.lax.with_sharding_constraint(h @ p["w2"], NamedSharding(mesh, P("data", None)))


@jax.jit
def constrained_mlp(p, x):
    return constrained_block(p, x)


@jax.jit
def constrained_step(p, x, y):
    grads = jax.grad(lambda p: jnp.mean((constrained_block(p, x) - y) ** 2))(p)
    return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads)


@jax.jit
def grouped_query_attention_scores(wq, wk, x):
    # Query heads and the fewer key heads both split along "model", keys repeated per group.
    b, s, _ = x.shape
    q = (x @ wq).reshape(b, s, 4, 8)
    k = jnp.repeat((x @ wk).reshape(b, s, 2, 8), 2, axis=2)
    return jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k), -1).sum(-1)


def init(key):
    k1, k2 = jax.random.split(key)
    return {
        "w1": jax.random.normal(k1, (32, 64)) * 0.1,
        "w2": jax.random.normal(k2, (64, 32)) * 0.1,
    }


def main():
    d, f = 32, 64
    block = {
        "w1": put(normal(d, f), None, "model"),
        "b1": put(np.zeros(f), "model"),
        "w2": put(normal(f, d), "model", None),
        "b2": put(np.zeros(d)),
    }
    x = put(normal(8, d, scale=1.0), "data", None)
    y = put(normal(8, d), "data", None)
    megatron_mlp(block, x)
    megatron_step(block, x, y)
    data_parallel_on_2d_mesh(put(normal(d, d)), x)
    layer = dict(block)
    layer.update(
        {name: put(normal(d, d), None, "model") for name in ("wq", "wk", "wv")},
        wo=put(normal(d, d), "model", None),
        g1=put(np.ones(d)),
        g2=put(np.ones(d)),
    )
    xs = put(normal(4, 8, d, scale=1.0), "data", None, None)
    ys = put(normal(4, 8, d), "data", None, None)
    attention_heads_split(layer, xs)
    transformer_layer(layer, xs)
    transformer_layer_step(layer, xs, ys)
    vocab = put(normal(d, 128), None, "model")
    labels = jax.device_put(
        jnp.asarray(rng.integers(0, 128, size=8), jnp.int32), NamedSharding(mesh, P("data"))
    )
    vocab_parallel_cross_entropy(vocab, x, labels)
    vocab_parallel_step(vocab, x, labels)
    vocab_parallel_integer_labels(vocab, x, labels)
    vocab_parallel_integer_labels_step(vocab, x, labels)
    stacked = {
        "w1": put(normal(3, d, f), None, None, "model"),
        "w2": put(normal(3, f, d), None, "model", None),
    }
    scanned_megatron_layers(stacked, x)
    megatron_step_bf16(block, x, y)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, block)
    megatron_adam_step(block, zeros, zeros, x, y)
    tokens = jax.device_put(
        jnp.asarray(rng.integers(0, 64, size=(8, 16)), jnp.int32),
        NamedSharding(mesh, P("data", None)),
    )
    embedding_split_along_features(put(normal(64, d), None, "model"), tokens)
    both = {
        "w1": put(normal(d, f), "data", "model"),
        "b1": put(np.zeros(f), "model"),
        "w2": put(normal(f, d), "model", "data"),
        "b2": put(np.zeros(d), "data"),
    }
    weights_split_along_both_axes(both, x)
    batch_over_both_axes(put(normal(d, d)), put(normal(16, d), ("data", "model"), None))
    megatron = {"w1": block["w1"], "w2": block["w2"]}
    constrained_mlp(megatron, x)
    constrained_step(megatron, x, y)
    grouped_query_attention_scores(
        put(normal(d, d), None, "model"), put(normal(d, 16), None, "model"), xs
    )
    # Megatron weights initialized sharded (jax.jit with out_shardings; a raw key, as
    # jax.random.key would compile its seeding as a module of its own).
    jax.jit(
        init,
        out_shardings={
            "w1": NamedSharding(mesh, P(None, "model")),
            "w2": NamedSharding(mesh, P("model", None)),
        },
    )(np.array([0, 42], np.uint32))
    h = normal(8, d)
    replicated_inputs_meet_splits(put(h), put(h), x, put(normal(8, d), None, "model"))
    gradient_sliced_after_its_sum(
        put(normal(d, 16), None, "model"), x, put(normal(8, 16), "data", "model")
    )


if __name__ == "__main__":
    main()
