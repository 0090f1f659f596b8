"""Collective cases shared by the JAX recorder (record_jax.py) and the tests.

Each case is a function of one member's value, mapped over one or two named axes. `cases`
takes the `lax` module to use, so the same table runs on JAX (to record) and on jaxlite (to
test). Axis sizes: one axis "i" of size 4, or the mesh ("i", "j") of shape (2, 3), mapped
with "i" outer.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple


class CollectiveCase(NamedTuple):
    mesh: tuple[tuple[str, int], ...]   # (name, size), outermost first
    member_shape: tuple[int, ...]
    fun: Callable[[Any], Any]


ONE = (("i", 4),)
TWO = (("i", 2), ("j", 3))


def cases(lax: Any) -> dict[str, CollectiveCase]:
    C = CollectiveCase
    cyclic4 = [(k, (k + 1) % 4) for k in range(4)]
    cyclic6 = [(k, (k + 1) % 6) for k in range(6)]
    return {
        # one named axis
        "psum": C(ONE, (3,), lambda x: lax.psum(x, "i")),
        "psum_tuple": C(ONE, (3,), lambda x: lax.psum(x, ("i",))),
        "psum_positional": C(ONE, (3, 2), lambda x: lax.psum(x, ("i", 0))),
        "pmean": C(ONE, (3,), lambda x: lax.pmean(x, "i")),
        "pmax": C(ONE, (3,), lambda x: lax.pmax(x, "i")),
        "pmin": C(ONE, (3,), lambda x: lax.pmin(x, "i")),
        "all_gather": C(ONE, (3,), lambda x: lax.all_gather(x, "i")),
        "all_gather_axis1": C(ONE, (3, 2), lambda x: lax.all_gather(x, "i", axis=1)),
        "all_gather_tiled": C(ONE, (3, 2), lambda x: lax.all_gather(x, "i", tiled=True)),
        "all_gather_tiled_axis1": C(ONE, (3, 2),
                                    lambda x: lax.all_gather(x, "i", axis=1, tiled=True)),
        "psum_scatter": C(ONE, (4, 2), lambda x: lax.psum_scatter(x, "i")),
        "psum_scatter_dim1": C(ONE, (2, 4),
                               lambda x: lax.psum_scatter(x, "i", scatter_dimension=1)),
        "psum_scatter_tiled": C(ONE, (8, 2), lambda x: lax.psum_scatter(x, "i", tiled=True)),
        "all_to_all_00": C(ONE, (4, 2), lambda x: lax.all_to_all(x, "i", 0, 0)),
        "all_to_all_01": C(ONE, (4, 2), lambda x: lax.all_to_all(x, "i", 0, 1)),
        "all_to_all_10": C(ONE, (2, 4), lambda x: lax.all_to_all(x, "i", 1, 0)),
        "all_to_all_tiled_01": C(ONE, (8, 2),
                                 lambda x: lax.all_to_all(x, "i", 0, 1, tiled=True)),
        "pswapaxes": C(ONE, (4, 2), lambda x: lax.pswapaxes(x, "i", 0)),
        "ppermute": C(ONE, (3,), lambda x: lax.ppermute(x, "i", cyclic4)),
        "ppermute_partial": C(ONE, (3,), lambda x: lax.ppermute(x, "i", [(0, 1), (2, 3)])),
        "pshuffle": C(ONE, (3,), lambda x: lax.pshuffle(x, "i", [3, 0, 2, 1])),
        "axis_index": C(ONE, (1,), lambda x: lax.axis_index("i") + 0 * x[0].astype("int32")),
        # two named axes
        "psum_ij": C(TWO, (3,), lambda x: lax.psum(x, ("i", "j"))),
        "psum_i": C(TWO, (3,), lambda x: lax.psum(x, "i")),
        "psum_j": C(TWO, (3,), lambda x: lax.psum(x, "j")),
        "pmax_ji": C(TWO, (3,), lambda x: lax.pmax(x, ("j", "i"))),
        "pmean_ji": C(TWO, (3,), lambda x: lax.pmean(x, ("j", "i"))),
        "all_gather_ij": C(TWO, (2,), lambda x: lax.all_gather(x, ("i", "j"))),
        "all_gather_ji": C(TWO, (2,), lambda x: lax.all_gather(x, ("j", "i"))),
        "all_gather_i": C(TWO, (2,), lambda x: lax.all_gather(x, "i")),
        "all_gather_j_axis1": C(TWO, (2,), lambda x: lax.all_gather(x, "j", axis=1)),
        "all_gather_ij_tiled_axis1": C(
            TWO, (2, 2), lambda x: lax.all_gather(x, ("i", "j"), axis=1, tiled=True)),
        "psum_scatter_ij": C(TWO, (6, 2), lambda x: lax.psum_scatter(x, ("i", "j"))),
        "psum_scatter_ji_tiled": C(
            TWO, (12, 2), lambda x: lax.psum_scatter(x, ("j", "i"), tiled=True)),
        "psum_scatter_i": C(TWO, (2, 3), lambda x: lax.psum_scatter(x, "i")),
        "psum_scatter_j_dim1": C(
            TWO, (2, 3), lambda x: lax.psum_scatter(x, "j", scatter_dimension=1)),
        "all_to_all_ij_tiled_01": C(
            TWO, (6, 2), lambda x: lax.all_to_all(x, ("i", "j"), 0, 1, tiled=True)),
        "all_to_all_ji_tiled_00": C(
            TWO, (12, 2), lambda x: lax.all_to_all(x, ("j", "i"), 0, 0, tiled=True)),
        "all_to_all_ij_10": C(TWO, (2, 6), lambda x: lax.all_to_all(x, ("i", "j"), 1, 0)),
        "all_to_all_j_00": C(TWO, (3, 2), lambda x: lax.all_to_all(x, "j", 0, 0)),
        "all_to_all_i_tiled_11": C(
            TWO, (2, 4), lambda x: lax.all_to_all(x, "i", 1, 1, tiled=True)),
        "ppermute_ij": C(TWO, (2,), lambda x: lax.ppermute(x, ("i", "j"), cyclic6)),
        "ppermute_ji_partial": C(
            TWO, (2,), lambda x: lax.ppermute(x, ("j", "i"), [(0, 5), (5, 2), (3, 1)])),
        "ppermute_j": C(TWO, (2,), lambda x: lax.ppermute(x, "j", [(0, 2), (2, 1), (1, 0)])),
        "axis_index_ij": C(TWO, (1,),
                           lambda x: lax.axis_index(("i", "j")) + 0 * x[0].astype("int32")),
        "axis_index_ji": C(TWO, (1,),
                           lambda x: lax.axis_index(("j", "i")) + 0 * x[0].astype("int32")),
    }


def member_values(seed: int, case: CollectiveCase, numpy: Any) -> Any:
    """The input: every member's value stacked on leading axes of the mesh's shape,
    small integers in float32 (sums and maxima are exact)."""
    rng = numpy.random.default_rng(seed)
    shape = tuple(size for _, size in case.mesh) + case.member_shape
    return rng.integers(-8, 9, shape).astype(numpy.float32)


def programs(jax: Any) -> dict[str, Callable[[], Any]]:
    """Whole programs with named axes (control flow, jit, derivatives, pmap, pytrees), for
    `jax` = JAX or jaxlite; each returns a pytree of arrays. Inputs are fixed."""
    lax, jnp = jax.lax, jax.numpy
    V = lambda f, name, **kw: jax.vmap(f, axis_name=name, **kw)  # noqa: E731
    x = jnp.arange(6.0).reshape(2, 3) / 4 - 0.5
    v = jnp.arange(4.0) / 3 - 0.25
    w = jnp.arange(3.0) + 1
    cyclic = [(k, (k + 1) % 4) for k in range(4)]

    @jax.custom_jvp
    def spread(u):
        return lax.psum(jnp.sin(u), "i")

    @spread.defjvp
    def spread_jvp(primals, tangents):
        return spread(primals[0]), lax.psum(jnp.cos(primals[0]) * tangents[0] * 2.0, "i")

    def batch_norm(u):
        mean = lax.pmean(u, "i")
        var = lax.pmean(u * u, "i") - mean * mean
        return (u - mean) * lax.rsqrt(var + 1e-5)

    return {
        "scan_psum": lambda: V(lambda u: lax.scan(
            lambda c, y: (c + lax.psum(y, "i"), None), 0.0, u)[0], "i")(x),
        "cond_psum": lambda: V(lambda u: lax.cond(
            u[0] > 0.0, lambda u: lax.psum(u, "i"), lambda u: u, u), "i")(x),
        "fori_psum": lambda: V(lambda u: lax.fori_loop(
            0, 2, lambda k, c: c + lax.psum(c, "i"), u), "i")(x),
        "while_pmax": lambda: V(lambda u: lax.while_loop(
            lambda c: lax.pmax(c, "i") < 10.0, lambda c: c * 2.0 + 1.0, u), "i")(v),
        "jit_inside": lambda: V(jax.jit(
            lambda u: lax.all_gather(u, "i") * lax.axis_index("i")), "i")(x),
        "jit_outside": lambda: jax.jit(V(lambda u: lax.ppermute(u, "i", cyclic), "i"))(
            jnp.stack([v, v * 2, v * 3, v * 4])),
        "jit_axis_index_only": lambda: V(jax.jit(lambda u: lax.axis_index("i")), "i")(v),
        "vmap_grad_psum": lambda: V(jax.grad(lambda u: lax.psum(u, "i") * u), "i")(v),
        "vmap_grad_pmean_sq": lambda: V(jax.grad(lambda u: lax.pmean(u ** 2, "i")), "i")(v),
        "vmap_grad_all_gather": lambda: V(jax.grad(
            lambda u: (lax.all_gather(u, "i") * jnp.arange(4.0)).sum()), "i")(v),
        "vmap_grad_ppermute": lambda: V(jax.grad(
            lambda u: lax.ppermute(u, "i", cyclic) * u), "i")(v),
        "vmap_grad_psum_scatter": lambda: V(jax.grad(
            lambda u: (lax.psum_scatter(u * u, "i") * 3.0)), "i")(
                jnp.arange(16.0).reshape(4, 4) / 8),
        "vmap_grad_axis_index": lambda: V(jax.grad(
            lambda u: lax.axis_index("i") * u), "i")(v),
        "vmap_grad_ij": lambda: V(V(jax.grad(
            lambda u: lax.psum(u ** 2, ("i", "j")) * u), "j"), "i")(x),
        "grad_of_vmap": lambda: jax.grad(
            lambda u: V(lambda e: lax.psum(e, "i") * e, "i")(u).sum())(v),
        "vmap_jvp_psum": lambda: V(lambda u: jax.jvp(
            lambda e: lax.psum(e * e, "i"), (u,), (1.0,)), "i")(v),
        "jvp_custom_jvp": lambda: jax.jvp(V(spread, "i"), (v,), (jnp.ones(4),)),
        "vmap_jvp_custom_jvp": lambda: V(lambda u: jax.jvp(spread, (u,), (1.0,)), "i")(v),
        "batch_norm": lambda: V(batch_norm, "i")(x),
        "grad_batch_norm": lambda: jax.grad(
            lambda u: (V(batch_norm, "i")(u) * w).sum())(x),
        "vmap_grad_batch_norm": lambda: V(jax.grad(
            lambda u: (batch_norm(u) * w).sum()), "i")(x),
        "checkpoint_psum": lambda: jax.grad(lambda u: V(jax.checkpoint(
            lambda e: lax.psum(jnp.sin(e), "i") * e), "i")(u).sum())(v),
        "unnamed_inner": lambda: V(jax.vmap(lambda u: lax.psum(u, "i")), "i")(x),
        "shadowed": lambda: V(V(lambda u: lax.psum(u, "i"), "i"), "i")(x),
        "in_axes_none": lambda: jax.vmap(lambda a, b: lax.psum(b, "i") * a, in_axes=(0, None),
                                         axis_name="i")(v, w),
        "axis_size_only": lambda: jax.vmap(lambda: lax.axis_index("i"), axis_name="i",
                                           axis_size=5)(),
        "out_axes_none": lambda: V(lambda u: lax.psum(u, "i"), "i", out_axes=None)(x),
        "sum_match": lambda: jax.vmap(lambda u: u * 2.0, out_axes=None, sum_match=True)(x),
        "pytree": lambda: V(lambda u: lax.psum({"a": u, "b": (u * 2.0, 3.0)}, "i"), "i")(x),
        "constant_psum": lambda: V(lambda u: u * lax.psum(2.0, "i") + lax.axis_size("i"),
                                   "i")(v),
        "pmean_int": lambda: V(lambda u: lax.pmean(u, "i"), "i")(jnp.arange(3)),
        "psum_bool": lambda: V(lambda u: lax.psum(u > 0.0, "i"), "i")(x),
        "pmax_bool": lambda: V(lambda u: lax.pmax(u > 0.0, "i"), "i")(x),
        "psum_int8_wraps": lambda: V(lambda u: lax.psum(u, "i"), "i")(
            jnp.arange(3, dtype=jnp.int8) * 60),
        "pmap_psum": lambda: jax.pmap(lambda u: lax.psum(u, "i"), axis_name="i")(x[:1]),
        "pmap_axis_index": lambda: jax.pmap(lambda u: u + lax.axis_index("i"),
                                            axis_name="i")(x[:1]),
        "pmap_in_axes": lambda: jax.pmap(lambda a, b: a * b, in_axes=(1, None))(
            x[:, :1], 3.0),
        "pmap_out_axes": lambda: jax.pmap(lambda u: (u * 2, lax.psum(u, "i")), axis_name="i",
                                          out_axes=(1, None))(x[:1]),
        "pmap_static": lambda: jax.pmap(lambda u, n: u * n,
                                        static_broadcasted_argnums=1)(x[:1], 3),
        "pmap_kwargs": lambda: jax.pmap(lambda a, b: a - b)(x[:1], b=x[1:]),
        "pmap_grad": lambda: jax.grad(lambda u: jax.pmap(
            lambda e: lax.psum(e ** 2, "i"), axis_name="i")(u).sum())(x[:1]),
        "pmap_of_grad": lambda: jax.pmap(jax.grad(lambda e: lax.psum(e ** 2, "i").sum()),
                                         axis_name="i")(x[:1]),
        "vmap_of_pmap": lambda: jax.vmap(jax.pmap(lambda u: lax.psum(u, "i"), axis_name="i"),
                                         axis_name="j")(x.reshape(2, 1, 3)),
        "jit_of_pmap": lambda: jax.jit(jax.pmap(lambda u: lax.pmean(u, "i"), axis_name="i"))(
            x[:1]),
    }
