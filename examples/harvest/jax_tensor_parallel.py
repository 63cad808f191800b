"""jax.jit steps on 4 host CPU devices with the weights split (`NamedSharding` over a "model" axis)
and the activations whole, Megatron-style tensor parallelism that XLA's SPMD partitioner carries out
itself: a column-parallel then row-parallel MLP's training step and its loss (the first weight split
by columns, the second by rows: one all-reduce after the second product), attention with its heads
split (the query, key and value projections by heads, the output projection by rows), a vocabulary-
parallel output layer with cross-entropy (the logits split along the vocabulary: their max and sum
completed by all-reduces), the same with integer labels taken with take_along_axis (each partition
gathers from its part, the labels outside it masked; the gradient scattered into each part at the
label less the part's offset), a bf16 block with layer norm and a residual, an embedding table split
along its features and one split along its vocabulary.
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

mesh = Mesh(np.array(jax.devices()), ("model",))
whole = NamedSharding(mesh, P())
columns = NamedSharding(mesh, P(None, "model"))
rows = NamedSharding(mesh, P("model", None))
rng = np.random.default_rng(0)


def normal(*shape):
    return jnp.asarray(rng.standard_normal(shape, dtype=np.float32) * 0.1)


def mlp_loss(params, x, y):
    h = jax.nn.gelu(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


@jax.jit
def mlp_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


mlp = {
    "w1": jax.device_put(normal(16, 64), columns),
    "b1": jax.device_put(jnp.zeros(64), NamedSharding(mesh, P("model"))),
    "w2": jax.device_put(normal(64, 16), rows),
    "b2": jax.device_put(jnp.zeros(16), whole),
}
inputs, targets = jax.device_put(normal(8, 16), whole), jax.device_put(normal(8, 16), whole)
mlp_step(mlp, inputs, targets)
jax.jit(mlp_loss)(mlp, inputs, targets)


def attention(params, x):
    q, k, v = (jnp.einsum("bsd,dhk->bshk", x, params[name]) for name in ("wq", "wk", "wv"))
    scores = jnp.einsum("bshk,bthk->bhst", q, k) / jnp.sqrt(8.0)
    out = jnp.einsum("bhst,bthk->bshk", jax.nn.softmax(scores, -1), v)
    return jnp.einsum("bshk,hkd->bsd", out, params["wo"])


by_heads = NamedSharding(mesh, P(None, "model", None))
attention_params = {name: jax.device_put(normal(16, 4, 8), by_heads) for name in ("wq", "wk", "wv")}
attention_params["wo"] = jax.device_put(normal(4, 8, 16), NamedSharding(mesh, P("model")))


@jax.jit
def attention_grad(params, x):
    return jax.value_and_grad(lambda p: jnp.mean(attention(p, x) ** 2))(params)


attention_grad(attention_params, jax.device_put(normal(2, 8, 16), whole))


def lm_head_loss(params, h, labels):
    log_probs = jax.nn.log_softmax(h @ params["unembedding"])
    return -jnp.mean(jnp.sum(log_probs * jax.nn.one_hot(labels, 64), -1))


jax.jit(jax.value_and_grad(lm_head_loss))(
    {"unembedding": jax.device_put(normal(16, 64), columns)},
    jax.device_put(normal(8, 16), whole),
    jax.device_put(jnp.asarray(rng.integers(0, 64, 8)), whole),
)


def lm_head_integer_label_loss(params, h, labels):
    # optax.softmax_cross_entropy_with_integer_labels' form: take_along_axis over the split
    # vocabulary, which XLA gathers from each partition's part (the rest masked) and sums.
    log_probs = jax.nn.log_softmax(h @ params["unembedding"])
    return -jnp.mean(jnp.take_along_axis(log_probs, labels[:, None], axis=-1))


jax.jit(jax.value_and_grad(lm_head_integer_label_loss))(
    {"unembedding": jax.device_put(normal(16, 64), columns)},
    jax.device_put(normal(8, 16), whole),
    jax.device_put(jnp.asarray(rng.integers(0, 64, 8), jnp.int32), whole),
)


def vocab_embedded_loss(params, tokens):
    # The embedding table split along the vocabulary (Megatron's vocabulary-parallel embedding):
    # each partition gathers the rows its part holds, the rest masked, and the parts are summed.
    h = params["embedding"][tokens]
    return jnp.mean(jnp.tanh(h @ params["w"]) ** 2)


jax.jit(jax.value_and_grad(vocab_embedded_loss))(
    {"embedding": jax.device_put(normal(64, 16), rows), "w": jax.device_put(normal(16, 8), whole)},
    jax.device_put(jnp.asarray(rng.integers(0, 64, (4, 8)), jnp.int32), whole),
)


def bf16_block(params, x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    h = (x - mean) * jax.lax.rsqrt(var + 1e-5) * params["scale"]
    h = jax.nn.relu(h.astype(jnp.bfloat16) @ params["w1"]).astype(jnp.float32)
    return x + (h.astype(jnp.bfloat16) @ params["w2"]).astype(jnp.float32)


@jax.jit
def bf16_block_grad(params, x):
    return jax.value_and_grad(lambda p: jnp.mean(bf16_block(p, x) ** 2))(params)


bf16_block_grad(
    {
        "scale": jax.device_put(jnp.ones(16), whole),
        "w1": jax.device_put(normal(16, 64).astype(jnp.bfloat16), columns),
        "w2": jax.device_put(normal(64, 16).astype(jnp.bfloat16), rows),
    },
    jax.device_put(normal(2, 8, 16), whole),
)


def embedded_loss(params, tokens):
    h = params["embedding"][tokens]
    return jnp.mean(jnp.tanh(h @ params["w"]) ** 2)


jax.jit(jax.value_and_grad(embedded_loss))(
    {
        "embedding": jax.device_put(normal(50, 16), columns),
        "w": jax.device_put(normal(16, 8), rows),
    },
    jax.device_put(jnp.asarray(rng.integers(0, 50, (4, 8)), jnp.int32), whole),
)
