"""JAX programs from scientific and search libraries: Monte Carlo tree search (mctx's Gumbel
MuZero and MuZero policies over a learned model), board games stepped in batches (pgx's Go and
Connect Four), optimal transport (ott-jax's Sinkhorn and its gradient), nonlinear solvers
(optimistix's Newton root find, differentiated implicitly, Levenberg-Marquardt least squares,
BFGS), linear solvers (lineax's conjugate gradients and LU with gradients), image augmentation
(dm-pix's crops, flips, rotations by affine resampling, blur and SSIM), an E(3)-equivariant graph
network's training step (e3nn-jax: spherical harmonics, tensor products, sums over edges,
equivariant linear mixing) and spline interpolation (interpax). Their graphs are tree and board
updates by scatter, solver while loops with convergence tests, resampling gathers, and calls back
into Python (Equinox's runtime checks): structure the corpus's models do not have. Run it under
`hlogym harvest` (datasets/probes/generate.py does).
"""

import dm_pix as pix
import e3nn_jax as e3nn
import interpax
import jax
import jax.numpy as jnp
import lineax as lx
import mctx
import optimistix as optx
import pgx
from ott.geometry import pointcloud
from ott.problems.linear import linear_problem
from ott.solvers.linear import sinkhorn

KEY = jax.random.PRNGKey(0)


