"""JAX programs that are not neural-network training: reinforcement learning on environments
written in JAX (gymnax's CartPole, Acrobot, MinAtar Breakout and bsuite's Catch, rolled out under
lax.scan with auto-resets, and a PureJaxRL-style PPO update with GAE and shuffled minibatches),
molecular dynamics with JAX MD (Lennard-Jones and Morse systems with cell-list neighbor lists in
a periodic box, NVE, Nose-Hoover and Langevin integrators, FIRE minimization, Stillinger-Weber's
three-body terms), evolution strategies with evosax (CMA-ES, OpenES, SNES, differential
evolution) and BlackJAX's samplers (NUTS with window adaptation, MALA, SGLD). Their graphs are
integer- and select-heavy, loop over small states and gather by neighbor index: structure the
corpus's models do not have. Run it under `hlogym harvest` (datasets/probes/generate.py does).
"""

import blackjax
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from evosax.algorithms import CMA_ES, SNES, DifferentialEvolution, Open_ES
from jax_md import energy, minimize, partition, simulate, space

# --- reinforcement learning on gymnax environments -------------------------------------------


def mlp_params(key, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        w = jax.random.normal(sub, (fan_in, fan_out)) / jnp.sqrt(fan_in)
        params.append((w, jnp.zeros(fan_out)))
    return params


def mlp(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def rollout(env, env_params, policy, steps, envs):
    """`steps` steps of `envs` copies of `env` under `policy` (logits and a value), auto-reset,
    as PureJaxRL collects a batch: observations, actions, log-probabilities, rewards, dones,
    values."""

    def run(params, key):
        key, reset_key = jax.random.split(key)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(reset_key, envs), env_params
        )

        def step(carry, _):
            obs, state, key = carry
            key, act_key, step_key = jax.random.split(key, 3)
            out = mlp(params, obs.reshape(envs, -1))
            logits, value = out[:, :-1], out[:, -1]
            action = jax.random.categorical(act_key, logits)
            logp = jax.nn.log_softmax(logits)[jnp.arange(envs), action]
            obs2, state2, reward, terminated, truncated, _ = jax.vmap(
                env.step, in_axes=(0, 0, 0, None)
            )(jax.random.split(step_key, envs), state, action, env_params)
            done = jnp.logical_or(terminated, truncated)
            return (obs2, state2, key), (obs.reshape(envs, -1), action, logp, reward, done, value)

        (last_obs, _, _), batch = jax.lax.scan(step, (obs, state, key), None, steps)
        last_value = mlp(params, last_obs.reshape(envs, -1))[:, -1]
        return batch, last_value

    return run


def gae(rewards, dones, values, last_value, gamma=0.99, lam=0.95):
    def back(carry, x):
        advantage, next_value = carry
        reward, done, value = x
        delta = reward + gamma * next_value * (1.0 - done) - value
        advantage = delta + gamma * lam * (1.0 - done) * advantage
        return (advantage, value), advantage

    _, advantages = jax.lax.scan(
        back, (jnp.zeros_like(last_value), last_value), (rewards, dones, values), reverse=True
    )
    return advantages, advantages + values


def ppo_update(optimizer, epochs=2, minibatches=4, clip=0.2):
    """PPO's update of one collected batch: GAE, then `epochs` passes over shuffled minibatches
    of the clipped surrogate, the value loss and the entropy bonus, all under lax.scan."""

    def loss(params, obs, actions, old_logp, advantages, targets):
        out = mlp(params, obs)
        logits, value = out[:, :-1], out[:, -1]
        log_probs = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(log_probs, actions[:, None], axis=1)[:, 0]
        ratio = jnp.exp(logp - old_logp)
        norm = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        surrogate = jnp.minimum(ratio * norm, jnp.clip(ratio, 1 - clip, 1 + clip) * norm)
        entropy = -(jnp.exp(log_probs) * log_probs).sum(-1).mean()
        return -surrogate.mean() + 0.5 * ((value - targets) ** 2).mean() - 0.01 * entropy

    def update(params, opt_state, batch, last_value, key):
        obs, actions, logp, rewards, dones, values = batch
        advantages, targets = gae(rewards, dones.astype(jnp.float32), values, last_value)
        flat = jax.tree.map(
            lambda x: x.reshape(-1, *x.shape[2:]), (obs, actions, logp, advantages, targets)
        )
        size = flat[0].shape[0]

        def epoch(carry, key):
            params, opt_state = carry
            order = jax.random.permutation(key, size)
            shuffled = jax.tree.map(lambda x: x[order].reshape(minibatches, -1, *x.shape[1:]), flat)

            def minibatch(carry, mb):
                params, opt_state = carry
                value, grads = jax.value_and_grad(loss)(params, *mb)
                updates, opt_state = optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), value

            return jax.lax.scan(minibatch, (params, opt_state), shuffled)

        (params, opt_state), losses = jax.lax.scan(
            epoch, (params, opt_state), jax.random.split(key, epochs)
        )
        return params, opt_state, losses.mean()

    return update


