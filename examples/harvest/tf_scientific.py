"""TensorFlow functions of kinds the TensorFlow probes lack, compiled by XLA
(`tf.function(jit_compile=True)`): TensorFlow Probability's Hamiltonian Monte Carlo and NUTS
chains on a Bayesian logistic regression (while loops of leapfrog steps, a Metropolis test, step
size adaptation), a variational step with reparameterized samples, a Gaussian process's
marginal-likelihood step and a normalizing flow's maximum-likelihood step, TensorFlow's linear
algebra (Cholesky solves, QR, a least-squares solve, a log-determinant's gradient; not
tf.linalg.eigh, whose expansion hlogym writes apart from XLA's on purpose: see
src/passes/expanders/eigh_expander.h), image resampling (bilinear and nearest-neighbor resizes,
random crops, extract_patches), scatter and gather by index (tensor_scatter_nd_add, gather_nd with
batch dimensions, unsorted segment maxima, a bincount), and 2-D FFTs. Run it under `hlogym
harvest` in a venv with datasets/corpus/requirements-tensorflow.txt and
requirements-tf-scientific.txt (datasets/probes/generate.py does).
"""

import os

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"

import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

tfd = tfp.distributions
rng = np.random.default_rng(0)
tf.random.set_seed(0)

features = tf.constant(rng.normal(size=(64, 5)), tf.float32)
labels = tf.constant(rng.integers(0, 2, size=64), tf.float32)


def log_posterior(w):
    prior = tf.reduce_sum(tfd.Normal(0.0, 1.0).log_prob(w))
    logits = tf.linalg.matvec(features, w)
    return prior + tf.reduce_sum(tfd.Bernoulli(logits=logits).log_prob(labels))


@tf.function(jit_compile=True)
def hmc_chain(seed):
    kernel = tfp.mcmc.SimpleStepSizeAdaptation(
        tfp.mcmc.HamiltonianMonteCarlo(log_posterior, step_size=0.1, num_leapfrog_steps=4),
        num_adaptation_steps=8,
    )
    samples = tfp.mcmc.sample_chain(
        10, tf.zeros(5), kernel=kernel, num_burnin_steps=5, trace_fn=None, seed=seed
    )
    return tf.reduce_mean(samples, 0)


@tf.function(jit_compile=True)
def nuts_chain(seed):
    kernel = tfp.mcmc.NoUTurnSampler(log_posterior, step_size=0.1, max_tree_depth=4)
    samples = tfp.mcmc.sample_chain(4, tf.zeros(5), kernel=kernel, trace_fn=None, seed=seed)
    return tf.reduce_mean(samples, 0)


loc = tf.Variable(tf.zeros(5))
scale = tf.Variable(tf.ones(5))
optimizer = tf.keras.optimizers.Adam(0.05)


@tf.function(jit_compile=True)
def variational_step(seed):
    with tf.GradientTape() as tape:
        q = tfd.Normal(loc, tf.nn.softplus(scale))
        w = q.sample(16, seed=seed)
        elbo = tf.reduce_mean(
            tf.vectorized_map(log_posterior, w) - tf.reduce_sum(q.log_prob(w), -1)
        )
        loss = -elbo
    grads = tape.gradient(loss, [loc, scale])
    optimizer.apply_gradients(zip(grads, [loc, scale]))
    return loss


amplitude = tf.Variable(1.0)
length_scale = tf.Variable(0.5)
gp_optimizer = tf.keras.optimizers.Adam(0.01)
gp_inputs = tf.constant(rng.uniform(-1.0, 1.0, size=(24, 2)), tf.float32)
gp_targets = tf.constant(np.sin(3.0 * rng.uniform(-1.0, 1.0, size=24)), tf.float32)


@tf.function(jit_compile=True)
def gaussian_process_step():
    """One Adam step on a Gaussian process's negative marginal log-likelihood (a Cholesky of
    the kernel matrix and its gradient)."""
    with tf.GradientTape() as tape:
        kernel = tfp.math.psd_kernels.ExponentiatedQuadratic(amplitude, length_scale)
        gp = tfd.GaussianProcess(kernel, index_points=gp_inputs, observation_noise_variance=0.1)
        loss = -gp.log_prob(gp_targets)
    grads = tape.gradient(loss, [amplitude, length_scale])
    gp_optimizer.apply_gradients(zip(grads, [amplitude, length_scale]))
    return loss


