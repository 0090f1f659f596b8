"""`jax.extend.core`: primitives, jaxprs and trace state for libraries that extend JAX.

A library declares a primitive with `Primitive(name)`, gives it rules (`def_impl`,
`def_abstract_eval`, and entries in `jax.interpreters.ad` / `batching` / `mlir`), and binds
it; jaxlite's transformations and backends then treat it like their own. Library
primitives are not entered in jaxlite's registry of primitives, so several may share a
name, as in JAX.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import AbstractValue, ShapedArray, get_aval
from jaxlite.core.effects import Effect, Effects, no_effects
from jaxlite.core.jaxpr import (ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var,
                                eval_jaxpr)
from jaxlite.core.linear_util import DebugInfo
from jaxlite.core.trace import Trace
from jaxlite.core.trace import set_current_trace as _set_current_trace
from jaxlite.core.trace_state import (concrete_or_error, find_top_trace,
                                      get_opaque_trace_state, trace_chain)
from jaxlite.core.trace_state import take_current_trace as _take_current_trace
from jaxlite.errors import InconclusiveDimensionOperation, JaxprTypeError
from jaxlite.interpreters.batching import BatchTrace
from jaxlite.interpreters.named_axes import axis_env
from jaxlite.interpreters.staging import StagingTrace
from jaxlite.extend.core import primitives  # noqa: F401  (jax.extend.core.primitives)
from jaxlite.extend.core._primitive import CallPrimitive, Primitive, call_impl

__all__ = [
    "AbstractToken", "CallPrimitive", "ClosedJaxpr", "DebugInfo", "DropVar", "Effect", "Effects",
    "InconclusiveDimensionOperation", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal",
    "Primitive", "Token", "TraceTag", "Var", "array_types", "call_impl", "check_jaxpr",
    "concrete_or_error", "find_top_trace", "gensym", "get_opaque_trace_state", "jaxpr_as_fun",
    "jaxprs_in_params", "mapped_aval", "new_jaxpr_eqn", "no_effects",
    "nonempty_axis_env_DO_NOT_USE", "primal_dtype_to_tangent_dtype", "set_current_trace",
    "subjaxprs", "take_current_trace", "unmapped_aval", "unsafe_am_i_under_a_jit_DO_NOT_USE",
    "unsafe_am_i_under_a_vmap_DO_NOT_USE", "unsafe_get_axis_names_DO_NOT_USE",
    "valid_jaxtype", "primitives",
]


class TraceTag:
    """An identity for a transformation (mirrors `jax.extend.core.TraceTag`)."""


class AbstractToken(AbstractValue):
    """The abstract value of an effect token (mirrors JAX's); jaxlite threads no tokens."""


class Token:
    """An effect token (mirrors `jax.extend.core.Token`); jaxlite threads no tokens."""

    def __init__(self, buf: Any) -> None:
        self._buf = buf


# The types whose instances are concrete arrays.
array_types: set[type] = {np.ndarray} | {
    np.dtype(name).type for name in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                     "uint16", "uint32", "uint64", "float16", "float32",
                                     "float64", "complex64", "complex128")} | {
    np.dtype(dtypes.bfloat16).type}


def _eval_closed(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr, *args: Any) -> Callable[..., list[Any]]:
    """A function evaluating `closed_jaxpr` (mirrors `jax.extend.core.jaxpr_as_fun`, which
    is curried: `jaxpr_as_fun(jaxpr)(*args)`)."""
    return functools.partial(_eval_closed, closed_jaxpr, *args)


def jaxprs_in_params(params: dict[str, Any]) -> Iterator[Jaxpr]:
    """The jaxprs among an equation's parameters, tuples of them included (JAX's)."""
    for value in params.values():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, Jaxpr):
                yield v
            elif isinstance(v, ClosedJaxpr):
                yield v.jaxpr


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The jaxprs in the parameters of `jaxpr`'s equations, not recursively (JAX's)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def gensym() -> Callable[[ShapedArray], Var]:
    """A maker of fresh variables (mirrors `jax.extend.core.gensym`)."""
    return lambda aval: Var(aval)


