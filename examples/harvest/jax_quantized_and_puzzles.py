"""Two kinds of JAX graphs the other probes lack. Quantized networks with Qwix (Google's JAX
quantization library): a Flax MLP and a small attention block trained with int8 and with fp8
(float8_e4m3fn) weights and activations (quantized training: integer and fp8 dots, per-channel
scales, straight-through gradients) and the same models quantized after training (int8 and fp8
weights and activations). And Jumanji's combinatorial environments (the TSP, knapsack, Snake,
Tetris, Game 2048, Sudoku, Minesweeper, a Rubik's cube, bin packing, job-shop scheduling,
graph coloring and a maze) reset and stepped by random valid actions under lax.scan: integer
boards, masks, argmax over action masks. (int4 is left out: the pinned XLA:CPU rejects the
dot Qwix writes for it, "custom element sizes on non-sub-byte types".) Run it under
`hlogym harvest` (datasets/probes/generate.py does).
"""

import jax
import jax.numpy as jnp
import jumanji
import numpy as np
import optax
import qwix
from flax import linen as nn

# --- quantized networks with Qwix ------------------------------------------------------------


class Mlp(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(128)(x))
        x = nn.gelu(nn.Dense(128)(x))
        return nn.Dense(10)(x)


class AttentionBlock(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.LayerNorm()(x)
        x = x + nn.SelfAttention(num_heads=4, qkv_features=64, deterministic=True)(h)
        h = nn.LayerNorm()(x)
        x = x + nn.Dense(64)(nn.gelu(nn.Dense(128)(h)))
        return nn.Dense(10)(x.mean(axis=1))


def quantized_training_step(model, params, x, y):
    optimizer = optax.adamw(1e-3)
    state = optimizer.init(params)

    @jax.jit
    def step(params, state, x, y):
        def loss(p):
            logits = model.apply(p, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        value, grads = jax.value_and_grad(loss)(params)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    return step(params, state, x, y)


def quantized_networks():
    key = jax.random.PRNGKey(0)
    cases = (
        (Mlp(), jax.random.normal(key, (32, 64))),
        (AttentionBlock(), jax.random.normal(key, (8, 16, 64))),
    )
    y = jax.random.randint(jax.random.PRNGKey(1), (32,), 0, 10)
    for module, x in cases:
        labels = y[: x.shape[0]]
        name = type(module).__name__
        for qtype in ("int8", "float8_e4m3fn"):
            rule = qwix.QtRule(module_path=".*", weight_qtype=qtype, act_qtype=qtype)
            trained = qwix.quantize_model(module, qwix.QtProvider([rule]))
            params = trained.init(jax.random.PRNGKey(2), x)
            params, _, loss = quantized_training_step(trained, params, x, labels)
            print(f"{name} {qtype} quantized training step: loss {float(loss):.4f}")

            rule = qwix.QuantizationRule(module_path=".*", weight_qtype=qtype, act_qtype=qtype)
            served = qwix.quantize_model(module, qwix.PtqProvider([rule]))
            abstract = jax.eval_shape(served.init, jax.random.PRNGKey(2), x)["params"]
            quantized = qwix.quantize_params(params["params"], abstract)
            out = jax.jit(served.apply)({"params": quantized}, x)
            print(f"{name} {qtype} post-training quantized: sum {float(out.sum()):.4f}")


# --- Jumanji's combinatorial environments ----------------------------------------------------


def random_valid_action(env, observation, key):
    """A uniformly random action among those the observation's mask allows (the first of each
    discrete dimension where there is no mask)."""
    spec = env.action_spec
    mask = getattr(observation, "action_mask", None)
    if mask is not None and hasattr(spec, "num_values") and np.ndim(spec.num_values) == 0:
        logits = jnp.where(mask.reshape(-1), 0.0, -jnp.inf)
        return jax.random.categorical(key, logits).astype(spec.dtype)
    if hasattr(spec, "num_values"):
        bounds = jnp.asarray(spec.num_values)
        u = jax.random.uniform(key, bounds.shape)
        return jnp.floor(u * bounds).astype(spec.dtype)
    return spec.generate_value()


def puzzles():
    for name, steps in (
        ("TSP-v1", 12),
        ("Knapsack-v1", 12),
        ("Snake-v1", 16),
        ("Tetris-v0", 8),
        ("Game2048-v1", 16),
        ("Sudoku-v0", 8),
        ("Minesweeper-v0", 8),
        ("RubiksCube-v0", 8),
        ("BinPack-v2", 8),
        ("JobShop-v0", 8),
        ("GraphColoring-v1", 8),
        ("Maze-v0", 16),
    ):
        env = jumanji.make(name)

        def rollout(key, env=env, steps=steps):
            key, reset_key = jax.random.split(key)
            state, timestep = env.reset(reset_key)

            def body(carry, key):
                state, timestep = carry
                action = random_valid_action(env, timestep.observation, key)
                state, timestep = env.step(state, action)
                return (state, timestep), timestep.reward

            _, rewards = jax.lax.scan(body, (state, timestep), jax.random.split(key, steps))
            return rewards.sum()

        total = jax.jit(rollout)(jax.random.PRNGKey(3))
        print(f"{name}: {steps} random valid steps, reward {float(total):.3f}")


def main():
    quantized_networks()
    puzzles()


if __name__ == "__main__":
    main()
