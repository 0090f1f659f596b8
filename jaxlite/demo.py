"""End-to-end demo: fit a small MLP to a noisy sine with jit, grad and vmap.

Run with `python -m jaxlite.demo`. It prints the loss as training proceeds, the time of the
first (tracing) step and of the later steps, and per-example gradient norms from `vmap`.
"""
from __future__ import annotations

import time

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp


def init_params(rng: np.random.Generator, sizes: list[int]) -> list[tuple]:
    """Weights scaled by 1/sqrt(fan_in), zero biases, as float32 arrays."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        weights = rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)
        params.append((jnp.asarray(weights, dtype=jnp.float32),
                       jnp.zeros((fan_out,), dtype=jnp.float32)))
    return params


def predict(params: list[tuple], x: jax.Array) -> jax.Array:
    for weights, bias in params[:-1]:
        x = jnp.tanh(x @ weights + bias)
    weights, bias = params[-1]
    return x @ weights + bias


def example_loss(params: list[tuple], x: jax.Array, y: jax.Array) -> jax.Array:
    """Squared error of one example (x: [features], y: [1])."""
    return jnp.sum((predict(params, x) - y) ** 2)


def batch_loss(params: list[tuple], xs: jax.Array, ys: jax.Array) -> jax.Array:
    return jnp.mean(jax.vmap(example_loss, in_axes=(None, 0, 0))(params, xs, ys))


@jax.jit
def train_step(params: list[tuple], xs: jax.Array, ys: jax.Array,
               learning_rate: float) -> tuple[list[tuple], jax.Array]:
    loss, grads = jax.value_and_grad(batch_loss)(params, xs, ys)
    new_params = jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads)
    return new_params, loss


@jax.jit
def per_example_grad_norms(params: list[tuple], xs: jax.Array, ys: jax.Array) -> jax.Array:
    grads = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(params, xs, ys)
    squares = [jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1)
               for g in jax.tree_util.tree_leaves(grads)]
    return jnp.sqrt(sum(squares))


LEARNING_RATE = 0.02


def main(steps: int = 300, report_every: int = 50) -> None:
    rng = np.random.default_rng(0)
    xs_host = rng.uniform(-np.pi, np.pi, (256, 1)).astype(np.float32)
    ys_host = (np.sin(xs_host) + 0.05 * rng.standard_normal(xs_host.shape)).astype(np.float32)
    xs, ys = jnp.asarray(xs_host), jnp.asarray(ys_host)
    params = init_params(rng, [1, 32, 32, 1])

    print(f"jaxlite {jax.__version__} on {jax.default_backend()}: MLP 1-32-32-1, "
          f"{xs.shape[0]} examples")
    start = time.perf_counter()
    params, loss = train_step(params, xs, ys, LEARNING_RATE)
    first = time.perf_counter() - start
    print(f"step    0  loss {float(loss):.5f}  (first call, with tracing: {first * 1e3:.1f} ms)")
    start = time.perf_counter()
    for step in range(1, steps + 1):
        params, loss = train_step(params, xs, ys, LEARNING_RATE)
        if step % report_every == 0:
            print(f"step {step:4d}  loss {float(loss):.5f}")
    per_step = (time.perf_counter() - start) / steps
    print(f"mean time per step after the first: {per_step * 1e3:.2f} ms")
    norms = per_example_grad_norms(params, xs[:8], ys[:8])
    print("per-example gradient norms (vmap of grad):", np.round(np.asarray(norms), 4))


if __name__ == "__main__":
    main()
