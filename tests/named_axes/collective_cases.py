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
