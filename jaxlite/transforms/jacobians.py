"""Jacobians and Hessians built from vmap over jvp or vjp (mirrors `jax.jacfwd` etc.).

`jacfwd` pushes the standard basis of the inputs through `jvp` (one vmap lane per input
element); `jacrev` pulls the standard basis of the outputs back through `vjp`. The result
for each (output leaf, input leaf) pair has shape `out.shape + in.shape`.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.transforms import api_util as _api_util
from jaxlite.transforms.autodiff import (_check_grad_input, check_real_or_holomorphic, jvp,
                                         vjp)
from jaxlite.core.avals import get_aval
from jaxlite.core.traceback_filter import api_boundary
from jaxlite import lax
from jaxlite.lax.broadcast import reshape
from jaxlite.tree_util import tree_flatten, tree_map, tree_transpose, tree_structure, \
    tree_unflatten
from jaxlite.transforms.vmap import vmap


def _std_basis(leaves: Sequence[Any]) -> list[np.ndarray]:
    """Rows of the identity, split per leaf: leaf i gets shape (total,) + leaf.shape."""
    sizes = [int(np.prod(np.shape(x), dtype=np.int64)) for x in leaves]
    total = sum(sizes)
    basis = []
    offset = 0
    for leaf, size in zip(leaves, sizes):
        aval = get_aval(leaf)
        block = np.zeros((total, size), aval.dtype)
        block[offset:offset + size] = np.eye(size, dtype=aval.dtype)
        basis.append(block.reshape((total,) + aval.shape))
        offset += size
    return basis


def _split_rows(flat: Any, leaves: Sequence[Any], first_shape: tuple[int, ...],
                rows_last: bool) -> list[Any]:
    """Split the stacked basis axis of `flat` into the shapes of `leaves`."""
    out = []
    offset = 0
    for leaf in leaves:
        shape = np.shape(leaf)
        size = int(np.prod(shape, dtype=np.int64))
        axis = np.ndim(flat) - 1 if rows_last else 0
        piece = lax.slice_in_dim(flat, offset, offset + size, axis=axis)
        if rows_last:
            out.append(reshape(piece, tuple(first_shape) + tuple(shape)))
        else:
            out.append(reshape(piece, tuple(shape) + tuple(first_shape)))
        offset += size
    return out


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """Jacobian of `fun` by forward mode (mirrors `jax.jacfwd`)."""
    @functools.wraps(fun)
    @api_boundary
    def jac_fun(*args: Any, **kwargs: Any) -> Any:
        nums = _api_util.normalize_argnums(argnums, len(args), "jacfwd", "jacfwd")
        diff = tuple(args[n] for n in nums)
        leaves, in_tree = tree_flatten(diff)
        for leaf in leaves:
            check_real_or_holomorphic(get_aval(leaf).dtype, holomorphic, "jacfwd", "input",
                                      "jvp")

        def pushfwd(*basis_leaves: Any) -> Any:
            tangents = tree_unflatten(in_tree, basis_leaves)

            def partial_fun(*d: Any) -> Any:
                full = list(args)
                for n, v in zip(nums, d):
                    full[n] = v
                return fun(*full, **kwargs)
            result = jvp(partial_fun, diff, tangents, has_aux=has_aux)
            return (result[1], result[2]) if has_aux else (result[1], None)
        tangents_out, aux = vmap(pushfwd, out_axes=(-1, None))(*_std_basis(leaves))
        jac = tree_map(lambda t: _fwd_leaf_jac(t, leaves, in_tree, argnums), tangents_out)
        return (jac, aux) if has_aux else jac
    return jac_fun


def _fwd_leaf_jac(t: Any, leaves: list, in_tree: Any, argnums: Any) -> Any:
    out_shape = np.shape(t)[:-1]
    parts = _split_rows(t, leaves, out_shape, rows_last=True)
    tree = tree_unflatten(in_tree, parts)
    return tree[0] if isinstance(argnums, int) else tree


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """Jacobian of `fun` by reverse mode (mirrors `jax.jacrev`)."""
    @functools.wraps(fun)
    @api_boundary
    def jac_fun(*args: Any, **kwargs: Any) -> Any:
        nums = _api_util.normalize_argnums(argnums, len(args), "jacrev", "jacrev")
        diff = tuple(args[n] for n in nums)
        for leaf in tree_flatten(diff)[0]:
            _check_grad_input(get_aval(leaf).dtype, holomorphic, allow_int, "jacrev")

        def partial_fun(*d: Any) -> Any:
            full = list(args)
            for n, v in zip(nums, d):
                full[n] = v
            return fun(*full, **kwargs)
        if has_aux:
            out, pullback, aux = vjp(partial_fun, *diff, has_aux=True)
        else:
            out, pullback = vjp(partial_fun, *diff)
        out_leaves, out_tree = tree_flatten(out)
        for leaf in out_leaves:
            check_real_or_holomorphic(get_aval(leaf).dtype, holomorphic, "jacrev", "output",
                                      "vjp")
        cts = vmap(pullback)(tree_unflatten(out_tree, _std_basis(out_leaves)))
        # cts: per input leaf, shape (total_out,) + in.shape; split by output leaf.
        per_input = tree_map(lambda c: _split_rows(c, out_leaves, np.shape(c)[1:],
                                                   rows_last=False), cts)
        inner = tree_map(lambda parts: tree_unflatten(out_tree, parts), per_input,
                         is_leaf=lambda x: isinstance(x, list))
        if isinstance(argnums, int):
            inner, diff = inner[0], diff[0]
        jac = tree_transpose(tree_structure(diff), out_tree, inner)
        return (jac, aux) if has_aux else jac
    return jac_fun


jacobian = jacrev


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:
    """Hessian of scalar `fun`: `jacfwd(jacrev(fun))` (mirrors `jax.hessian`)."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