flow = tfp.bijectors.Chain(
    [
        tfp.bijectors.Shift(tf.Variable(tf.zeros(4))),
        tfp.bijectors.ScaleMatvecTriL(scale_tril=tf.Variable(tf.eye(4))),
        tfp.bijectors.SinhArcsinh(tf.Variable(tf.zeros(4)), tf.Variable(tf.ones(4))),
    ]
)
flow_distribution = tfd.TransformedDistribution(tfd.MultivariateNormalDiag(tf.zeros(4)), flow)
flow_optimizer = tf.keras.optimizers.Adam(0.01)


@tf.function(jit_compile=True)
def flow_step(x):
    """A maximum-likelihood step of a small normalizing flow (bijectors' inverses and
    log-determinants, a triangular solve)."""
    with tf.GradientTape() as tape:
        loss = -tf.reduce_mean(flow_distribution.log_prob(x))
    variables = flow_distribution.trainable_variables
    flow_optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


@tf.function(jit_compile=True)
def linear_algebra(a, b):
    spd = tf.matmul(a, a, transpose_b=True) + 8.0 * tf.eye(8)
    chol = tf.linalg.cholesky(spd)
    x = tf.linalg.cholesky_solve(chol, b)
    q, r = tf.linalg.qr(a)
    lstsq = tf.linalg.lstsq(a, b, fast=True)
    with tf.GradientTape() as tape:
        tape.watch(a)
        det = tf.linalg.logdet(spd + tf.matmul(a, a, transpose_a=True))
    return x, q, r, lstsq, tape.gradient(det, a)


@tf.function(jit_compile=True)
def resample(images, seed):
    bilinear = tf.image.resize(images, (24, 24), method="bilinear")
    nearest = tf.image.resize(images, (40, 40), method="nearest")
    crops = tf.image.stateless_random_crop(images, (2, 12, 12, 3), seed)
    patches = tf.image.extract_patches(
        images, [1, 4, 4, 1], [1, 4, 4, 1], [1, 1, 1, 1], padding="VALID"
    )
    flipped = tf.image.flip_left_right(tf.image.adjust_contrast(images, 1.5))
    return bilinear, nearest, crops, patches, flipped


@tf.function(jit_compile=True)
def by_index(table, indices, updates, segments, values):
    scattered = tf.tensor_scatter_nd_add(table, indices, updates)
    picked = tf.gather_nd(
        tf.reshape(table, (4, 8, 4)), tf.reshape(indices % 8, (4, 2, 1)), batch_dims=1
    )
    maxima = tf.math.unsorted_segment_max(values, segments, num_segments=6)
    bins = tf.clip_by_value(tf.cast(tf.floor((values + 2.0) * 2.5), tf.int32), 0, 9)
    histogram = tf.math.bincount(bins, minlength=10, maxlength=10)
    return scattered, picked, maxima, histogram


@tf.function(jit_compile=True)
def spectra(x):
    f = tf.signal.fft2d(tf.complex(x, tf.zeros_like(x)))
    return tf.math.real(tf.signal.ifft2d(f * tf.math.conj(f))), tf.signal.rfft2d(x)


def main():
    seed = tf.constant([1, 2], tf.int32)
    print("hmc", hmc_chain(seed).numpy())
    print("nuts", nuts_chain(seed).numpy())
    print("vi", float(variational_step(seed)))
    print("gp", float(gaussian_process_step()))
    print("flow", float(flow_step(tf.constant(rng.normal(size=(32, 4)), tf.float32))))
    a = tf.constant(rng.normal(size=(8, 8)), tf.float32)
    b = tf.constant(rng.normal(size=(8, 2)), tf.float32)
    print("linalg", float(tf.reduce_sum(linear_algebra(a, b)[0])))
    images = tf.constant(rng.uniform(size=(2, 16, 16, 3)), tf.float32)
    print("resample", float(tf.reduce_sum(resample(images, seed)[2])))
    table = tf.constant(rng.normal(size=(32, 4)), tf.float32)
    indices = tf.constant(rng.integers(0, 32, size=(8, 1)), tf.int32)
    updates = tf.constant(rng.normal(size=(8, 4)), tf.float32)
    segments = tf.constant(rng.integers(0, 6, size=50), tf.int32)
    values = tf.constant(rng.normal(size=50), tf.float32)
    print("index", float(tf.reduce_sum(by_index(table, indices, updates, segments, values)[0])))
    x = tf.constant(rng.normal(size=(16, 16)), tf.float32)
    print("fft", float(tf.reduce_sum(spectra(x)[0])))


if __name__ == "__main__":
    main()