def reinforcement_learning():
    optimizer = optax.chain(optax.clip_by_global_norm(0.5), optax.adam(2.5e-4, eps=1e-5))
    for name, steps, envs in (
        ("CartPole-v1", 32, 8),
        ("Acrobot-v1", 16, 4),
        ("Breakout-MinAtar", 16, 4),
        ("Catch-bsuite", 16, 4),
    ):
        env, env_params = gymnax.make(name)
        obs_size = int(np.prod(env.observation_space(env_params).shape))
        actions = env.action_space(env_params).n
        params = mlp_params(jax.random.PRNGKey(0), [obs_size, 64, 64, actions + 1])
        collect = jax.jit(rollout(env, env_params, mlp, steps, envs))
        batch, last_value = collect(params, jax.random.PRNGKey(1))
        opt_state = optimizer.init(params)
        update = jax.jit(ppo_update(optimizer))
        key = jax.random.PRNGKey(2)
        params, opt_state, loss = update(params, opt_state, batch, last_value, key)
        print(f"{name}: return {float(batch[3].sum()):.1f}, PPO loss {float(loss):.4f}")


# --- molecular dynamics with JAX MD ----------------------------------------------------------


def lattice(particles_per_side, spacing, dimension):
    grid = np.stack(
        np.meshgrid(*[np.arange(particles_per_side)] * dimension, indexing="ij"), -1
    ).reshape(-1, dimension)
    return jnp.asarray(grid * spacing + 0.1 * spacing, dtype=jnp.float32)


def molecular_dynamics():
    key = jax.random.PRNGKey(0)
    for dimension, side in ((2, 8), (3, 4)):
        positions = lattice(side, 1.2, dimension)
        box = 1.2 * side
        displacement, shift = space.periodic(box)
        positions = positions + 0.05 * jax.random.normal(key, positions.shape)
        neighbor_fn, energy_fn = energy.lennard_jones_neighbor_list(
            displacement, box, r_cutoff=2.5, dr_threshold=0.3, format=partition.Dense
        )
        neighbors = neighbor_fn.allocate(positions)

        init, apply = simulate.nvt_nose_hoover(energy_fn, shift, dt=2e-3, kT=0.8)

        def nvt_steps(state, neighbors):
            def body(_, carry):
                state, neighbors = carry
                state = apply(state, neighbor=neighbors)
                return state, neighbors.update(state.position)

            return jax.lax.fori_loop(0, 10, body, (state, neighbors))

        state = jax.jit(init)(key, positions, neighbor=neighbors)
        state, neighbors = jax.jit(nvt_steps)(state, neighbors)
        print(f"LJ {dimension}d NVT: E {float(energy_fn(state.position, neighbor=neighbors)):.3f}")

        morse = energy.morse_pair(displacement, sigma=1.2, alpha=5.0, r_cutoff=2.0)
        init_nve, apply_nve = simulate.nve(morse, shift, dt=1e-3)
        nve = jax.jit(lambda s: jax.lax.fori_loop(0, 10, lambda _, s: apply_nve(s), s))
        state = nve(jax.jit(init_nve)(key, positions, kT=0.5))
        print(f"Morse {dimension}d NVE: E {float(morse(state.position)):.3f}")

        init_lv, apply_lv = simulate.nvt_langevin(
            energy.soft_sphere_pair(displacement), shift, dt=1e-3, kT=0.3, gamma=0.5
        )
        langevin = jax.jit(lambda s: jax.lax.fori_loop(0, 8, lambda _, s: apply_lv(s), s))
        state = langevin(jax.jit(init_lv)(key, positions))
        print(f"soft spheres {dimension}d Langevin: T {float(simulate.temperature(state)):.3f}")

        init_fire, apply_fire = minimize.fire_descent(energy.soft_sphere_pair(displacement), shift)
        fire = jax.jit(lambda s: jax.lax.fori_loop(0, 20, lambda _, s: apply_fire(s), s))
        state = fire(jax.jit(init_fire)(positions))
        print(f"soft spheres {dimension}d FIRE: |R| {float(jnp.abs(state.position).sum()):.3f}")

    # Three-body terms: Stillinger-Weber silicon, forces by jax.grad.
    positions = lattice(3, 2.35, 3) + 0.1 * jax.random.normal(key, (27, 3))
    displacement, _ = space.periodic(2.35 * 3)
    sw = energy.stillinger_weber(displacement)
    forces = jax.jit(jax.grad(lambda r: -sw(r)))(positions)
    print(f"Stillinger-Weber: |F| {float(jnp.abs(forces).sum()):.3f}")


