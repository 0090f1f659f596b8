"""The public host callbacks: `jaxlite.pure_callback` and `jaxlite.experimental.io_callback`
(mirror `jax.pure_callback` and `jax.experimental.io_callback`), and the wrapper that
`jaxlite.debug` shares with them.

The primitives and their rules live in `jaxlite.lax.callbacks`; they call a flat function
of numpy arrays. This module builds that function from the user's: numpy arrays become
`Array`s, the pytree of arguments is rebuilt (with any static leaves put back), and the
user's function is called; its results are checked by the primitive against
`result_shape_dtypes`.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.basearray import Array
from jaxlite.lax.callbacks import (VMAP_METHODS, HostCallback, io_callback_p,
                                   pure_callback_p)
from jaxlite.runtime.array import ArrayImpl
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["pure_callback", "io_callback", "flat_callback", "effects_barrier"]


def flat_callback(callback: Callable[..., Any], in_tree: PyTreeDef,
                  static_args: Mapping[int, Any] | None = None) -> Callable[..., Any]:
    """`callback` as a function of the dynamic leaves of its `(args, kwargs)` tree, as
    numpy arrays; `static_args` (leaf position -> value) are the leaves that are no arrays."""
    static = dict(static_args or {})

    def call(*arrays: Any) -> Any:
        dynamic = iter(_as_array(a) for a in arrays)
        count = len(static) + len(arrays)
        leaves = [static[i] if i in static else next(dynamic) for i in range(count)]
        args, kwargs = tree_unflatten(in_tree, leaves)
        return callback(*args, **kwargs)
    call.__qualname__ = getattr(callback, "__qualname__", type(callback).__name__)
    return call


def _as_array(value: Any) -> Array:
    """An argument as the callback sees it: an `Array` (a Python scalar stays weakly
    typed, as JAX hands it to an eager debug callback)."""
    if isinstance(value, Array):
        return value
    aval = get_aval(value)
    # numpy scalars are no Python scalars, though np.float64 subclasses float
    weak = aval.weak_type and not isinstance(value, (np.ndarray, np.generic))
    return ArrayImpl(np.asarray(value, dtype=aval.dtype), weak)


def _result_avals(result_shape_dtypes: Any) -> tuple[tuple[ShapedArray, ...], PyTreeDef]:
    """The flat abstract results and their tree; 64-bit dtypes need `jax_enable_x64`."""
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise AttributeError(
                f"result_shape_dtypes must be a pytree of objects with shape and dtype "
                f"attributes (such as jax.ShapeDtypeStruct), got the leaf {leaf!r}.")
        dtype = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dtype) != dtype:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        avals.append(ShapedArray(tuple(leaf.shape), dtype))
    return tuple(avals), tree


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """Call a pure Python function from inside a traced program (mirrors
    `jax.pure_callback`).

    `callback(*args, **kwargs)` receives `Array`s on the host and returns a pytree whose
    leaves match `result_shape_dtypes` (shapes and dtypes; Python scalars and float64 are
    canonicalized first, as in JAX); a mismatch raises `JaxRuntimeError`. Under `jit` an
    unused call may be dropped. Under `vmap`, `vmap_method` decides: "sequential" (one call
    per element, through a scan), "sequential_unrolled" (the same calls), "expand_dims"
    (one call; unbatched arguments get a leading axis of size 1), "broadcast_all" (one call;
    every argument batched), "legacy_vectorized" (one call; unbatched arguments as they
    are); None raises NotImplementedError under vmap. Not differentiable: wrap it in
    `custom_jvp` or `custom_vjp`. `sharding` is accepted and ignored (one device).
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(
        *flat_args, callback=HostCallback(flat_callback(callback, in_tree), "jax.pure_callback"),
        result_avals=result_avals, sharding=sharding, vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call a Python function with side effects from inside a traced program (mirrors
    `jax.experimental.io_callback`).

    As `pure_callback`, but the call is never dropped or merged with another, and calls run
    in program order. Under `vmap` it is called once per batch element, in order (an
    `ordered` callback cannot be vmapped: ValueError, as in JAX). Not differentiable.
    """
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = io_callback_p.bind(
        *flat_args, callback=HostCallback(flat_callback(callback, in_tree), "jax.io_callback"),
        result_avals=result_avals, sharding=sharding, ordered=bool(ordered))
    return tree_unflatten(out_tree, outs)


def effects_barrier() -> None:
    """Wait until every callback of the programs started so far has run (mirrors
    `jax.effects_barrier`). Programs run synchronously here, so there is nothing to wait
    for."""
