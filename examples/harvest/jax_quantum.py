"""Complex-valued JAX programs from quantum and wave physics, kinds no other probe holds:
dynamiqs's Schrödinger and Lindblad solvers (a driven Jaynes-Cummings model on diffrax, complex
matrices throughout, an expectation value saved), NetKet's variational Monte Carlo (a complex
RBM on a transverse-field Ising chain: Metropolis sampling loops, local energies, a
stochastic-reconfiguration step), PennyLane's statevector simulator under `jax.jit` (a
variational circuit's energy and its gradient), and a split-step Fourier solve of the nonlinear
Schrödinger equation written in plain JAX.

    hlogym harvest --out DIR -- VENV/bin/python examples/harvest/jax_quantum.py

VENV holds the project's jax (requirements.txt) and datasets/probes/requirements-quantum.txt
(datasets/probes/generate.py makes it).
"""

import dynamiqs as dq
import jax
import jax.numpy as jnp
import netket as nk
import pennylane as qml

jax.config.update("jax_enable_x64", False)


def dynamiqs_solves() -> None:
    n = 8
    a = dq.tensor(dq.destroy(n), dq.eye(2))
    sm = dq.tensor(dq.eye(n), dq.sigmam())
    times = jnp.linspace(0.0, 2.0, 11)

    def hamiltonian(drive):
        return a.dag() @ a + 0.5 * (a.dag() @ sm + a @ sm.dag()) + drive * (a + a.dag())

    psi0 = dq.tensor(dq.coherent(n, 0.5), dq.basis(2, 0))

    # dynamiqs compiles its solvers itself; a jit or a gradient around them fails on this JAX
    # (a cache lookup inside compares traced arrays).
    dq.sesolve(hamiltonian(0.3), psi0, times, exp_ops=[a.dag() @ a])
    dq.mesolve(hamiltonian(0.3), [0.1 * a, 0.05 * sm], psi0, times)


def netket_vmc() -> None:
    graph = nk.graph.Chain(8)
    hilbert = nk.hilbert.Spin(0.5, N=graph.n_nodes)
    ising = nk.operator.Ising(hilbert, graph, h=1.0)
    model = nk.models.RBM(alpha=1, param_dtype=complex)
    sampler = nk.sampler.MetropolisLocal(hilbert, n_chains=8)
    state = nk.vqs.MCState(sampler, model, n_samples=128, seed=0, sampler_seed=1)
    driver = nk.driver.VMC(
        ising,
        nk.optimizer.Sgd(learning_rate=0.05),
        variational_state=state,
        preconditioner=nk.optimizer.SR(diag_shift=0.1),
    )
    driver.run(n_iter=2, out=None, show_progress=False)


def pennylane_circuit() -> None:
    device = qml.device("default.qubit", wires=4)

    @qml.qnode(device, interface="jax")
    def energy(weights):
        for layer in range(2):
            for wire in range(4):
                qml.RY(weights[layer, wire, 0], wires=wire)
                qml.RZ(weights[layer, wire, 1], wires=wire)
            for wire in range(3):
                qml.CNOT(wires=[wire, wire + 1])
        return qml.expval(qml.PauliZ(0) @ qml.PauliZ(1) + 0.5 * qml.PauliX(2))

    weights = jax.random.uniform(jax.random.key(0), (2, 4, 2))
    jax.block_until_ready(jax.jit(jax.value_and_grad(energy))(weights))


def split_step_fourier() -> None:
    """The focusing nonlinear Schrödinger equation, i u_t + u_xx / 2 + |u|^2 u = 0, by Strang
    splitting: a linear half step in Fourier space, the nonlinear step in real space."""
    n, length, dt = 256, 40.0, 0.01
    x = jnp.linspace(-length / 2, length / 2, n, endpoint=False)
    k = 2 * jnp.pi * jnp.fft.fftfreq(n, d=length / n)
    half_linear = jnp.exp(-0.25j * k**2 * dt)

    @jax.jit
    def evolve(u):
        def step(u, _):
            u = jnp.fft.ifft(half_linear * jnp.fft.fft(u))
            u = u * jnp.exp(1j * jnp.abs(u) ** 2 * dt)
            return jnp.fft.ifft(half_linear * jnp.fft.fft(u)), None

        u, _ = jax.lax.scan(step, u, None, length=50)
        return u, jnp.sum(jnp.abs(u) ** 2) * (length / n)

    soliton = (1.0 / jnp.cosh(x)).astype(jnp.complex64)
    jax.block_until_ready(evolve(soliton))


def main() -> None:
    dynamiqs_solves()
    netket_vmc()
    pennylane_circuit()
    split_step_fourier()


if __name__ == "__main__":
    main()
