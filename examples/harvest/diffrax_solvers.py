"""ODE and SDE solves with diffrax (a library the corpus does not use): while loops with fixed and
adaptive steps, forward and gradient, the kind of graph issue 42 found hlogym least faithful on.
Run it under `hlogym harvest` (datasets/probes/generate.py does, in a venv with
datasets/probes/requirements-ode.txt)."""

import diffrax
import jax
import jax.numpy as jnp
import lineax


def vector_field(t, y, args):
    w1, w2 = args
    return jnp.tanh(y @ w1) @ w2 - 0.1 * y


def ode_solve(solver, adaptive):
    def solve(y0, w1, w2):
        controller = (
            diffrax.PIDController(rtol=1e-3, atol=1e-5) if adaptive else diffrax.ConstantStepSize()
        )
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(vector_field),
            solver,
            0.0,
            1.0,
            0.05,
            y0,
            args=(w1, w2),
            stepsize_controller=controller,
            saveat=diffrax.SaveAt(t1=True),
            max_steps=64,
        )
        return solution.ys

    return solve


def sde_solve(y0, w1, w2):
    brownian = diffrax.VirtualBrownianTree(
        0.0, 1.0, tol=1e-2, shape=y0.shape, key=jax.random.PRNGKey(1)
    )
    diffusion = diffrax.ControlTerm(
        lambda t, y, args: lineax.DiagonalLinearOperator(0.1 * jnp.ones_like(y)), brownian
    )
    terms = diffrax.MultiTerm(diffrax.ODETerm(vector_field), diffusion)
    solution = diffrax.diffeqsolve(
        terms,
        diffrax.Euler(),
        0.0,
        1.0,
        0.05,
        y0,
        args=(w1, w2),
        saveat=diffrax.SaveAt(t1=True),
        max_steps=64,
    )
    return solution.ys


def main():
    k = jax.random.split(jax.random.PRNGKey(0), 3)
    y0 = jax.random.normal(k[0], (8, 16))
    w1 = jax.random.normal(k[1], (16, 32)) * 0.1
    w2 = jax.random.normal(k[2], (32, 16)) * 0.1
    solves = [ode_solve(diffrax.Euler(), False), sde_solve]
    for solver in (diffrax.Heun(), diffrax.Tsit5(), diffrax.Dopri5()):
        solves += [ode_solve(solver, False), ode_solve(solver, True)]
    for solve in solves:
        jax.jit(solve)(y0, w1, w2).block_until_ready()
        loss = lambda w1, w2, solve=solve: jnp.sum(solve(y0, w1, w2) ** 2)  # noqa: E731
        jax.block_until_ready(jax.jit(jax.grad(loss, argnums=(0, 1)))(w1, w2))


if __name__ == "__main__":
    main()
