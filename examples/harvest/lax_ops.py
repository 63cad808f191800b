"""JAX operations the corpus's models never use, each family in a program of its own: linear
algebra (Cholesky, triangular solve, eigh, QR, SVD, determinants, LU solves), FFTs, sorting and
top-k, special functions, bit manipulation and narrow float types, the rbg PRNG (XLA's
rng-bit-generator), switch/cond/while control flow, dilated, transposed and grouped convolutions,
scatter and segment forms, complex arithmetic, custom VJPs under checkpointing, small integer
types and an optimization barrier. Before this program no dataset module held an FFT, a
triangular solve, a Cholesky, an rng-bit-generator, a complex number or a clz. Run it under
`hlogym harvest` (datasets/probes/generate.py does).
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.ad_checkpoint import checkpoint_name


def linear_algebra(a):
    s = a @ a.T + 16.0 * jnp.eye(a.shape[0])
    c = jnp.linalg.cholesky(s)
    y = jax.scipy.linalg.solve_triangular(c, a, lower=True)
    w, q = jnp.linalg.eigh(s)
    return y.sum() + w.sum() + q.sum() + jnp.linalg.det(s) + jnp.linalg.inv(s).sum()


def lu_solves(a):
    # LU factorizations: solve (its result moved through transposes and a [n,1,m] view), the
    # sign and log of the determinant, and an inverse.
    s = a @ a.T + jnp.eye(a.shape[0])
    x = jnp.linalg.solve(s + 3.0 * jnp.eye(a.shape[0]), a[:, :3])
    sign, logdet = jnp.linalg.slogdet(s)
    return x.sum() + sign * logdet + jnp.linalg.inv(s).trace()


def factorizations(a):
    q, r = jnp.linalg.qr(a)
    _, s, _ = jnp.linalg.svd(a)
    return q.sum() + r.sum() + s.sum() + jnp.linalg.slogdet(a)[1]


def fourier(v):
    f = jnp.fft.rfft(v)
    g = jnp.fft.fft2(v.reshape(8, 8).astype(jnp.complex64))
    return jnp.abs(f).sum() + jnp.real(jnp.fft.ifft2(g)).sum() + jnp.angle(g).sum()


def sorting(v):
    values, indices = lax.top_k(v, 5)
    s = jnp.sort(v)
    unique = jnp.unique(jnp.round(v), size=10, fill_value=0.0)
    return (
        values.sum()
        + indices.sum()
        + s[3]
        + jnp.argsort(-v)[0]
        + unique.sum()
        + jnp.searchsorted(s, 0.5)
        + jnp.median(v)
    )


def special_functions(v):
    a = jnp.abs(v) + 0.5
    half = 0.5 * jnp.ones_like(a)
    return (
        jax.scipy.special.gammaln(a)
        + jax.scipy.special.digamma(a)
        + lax.erf_inv(jnp.tanh(v) * 0.9)
        + jax.scipy.special.i0e(v)
        + jnp.cbrt(v)
        + lax.igamma(a, a)
        + jax.scipy.special.betainc(a, a, half)
        + jnp.arctan2(v, a)
        + jax.nn.logsumexp(v)
        + jnp.log1p(a)
        + jnp.expm1(v)
        + lax.logistic(v)
    ).sum()


def bits_and_narrow_floats(v):
    i = lax.bitcast_convert_type(v, jnp.int32)
    j = lax.population_count(i) + lax.clz(i) + (i >> 3) + (i << 2) + lax.shift_right_logical(i, 5)
    half = v.astype(jnp.float16).astype(jnp.bfloat16).astype(jnp.float32)
    fp8 = v.astype(jnp.float8_e4m3fn).astype(jnp.float32)
    return (
        j.sum().astype(jnp.float32)
        + half.sum()
        + fp8.sum()
        + lax.reduce_precision(v, exponent_bits=5, mantissa_bits=10).sum()
        + jnp.nextafter(v, 1.0).sum()
    )


def random_bits(v):
    rbg = jax.random.key(1, impl="rbg")
    return (
        jax.random.normal(rbg, (64,)).sum()
        + jax.random.gamma(jax.random.PRNGKey(2), 2.0, (16,)).sum()
        + jax.random.categorical(jax.random.PRNGKey(3), v)
        + jax.random.permutation(jax.random.PRNGKey(4), 32)[0]
        + jax.random.bernoulli(jax.random.PRNGKey(5), 0.3, (8,)).sum()
    )


def control_flow(v):
    def branch(i, x):
        return lax.switch(i % 3, [jnp.sin, jnp.cos, lambda y: y * 2.0], x)

    y = lax.fori_loop(0, 7, branch, v)
    z = lax.cond(v[0] > 0, lambda t: t + 1.0, lambda t: t - 1.0, y)
    carry, ys = lax.scan(lambda c, t: (c * 0.5 + t, c), 0.0, z)
    doubled = lax.while_loop(lambda s: s[1] < 1e3, lambda s: (s[0] + 1, s[1] * 2.0 + 1.0), (0, 1.0))
    return (
        carry
        + ys.sum()
        + doubled[0]
        + lax.associative_scan(jnp.add, v).sum()
        + jnp.cumprod(v[:8]).sum()
    )


def windows_and_convolutions(a):
    nhwc = ("NHWC", "HWIO", "NHWC")
    image = a.reshape(1, 16, 16, 1)
    kernel = jnp.ones((3, 3, 1, 4))
    pooled = lax.reduce_window(image, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    dilated = lax.conv_general_dilated(
        image, kernel, (1, 1), "SAME", rhs_dilation=(2, 2), dimension_numbers=nhwc
    )
    transposed = lax.conv_transpose(image, kernel, (2, 2), "SAME", dimension_numbers=nhwc)
    grouped = lax.conv_general_dilated(
        jnp.ones((1, 8, 8, 4)),
        kernel,
        (1, 1),
        "VALID",
        feature_group_count=4,
        dimension_numbers=nhwc,
    )
    reflected = jnp.pad(a, ((1, 2), (3, 0)), mode="reflect")
    return (
        pooled.sum()
        + dilated.sum()
        + transposed.sum()
        + grouped.sum()
        + reflected.sum()
        + jnp.cumsum(a, axis=1).sum()
    )


def gather_and_scatter(a):
    idx = jnp.array([3, 1, 4, 1, 5])
    b = a.at[idx].add(1.0).at[:, idx].multiply(2.0).at[idx, idx].max(0.5).at[2:5].set(0.0)
    segments = jax.ops.segment_sum(a[0], jnp.arange(a.shape[1]) % 4, num_segments=4)
    updated = lax.dynamic_update_slice(a, jnp.ones((2, 2)), (3, 4))
    window = lax.dynamic_slice(a, (idx[0], idx[1]), (4, 4))
    ordered = jnp.take_along_axis(a, jnp.argsort(a, axis=1), axis=1)
    return (
        b.sum()
        + segments.sum()
        + updated.sum()
        + window.sum()
        + ordered[0, 0]
        + a[jnp.array([0, 2]), jnp.array([1, 3])].sum()
    )


def complex_arithmetic(a):
    z = a.astype(jnp.complex64) * (1 + 2j)
    w = jnp.exp(z) * jnp.conj(z) / (z + 1)
    return jnp.real(w @ z.T).sum() + jnp.imag(jnp.sqrt(z)).sum() + jnp.abs(jnp.log(z + 3)).sum()


def custom_gradients(a):
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, g: (g * r * 2.0,))

    @jax.checkpoint
    def g(x):
        return jnp.tanh(f(x) @ x)

    jacobian = jax.jacfwd(lambda x: jnp.sin(x).sum(0))(a[:4, :4])
    return jax.grad(lambda x: g(x).sum())(a).sum() + jacobian.sum()


def small_integers(a):
    i = (a * 10).astype(jnp.int8)
    u = (jnp.abs(a) * 100).astype(jnp.uint16)
    positive = a > 0
    r = (i // 3) % 5 + jnp.bitwise_xor(i, 7) - jnp.clip(i, -3, 3)
    return (
        r.astype(jnp.float32).sum()
        + (u % 7).sum()
        + jnp.logical_and(positive, ~positive.T).sum()
        + positive.any()
        + jnp.count_nonzero(positive)
        + jnp.argmax(a)
        + jnp.remainder(a, 0.3).sum()
    )


def barrier_and_names(a):
    y = checkpoint_name(jnp.sin(a), "y")
    y, z = lax.optimization_barrier((y, a * 2.0))
    return (
        (y + z).sum()
        + jnp.einsum("ij,jk,kl->il", a, a, a).sum()
        + jnp.kron(a[:2, :2], a[:3, :3]).sum()
    )


def main():
    # Inputs from NumPy: jnp's own constructors would be modules of their own.
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((16, 16)).astype(np.float32)
    vector = rng.standard_normal(64).astype(np.float32)
    for program in (
        fourier,
        sorting,
        special_functions,
        bits_and_narrow_floats,
        random_bits,
        control_flow,
    ):
        jax.block_until_ready(jax.jit(program)(vector))
    for program in (
        linear_algebra,
        lu_solves,
        factorizations,
        windows_and_convolutions,
        gather_and_scatter,
        complex_arithmetic,
        custom_gradients,
        small_integers,
        barrier_and_names,
    ):
        jax.block_until_ready(jax.jit(program)(matrix))


if __name__ == "__main__":
    main()
