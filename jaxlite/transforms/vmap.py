"""`jaxlite.vmap`: vectorizing map over pytrees of arrays (mirrors `jax.vmap`).

Resolves `in_axes` / `out_axes` (ints, None, negative ints, pytree prefixes) to one axis per
leaf, checks that the mapped axes agree in size, and runs `interpreters.batching.vmap_flat`,
which binds `axis_name` for the collectives of `jaxlite.lax` while the function runs.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from jaxlite.transforms import api_util as _api_util
from jaxlite.runtime.device import device_put
from jaxlite.interpreters.batching import SpecMatchError, vmap_flat
from jaxlite.core.traceback_filter import api_boundary
from jaxlite.tree_util import (PyTreeDef, keystr, tree_flatten, tree_flatten_with_path,
                               tree_leaves, tree_structure, tree_unflatten)


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
    ndim = np.ndim(leaf)
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"vmap was requested to map its argument along axis {axis}, which implies that "
            f"its rank should be at least {axis + 1 if axis >= 0 else -axis}, but is only "
            f"{ndim} (its shape is {np.shape(leaf)}); argument: {name}.")
    return int(axis) % ndim


def _type_str(leaf: Any) -> str:
    return f"{np.result_type(leaf)}{list(np.shape(leaf))}".replace(" ", "")


def _mapped_size(leaves: list, axes: list, names: list[str], axis_size: int | None) -> int:
    sizes = {np.shape(x)[a] for x, a in zip(leaves, axes) if a is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if not sizes:
        raise ValueError("vmap must have at least one non-None value in in_axes (or be "
                         "given axis_size)")
    if len(sizes) > 1:
        lines = [] if axis_size is None else [f"  * the `axis_size` argument was {axis_size};"]
        lines += [f"  * one axis had size {np.shape(x)[a]}: axis {a} of argument {n} of type "
                  f"{_type_str(x)};" for x, a, n in zip(leaves, axes, names) if a is not None]
        raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                         + "\n".join(lines))
    return sizes.pop()


def _is_axis_spec(leaf: Any) -> bool:
    return type(leaf) is int  # JAX accepts neither bools nor numpy integers here


def check_axes_spec(in_axes: Any, out_axes: Any, api: str) -> Any:
    """Validate in_axes / out_axes as JAX does when the map is created; lists become tuples."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if api == "vmap" and not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError(f"{api} in_axes must be an int, None, or a tuple of entries "
                        "corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")
    if not all(map(_is_axis_spec, tree_leaves(in_axes))):
        raise TypeError(f"{api} in_axes must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {in_axes}.")
    if not all(map(_is_axis_spec, tree_leaves(out_axes))):
        raise TypeError(f"{api} out_axes must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {out_axes}.")
    return in_axes


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None, spmd_axis_name: Any = None,
         sum_match: bool = False) -> Callable[..., Any]:
    """Map `fun` over array axes (mirrors `jax.vmap`).

    Parameters
    ----------
    fun : the function to vectorize.
    in_axes : int, None, or a pytree prefix of the positional arguments giving the axis to
        map for each leaf (None: not mapped). Keyword arguments are mapped along axis 0.
    out_axes : the same for the outputs.
    axis_name : a hashable name for the mapped axis, under which `fun` may use the
        collectives of `jaxlite.lax` (`psum`, `all_gather`, `axis_index`, ...).
    axis_size : the mapped size, needed when no argument is mapped.
    spmd_axis_name : mesh axes that would shard the mapped axis; with one device there is
        nothing to shard, so it is checked and otherwise has no effect.
    sum_match : sum a mapped output over the mapped axis where its out_axes entry is None
        (instead of raising).
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    in_axes = check_axes_spec(in_axes, out_axes, "vmap")

    @functools.wraps(fun)
    @api_boundary
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
            return _out_dims(out_axes, out_store[0], outs_seen[0])
        try:
            results = vmap_flat(flat_fun, size, leaves, axes, out_dims, axis_name,
                                sum_match=sum_match)
        except SpecMatchError as error:
            raise _spec_match_error(error, out_axes, out_store[0], axis_name) from None
        return tree_unflatten(out_store[0], results)
    return vmapped


def _out_dims(out_axes: Any, out_tree: PyTreeDef, ndims: list[int]) -> list[int | None]:
    example = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    dims = _axes_per_leaf(out_axes, example, "out_axes")
    for d, ndim in zip(dims, ndims):
        if d is not None and not -(ndim + 1) <= d <= ndim:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {ndim + 1}")
    return [None if d is None else int(d) % (ndim + 1) for d, ndim in zip(dims, ndims)]


def _spec_match_error(error: SpecMatchError, out_axes: Any, out_tree: PyTreeDef,
                      axis_name: Any) -> ValueError:
    """JAX's message for a mapped output whose out_axes entry is None."""
    if axis_name is not None:
        return ValueError(f"vmap has mapped output (axis_name={axis_name}) but out_axes is "
                          "None")
    example = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    specs = tree_unflatten(out_tree, _axes_per_leaf(out_axes, example, "out_axes"))
    paths = tree_flatten_with_path(specs, is_leaf=lambda x: x is None)[0]
    path = paths[error.leaf_index][0]
    return ValueError(f"at vmap out_axes{keystr(path)}, got axis spec None but output was "
                      f"batched on axis {error.src}")
