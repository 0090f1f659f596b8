"""Programs for tests/test_higher_order_batching.py: calls (jit, checkpoint, custom_jvp,
custom_vjp) under vmap with unbatched operands, for `jax` = JAX or jaxlite.

Each program returns (a pytree of arrays, the log of host callbacks it made). Recorded from
JAX 0.10.2 by record.py into expected.json.
"""
from __future__ import annotations

from typing import Any, Callable


def programs(jax: Any, io_callback: Any, log: list) -> dict[str, Callable[[], Any]]:
    lax, jnp = jax.lax, jax.numpy
    xs = jnp.arange(3.0)
    y = jnp.float32(1.5)
    V = jax.vmap

    @jax.custom_jvp
    def checked(x, flag):
        # An error check as equinox's error_if makes it: the branch runs only if flag.
        lax.cond(flag, lambda: jax.debug.callback(lambda: log.append("dbg")), lambda: None)
        return x * 2.0
    checked.defjvp(lambda p, t: (checked(*p), t[0] * 2.0))

    @jax.custom_jvp
    def io_checked(x, flag):
        io_callback(lambda f: log.append(f"io {bool(f)}"), None, flag)
        return jnp.sin(x)
    io_checked.defjvp(lambda p, t: (io_checked(*p), jnp.cos(p[0]) * t[0]))

    @jax.custom_jvp
    def pair(x, y):
        return x * y, jnp.sin(y)

    @pair.defjvp
    def pair_jvp(p, t):
        (x, y), (dx, dy) = p, t
        return pair(x, y), (dx * y + x * dy, jnp.cos(y) * dy)

    @jax.custom_vjp
    def vpair(x, y):
        return x * y, jnp.sin(y)
    vpair.defvjp(lambda x, y: (vpair(x, y), (x, y)),
                 lambda r, g: (g[0] * r[1], g[0] * r[0] + g[1] * jnp.cos(r[1])))

    def total(outs, power=1):
        return sum(jnp.sum(o ** power) for o in outs)

    return {
        "cond_false": lambda: V(checked, in_axes=(0, None))(xs, False),
        "cond_true": lambda: V(checked, in_axes=(0, None))(xs, True),
        "cond_grad": lambda: V(jax.grad(checked), in_axes=(0, None))(xs, False),
        "cond_jit": lambda: jax.jit(V(checked, in_axes=(0, None)))(xs, False),
        "io_false": lambda: V(io_checked, in_axes=(0, None))(xs, False),
        "io_true": lambda: V(io_checked, in_axes=(0, None))(xs, True),
        "io_vmap_grad": lambda: V(jax.grad(io_checked), in_axes=(0, None))(xs, False),
        "io_grad_vmap": lambda: jax.grad(
            lambda x: V(io_checked, in_axes=(0, None))(x, False).sum())(xs),
        "pair_out_axes": lambda: V(pair, in_axes=(0, None), out_axes=(0, None))(xs, y),
        "pair_grad_y": lambda: jax.grad(lambda y: total(V(pair, in_axes=(0, None))(xs, y)))(y),
        "pair_jvp": lambda: jax.jvp(
            lambda y: V(pair, in_axes=(0, None), out_axes=(0, None))(xs, y), (y,),
            (jnp.float32(1.0),)),
        "vpair_out_axes": lambda: V(vpair, in_axes=(0, None), out_axes=(0, None))(xs, y),
        "vpair_grad_x": lambda: jax.grad(
            lambda x: total(V(vpair, in_axes=(0, None))(x, y), 2))(xs),
        "jit_out_axes": lambda: V(lambda x: (x + 1.0, jax.jit(lambda: jnp.cos(y))()),
                                  out_axes=(0, None))(xs),
        "jit_unbatched_arg": lambda: V(lambda x, z: jax.jit(lambda a, b: (a * b, b * 2.0))(
            x, z), in_axes=(0, None), out_axes=(0, None))(xs, y),
        "jit_cond": lambda: V(lambda x, f: jax.jit(checked)(x, f), in_axes=(0, None))(
            xs, False),
        "checkpoint_out_axes": lambda: V(lambda x, z: jax.checkpoint(
            lambda a, b: (a * b, b * 2.0))(x, z), in_axes=(0, None), out_axes=(0, None))(xs, y),
        "checkpoint_cond": lambda: V(lambda x, f: jax.checkpoint(checked)(x, f),
                                     in_axes=(0, None))(xs, False),
        "checkpoint_grad": lambda: jax.grad(lambda z: V(lambda x: jax.checkpoint(
            lambda a, b: jnp.sin(a * b) * b)(x, z))(xs).sum())(y),
    }
