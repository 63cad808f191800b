"""A small JAX training script to harvest: a convolutional classifier trained with SGD with
momentum on random 28x28 images, then evaluated. Plain JAX (no model library), CPU-sized; it runs
on JAX 0.4.13 too (datasets/probes lowers it with that version).

    hlogym harvest --out my_cnn -- .venv/bin/python examples/harvest/jax_cnn.py
"""

import jax
import jax.numpy as jnp


def init(key, widths=(8, 16), classes=10):
    params, cin = [], 1
    for w in widths:
        key, k = jax.random.split(key)
        params.append({"w": jax.random.normal(k, (3, 3, cin, w)) * 0.1, "b": jnp.zeros(w)})
        cin = w
    key, k = jax.random.split(key)
    params.append(
        {"w": jax.random.normal(k, (7 * 7 * cin, classes)) * 0.01, "b": jnp.zeros(classes)}
    )
    return params


def forward(params, x):
    for layer in params[:-1]:
        x = jax.lax.conv_general_dilated(
            x, layer["w"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        x = jax.nn.relu(x + layer["b"])
        x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    x = x.reshape(x.shape[0], -1)
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, labels):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(labels, 10), axis=-1))


@jax.jit
def train_step(params, velocity, x, labels):
    value, grads = jax.value_and_grad(loss)(params, x, labels)
    velocity = jax.tree_util.tree_map(lambda v, g: 0.9 * v + g, velocity, grads)
    params = jax.tree_util.tree_map(lambda p, v: p - 0.05 * v, params, velocity)
    return params, velocity, value


@jax.jit
def accuracy(params, x, labels):
    return jnp.mean(jnp.argmax(forward(params, x), axis=-1) == labels)


def main():
    key = jax.random.PRNGKey(0)
    params = init(key)
    velocity = jax.tree_util.tree_map(jnp.zeros_like, params)
    for step in range(3):
        kx, ky = jax.random.split(jax.random.fold_in(key, step))
        x = jax.random.normal(kx, (16, 28, 28, 1))
        labels = jax.random.randint(ky, (16,), 0, 10)
        params, velocity, value = train_step(params, velocity, x, labels)
        print(f"step {step}: loss {float(value):.4f}")
    print(f"accuracy {float(accuracy(params, x, labels)):.3f}")


if __name__ == "__main__":
    main()
