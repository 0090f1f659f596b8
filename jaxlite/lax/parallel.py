"""Collectives over named axes (mirrors JAX's `jax.lax` parallel operators).

Reductions (`psum`, `pmean`, `pmax`, `pmin`), permutations (`ppermute`, `pshuffle`),
`pbroadcast`, the pass-throughs `pcast` and `pswapaxes`, and `axis_size`; the collectives
that move data (`all_gather`, `psum_scatter`, `all_to_all`, `axis_index`, ...) live in
`parallel_exchange` and are exported from here too. Under `vmap(f, axis_name="i")` a
collective over `"i"` is resolved by its primitive's batch rule into ordinary operations
along the batch axis (see `_parallel_util`), so `jit` and the backends never see it.

Differentiation follows JAX: `psum`, `ppermute`, `pbroadcast`, `all_gather`, `psum_scatter`
and `all_to_all` are linear; `psum` transposes to `psum` (JAX treats it as psum followed by
a broadcast), `ppermute` to the inverse permutation; `pmax` and `pmin` have no derivative.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.sharding_rules import checked_axes, varying_axes
from jaxlite.core.trace import Tracer
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.named_axes import (axis_size as bound_axis_size, check_axis_names,
                                             in_binding_order)
from jaxlite.lax._parallel_util import (axis_names, canonical_groups, declare_collective,
                                        group_size, other_names, resolves_here,
                                        within_own_axis)
from jaxlite.lax.arithmetic import zeros_like_array
from jaxlite.lax.broadcast import broadcast_in_dim, reduce_sum
from jaxlite.lax.comparisons import eq, ge
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.dynamic_slicing import dynamic_index_in_dim, index_take
from jaxlite.lax.math_functions import max as lax_max
from jaxlite.lax.parallel_exchange import (all_gather, all_gather_p, all_to_all,  # noqa: F401
                                           all_to_all_p, axis_index, axis_index_p,
                                           canonicalize_axis, make_varying,
                                           psum_scatter, ragged_all_to_all,
                                           ragged_all_to_all_p, reduce_scatter_p)
from jaxlite.lax.reductions import reduce_max, reduce_min
from jaxlite.lax.selection import select
from jaxlite.lax.slicing import index_in_dim
from jaxlite.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["psum", "pmean", "pmax", "pmin", "ppermute", "pshuffle", "pbroadcast", "pswapaxes",
           "pcast", "psend", "precv", "axis_size", "axis_index", "all_gather", "all_to_all",
           "psum_scatter", "ragged_all_to_all",
           "psum_p", "pmax_p", "pmin_p", "ppermute_p", "pbroadcast_p", "axis_index_p",
           "all_gather_p", "all_to_all_p", "reduce_scatter_p", "ragged_all_to_all_p"]


def _broadcast_like(pred: Any, like: Any, dims: tuple = ()) -> Any:
    return broadcast_in_dim(pred, np.shape(like), dims)


# ------------------------------------------------------------------ psum, pmax, pmin

def _reduction_abstract_eval(api: str) -> Callable[..., ShapedArray]:
    def abstract_eval(x: ShapedArray, *, axes: tuple, axis_index_groups: Any) -> ShapedArray:
        if any(isinstance(a, int) for a in axes):
            raise TypeError(f"{api}_p takes named axes only; lax.{api} reduces positional "
                            f"axes before binding it (got axes={axes}).")
        check_axis_names(axes, api)
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return abstract_eval


def _reduction_batch(primitive: Any, reduce: Callable[[Any, tuple], Any],
                     scales: bool) -> Callable[..., tuple]:
    """Over its own axis a reduction sums (or maxes) along the batch axis; the result is
    the same for every member. An unmapped value is its own maximum, and its own sum
    times the axis size."""
    def rule(size: int, args: Sequence[Any], dims: Sequence[Any], *, axes: tuple,
             axis_index_groups: Any) -> tuple[Any, Any]:
        (x,), (d,) = args, dims
        if not resolves_here(axes, axis_index_groups):
            return primitive.bind(x, axes=axes, axis_index_groups=axis_index_groups), d
        if d is None:
            y = _constant_like(x, size) * x if scales else x  # JAX's formula, types and all
        else:
            y = reduce(x, (d,))
        rest = other_names(axes)
        if rest:
            y = primitive.bind(y, axes=rest, axis_index_groups=None)
        return y, None
    return rule


def _no_derivative(name: str) -> Callable[..., Any]:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")
    return jvp


def _psum_transpose(ct: Any, x: Any, *, axes: tuple, axis_index_groups: Any) -> list[Any]:
    # JAX treats psum as psum followed by a broadcast, so the transpose sums again.
    return [psum_p.bind(ct, axes=axes, axis_index_groups=axis_index_groups)]


psum_p = declare_collective("psum", lambda p: p["axes"], "psum")
psum_p.abstract_eval = _reduction_abstract_eval("psum")
psum_p.batch = _reduction_batch(psum_p, reduce_sum, scales=True)
psum_p.transpose = _psum_transpose
ad.deflinear(psum_p)

pmax_p = declare_collective("pmax", lambda p: p["axes"], "pmax")
pmax_p.abstract_eval = _reduction_abstract_eval("pmax")
pmax_p.batch = _reduction_batch(pmax_p, reduce_max, scales=False)
pmax_p.jvp = _no_derivative("pmax")

pmin_p = declare_collective("pmin", lambda p: p["axes"], "pmin")
pmin_p.abstract_eval = _reduction_abstract_eval("pmin")
pmin_p.batch = _reduction_batch(pmin_p, reduce_min, scales=False)
pmin_p.jvp = _no_derivative("pmin")


def _check_groups(names: tuple, axis_index_groups: Any) -> tuple | None:
    if axis_index_groups is None:
        return None
    if any(isinstance(n, int) for n in names):
        raise ValueError("axis_index_groups only supported for sums over just named axes")
    groups = canonical_groups(axis_index_groups)
    if sorted(i for g in groups for i in g) != list(range(sum(map(len, groups)))):
        raise ValueError("axis_index_groups must cover all indices exactly once")
    return groups


def _constant_like(leaf: Any, value: int) -> Any:
    """`value` in the type of `leaf`, as JAX's `lax._const` makes it: a Python scalar
    stays one, anything else becomes a numpy value of the leaf's (canonical) dtype."""
    if dtypes.is_python_scalar(leaf):
        return type(leaf)(value)
    return np.array(value, dtypes.dtype(leaf))


