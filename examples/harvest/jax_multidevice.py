"""Three training steps of a small regression model on 4 host devices, to harvest multi-device
graphs: data-parallel (`shard_map` with `pmean`), ZeRO-style (`all_gather` of the weights and
`psum_scatter` of the gradients under `shard_map`) and GSPMD (inputs sharded with
`NamedSharding`, the partitioner's choice of collectives).

    hlogym harvest --out my_multidevice -- .venv/bin/python examples/harvest/jax_multidevice.py

XLA compiles them for 4 partitions: its pipeline runs Shardy's import and the SPMD partitioner
before the simplifications. hlogym's xla-cpu-default models the partitioner for the two shard_map
steps, not for the GSPMD one, which needs sharding propagation (docs/performance.md).
"""

import os

# Four CPU devices; set before jax starts. The user's own XLA flags stay.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
).strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental.shard_map import shard_map  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

MESH = Mesh(jax.devices()[:4], ("d",))


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


@jax.jit
def data_parallel_step(w, x, y):
    def local(w, x, y):
        grad = jax.lax.pmean(jax.grad(loss)(w, x, y), "d")
        return w - 0.1 * grad

    specs = (P(), P("d"), P("d"))
    return shard_map(local, mesh=MESH, in_specs=specs, out_specs=P(), check_rep=False)(w, x, y)


@jax.jit
def zero_step(w_shard, x, y):
    def local(w_shard, x, y):
        w = jax.lax.all_gather(w_shard, "d", tiled=True)
        grad = jax.lax.psum_scatter(jax.grad(loss)(w, x, y), "d", tiled=True)
        return w_shard - 0.1 * grad

    specs = (P("d"), P("d"), P("d"))
    return shard_map(local, mesh=MESH, in_specs=specs, out_specs=P("d"), check_rep=False)(
        w_shard, x, y
    )


@jax.jit
def gspmd_step(w, x, y):
    return w - 0.1 * jax.grad(loss)(w, x, y)


def main():
    w, x, y = jnp.ones((16, 8)), jnp.ones((32, 16)), jnp.ones((32, 8))
    print("data parallel:", float(data_parallel_step(w, x, y).sum()))
    print("ZeRO-style:", float(zero_step(w, x, y).sum()))
    w_sharded = jax.device_put(w, NamedSharding(MESH, P(None, "d")))
    x_sharded = jax.device_put(x, NamedSharding(MESH, P("d", None)))
    print("GSPMD:", float(gspmd_step(w_sharded, x_sharded, y).sum()))


if __name__ == "__main__":
    main()
