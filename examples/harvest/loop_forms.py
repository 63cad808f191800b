"""Forms of while loops users write in JAX that the corpus's models do not: loops that count from
a value other than 0, count down, or carry more than one index (XLA then adds a trip counter of
its own and folds the indices into it), loops whose final counter the program reads afterwards,
loops with a bound known only at run time, nested fori_loops, reversed and unrolled scans. Run it
under `hlogym harvest` (datasets/probes/generate.py does).
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def offset_start(x):
    # i runs 3..19 and k steps by 2: two indices, no counter from 0.
    def body(c):
        i, k, acc = c
        acc = acc * 0.9 + jnp.sin(acc + i.astype(jnp.float32)) + k.astype(jnp.float32)
        return i + 1, k + 2, acc

    return lax.while_loop(lambda c: c[0] < 20, body, (jnp.int32(3), jnp.int32(7), x))[2]


def counter_and_two_indices(x):
    def body(c):
        i, k, m, acc = c
        acc = acc + jnp.cos(acc) * k.astype(jnp.float32) - m.astype(jnp.float32)
        return i + 1, k + 3, m - 1, acc

    return lax.while_loop(
        lambda c: c[0] < 12, body, (jnp.int32(0), jnp.int32(5), jnp.int32(100), x)
    )[3]


def count_down(x):
    def body(c):
        n, k, acc = c
        return n - 1, k + 4, jnp.tanh(acc @ acc.T) + k.astype(jnp.float32)

    return lax.while_loop(lambda c: c[0] > 0, body, (jnp.int32(9), jnp.int32(1), x))[2]


def final_counter(start, bound, step, inclusive=False):
    # The loop's last counter value scales the result.
    def run(x):
        def cond(c):
            return c[0] <= bound if inclusive else c[0] < bound

        i, acc = lax.while_loop(cond, lambda c: (c[0] + step, jnp.sin(c[1])), (start, x))
        return acc * i.astype(jnp.float32)

    return run


def runtime_bound(x, n):
    i, acc = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x))
    return acc * i.astype(jnp.float32)


def nested_fori(x):
    def outer(i, acc):
        def inner(j, a):
            return a + jnp.cos(a * (i + j).astype(jnp.float32))

        return lax.fori_loop(2, 6, inner, acc) * 0.5

    return lax.fori_loop(1, 4, outer, x)


def reversed_scan(x):
    def step(carry, row):
        carry = jnp.tanh(carry + row)
        return carry, carry * 2.0

    carry, ys = lax.scan(step, jnp.zeros(x.shape[1]), x, reverse=True)
    return carry.sum() + ys.sum()


def unrolled_scan(x):
    def step(carry, row):
        carry = carry * 0.5 + jnp.exp(-row)
        return carry, carry

    carry, ys = lax.scan(step, jnp.zeros(x.shape[1]), x, unroll=2)
    return carry.sum() + ys.mean()


def main():
    # Inputs from NumPy: jnp's own constructors would be modules of their own.
    square = np.linspace(0.0, 1.0, 64, dtype=np.float32).reshape(8, 8)
    vector = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
    for program in (offset_start, counter_and_two_indices, count_down):
        jax.block_until_ready(jax.jit(program)(square))
    for start, bound, step, inclusive in ((0, 10, 1, False), (3, 20, 2, False), (2, 7, 1, True)):
        run = jax.jit(final_counter(start, bound, step, inclusive))
        jax.block_until_ready(run(vector))
    jax.block_until_ready(jax.jit(runtime_bound)(vector, 5))
    jax.block_until_ready(jax.jit(nested_fori)(square))
    sequence = np.linspace(0.0, 2.0, 48, dtype=np.float32).reshape(12, 4)
    for program in (reversed_scan, unrolled_scan):
        jax.block_until_ready(jax.jit(program)(sequence))


if __name__ == "__main__":
    main()