def _all_reduce(primitive: Any, reduce: Callable[[Any, tuple], Any], x: Any, axis_name: Any,
                axis_index_groups: Any, api: str) -> Any:
    """Reduce every leaf of `x` over the named axes and the positional (int) axes of
    `axis_name`; positional axes are reduced first, as ordinary array axes."""
    names = axis_names(axis_name)
    groups = _check_groups(names, axis_index_groups)
    named = tuple(n for n in names if not isinstance(n, int))

    def reduce_leaf(leaf: Any) -> Any:
        positional = tuple(canonicalize_axis(n, np.ndim(leaf)) for n in names
                           if isinstance(n, int))
        if positional:
            leaf = reduce(leaf, positional)
        if not named:
            return leaf
        check_axis_names(named, api)
        return primitive.bind(leaf, axes=named, axis_index_groups=groups)
    return tree_map(reduce_leaf, x)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Sum `x` over the named axis (or axes; ints name positional axes of `x`), the same
    result on every member (mirrors `jax.lax.psum`). Booleans are summed as int32; the
    sum of a value that no map varies is that value times the axis size."""
    names = axis_names(axis_name)
    if not names:
        return x
    leaves, tree = tree_flatten(x)
    leaves = [convert_element_type(leaf, np.int32) if dtypes.dtype(leaf) == np.bool_ else leaf
              for leaf in leaves]
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        return _all_reduce(psum_p, reduce_sum, tree_unflatten(tree, leaves), axis_name,
                           axis_index_groups, "psum")
    groups = _check_groups(names, axis_index_groups)
    named = [n for n in names if not isinstance(n, int)]
    size = len(groups[0]) if groups else math.prod(bound_axis_size(n) for n in named)
    positional = [n for n in names if isinstance(n, int)]

    def constant(leaf: Any) -> Any:
        summed = reduce_sum(leaf, [canonicalize_axis(a, np.ndim(leaf)) for a in positional]) \
            if positional else leaf
        return _constant_like(leaf, size) * summed
    return tree_unflatten(tree, [constant(leaf) for leaf in leaves])


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of `x` over the named axis (mirrors `jax.lax.pmean`)."""
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    count = psum(1, axis_name, axis_index_groups=axis_index_groups)
    return tree_map(lambda v: v / count, total)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of `x` over the named axis (mirrors `jax.lax.pmax`)."""
    return _all_reduce(pmax_p, reduce_max, x, axis_name, axis_index_groups, "pmax")


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of `x` over the named axis (mirrors `jax.lax.pmin`)."""
    return _all_reduce(pmin_p, reduce_min, x, axis_name, axis_index_groups, "pmin")