# --- evolution strategies with evosax --------------------------------------------------------


def rastrigin(x):
    return 10.0 * x.shape[-1] + (x**2 - 10.0 * jnp.cos(2.0 * jnp.pi * x)).sum(-1)


def evolution_strategies():
    solution = jnp.zeros(16)
    for algorithm in (CMA_ES, Open_ES, SNES, DifferentialEvolution):
        if algorithm is Open_ES:
            es = algorithm(
                population_size=32,
                solution=solution,
                optimizer=optax.adam(0.05),
                std_schedule=optax.constant_schedule(0.1),
            )
        else:
            es = algorithm(population_size=32, solution=solution)
        params = es.default_params

        def generations(key, state, es=es, params=params):
            def generation(state, key):
                ask_key, tell_key = jax.random.split(key)
                population, state = es.ask(ask_key, state, params)
                fitness = rastrigin(population)
                state, metrics = es.tell(tell_key, population, fitness, state, params)
                return state, metrics["best_fitness"]

            return jax.lax.scan(generation, state, jax.random.split(key, 5))

        key = jax.random.PRNGKey(3)
        if algorithm is DifferentialEvolution:
            population = jax.random.normal(key, (32, 16)) * 2.0
            state = es.init(key, population, rastrigin(population), params)
        else:
            state = es.init(key, solution + 1.5, params)
        state, best = jax.jit(generations)(key, state)
        print(f"{algorithm.__name__}: best {float(best[-1]):.3f}")


# --- samplers with BlackJAX -------------------------------------------------------------------


def logistic_regression(x, y):
    def logdensity(position):
        logits = x @ position["w"] + position["b"]
        likelihood = (y * jax.nn.log_sigmoid(logits) + (1 - y) * jax.nn.log_sigmoid(-logits)).sum()
        return likelihood - 0.5 * (position["w"] ** 2).sum() - 0.5 * position["b"] ** 2

    return logdensity


def samplers():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(64, 5)), dtype=jnp.float32)
    y = jnp.asarray(rng.integers(0, 2, size=64), dtype=jnp.float32)
    logdensity = logistic_regression(x, y)
    position = {"w": jnp.zeros(5), "b": jnp.zeros(())}
    key = jax.random.PRNGKey(4)

    adaptation = blackjax.window_adaptation(blackjax.nuts, logdensity, max_num_doublings=4)
    (state, parameters), _ = jax.jit(lambda k: adaptation.run(k, position, num_steps=20))(key)
    nuts = blackjax.nuts(logdensity, **parameters)

    def chain(kernel, state, key, steps=10):
        def step(state, key):
            state, _ = kernel.step(key, state)
            return state, state.position

        return jax.lax.scan(step, state, jax.random.split(key, steps))

    _, samples = jax.jit(lambda s, k: chain(nuts, s, k))(state, key)
    print(f"NUTS: w mean {float(samples['w'].mean()):.3f}")

    mala = blackjax.mala(logdensity, step_size=1e-2)
    _, samples = jax.jit(lambda k: chain(mala, mala.init(position), k))(key)
    print(f"MALA: w mean {float(samples['w'].mean()):.3f}")

    def minibatch_logdensity(position, batch):
        bx, by = batch
        return logistic_regression(bx, by)(position)

    grad_estimator = blackjax.sgmcmc.gradients.grad_estimator(
        lambda p: -0.5 * (p["w"] ** 2).sum() - 0.5 * p["b"] ** 2,
        lambda p, batch: minibatch_logdensity(p, batch) - logistic_regression(x[:0], y[:0])(p),
        data_size=64,
    )
    sgld = blackjax.sgld(grad_estimator)

    def sgld_chain(position, key):
        def step(position, inputs):
            key, start = inputs
            batch = (
                jax.lax.dynamic_slice_in_dim(x, start, 16),
                jax.lax.dynamic_slice_in_dim(y, start, 16),
            )
            position = sgld.step(key, position, batch, 1e-3)
            return position, position["w"].sum()

        keys = jax.random.split(key, 12)
        return jax.lax.scan(step, position, (keys, (jnp.arange(12) * 16) % 48))

    _, trace = jax.jit(sgld_chain)(position, key)
    print(f"SGLD: last {float(trace[-1]):.3f}")


def main():
    reinforcement_learning()
    molecular_dynamics()
    evolution_strategies()
    samplers()


if __name__ == "__main__":
    main()