def new_jaxpr_eqn(invars: Sequence[Any], outvars: Sequence[Var], primitive: Any,
                  params: dict[str, Any], effects: Any, source_info: Any = None,
                  ctx: Any = None) -> JaxprEqn:
    """An equation (mirrors `jax.extend.core.new_jaxpr_eqn`)."""
    return JaxprEqn(list(invars), list(outvars), primitive, dict(params), effects,
                    source_info, ctx)


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Raise JaxprTypeError unless every variable is bound before use and every equation's
    outputs have the types its primitive gives (mirrors `jax.extend.core.check_jaxpr`)."""
    bound: set[Var] = set(jaxpr.constvars) | set(jaxpr.invars)

    def read(atom: Any, where: str) -> ShapedArray:
        if isinstance(atom, Var) and atom not in bound:
            raise JaxprTypeError(f"Variable '{atom}' not defined, used in {where}")
        return atom.aval

    for eqn in jaxpr.eqns:
        where = f"the equation of '{eqn.primitive.name}'"
        in_avals = [read(v, where) for v in eqn.invars]
        out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        out = list(out) if eqn.primitive.multiple_results else [out]
        for var, aval in zip(eqn.outvars, out):
            if (var.aval.shape, var.aval.dtype) != (aval.shape, aval.dtype):
                raise JaxprTypeError(f"{where}: output {var} has type {var.aval.str_short()}, "
                                     f"but the primitive gives {aval.str_short()}")
        bound.update(eqn.outvars)
        for sub in jaxprs_in_params(eqn.params):
            check_jaxpr(sub)
    for var in jaxpr.outvars:
        read(var, "the jaxpr's outputs")


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """`aval` with its mapped axis `axis` (of length `size`) removed (JAX's)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has size "
                         f"{aval.shape[axis]}, not {size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray,
                  explicit_mesh_axis: Any = None) -> ShapedArray:
    """`aval` with a mapped axis of length `size` inserted at `axis` (JAX's)."""
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (int(size),) + aval.shape[axis:])


def primal_dtype_to_tangent_dtype(primal_dtype: Any) -> np.dtype:
    """The dtype of tangents of values of `primal_dtype` (float0 for non-inexact)."""
    return np.dtype(primal_dtype) if dtypes.is_inexact(primal_dtype) else dtypes.float0


def valid_jaxtype(x: Any) -> bool:
    """Whether `x` is a value jaxlite can trace (mirrors `jax.extend.core.valid_jaxtype`)."""
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


class set_current_trace:
    """A block run under `trace` (mirrors `jax.extend.core.set_current_trace`)."""

    def __init__(self, trace: Trace, check_leaks: bool = False) -> None:
        self._block = _set_current_trace(trace)

    def __enter__(self) -> None:
        self._block.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._block.__exit__(*exc)


class take_current_trace:
    """A block run eagerly, yielding the trace that was current (JAX's)."""

    def __init__(self) -> None:
        self._block = _take_current_trace()

    def __enter__(self) -> Trace:
        return self._block.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._block.__exit__(*exc)


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    """Whether a jit-style staging trace is active (mirrors JAX's)."""
    return any(isinstance(t, StagingTrace) and not t.forward_known for t in trace_chain())


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    """Whether a vmap is active (mirrors JAX's)."""
    return any(isinstance(t, BatchTrace) for t in trace_chain())


def unsafe_get_axis_names_DO_NOT_USE() -> list[Any]:
    """The named axes in scope, outermost first (mirrors JAX's)."""
    return [frame.name for frame in axis_env()]


def nonempty_axis_env_DO_NOT_USE() -> bool:
    """Whether any named axis is in scope (mirrors JAX's)."""
    return bool(axis_env())

