"""`jaxlite.vmap`: vectorizing map over pytrees of arrays (mirrors `jax.vmap`).

Resolves `in_axes` / `out_axes` (ints, None, negative ints, pytree prefixes) to one axis per
leaf, checks that the mapped axes agree in size, and runs `interpreters.batching.vmap_flat`.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from jaxlite.transforms import api_util as _api_util
from jaxlite.runtime.device import device_put
from jaxlite.interpreters.batching import vmap_flat
from jaxlite.tree_util import (PyTreeDef, tree_flatten, tree_structure, tree_unflatten)


def _axes_per_leaf(axes: Any, tree: Any, what: str) -> list[Any]:
    """Broadcast a pytree prefix of axes to one entry per leaf of `tree`."""
    if isinstance(axes, list):
        axes = tuple(axes)
    if axes is None or isinstance(axes, (int, np.integer)):
        return [axes] * tree_structure(tree).num_leaves
    try:
        return _broadcast_prefix(axes, tree)
    except ValueError as error:
        raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                         f"corresponding value, got specification {axes!r} for value tree "
                         f"{tree_structure(tree)}. ({error})") from None


def _broadcast_prefix(prefix: Any, tree: Any) -> list[Any]:
    prefix_tree = tree_structure(prefix, is_leaf=lambda x: x is None)
    subtrees = prefix_tree.flatten_up_to(tree)
    prefix_leaves = tree_flatten(prefix, is_leaf=lambda x: x is None)[0]
    out = []
    for axis, sub in zip(prefix_leaves, subtrees):
        out.extend([axis] * tree_structure(sub).num_leaves)
    return out


def _check_axis(axis: Any, leaf: Any, name: str) -> int | None:
    if axis is None:
        return None
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"vmap in_axes must be an int, None, or a (nested) container with "
                        f"those types as leaves, but got {axis!r} for argument {name}.")
    ndim = np.ndim(leaf)
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"vmap was requested to map its argument along axis {axis}, which implies that "
            f"its rank should be at least {axis + 1 if axis >= 0 else -axis}, but is only "
            f"{ndim} (its shape is {np.shape(leaf)}); argument: {name}.")
    return int(axis) % ndim


def _mapped_size(leaves: list, axes: list, names: list[str], axis_size: int | None) -> int:
    sizes = {np.shape(x)[a] for x, a in zip(leaves, axes) if a is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes (or be "
                         "given axis_size)")
    if len(sizes) > 1:
        lines = [f"  * one axis had size {np.shape(x)[a]}: axis {a} of argument {n} of shape "
                 f"{np.shape(x)};" for x, a, n in zip(leaves, axes, names) if a is not None]
        raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                         + "\n".join(lines))
    return sizes.pop()


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None, spmd_axis_name: Any = None) -> Callable[..., Any]:
    """Map `fun` over array axes (mirrors `jax.vmap`).

    Parameters
    ----------
    fun : the function to vectorize.
    in_axes : int, None, or a pytree prefix of the positional arguments giving the axis to
        map for each leaf (None: not mapped). Keyword arguments are mapped along axis 0.
    out_axes : the same for the outputs.
    axis_size : the mapped size, needed when no argument is mapped.
    """
    if not callable(fun):
        raise TypeError(f"vmap: expected a function, got {fun!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, np.integer, tuple))):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)="
                f"{len(in_axes)}, len(args)={len(args)}")
        leaves, in_tree = tree_flatten((tuple(args), kwargs))
        # numpy inputs become arrays first, so that x64-off narrowing applies to the values
        # themselves (an output that is an input unchanged must not stay 64-bit).
        leaves = [device_put(x) if isinstance(x, np.ndarray) else x for x in leaves]
        arg_axes = _axes_per_leaf(in_axes, tuple(args), "in_axes")
        arg_axes += [0] * (len(leaves) - len(arg_axes))
        names = _api_util.leaf_names(args, _api_util.parameter_names(fun, len(args)), kwargs)
        axes = [_check_axis(a, x, n) for a, x, n in zip(arg_axes, leaves, names)]
        size = _mapped_size(leaves, axes, names, axis_size)
        out_store: list[PyTreeDef] = []
        outs_seen: list[list] = []

        def flat_fun(*flat_args: Any) -> list[Any]:
            call_args, call_kwargs = tree_unflatten(in_tree, flat_args)
            out_leaves, out_tree = tree_flatten(fun(*call_args, **call_kwargs))
            out_store.append(out_tree)
            outs_seen.append([np.ndim(o) for o in out_leaves])
            return out_leaves

        def out_dims() -> list[int | None]:
            example = tree_unflatten(out_store[0], [0] * out_store[0].num_leaves)
            dims = _axes_per_leaf(out_axes, example, "out_axes")
            return [None if d is None else int(d) % (ndim + 1)
                    for d, ndim in zip(dims, outs_seen[0])]
        results = vmap_flat(flat_fun, size, leaves, axes, out_dims, axis_name)
        return tree_unflatten(out_store[0], results)
    return vmapped
