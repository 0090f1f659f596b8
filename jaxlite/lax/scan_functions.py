"""Functions built on `scan` and on slicing: `lax.map` and `lax.associative_scan`.

Mirrors `jax.lax.map` (a scan without a carry, or, with `batch_size`, a scan over batches
of a vmapped function plus the remainder) and `jax.lax.associative_scan` (a parallel prefix
reduction: combine neighbouring pairs, recurse on the half as long sequence, then fill in
the even positions; only slices, concatenations and reshapes, no new primitive).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlite.core.traceback_filter import api_boundary
from jaxlite.core.avals import get_aval
from jaxlite.interpreters.batching import vmap_flat
from jaxlite.lax._control_flow_util import wrapper_for
from jaxlite.lax.broadcast import reshape
from jaxlite.lax.scan import scan
from jaxlite.lax.shape_ops import expand_dims, rev
from jaxlite.lax.slicing import concatenate, slice_in_dim
from jaxlite.tree_util import tree_flatten, tree_unflatten

__all__ = ["map", "associative_scan"]


def _vmapped(f: Callable[[Any], Any], xs: Any) -> Any:
    """`f` mapped over the leading axis of every leaf of `xs` (outputs stacked at 0)."""
    leaves, tree = tree_flatten(xs)
    out_trees = []

    def flat(*values: Any) -> list[Any]:
        out_leaves, out_tree = tree_flatten(f(tree_unflatten(tree, values)))
        out_trees.append(out_tree)
        return out_leaves
    outs = vmap_flat(flat, get_aval(leaves[0]).shape[0], leaves, [0] * len(leaves), 0,
                     axis_name=None)
    return tree_unflatten(out_trees[0], outs)


def _leading_size(leaves: Sequence[Any]) -> int:
    sizes = {get_aval(x).shape[0] if get_aval(x).shape else None for x in leaves}
    if len(sizes) != 1 or None in sizes:
        shapes = [get_aval(x).shape for x in leaves]
        raise ValueError(f"lax.map: every leaf of xs needs the same leading axis size, got "
                         f"shapes {shapes}.")
    return sizes.pop()


@api_boundary
def map(f: Callable[[Any], Any], xs: Any, *,  # noqa: A001 (jax.lax.map shadows the builtin)
        batch_size: int | None = None) -> Any:
    """`f` applied to each slice of `xs` along its leading axis (mirrors `jax.lax.map`).

    A `scan` whose body applies `f`: one compiled loop, the results stacked. With
    `batch_size`, the loop runs over batches of that many slices with `f` vmapped, and the
    slices left over are mapped once more outside the loop.
    """
    if batch_size is None:
        return scan(wrapper_for(f, "map", _map_body), (), xs)[1]
    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError(f"lax.map: batch_size must be a positive integer, got {batch_size}.")
    leaves, tree = tree_flatten(xs)
    length = _leading_size(leaves)
    if batch_size >= length:
        return _vmapped(f, xs)
    num_batches, remainder = divmod(length, batch_size)
    main = num_batches * batch_size
    batches = [reshape(slice_in_dim(x, 0, main), (num_batches, batch_size,
                                                   *get_aval(x).shape[1:]))
               for x in leaves]
    ys = scan(wrapper_for(f, "map_batched", _batched_map_body), (),
              tree_unflatten(tree, batches))[1]
    y_leaves, y_tree = tree_flatten(ys)
    y_leaves = [reshape(y, (main, *get_aval(y).shape[2:])) for y in y_leaves]
    if remainder:
        rest = _vmapped(f, tree_unflatten(tree, [slice_in_dim(x, main, None) for x in leaves]))
        y_leaves = [concatenate([y, r], 0) for y, r in zip(y_leaves, tree_flatten(rest)[0])]
    return tree_unflatten(y_tree, y_leaves)


def _map_body(f: Callable[[], Callable]) -> Callable:
    return lambda _, x: ((), f()(x))


def _batched_map_body(f: Callable[[], Callable]) -> Callable:
    return lambda _, x: ((), _vmapped(f(), x))


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """All prefix reductions of `elems` along `axis` with the associative `fn` (mirrors
    `jax.lax.associative_scan`).

    `fn(a, b)` combines two pytrees shaped like `elems` whose leaves share a size along
    `axis`, elementwise (it is called on many positions at once). The result at position i
    is `fn(...fn(fn(x0, x1), x2)..., xi)`; with `reverse`, the reduction of positions
    i..n-1 taken from the end: `fn(...fn(x[n-1], x[n-2])..., xi)`. It takes about 2 log2(n)
    levels of `fn` instead of n sequential steps.
    """
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    ndim = len(get_aval(leaves[0]).shape)
    axis = int(axis) + ndim if axis < 0 else int(axis)
    sizes = [get_aval(x).shape[axis] if len(get_aval(x).shape) > axis else None
             for x in leaves]
    if any(s is None or s != sizes[0] for s in sizes):
        raise ValueError(f"Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[get_aval(x).shape for x in leaves]})")

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out_leaves, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise ValueError(f"associative_scan: fn must return a pytree of the structure of "
                             f"elems, {tree}, got {out_tree}.")
        return out_leaves

    def prefix(xs: list[Any]) -> list[Any]:
        n = get_aval(xs[0]).shape[axis]
        if n < 2:
            return xs
        pairs = combine([slice_in_dim(x, 0, n - 1, 2, axis) for x in xs],
                        [slice_in_dim(x, 1, None, 2, axis) for x in xs])
        odd = prefix(pairs)
        if n % 2 == 0:
            odd_before = [slice_in_dim(o, 0, get_aval(o).shape[axis] - 1, 1, axis) for o in odd]
        else:
            odd_before = odd
        even = combine(odd_before, [slice_in_dim(x, 2, None, 2, axis) for x in xs])
        even = [concatenate([slice_in_dim(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    result = prefix(leaves)
    if reverse:
        result = [rev(x, (axis,)) for x in result]
    return tree_unflatten(tree, result)


def _interleave(even: Any, odd: Any, axis: int) -> Any:
    """e0, o0, e1, o1, ... along `axis`; `even` is as long as `odd` or one longer."""
    n_even, n_odd = get_aval(even).shape[axis], get_aval(odd).shape[axis]
    head = slice_in_dim(even, 0, n_odd, 1, axis) if n_even > n_odd else even
    pairs = concatenate([expand_dims(head, (axis + 1,)), expand_dims(odd, (axis + 1,))],
                        axis + 1)
    shape = list(get_aval(odd).shape)
    shape[axis] = 2 * n_odd
    merged = reshape(pairs, tuple(shape))
    if n_even > n_odd:
        merged = concatenate([merged, slice_in_dim(even, n_odd, None, 1, axis)], axis)
    return merged

