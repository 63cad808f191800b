"""Programs as other JAX libraries and JAX's own numerical routines write them: Haiku's ResNet-18
training step (batch norm, Adam) and its inference, a Haiku LSTM's gradient, a jraph
GraphNetwork's loss and gradient, a Flax NNX training step (batch norm, dropout, AdamW), a Keras 3
functional CNN's training step on the JAX backend, jax.scipy.optimize's BFGS (line search inside
the iteration loop), jax.experimental.ode's adaptive Dopri5 solve and its adjoint gradient,
optax's L-BFGS, eigh and SVD gradients, per-example gradients, a Hessian, segment reductions,
and greedy decoding with a KV cache in a fori_loop. Run it under `hlogym harvest`
(datasets/probes/generate.py does).
"""

import os

os.environ.setdefault("KERAS_BACKEND", "jax")

from functools import partial  # noqa: E402

import haiku as hk  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.optimize as jso  # noqa: E402
import jraph  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402
from jax.experimental.ode import odeint  # noqa: E402

rng = np.random.default_rng(0)


def normal(*shape, scale=1.0):
    return jnp.asarray(rng.standard_normal(shape, dtype=np.float32) * scale)


images = normal(8, 16, 16, 3)
labels = jnp.asarray(rng.integers(0, 10, 8))


def initialized(init, *args):
    """What `init` returns, with values drawn by NumPy: Haiku's initializers would compile one small
    random-number module per parameter shape, which are not what this probe is about."""
    shapes = jax.eval_shape(init, *args)
    return jax.tree_util.tree_map(
        lambda s: jnp.asarray(rng.standard_normal(s.shape).astype(s.dtype) * 0.1), shapes
    )


def xent(logits, labels):
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


# Haiku: ResNet-18 with batch norm, trained with Adam; its inference; an LSTM's gradient.
resnet = hk.transform_with_state(lambda x, train: hk.nets.ResNet18(10)(x, is_training=train))
resnet_params, resnet_state = initialized(
    lambda key, x: resnet.init(key, x, True), jax.random.PRNGKey(0), images
)
adam = optax.adam(1e-3)


@jax.jit
def haiku_step(params, state, opt_state, x, y):
    def loss(p):
        logits, new_state = resnet.apply(p, state, None, x, True)
        return xent(logits, y), new_state

    (value, new_state), grads = jax.value_and_grad(loss, has_aux=True)(params)
    updates, opt_state = adam.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), new_state, opt_state, value


haiku_step(resnet_params, resnet_state, adam.init(resnet_params), images, labels)
jax.jit(lambda p, s, x: resnet.apply(p, s, None, x, False)[0])(resnet_params, resnet_state, images)


def lstm_logits(xs):
    core = hk.LSTM(32)
    outputs, _ = hk.dynamic_unroll(core, xs, core.initial_state(8))
    return hk.Linear(10)(outputs[-1])


lstm = hk.without_apply_rng(hk.transform(lstm_logits))
sequence = normal(12, 8, 16)
lstm_params = initialized(lstm.init, jax.random.PRNGKey(1), sequence)
jax.jit(jax.grad(lambda p: xent(lstm.apply(p, sequence), labels)))(lstm_params)

# jraph: a GraphNetwork with MLP updates, its loss and gradient.
nodes, edges = 12, 30
graph = jraph.GraphsTuple(
    nodes=normal(nodes, 8),
    edges=normal(edges, 4),
    senders=jnp.asarray(rng.integers(0, nodes, edges)),
    receivers=jnp.asarray(rng.integers(0, nodes, edges)),
    globals=normal(1, 4),
    n_node=jnp.asarray([nodes]),
    n_edge=jnp.asarray([edges]),
)


def graph_loss(g):
    def mlp(sizes):
        return lambda *xs: hk.nets.MLP(sizes)(jnp.concatenate(xs, -1))

    network = jraph.GraphNetwork(
        update_edge_fn=mlp([16, 4]), update_node_fn=mlp([16, 8]), update_global_fn=mlp([16, 4])
    )
    return (network(g).globals ** 2).sum()


graph_net = hk.without_apply_rng(hk.transform(graph_loss))
graph_params = initialized(graph_net.init, jax.random.PRNGKey(2), graph)
jax.jit(jax.value_and_grad(graph_net.apply))(graph_params, graph)


# Flax NNX: batch norm, dropout, AdamW, the model and optimizer as mutable objects.
class Classifier(nnx.Module):
    def __init__(self, rngs):
        self.hidden = nnx.Linear(16, 32, rngs=rngs)
        self.norm = nnx.BatchNorm(32, rngs=rngs)
        self.dropout = nnx.Dropout(0.1, rngs=rngs)
        self.out = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x):
        return self.out(self.dropout(nnx.relu(self.norm(self.hidden(x)))))


classifier = Classifier(nnx.Rngs(0))
nnx_optimizer = nnx.Optimizer(classifier, optax.adamw(1e-3), wrt=nnx.Param)


@nnx.jit
def nnx_step(model, optimizer, x, y):
    value, grads = nnx.value_and_grad(lambda m: xent(m(x), y))(model)
    optimizer.update(model, grads)
    return value


nnx_step(classifier, nnx_optimizer, normal(8, 16), labels)

# Keras 3 on the JAX backend: a functional CNN's training step through stateless_call.
inputs = keras.Input((16, 16, 3))
hidden = keras.layers.Conv2D(8, 3, activation="relu")(inputs)
hidden = keras.layers.BatchNormalization()(hidden)
hidden = keras.layers.GlobalAveragePooling2D()(hidden)
keras_model = keras.Model(inputs, keras.layers.Dense(10)(hidden))
trainable = [v.value for v in keras_model.trainable_variables]
non_trainable = [v.value for v in keras_model.non_trainable_variables]


