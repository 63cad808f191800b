"""Training steps as optimizer libraries and layer scans write them, which the corpus's models
(Adam, AdamW or SGD on unrolled layers) do not: optax's AdamW behind global-norm clipping and a
warmup cosine schedule, Lion, Adafactor (factored second moments), LAMB (per-layer trust ratios),
MultiSteps (gradient accumulation: a conditional on the step count), weight decay masked to the
matrices, Nesterov SGD, centered RMSProp, AdaBelief and noisy SGD, each two steps of a small MLP
with layer norm; Flax's nn.scan over a stack of residual blocks (parameters stacked along the
loop) with and without nn.remat; an associative scan and a lax.switch. Run it under
`hlogym harvest` (datasets/probes/generate.py does).
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class MLP(nn.Module):
    width: int = 64

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.width)(x))
        x = nn.LayerNorm()(x)
        x = nn.relu(nn.Dense(self.width)(x))
        return nn.Dense(10)(x)


class Block(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x, _):
        y = nn.LayerNorm()(x)
        y = nn.Dense(self.width)(nn.gelu(nn.Dense(self.width * 2)(y)))
        return x + y, None


class ScannedBlocks(nn.Module):
    width: int = 32
    depth: int = 6
    remat: bool = False

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.width)(x)
        block = nn.remat(Block) if self.remat else Block
        stack = nn.scan(
            block, variable_axes={"params": 0}, split_rngs={"params": True}, length=self.depth
        )
        x, _ = stack(self.width)(x, None)
        return nn.Dense(10)(x)


def train(model, tx, x, y, steps=2):
    params = model.init(jax.random.PRNGKey(0), x)
    state = tx.init(params)

    @jax.jit
    def step(params, state, x, y):
        def loss(p):
            logits = model.apply(p, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        value, grads = jax.value_and_grad(loss)(params)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    for _ in range(steps):
        params, state, value = step(params, state, x, y)
    jax.block_until_ready(value)


def matrices_only(params):
    return jax.tree_util.tree_map(lambda a: a.ndim > 1, params)


def main():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(16, 24)).astype(np.float32))
    y = jnp.asarray(rng.integers(0, 10, size=(16,)))
    schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, 10, 100)
    optimizers = [
        optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-2)),
        optax.lion(1e-4),
        optax.adafactor(1e-3),
        optax.lamb(1e-3),
        optax.MultiSteps(optax.adam(1e-3), every_k_schedule=2),
        optax.chain(
            optax.scale_by_adam(),
            optax.masked(optax.add_decayed_weights(1e-2), matrices_only),
            optax.scale(-1e-3),
        ),
        optax.sgd(1e-2, momentum=0.9, nesterov=True),
        optax.rmsprop(1e-3, centered=True),
        optax.adabelief(1e-3),
        optax.noisy_sgd(1e-2),
    ]
    for tx in optimizers:
        train(MLP(), tx, x, y)
    train(ScannedBlocks(), optax.adam(1e-3), x, y)
    train(ScannedBlocks(remat=True), optax.adam(1e-3), x, y)
    prefix_sums = jax.jit(lambda a: jax.lax.associative_scan(jnp.add, a, axis=1))
    jax.block_until_ready(prefix_sums(x))
    branches = [jnp.sin, jnp.cos, lambda t: t * 2.0]
    switch = jax.jit(lambda i, a: jax.lax.switch(i, branches, a))
    jax.block_until_ready(switch(1, x))


if __name__ == "__main__":
    main()