def axis_size(axis_name: Any) -> int:
    """The size of the named axis, or the product over several (mirrors
    `jax.lax.axis_size`); a Python int."""
    return psum(1, axis_name)


# ------------------------------------------------------------------ ppermute, pshuffle

def _inverse(perm: tuple) -> tuple:
    return tuple((dst, src) for src, dst in perm)


def _sources(perm: tuple, size: int) -> list[int | None]:
    """For each member, the member it receives from (None: it receives zeros)."""
    sources: list[int | None] = [None] * size
    for src, dst in perm:
        sources[dst] = src
    return sources


def _ppermute_abstract_eval(x: ShapedArray, *, axis_name: tuple, perm: tuple) -> ShapedArray:
    check_axis_names(axis_name, "ppermute")
    return x


def _ppermute_transpose(ct: Any, x: Any, *, axis_name: tuple, perm: tuple) -> list[Any]:
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=_inverse(perm))]


def _ppermute_batch(size: int, args: Sequence[Any], dims: Sequence[Any], *, axis_name: tuple,
                    perm: tuple) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    if not resolves_here(axis_name):
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    if len(axis_name) > 1:
        return within_own_axis(lambda v: _ppermute_by_gather(v, axis_name, perm), x, d, size)
    sources = _sources(perm, size)
    if d is None and None not in sources:
        return x, None
    x = move_batch_axis(x, d, size, 0)
    y = index_take(x, [np.array([s or 0 for s in sources], np.int32)], [0])
    if None in sources:
        receives = np.array([s is not None for s in sources])
        y = select(_broadcast_like(receives, y, (0,)), y, zeros_like_array(y))
    return y, 0


def _ppermute_by_gather(v: Any, names: tuple, perm: tuple) -> Any:
    """ppermute over several names: gather every member's value and pick the source's.

    As in JAX (which sorts the devices of the group), members are numbered in the mesh's
    order, outermost axis major, whatever the order of the names.
    """
    names = in_binding_order(names)
    table = np.array([-1 if s is None else s for s in _sources(perm, group_size(names))],
                     np.int32)
    source = dynamic_index_in_dim(table, axis_index(names), 0, keepdims=False)
    picked = dynamic_index_in_dim(all_gather(v, names), lax_max(source, np.int32(0)), 0,
                                  keepdims=False)
    return select(_broadcast_like(ge(source, np.int32(0)), picked), picked,
                  zeros_like_array(picked))


ppermute_p = declare_collective("ppermute", lambda p: p["axis_name"], "ppermute")
ppermute_p.abstract_eval = _ppermute_abstract_eval
ppermute_p.transpose = _ppermute_transpose
ppermute_p.batch = _ppermute_batch
ad.deflinear(ppermute_p)


def _checked_perm(perm: Any, names: tuple) -> tuple:
    pairs = tuple((int(src), int(dst)) for src, dst in perm)
    size = group_size(names)
    srcs, dsts = [s for s, _ in pairs], [t for _, t in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if not all(0 <= i < size for i in srcs + dsts):
        raise ValueError(f"ppermute: the permutation {perm} names members outside the axis "
                         f"{names} of size {size}.")
    return pairs


def ppermute(x: Any, axis_name: Any, perm: Any) -> Any:
    """Send each member's `x` to another: `perm` lists (source, destination) pairs, and a
    member that is no destination gets zeros (mirrors `jax.lax.ppermute`)."""
    names = axis_names(axis_name)
    check_axis_names(names, "ppermute")
    pairs = _checked_perm(perm, names)
    return tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=names, perm=pairs), x)


