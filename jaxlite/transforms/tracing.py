"""Looking at programs without running them: make_jaxpr, eval_shape, checkpoint.

Mirrors `jax.make_jaxpr`, `jax.eval_shape`, `jax.ShapeDtypeStruct` and `jax.checkpoint`
(alias `jax.remat`).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.transforms import api_util as _api_util
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.shape_poly import canonical_dim, shape_size
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.leaks import defined_at
from jaxlite.interpreters.named_axes import extend_axis_env
from jaxlite.interpreters.staging import DebugInfo, hoist_tracer_consts, trace_to_jaxpr
from jaxlite.lax.higher_order import checkpoint_p
from jaxlite.tree_util import tree_flatten, tree_unflatten


class ShapeDtypeStruct:
    """A shape and dtype standing for an array (mirrors `jax.ShapeDtypeStruct`)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: Sequence[int], dtype: Any, *, sharding: Any = None,
                 weak_type: bool = False, manual_axis_type: Any = None,
                 is_ref: bool = False) -> None:
        self.shape = tuple(canonical_dim(d) for d in shape)
        # Kept as given, as JAX does (float64 stays float64 with x64 off); tracing
        # canonicalizes it when the struct stands for an argument.
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return shape_size(self.shape)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type) \
            == (other.shape, other.dtype, other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


def _abstract_leaf(x: Any) -> ShapedArray:
    return get_aval(x)


def _trace_pytree(fun: Callable[..., Any], args: tuple, kwargs: dict, what: str,
                  static_argnums: Sequence[int] = ()) -> tuple[ClosedJaxpr, Any]:
    dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
    leaves, in_tree = tree_flatten((tuple(dynamic), kwargs))
    params = _api_util.parameter_names(fun, len(args))
    names = _api_util.leaf_names(dynamic, [n for i, n in enumerate(params)
                                           if i not in static_argnums], kwargs)
    avals = [_abstract_leaf(x) for x in leaves]
    out_trees: list = []

    def flat(*flat_args: Any) -> list[Any]:
        dyn_args, dyn_kwargs = tree_unflatten(in_tree, flat_args)
        it = iter(dyn_args)
        full = [a if i in static_argnums else next(it) for i, a in enumerate(args)]
        out_leaves, out_tree = tree_flatten(fun(*full, **dyn_kwargs))
        out_trees.append(out_tree)
        return out_leaves
    debug = DebugInfo(what, _api_util.function_name(fun), tuple(names), defined_at(fun))
    closed = trace_to_jaxpr(flat, avals, debug)
    return closed, out_trees[0]


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
               axis_env: Any = None, return_shape: bool = False,
               abstracted_axes: Any = None) -> Callable[..., Any]:
    """A function returning the jaxpr of `fun` for given arguments (`jax.make_jaxpr`).

    Arguments may be arrays or `ShapeDtypeStruct`s. With `return_shape=True` the function
    also returns the output's pytree of `ShapeDtypeStruct`. `axis_env` is a sequence of
    `(name, size)` pairs that collectives in `fun` may name.
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def make_jaxpr_fun(*args: Any, **kwargs: Any) -> Any:
        with extend_axis_env(axis_env or ()):  # names that collectives in `fun` may use
            closed, out_tree = _trace_pytree(fun, args, kwargs, "make_jaxpr", nums)
        if return_shape:
            shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                      for a in closed.out_avals]
            return closed, tree_unflatten(out_tree, shapes)
        return closed
    return make_jaxpr_fun


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The output shapes and dtypes of `fun`, without computing it (`jax.eval_shape`)."""
    # JAX traces eval_shape's function as jit does, and its messages say so.
    closed, out_tree = _trace_pytree(fun, args, kwargs, "jit")
    shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
              for a in closed.out_avals]
    return tree_unflatten(out_tree, shapes)


class _Deprecated:
    """The default of a removed parameter: passing anything for it is an error."""

    def __repr__(self) -> str:
        return "Deprecated"


_DEPRECATED = _Deprecated()


def _refuse_concrete(concrete: Any) -> None:
    if concrete is not _DEPRECATED:
        raise NotImplementedError(
            "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and "
            "removed in JAX v0.10.0. In its place please use `static_argnums`; for details "
            "refer to https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html.")


def checkpoint(fun: Callable[..., Any], *, prevent_cse: bool = True, policy: Any = None,
               static_argnums: int | Sequence[int] = (),
               static_argnames: str | Sequence[str] = (),
               concrete: Any = _DEPRECATED) -> Callable[..., Any]:
    """Recompute `fun`'s intermediates in the backward pass instead of saving them.

    Mirrors `jax.checkpoint`. The function appears in jaxprs as one `checkpoint`
    equation; reverse-mode differentiation saves its inputs and what `policy` approves
    (see `jaxlite.lax.remat`). Arguments at `static_argnums` and keyword arguments named in
    `static_argnames` are not traced.
    """
    _refuse_concrete(concrete)
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        static_kwargs = {k: v for k, v in kwargs.items() if k in names}
        kwargs = {k: v for k, v in kwargs.items() if k not in names}
        bound = functools.partial(fun, **static_kwargs) if static_kwargs else fun
        closed, out_tree = _trace_pytree(bound, args, kwargs, "checkpoint / remat", nums)
        opened, consts = hoist_tracer_consts(closed)
        dynamic = [a for i, a in enumerate(args) if i not in nums]
        leaves = tree_flatten((tuple(dynamic), kwargs))[0]
        outs = checkpoint_p.bind(*consts, *leaves, jaxpr=opened, prevent_cse=prevent_cse,
                                 policy=policy)
        return tree_unflatten(out_tree, outs)
    return checkpointed


def remat(fun: Callable[..., Any], *, prevent_cse: bool = True, policy: Any = None,
          static_argnums: int | Sequence[int] = (),
          concrete: Any = _DEPRECATED) -> Callable[..., Any]:
    """`checkpoint` under its older name (mirrors `jax.remat`)."""
    _refuse_concrete(concrete)
    return checkpoint(fun, prevent_cse=prevent_cse, policy=policy,
                      static_argnums=static_argnums)