def dense(key, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append(
            (jax.random.normal(sub, (fan_in, fan_out)) / jnp.sqrt(fan_in), jnp.zeros(fan_out))
        )
    return params


def apply(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def tree_search():
    """Gumbel MuZero and MuZero policies: 16 simulations over a learned dynamics model, 8 roots."""
    batch, actions, hidden = 8, 4, 16
    model = {
        "dynamics": dense(KEY, [hidden + actions, 32, hidden]),
        "prediction": dense(jax.random.fold_in(KEY, 1), [hidden, 32, actions + 2]),
    }

    def predict(params, embedding):
        out = apply(params["prediction"], embedding)
        return out[:, :actions], out[:, actions], out[:, actions + 1]

    def recurrent_fn(params, key, action, embedding):
        one_hot = jax.nn.one_hot(action, actions)
        next_embedding = jnp.tanh(
            apply(params["dynamics"], jnp.concatenate([embedding, one_hot], -1))
        )
        logits, value, reward = predict(params, next_embedding)
        output = mctx.RecurrentFnOutput(
            reward=reward, discount=jnp.full(batch, 0.99), prior_logits=logits, value=value
        )
        return output, next_embedding

    def search(params, key, observation, gumbel):
        logits, value, _ = predict(params, observation)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=observation)
        policy = mctx.gumbel_muzero_policy if gumbel else mctx.muzero_policy
        out = policy(params, key, root, recurrent_fn, num_simulations=16)
        return out.action, out.action_weights

    observation = jax.random.normal(KEY, (batch, hidden))
    for gumbel in [True, False]:
        action, weights = jax.jit(search, static_argnums=3)(model, KEY, observation, gumbel)
        print("mcts", gumbel, int(action.sum()), float(weights.sum()))


def board_games():
    """Eight games of Go (9x9) and Connect Four, each stepped three times by random legal moves."""
    for name in ["go_9x9", "connect_four"]:
        env = pgx.make(name)

        def play(key, env=env):
            state = jax.vmap(env.init)(jax.random.split(key, 8))
            for step in range(3):
                logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
                action = jax.random.categorical(jax.random.fold_in(key, step), logits)
                state = jax.vmap(env.step)(state, action)
            return state.rewards.sum()

        print(name, float(jax.jit(play)(KEY)))


def optimal_transport():
    """Sinkhorn between two clouds of 64 and 48 points, and the cost's gradient by the first."""
    x = jax.random.normal(KEY, (64, 3))
    y = jax.random.normal(jax.random.fold_in(KEY, 1), (48, 3)) + 1.0

    def cost(x):
        geometry = pointcloud.PointCloud(x, y, epsilon=0.1)
        return sinkhorn.Sinkhorn()(linear_problem.LinearProblem(geometry)).reg_ot_cost

    print("sinkhorn", float(jax.jit(cost)(x)), float(jax.jit(jax.grad(cost))(x).sum()))


def nonlinear_solvers():
    """A Newton root find (and its implicit derivative), a Levenberg-Marquardt curve fit, BFGS."""

    def residual(y, a):
        return jnp.stack([y[0] ** 3 + y[1] - a, jnp.sin(y[0]) + y[1] ** 2 - 1.0])

    def root(a):
        solver = optx.Newton(rtol=1e-6, atol=1e-6)
        return optx.root_find(residual, solver, jnp.array([0.5, 0.5]), args=a).value.sum()

    print("newton", float(jax.jit(root)(1.0)), float(jax.jit(jax.grad(root))(1.0)))

    t = jnp.linspace(0, 3, 40)
    data = 2.0 * jnp.exp(-1.3 * t) + 0.1 * jnp.sin(7 * t)

    def fit(data):
        def model_error(p, _):
            return p[0] * jnp.exp(-p[1] * t) - data

        solver = optx.LevenbergMarquardt(rtol=1e-6, atol=1e-6)
        return optx.least_squares(model_error, solver, jnp.array([1.0, 1.0])).value

    print("levenberg-marquardt", jax.jit(fit)(data))

    def rosenbrock(p, _):
        return jnp.sum(100.0 * (p[1:] - p[:-1] ** 2) ** 2 + (1 - p[:-1]) ** 2)

    def minimum(start):
        return optx.minimise(
            rosenbrock, optx.BFGS(rtol=1e-5, atol=1e-5), start, max_steps=200
        ).value

    print("bfgs", jax.jit(minimum)(jnp.zeros(6)))


def linear_solvers():
    """Conjugate gradients on a 32x32 SPD system and LU on a general one, with gradients."""
    a = jax.random.normal(KEY, (32, 32))
    spd = a @ a.T + 32 * jnp.eye(32)
    b = jnp.arange(32.0)

    def cg(matrix, b):
        operator = lx.MatrixLinearOperator(matrix, lx.positive_semidefinite_tag)
        return lx.linear_solve(operator, b, lx.CG(rtol=1e-6, atol=1e-6)).value.sum()

    def lu(matrix, b):
        return lx.linear_solve(lx.MatrixLinearOperator(matrix), b, lx.LU()).value.sum()

    for solve in [cg, lu]:
        print(solve.__name__, float(jax.jit(jax.grad(solve))(spd, b).sum()))


def augment():
    """A batch of 8 32x32 images: random crops and flips, a rotation, brightness, blur, SSIM."""
    images = jax.random.uniform(KEY, (8, 40, 40, 3))

    def pipeline(key, images):
        keys = jax.random.split(key, 8)
        crops = jax.vmap(lambda k, im: pix.random_crop(k, im, (32, 32, 3)))(keys, images)
        flips = jax.vmap(pix.random_flip_left_right)(keys, crops)
        rotated = jax.vmap(lambda im: pix.rotate(im, 0.3, mode="constant"))(flips)
        bright = pix.adjust_brightness(rotated, 0.1)
        blurred = pix.gaussian_blur(bright, sigma=1.0, kernel_size=5)
        return jnp.mean(pix.ssim(crops, blurred))

    print("augment", float(jax.jit(pipeline)(KEY, images)))


def equivariant_network():
    """One SGD step of a two-layer E(3)-equivariant graph network on 24 atoms, 96 edges."""
    positions = jax.random.normal(KEY, (24, 3))
    senders = jax.random.randint(KEY, (96,), 0, 24)
    receivers = jax.random.randint(jax.random.fold_in(KEY, 1), (96,), 0, 24)
    irreps = e3nn.Irreps("8x0e + 4x1o")
    features = e3nn.normal(irreps, KEY, (24,))
    edge_irreps = e3nn.Irreps("0e + 1e + 2e")
    message_irreps = e3nn.tensor_product(irreps, edge_irreps, filter_ir_out=irreps)
    mix = e3nn.FunctionalLinear(message_irreps, irreps)
    weights = [jax.random.normal(jax.random.fold_in(KEY, i), (mix.num_weights,)) for i in range(2)]

    def loss(weights, positions):
        vectors = positions[receivers] - positions[senders]
        edge_sh = e3nn.spherical_harmonics(edge_irreps, vectors, normalize=True)
        x = features
        for w in weights:
            messages = e3nn.tensor_product(x[senders], edge_sh, filter_ir_out=irreps)
            summed = e3nn.scatter_sum(messages, dst=receivers, output_size=24)
            x = jax.vmap(lambda v, w=w: mix(mix.split_weights(w), v))(summed)
        return jnp.sum(x.filter("0e").array ** 2)

    def step(weights, positions):
        value, grads = jax.value_and_grad(loss)(weights, positions)
        return value, jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, weights, grads)

    print("e3nn", float(jax.jit(step)(weights, positions)[0]))


def interpolation():
    """Cubic-spline interpolation on a 2-D grid at 100 points, and its gradient by the values."""
    xs = jnp.linspace(0, 1, 12)
    ys = jnp.linspace(0, 1, 10)
    values = jnp.sin(3 * xs)[:, None] * jnp.cos(2 * ys)[None, :]
    points = jax.random.uniform(KEY, (100, 2))

    def sample(values):
        return interpax.interp2d(points[:, 0], points[:, 1], xs, ys, values, method="cubic").sum()

    print(
        "interp2d", float(jax.jit(sample)(values)), float(jax.jit(jax.grad(sample))(values).sum())
    )


if __name__ == "__main__":
    tree_search()
    board_games()
    optimal_transport()
    nonlinear_solvers()
    linear_solvers()
    augment()
    equivariant_network()
    interpolation()