def pshuffle(x: Any, axis_name: Any, perm: Any) -> Any:
    """Member i gets member perm[i]'s `x` (mirrors `jax.lax.pshuffle`)."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


# ------------------------------------------------------------------------ pbroadcast

def _pbroadcast_abstract_eval(x: ShapedArray, *, axis_name: tuple, source: int
                              ) -> ShapedArray:
    check_axis_names(axis_name, "pbroadcast")
    return x


def _pbroadcast_transpose(ct: Any, x: Any, *, axis_name: tuple, source: int) -> list[Any]:
    is_source = eq(axis_index(axis_name), np.int32(source))
    total = psum(ct, axis_name)
    return [select(_broadcast_like(is_source, total), total, zeros_like_array(total))]


def _pbroadcast_batch(size: int, args: Sequence[Any], dims: Sequence[Any], *,
                      axis_name: tuple, source: int) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    if not resolves_here(axis_name):
        return pbroadcast_p.bind(x, axis_name=axis_name, source=source), d
    if len(axis_name) > 1:
        return within_own_axis(
            lambda v: index_in_dim(all_gather(v, axis_name), source, 0, False), x, d, size)
    if d is None:
        return x, None
    return index_in_dim(x, source, d, keepdims=False), None


pbroadcast_p = declare_collective("pbroadcast", lambda p: p["axis_name"], "pbroadcast")
pbroadcast_p.abstract_eval = _pbroadcast_abstract_eval
pbroadcast_p.transpose = _pbroadcast_transpose
pbroadcast_p.batch = _pbroadcast_batch
ad.deflinear(pbroadcast_p)


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member gets member `source`'s `x` (mirrors `jax.lax.pbroadcast`)."""
    names = axis_names(axis_name)
    size = group_size(names)
    source = int(source)
    if not 0 <= source < size:
        raise ValueError(f"collective broadcast doesn't fit in the axis size! (source "
                         f"{source}, axis {axis_name} of size {size})")
    return tree_map(lambda leaf: pbroadcast_p.bind(leaf, axis_name=names, source=source), x)


# ------------------------------------------------------------ pswapaxes, pcast, psend

def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the named axis with positional axis `axis`: `all_to_all(x, axis_name, axis,
    axis)` (mirrors `jax.lax.pswapaxes`)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


_PCAST_TO = "{'reduced', 'varying', 'unreduced'}"


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """Change how a value varies over named axes (mirrors `jax.lax.pcast`). Inside a
    shard_map body with check_vma, `to="varying"` makes an invariant value vary over the
    axes (JAX's ValueError for one that varies already); under vmap and pmap every value may
    vary, so it returns `x`. The reduced and unreduced states are not tracked."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    names = axis_names(axis_name)
    if not axis_name:
        return x
    if to not in ("reduced", "varying", "unreduced"):
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {_PCAST_TO}")
    check_axis_names(names, "pvary")
    if to == "varying" and set(names) & checked_axes():
        if set(names) & varying_axes(x):
            raise ValueError("Unsupported pcast from=varying, to='varying'")
        return make_varying(x, names)
    if to == "unreduced":
        raise ValueError("Unsupported pcast from=invarying, to='unreduced'")
    if to == "reduced":
        raise NotImplementedError("pcast(..., to='reduced') needs shard_map's reduced types, "
                                  "which jaxlite does not track.")
    return x


def psend(x: Any, axis_name: Any, perm: Any) -> Any:
    """One-sided send (mirrors `jax.lax.psend`): not implemented; use `ppermute`."""
    raise NotImplementedError("psend is a one-sided device-to-device transfer, which jaxlite "
                              "does not implement (one device); ppermute does both halves.")


def precv(token: Any, out_shape: Any, axis_name: Any, perm: Any) -> Any:
    """One-sided receive (mirrors `jax.lax.precv`): not implemented; use `ppermute`."""
    raise NotImplementedError("precv is a one-sided device-to-device transfer, which jaxlite "
                              "does not implement (one device); ppermute does both halves.")
