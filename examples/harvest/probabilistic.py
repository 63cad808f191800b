"""Probabilistic programs with NumPyro (a library the corpus does not use): NUTS and HMC sampling
(while loops of leapfrog steps inside a sampling loop, tree building, mass-matrix and step-size
adaptation), stochastic variational inference steps with an autoguide, and a predictive pass, on a
hierarchical model and a small Bayesian neural network, in f32. Run it under `hlogym harvest`
(datasets/probes/generate.py does, in a venv with datasets/probes/requirements-probabilistic.txt).
"""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import HMC, MCMC, NUTS, SVI, Predictive, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal

# The eight-schools data (Rubin, 1981).
EFFECTS = jnp.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
SIGMAS = jnp.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools(sigma, y=None):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("schools", sigma.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


def bayesian_mlp(x, y=None, hidden=16):
    w1 = numpyro.sample("w1", dist.Normal(0.0, 1.0).expand([x.shape[1], hidden]).to_event(2))
    b1 = numpyro.sample("b1", dist.Normal(0.0, 1.0).expand([hidden]).to_event(1))
    w2 = numpyro.sample("w2", dist.Normal(0.0, 1.0).expand([hidden, 1]).to_event(2))
    noise = numpyro.sample("noise", dist.Gamma(2.0, 2.0))
    mean = (jnp.tanh(x @ w1 + b1) @ w2)[:, 0]
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(mean, 1.0 / jnp.sqrt(noise)), obs=y)


def regression_data(n, features, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = (np.sin(x[:, 0]) + 0.5 * x[:, 1] + 0.1 * rng.normal(size=n)).astype(np.float32)
    return jnp.asarray(x), jnp.asarray(y)


def sample(kernel, *args, **kwargs):
    mcmc = MCMC(kernel, num_warmup=20, num_samples=20, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), *args, **kwargs)
    return mcmc.get_samples()


def svi_steps(model, steps, *args, **kwargs):
    guide = AutoNormal(model)
    svi = SVI(model, guide, numpyro.optim.Adam(1e-2), Trace_ELBO())
    state = svi.init(jax.random.PRNGKey(0), *args, **kwargs)
    update = jax.jit(svi.update)
    for _ in range(steps):
        state, loss = update(state, *args, **kwargs)
    return guide, svi.get_params(state), loss


def main():
    samples = sample(NUTS(eight_schools), SIGMAS, y=EFFECTS)
    print("eight schools, NUTS: mu", float(samples["mu"].mean()))
    samples = sample(HMC(eight_schools, num_steps=8), SIGMAS, y=EFFECTS)
    print("eight schools, HMC: tau", float(samples["tau"].mean()))
    for n, features in ((32, 4), (64, 8)):
        x, y = regression_data(n, features, seed=n)
        samples = sample(NUTS(bayesian_mlp, max_tree_depth=4), x, y=y)
        print(f"Bayesian MLP {n}x{features}, NUTS: noise", float(samples["noise"].mean()))
        guide, params, loss = svi_steps(bayesian_mlp, 3, x, y=y)
        print(f"Bayesian MLP {n}x{features}, SVI: loss", float(loss))
        predictive = Predictive(bayesian_mlp, guide=guide, params=params, num_samples=8)
        draws = jax.jit(predictive)(jax.random.PRNGKey(1), x)
        print("predictive mean", float(draws["y"].mean()))


if __name__ == "__main__":
    main()
