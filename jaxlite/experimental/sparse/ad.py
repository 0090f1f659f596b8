"""Differentiation with respect to sparse arrays (mirrors `jax.experimental.sparse.ad`).

A sparse argument is differentiated through its `data` only, so its gradient is a sparse
array with the same indices: the derivative in the subspace of the sparsity pattern.
"""
from __future__ import annotations

import functools
import itertools
import operator
from typing import Any, Callable, Sequence

from jaxlite.experimental.sparse._base import JAXSparse
from jaxlite.transforms import autodiff, jacobians
from jaxlite.transforms.vmap import vmap
from jaxlite.tree_util import tree_flatten, tree_leaves, tree_unflatten


def _is_sparse(x: Any) -> bool:
    return isinstance(x, JAXSparse)


def _argnums_tuple(argnums: Any) -> tuple[int, ...]:
    if isinstance(argnums, (tuple, list)):
        return tuple(operator.index(a) for a in argnums)
    return (operator.index(argnums),)


def _leaf_ranges(tree: Any) -> list[range]:
    """The leaves of each top-level child of `tree`, as ranges of leaf positions."""
    ranges, start = [], 0
    for child in tree.children():
        ranges.append(range(start, start + child.num_leaves))
        start += child.num_leaves
    return ranges


def flatten_for_sparse_ad(fun: Callable, argnums: Any, args: tuple
                          ) -> tuple[Callable, tuple[int, ...], list, Callable]:
    """`fun` over dense buffers, the buffer positions to differentiate (the data of sparse
    arguments, every leaf of dense ones), the buffers, and the map from the buffers'
    derivatives back to sparse arrays."""
    wanted = _argnums_tuple(argnums)
    if any(not 0 <= a < len(args) for a in wanted):
        raise ValueError(f"argnums {argnums} out of range for {len(args)} arguments.")
    outer, outer_tree = tree_flatten(args, is_leaf=_is_sparse)
    outer_wanted = [i for a, r in enumerate(_leaf_ranges(outer_tree)) if a in wanted
                    for i in r]
    buffers, inner_tree = tree_flatten(outer)
    inner_ranges = [r[:1] if _is_sparse(x) else r
                    for x, r in zip(outer, _leaf_ranges(inner_tree))]
    flat_wanted = tuple(itertools.chain.from_iterable(inner_ranges[i] for i in outer_wanted))

    def flat_fun(*flat_args: Any, **kwargs: Any) -> Any:
        rebuilt = tree_unflatten(outer_tree, tree_unflatten(inner_tree, flat_args))
        return fun(*rebuilt, **kwargs)

    def rebuild(i: int, derivative: Any) -> Any:
        bufs, tree = tree_flatten(outer[i])
        make = lambda g: tree_unflatten(tree, [g, *bufs[1:]])  # noqa: E731
        for _ in range(derivative.ndim - bufs[0].ndim):  # jacobians: output axes lead
            make = vmap(make)
        return make(derivative)

    def postprocess(derivatives: Sequence[Any]) -> Any:
        leaves: list[Any] = [None] * outer_tree.num_leaves
        for i, d in zip(outer_wanted, derivatives):
            leaves[i] = rebuild(i, d)
        grads = tuple(g for g in tree_unflatten(outer_tree, leaves) if tree_leaves(g))
        return grads[0] if len(grads) == 1 else grads
    return flat_fun, flat_wanted, buffers, postprocess


def _sparse_version(transform: Callable, fun: Callable, argnums: Any, has_aux: bool,
                    kwargs: dict, returns_value: bool = False) -> Callable:
    _argnums_tuple(argnums)

    @functools.wraps(fun)
    def transformed(*args: Any, **call_kwargs: Any) -> Any:
        flat_fun, flat_argnums, buffers, postprocess = flatten_for_sparse_ad(
            fun, argnums, args)
        out = transform(flat_fun, argnums=flat_argnums, has_aux=has_aux,
                        **kwargs)(*buffers, **call_kwargs)
        if returns_value:
            value, derivatives = out
            return value, postprocess(derivatives)
        if has_aux:
            return postprocess(out[0]), out[1]
        return postprocess(out)
    return transformed


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux=False,
                   **kwargs) -> Callable[..., tuple[Any, Any]]:
    """`jax.value_and_grad`, with sparse gradients for sparse arguments
    (mirrors `jax.experimental.sparse.value_and_grad`)."""
    return _sparse_version(autodiff.value_and_grad, fun, argnums, has_aux, kwargs, True)


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux=False,
         **kwargs) -> Callable:
    """`jax.grad`, with sparse gradients for sparse arguments
    (mirrors `jax.experimental.sparse.grad`)."""
    return _sparse_version(autodiff.grad, fun, argnums, has_aux, kwargs)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           **kwargs) -> Callable:
    """`jax.jacfwd`, with sparse Jacobians for sparse arguments (dense outputs only)
    (mirrors `jax.experimental.sparse.jacfwd`)."""
    return _sparse_version(jacobians.jacfwd, fun, argnums, has_aux, kwargs)


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           **kwargs) -> Callable:
    """`jax.jacrev`, with sparse Jacobians for sparse arguments (dense outputs only)
    (mirrors `jax.experimental.sparse.jacrev`)."""
    return _sparse_version(jacobians.jacrev, fun, argnums, has_aux, kwargs)


def jacobian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
             **kwargs) -> Callable:
    """`jax.jacobian` (= jacrev), with sparse Jacobians for sparse arguments
    (mirrors `jax.experimental.sparse.jacobian`)."""
    return jacrev(fun, argnums, has_aux, **kwargs)
