"""A Flax Linen language model sharded as its users shard one: parameters annotated with logical
axes (nn.with_logical_partitioning), logical axis rules mapping them onto a 2 x 2 mesh of 4 host CPU
devices ("data", "model": the batch along "data"; attention heads, the MLP's hidden units and the
vocabulary along "model"), the parameters placed by nn.logical_to_mesh_sharding, and jax.jit
left to propagate the rest: a forward, an AdamW training step (optax, integer labels over the
vocabulary-parallel logits of the tied embedding), in f32; with DTYPE=bfloat16 in the
environment, the model computes in bf16 (kept out of the probe: docs/performance.md). Run it
under `hlogym harvest` in a venv with datasets/probes/requirements-libraries.txt
(datasets/probes/generate.py does).
"""

import os

# Before jax is imported: the host platform's device count.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
)

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("data", "model"))
RULES = (
    ("batch", "data"),
    ("heads", "model"),
    ("mlp", "model"),
    ("vocab", "model"),
    ("embed", None),
    ("kv", None),
)


def partitioned(init, *axes):
    return nn.with_logical_partitioning(init, axes)


class Block(nn.Module):
    d: int
    heads: int
    dtype: jnp.dtype

    @nn.compact
    def __call__(self, x):
        kernel = nn.initializers.lecun_normal()
        h = nn.LayerNorm(use_bias=False, dtype=self.dtype)(x)
        x = x + nn.MultiHeadDotProductAttention(
            num_heads=self.heads,
            dtype=self.dtype,
            kernel_init=partitioned(kernel, "embed", "heads", "kv"),
            out_kernel_init=partitioned(kernel, "heads", "kv", "embed"),
        )(h, h)
        h = nn.LayerNorm(use_bias=False, dtype=self.dtype)(x)
        h = nn.Dense(4 * self.d, dtype=self.dtype, kernel_init=partitioned(kernel, "embed", "mlp"))(
            h
        )
        h = nn.Dense(self.d, dtype=self.dtype, kernel_init=partitioned(kernel, "mlp", "embed"))(
            nn.gelu(h)
        )
        return x + h


class LanguageModel(nn.Module):
    vocab: int = 64
    d: int = 32
    heads: int = 4
    layers: int = 2
    dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, tokens):
        embed = nn.Embed(
            self.vocab,
            self.d,
            dtype=self.dtype,
            embedding_init=partitioned(nn.initializers.normal(0.02), "vocab", "embed"),
        )
        x = embed(tokens)
        for _ in range(self.layers):
            x = Block(self.d, self.heads, self.dtype)(x)
        return embed.attend(nn.LayerNorm(use_bias=False, dtype=self.dtype)(x)).astype(jnp.float32)


def main():
    tokens = jnp.asarray(np.random.default_rng(0).integers(0, 64, (8, 17)), jnp.int32)
    batch = jax.device_put(tokens, NamedSharding(mesh, P("data", None)))
    for dtype in [jnp.dtype(os.environ.get("DTYPE", "float32"))]:
        model = LanguageModel(dtype=dtype)
        with mesh, nn.logical_axis_rules(RULES):
            # Initialized on one device, then placed as the logical axes say.
            variables = model.init(jax.random.key(0), tokens[:, :-1])
            specs = nn.get_partition_spec(variables)
            params = jax.device_put(
                nn.unbox(variables), nn.logical_to_mesh_sharding(specs, mesh, RULES)
            )
            optimizer = optax.adamw(1e-3)
            state = jax.device_put(optimizer.init(params))

            def loss(p, t):
                logits = model.apply(p, t[:, :-1])
                return optax.softmax_cross_entropy_with_integer_labels(logits, t[:, 1:]).mean()

            @jax.jit
            def train_step(p, s, t):
                value, grads = jax.value_and_grad(loss)(p, t)
                updates, s = optimizer.update(grads, s, p)
                return optax.apply_updates(p, updates), s, value

            @jax.jit
            def forward(p, t):
                return model.apply(p, t)

            forward(params, batch)
            train_step(params, state, batch)


if __name__ == "__main__":
    main()