@jax.jit
def keras_step(trainable, non_trainable, x, y):
    def loss(t):
        logits, new_non_trainable = keras_model.stateless_call(t, non_trainable, x, training=True)
        return xent(logits, y), new_non_trainable

    (value, new_non_trainable), grads = jax.value_and_grad(loss, has_aux=True)(trainable)
    return [w - 0.01 * g for w, g in zip(trainable, grads)], new_non_trainable, value


keras_step(trainable, non_trainable, images, labels)


# JAX's own numerical routines.
def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


jax.jit(lambda x0: jso.minimize(rosenbrock, x0, method="BFGS").x)(jnp.zeros(5))


def decay(y, t, a):
    return -a * y + jnp.sin(t)


times = jnp.linspace(0.0, 2.0, 5)
jax.jit(lambda y0, a: odeint(decay, y0, times, a))(jnp.ones(3), 0.5)
jax.jit(jax.grad(lambda a: odeint(decay, jnp.ones(3), times, a).sum()))(0.5)

matrix = normal(6, 6)


def least_squares(w):
    return jnp.sum((matrix @ w - 1.0) ** 2)


lbfgs = optax.lbfgs()


def lbfgs_solve(w):
    value_and_grad = optax.value_and_grad_from_state(least_squares)

    def body(_, carry):
        w, state = carry
        value, grad = value_and_grad(w, state=state)
        updates, state = lbfgs.update(
            grad, state, w, value=value, grad=grad, value_fn=least_squares
        )
        return optax.apply_updates(w, updates), state

    return jax.lax.fori_loop(0, 5, body, (w, lbfgs.init(w)))[0]


jax.jit(lbfgs_solve)(jnp.zeros(6))
jax.jit(jax.grad(lambda m: jnp.linalg.eigh(m @ m.T)[0].sum()))(matrix)
jax.jit(jax.grad(lambda m: jnp.linalg.svd(m, compute_uv=False).sum()))(matrix)

weights, xs, ys = normal(8, 4), normal(16, 8), normal(16, 4)


def regression(w, x, y):
    return jnp.sum((jnp.tanh(x @ w) - y) ** 2)


jax.jit(jax.vmap(jax.grad(regression), in_axes=(None, 0, 0)))(weights, xs, ys)
jax.jit(jax.hessian(lambda v: regression(v.reshape(8, 4), xs, ys)))(weights.reshape(-1))
segments = jnp.asarray(rng.integers(0, 5, 40))
jax.jit(
    jax.grad(
        lambda v: (
            jax.ops.segment_sum(jnp.sin(v), segments, 5).sum()
            + jax.ops.segment_max(v, segments, 5).sum()
        )
    )
)(normal(40))

# Greedy decoding with a KV cache: a two-layer decoder stepped in a fori_loop, the cache
# written with dynamic_update_slice.
DIM, HEADS, VOCAB, LAYERS = 32, 4, 50, 2
decoder = {
    "embed": normal(VOCAB, DIM, scale=0.1),
    "unembed": normal(DIM, VOCAB, scale=0.1),
    "layers": [
        {
            "qkv": normal(DIM, 3 * DIM, scale=0.1),
            "out": normal(DIM, DIM, scale=0.1),
            "up": normal(DIM, 64, scale=0.1),
            "down": normal(64, DIM, scale=0.1),
        }
        for _ in range(LAYERS)
    ],
}


def layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)


@partial(jax.jit, static_argnums=(2,))
def decode(params, prompt, steps):
    batch, length = prompt.shape
    total = length + steps
    head = DIM // HEADS
    cache = [(jnp.zeros((batch, HEADS, total, head)),) * 2 for _ in range(LAYERS)]
    tokens = jnp.zeros((batch, total), jnp.int32).at[:, :length].set(prompt)

    def step(i, carry):
        tokens, cache = carry
        x = params["embed"][tokens[:, i]][:, None]
        new_cache = []
        for layer, (keys, values) in zip(params["layers"], cache):
            q, k, v = jnp.split(layer_norm(x) @ layer["qkv"], 3, -1)
            q, k, v = (t.reshape(batch, 1, HEADS, head).transpose(0, 2, 1, 3) for t in (q, k, v))
            keys = jax.lax.dynamic_update_slice(keys, k, (0, 0, i, 0))
            values = jax.lax.dynamic_update_slice(values, v, (0, 0, i, 0))
            scores = (q @ keys.transpose(0, 1, 3, 2)) / np.sqrt(head)
            scores = jnp.where(jnp.arange(total)[None, None, None] <= i, scores, -1e9)
            attended = jax.nn.softmax(scores, -1) @ values
            x = x + attended.transpose(0, 2, 1, 3).reshape(batch, 1, DIM) @ layer["out"]
            x = x + jax.nn.gelu(layer_norm(x) @ layer["up"]) @ layer["down"]
            new_cache.append((keys, values))
        next_token = jnp.argmax(layer_norm(x)[:, 0] @ params["unembed"], -1).astype(jnp.int32)
        tokens = jnp.where(i + 1 >= length, tokens.at[:, i + 1].set(next_token), tokens)
        return tokens, new_cache

    return jax.lax.fori_loop(0, total - 1, step, (tokens, cache))[0]


decode(decoder, jnp.ones((2, 4), jnp.int32), 6)
