"""Rigid-body physics in JAX with MuJoCo MJX: scenes with contacts (a box and a sphere falling on
a plane beside a double pendulum, a four-legged walker), stepped under lax.scan, batched with vmap
as reinforcement-learning environments are (a policy network choosing the motors' controls,
rewarded for forward speed), differentiated through (the Jacobian of a rollout's end position
with respect to the controls, a forward-mode derivative of one step) and run by both of MJX's
constraint solvers (Newton, conjugate gradient). Their graphs are long chains of small
gathers, scatters and dynamic slices over joint trees, contact detection selecting among
candidate pairs, and solver while loops: structure network training does not have. Run it under
`hlogym harvest` (datasets/probes/generate.py does).
"""

import jax
import jax.numpy as jnp
import mujoco
from mujoco import mjx

DROP = """
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body pos="0.05 0 1.5"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
    <body pos="1 0 1">
      <joint type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body pos="0 0 -0.5">
        <joint type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def walker_xml(solver: str) -> str:
    """A torso with four two-jointed legs and a motor on every joint, on a plane."""
    legs, motors = [], []
    for i, (x, y) in enumerate([(1, 1), (-1, 1), (-1, -1), (1, -1)]):
        legs.append(f"""
      <body pos="{0.2 * x} {0.2 * y} 0">
        <joint name="hip{i}" type="hinge" axis="0 0 1" range="-30 30"/>
        <geom type="capsule" fromto="0 0 0 {0.2 * x} {0.2 * y} 0" size="0.04"/>
        <body pos="{0.2 * x} {0.2 * y} 0">
          <joint name="knee{i}" type="hinge" axis="{-y} {x} 0" range="30 70"/>
          <geom type="capsule" fromto="0 0 0 {0.2 * x} {0.2 * y} -0.3" size="0.04"/>
        </body>
      </body>""")
        motors.append(f'<motor joint="hip{i}" gear="30" ctrlrange="-1 1"/>')
        motors.append(f'<motor joint="knee{i}" gear="30" ctrlrange="-1 1"/>')
    return f"""
<mujoco>
  <option timestep="0.01" solver="{solver}" iterations="4" ls_iterations="4"/>
  <worldbody>
    <geom type="plane" size="10 10 0.1"/>
    <body pos="0 0 0.6">
      <freejoint/>
      <geom type="sphere" size="0.25" mass="2"/>{"".join(legs)}
    </body>
  </worldbody>
  <actuator>{"".join(motors)}</actuator>
</mujoco>
"""


def load(xml: str):
    model = mjx.put_model(mujoco.MjModel.from_xml_string(xml))
    return model, mjx.make_data(model)


def mlp_params(key, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append(
            (jax.random.normal(sub, (fan_in, fan_out)) / jnp.sqrt(fan_in), jnp.zeros(fan_out))
        )
    return params


def mlp(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.tanh(x @ w + b)


def main():
    # A box, a sphere and a pendulum: five steps under scan, and a forward-mode derivative of one.
    drop, drop_data = load(DROP)

    def drop_rollout(data):
        def body(data, _):
            return mjx.step(drop, data), data.qpos.sum()

        return jax.lax.scan(body, data, None, 5)

    print("drop", float(jax.jit(drop_rollout)(drop_data)[1][-1]))
    step_position = lambda q: mjx.step(drop, drop_data.replace(qpos=q)).qpos  # noqa: E731
    tangent = jax.jit(jax.jvp, static_argnums=0)(
        step_position, (drop_data.qpos,), (jnp.ones_like(drop_data.qpos),)
    )[1]
    print("drop jvp", float(tangent.sum()))

    # The walker as an RL environment: 8 copies stepped by a policy network for 4 steps, the reward
    # the torso's forward speed; with the Newton solver and with conjugate gradients.
    key = jax.random.PRNGKey(0)
    for solver in ["Newton", "CG"]:
        walker, walker_data = load(walker_xml(solver))
        params = mlp_params(key, [walker.nq + walker.nv, 32, walker.nu])
        batch = jax.tree_util.tree_map(lambda x: jnp.stack([x] * 8), walker_data)

        def env_rollout(params, batch, walker=walker):
            def body(batch, _):
                obs = jnp.concatenate([batch.qpos, batch.qvel], axis=-1)
                batch = batch.replace(ctrl=mlp(params, obs))
                batch = jax.vmap(mjx.step, in_axes=(None, 0))(walker, batch)
                return batch, batch.qvel[:, 0]

            return jax.lax.scan(body, batch, None, 4)[1].mean()

        print(solver, float(jax.jit(env_rollout)(params, batch)))

    # Differentiable physics: the torso's x after 2 steps, by the controls of every step (forward
    # mode: the solvers' while loops have no reverse-mode derivative).
    walker, walker_data = load(walker_xml("Newton"))

    def end_x(controls):
        def body(data, ctrl):
            return mjx.step(walker, data.replace(ctrl=ctrl)), None

        return jax.lax.scan(body, walker_data, controls)[0].qpos[0]

    controls = 0.1 * jnp.ones((2, walker.nu))
    print("jacobian", float(jax.jit(jax.jacfwd(end_x))(controls).sum()))

    # Kinematics alone: positions, inertias and contacts of a batch of poses.
    poses = walker_data.qpos + 0.05 * jax.random.normal(key, (16, walker.nq))
    forward = jax.vmap(lambda q: mjx.forward(walker, walker_data.replace(qpos=q)).xpos)
    print("forward", float(jax.jit(forward)(poses).sum()))


if __name__ == "__main__":
    main()
