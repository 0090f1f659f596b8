"""Reductions other than summation: max, min, product, the bitwise reductions, argmax/argmin.

Mirrors `jax.lax.reduce_max`, `reduce_min`, `reduce_prod`, `reduce_and`, `reduce_or`,
`reduce_xor`, `argmax` and `argmin` (XLA's Reduce with the matching computation; argmax and
argmin reduce (value, index) pairs). `reduce_sum` lives in `broadcast.py`, next to its
transpose. Semantics follow XLA on the CPU: max/min propagate NaN and order -0.0 below
+0.0; argmax/argmin return the first NaN if there is one, else the first extremal index.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.ad import Zero, tangent_aval
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import (ANY, BOOL, INTEGER, NUMERIC, check_dtype_kind,
                                  dtype_kind)
from jaxlite.lax.arithmetic import div, mul
from jaxlite.lax.broadcast import (broadcast_in_dim, check_reduction_axes, reduce_sum,
                                   reshape, transpose)
from jaxlite.lax.comparisons import eq
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.cumulative import exclusive_cumprod
from jaxlite.lax.math_functions import extremum_reference
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
           "argmax", "argmin",
           "reduce_max_p", "reduce_min_p", "reduce_prod_p", "reduce_and_p", "reduce_or_p",
           "reduce_xor_p", "argmax_p", "argmin_p"]


# ----------------------------------------------------------------------- shared rules

def _reduced_shape(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(s for d, s in enumerate(shape) if d not in axes)


def _reduction(name: str, reference: Callable[..., Any], kinds: Sequence[str],
               weak_result: bool) -> Primitive:
    """Declare a reduction over `axes`: the shape rule, dtype check and batching rule.

    `weak_result` says whether a weakly typed operand gives a weakly typed result (XLA's
    arithmetic reductions keep it; JAX's bitwise reductions drop it).
    """
    primitive = Primitive(name)

    def abstract_eval(operand: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
        check_reduction_axes(name, operand, axes)
        if tuple(kinds) == _LOGICAL and dtype_kind(operand.dtype) not in kinds:
            raise TypeError("logical reduction requires operand dtype bool or int, got "
                            f"{np.dtype(operand.dtype).name} ({name}).")
        check_dtype_kind(name, operand.dtype, kinds)
        return ShapedArray(_reduced_shape(operand.shape, axes), operand.dtype,
                           operand.weak_type and weak_result)

    primitive.abstract_eval = abstract_eval
    primitive.reference = reference
    primitive.batch = _reduction_batch(primitive)
    return primitive


def _reduction_batch(primitive: Primitive) -> Callable[..., Any]:
    """Batch rule of any primitive reducing the `axes` of its one operand."""
    def rule(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
             axes: tuple[int, ...], **params: Any) -> tuple[Any, int]:
        (operand,), (dim,) = args, dims
        operand_axes = [d for d in range(np.ndim(operand)) if d != dim]
        new_axes = tuple(operand_axes[a] for a in axes)
        out_dim = dim - sum(1 for a in new_axes if a < dim)
        return primitive.bind(operand, axes=new_axes, **params), out_dim
    return rule


def _canonical_axes(operand: Any, axes: Sequence[int]) -> tuple[int, ...]:
    ndim = np.ndim(operand)
    return tuple(int(a) + ndim if int(a) < 0 else int(a) for a in axes)


def _low_precision_to_f32(x: np.ndarray) -> np.ndarray:
    # numpy reductions over ml_dtypes arrays are not reliable; max and min are exact in f32.
    return x.astype(np.float32) if x.dtype in (np.float16, dtypes.bfloat16) else x


# ---------------------------------------------------------------------- max and min

def _extremum(operand: np.ndarray, axes: tuple[int, ...], largest: bool) -> np.ndarray:
    x = _low_precision_to_f32(operand)
    kind = x.dtype
    if dtypes.is_complex(kind) or dtypes.is_floating(kind):
        identity: Any = -np.inf if largest else np.inf
    elif kind == np.bool_:
        identity = not largest
    else:
        info = np.iinfo(kind)
        identity = info.min if largest else info.max
    if dtypes.is_complex(kind):
        return _complex_extremum(x, axes, identity, largest).astype(operand.dtype)
    reduce = np.max if largest else np.min
    result = np.asarray(reduce(x, axis=axes, initial=identity))
    if dtypes.is_floating(kind):
        # XLA orders -0.0 below +0.0: a max of zeros is +0.0 if any zero is positive.
        zeros = (x == 0) & (np.signbit(x) != largest)
        signed = np.any(zeros, axis=axes)
        zero = np.where(signed == largest, np.asarray(0.0, kind), np.asarray(-0.0, kind))
        result = np.where(result == 0, zero, result)
    return result.astype(operand.dtype)


def _complex_extremum(x: np.ndarray, axes: tuple[int, ...], identity: float,
                      largest: bool) -> np.ndarray:
    """The complex max (or min) over `axes`, folded in order from the identity as XLA's
    reduce does: its lexicographic comparisons let NaNs through asymmetrically, unlike
    numpy's (JAX's min of [4.9, 7e4 + nan j] is 4.9)."""
    kept = [d for d in range(x.ndim) if d not in axes]
    count = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    # (the count spelled out: -1 is ambiguous where a kept dimension is 0)
    rows = np.transpose(x, kept + list(axes)).reshape([x.shape[d] for d in kept] + [count])
    out = np.full(rows.shape[:-1], complex(identity, 0), x.dtype)
    for k in range(rows.shape[-1]):
        out = extremum_reference(out, rows[..., k], larger=largest)
    return out


def _reduce_max_reference(operand: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
    return _extremum(operand, axes, largest=True)


def _reduce_min_reference(operand: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
    return _extremum(operand, axes, largest=False)


def _chooser_jvp(primitive: Primitive) -> Callable[..., Any]:
    """jvp of max/min: the operand's tangent at the extremum, averaged over ties (as JAX).

    Where the result is NaN no element equals it, and the tangent is 0/0 = NaN.
    """
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
            axes: tuple[int, ...]) -> tuple[Any, Any]:
        (operand,), (tangent,) = primals, tangents
        out = primitive.bind(operand, axes=axes)
        aval = get_aval(operand)
        if isinstance(tangent, Zero) or not dtypes.is_inexact(aval.dtype):
            return out, Zero(tangent_aval(get_aval(out)))
        kept = tuple(d for d in range(aval.ndim) if d not in axes)
        at_extremum = eq(operand, broadcast_in_dim(out, aval.shape, kept))
        location = convert_element_type(at_extremum, aval.dtype)
        counts = reduce_sum(location, axes)
        return out, div(reduce_sum(mul(tangent, location), axes), counts)
    return jvp


reduce_max_p = _reduction("reduce_max", _reduce_max_reference, ANY, weak_result=True)
reduce_max_p.jvp = _chooser_jvp(reduce_max_p)
reduce_min_p = _reduction("reduce_min", _reduce_min_reference, ANY, weak_result=True)
reduce_min_p.jvp = _chooser_jvp(reduce_min_p)
reduce_max_p.lower = hlo.reduction_rule(Opcode.MAXIMUM, hlo.lowest)
reduce_min_p.lower = hlo.reduction_rule(Opcode.MINIMUM, hlo.highest)


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    """Maximum over `axes` (mirrors `jax.lax.reduce_max`).

    NaN propagates; an empty reduction gives the dtype's lowest value (-inf for floats).
    Differences from JAX: negative axes count from the end instead of raising.
    """
    return reduce_max_p.bind(operand, axes=_canonical_axes(operand, axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    """Minimum over `axes` (mirrors `jax.lax.reduce_min`).

    NaN propagates; an empty reduction gives the dtype's highest value (inf for floats).
    Differences from JAX: negative axes count from the end instead of raising.
    """
    return reduce_min_p.bind(operand, axes=_canonical_axes(operand, axes))


# -------------------------------------------------------------------------- product

def _reduce_prod_reference(operand: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
    if all(operand.shape[d] == 1 for d in axes):  # one factor: XLA multiplies by no 1
        return operand.reshape(tuple(n for d, n in enumerate(operand.shape) if d not in axes))
    if operand.dtype in (np.float16, dtypes.bfloat16):
        wide = np.prod(operand.astype(np.float32), axis=axes, dtype=np.float32)
        return np.asarray(wide).astype(operand.dtype)
    return np.prod(operand, axis=axes, dtype=operand.dtype)  # integers wrap, as in XLA


def _reduce_prod_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                     axes: tuple[int, ...]) -> tuple[Any, Any]:
    """d prod(x) = sum_i t_i * prod_{j != i} x_j, without dividing by x_i.

    The product of the others is the product of the elements before i times the product of
    those after i (exclusive cumulative products from both ends), which stays right when
    some x_j are zero.
    """
    (operand,), (tangent,) = primals, tangents
    out = reduce_prod_p.bind(operand, axes=axes)
    aval = get_aval(operand)
    if isinstance(tangent, Zero) or not dtypes.is_inexact(aval.dtype):
        return out, Zero(tangent_aval(get_aval(out)))
    if not axes:  # nothing is reduced: the identity
        return out, tangent
    kept = tuple(d for d in range(aval.ndim) if d not in axes)
    size = int(np.prod([aval.shape[d] for d in axes], dtype=np.int64))
    flat_shape = (size,) + tuple(aval.shape[d] for d in kept)
    x = reshape(transpose(operand, axes + kept), flat_shape)
    t = reshape(transpose(tangent, axes + kept), flat_shape)
    others = mul(exclusive_cumprod(x, 0, reverse=False), exclusive_cumprod(x, 0, reverse=True))
    return out, reduce_sum(mul(t, others), (0,))


reduce_prod_p = _reduction("reduce_prod", _reduce_prod_reference, NUMERIC, weak_result=True)
reduce_prod_p.jvp = _reduce_prod_jvp
reduce_prod_p.lower = hlo.reduction_rule(Opcode.MULTIPLY, hlo.one)


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    """Product over `axes` (mirrors `jax.lax.reduce_prod`).

    Integer products wrap around; float16/bfloat16 are multiplied in float32 and rounded.
    Differences from JAX: negative axes count from the end instead of raising.
    """
    return reduce_prod_p.bind(operand, axes=_canonical_axes(operand, axes))


# ---------------------------------------------------------------------- bitwise

def _bitwise_reference(ufunc: np.ufunc) -> Callable[..., np.ndarray]:
    def reference(operand: np.ndarray, *, axes: tuple[int, ...]) -> np.ndarray:
        # The ufunc identities (all ones for and, zero for or/xor) give XLA's empty results.
        return np.asarray(ufunc.reduce(operand, axis=axes)).astype(operand.dtype)
    return reference


_reduce_and_reference = _bitwise_reference(np.bitwise_and)
_reduce_or_reference = _bitwise_reference(np.bitwise_or)
_reduce_xor_reference = _bitwise_reference(np.bitwise_xor)

_LOGICAL = (BOOL, *INTEGER)
reduce_and_p = _reduction("reduce_and", _reduce_and_reference, _LOGICAL, weak_result=False)
reduce_or_p = _reduction("reduce_or", _reduce_or_reference, _LOGICAL, weak_result=False)
reduce_xor_p = _reduction("reduce_xor", _reduce_xor_reference, _LOGICAL, weak_result=False)
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p):
    ad.defjvp_zero(_p)
reduce_and_p.lower = hlo.reduction_rule(Opcode.AND, hlo.all_ones)
reduce_or_p.lower = hlo.reduction_rule(Opcode.OR, hlo.zero)
reduce_xor_p.lower = hlo.reduction_rule(Opcode.XOR, hlo.zero)


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise (for bool: logical) AND over `axes` (mirrors `jax.lax.reduce_and`)."""
    return reduce_and_p.bind(operand, axes=_canonical_axes(operand, axes))


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise (for bool: logical) OR over `axes` (mirrors `jax.lax.reduce_or`)."""
    return reduce_or_p.bind(operand, axes=_canonical_axes(operand, axes))


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise (for bool: logical) XOR over `axes` (mirrors `jax.lax.reduce_xor`)."""
    return reduce_xor_p.bind(operand, axes=_canonical_axes(operand, axes))


# ------------------------------------------------------------------ argmax / argmin

def _arg_chooser(name: str, reference: Callable[..., Any]) -> Primitive:
    primitive = Primitive(name)

    def abstract_eval(operand: ShapedArray, *, axes: tuple[int, ...],
                      index_dtype: np.dtype) -> ShapedArray:
        if len(axes) != 1 or not 0 <= axes[0] < operand.ndim:
            raise ValueError(f"{name}: invalid axis {axes} for operand of shape "
                             f"{operand.shape}; expected one axis in [0, {operand.ndim}).")
        if operand.shape[axes[0]] == 0:
            raise ValueError(f"argmin and argmax require non-empty reduced dimension. "
                             f"operand.shape={operand.shape} axis={axes[0]}")
        if not dtypes.is_integer(index_dtype):
            raise TypeError(f"index_dtype must be an integer type, but got "
                            f"{np.dtype(index_dtype).name} ({name}).")
        if dtypes.is_complex(operand.dtype):
            raise TypeError(f"{name} does not accept dtype {operand.dtype.name}: complex "
                            "numbers have no order. Accepted dtypes are bool, integers and "
                            "real floats.")
        return ShapedArray(_reduced_shape(operand.shape, axes), np.dtype(index_dtype), False)

    primitive.abstract_eval = abstract_eval
    primitive.reference = reference
    primitive.batch = _reduction_batch(primitive)
    ad.defjvp_zero(primitive)
    return primitive


def _argmax_reference(operand: np.ndarray, *, axes: tuple[int, ...],
                      index_dtype: np.dtype) -> np.ndarray:
    # numpy's argmax takes the first NaN, else the first maximum: XLA's choice too.
    return np.argmax(_low_precision_to_f32(operand), axis=axes[0]).astype(index_dtype)


def _argmin_reference(operand: np.ndarray, *, axes: tuple[int, ...],
                      index_dtype: np.dtype) -> np.ndarray:
    return np.argmin(_low_precision_to_f32(operand), axis=axes[0]).astype(index_dtype)


def _pair_chooser(ctx: LoweringContext, dtype: np.dtype, index_dtype: np.dtype,
                  larger: bool) -> HloComputation:
    """The reducer of argmax (argmin) over (value, index) pairs: keeps the pair with the
    larger (smaller) value, a NaN before any number, and on ties (two NaNs tie) the lower
    index, so that the result does not depend on the order of the reduction."""
    builder = ctx.new_builder("argmax_chooser" if larger else "argmin_chooser")
    inner = ctx.with_builder(builder)
    value, index = Shape(dtype, ()), Shape(index_dtype, ())
    a, i = builder.parameter(value, "value"), builder.parameter(index, "index")
    b, j = builder.parameter(value, "other_value"), builder.parameter(index, "other_index")
    better = hlo.compare(inner, a, b, "GT" if larger else "LT")
    tie = hlo.compare(inner, a, b, "EQ")
    if dtypes.is_floating(dtype):
        a_nan, b_nan = hlo.compare(inner, a, a, "NE"), hlo.compare(inner, b, b, "NE")
        only_a_nan = hlo.logical(inner, Opcode.AND, a_nan, hlo.logical(inner, Opcode.NOT, b_nan))
        better = hlo.logical(inner, Opcode.OR, better, only_a_nan)
        tie = hlo.logical(inner, Opcode.OR, tie, hlo.logical(inner, Opcode.AND, a_nan, b_nan))
    first = hlo.logical(inner, Opcode.AND, tie, hlo.compare(inner, i, j, "LT"))
    keep_a = hlo.logical(inner, Opcode.OR, better, first)
    pair = [hlo.select(inner, keep_a, a, b), hlo.select(inner, keep_a, i, j)]
    return builder.build(hlo.make_tuple(inner, pair))


def _arg_chooser_lower(larger: bool) -> hlo.Rule:
    """The rule of argmax (argmin): a reduce of (value, iota index) pairs, as XLA's."""
    def lower(ctx: LoweringContext, operand: HloInstruction, *, axes: tuple[int, ...],
              index_dtype: np.dtype) -> HloInstruction:
        dtype, index_dtype = operand.shape.dtype, np.dtype(index_dtype)
        indices = hlo.emit(ctx, Opcode.IOTA, operand.shape.with_dtype(index_dtype),
                           iota_dimension=axes[0])
        chooser = ctx.cached_computation(
            ("arg_chooser", larger, dtype, index_dtype),
            lambda: _pair_chooser(ctx, dtype, index_dtype, larger))
        init = hlo.lowest(dtype) if larger else hlo.highest(dtype)
        pairs = hlo.reduce(ctx, [operand, indices], axes, chooser, [init, 0])
        return hlo.get_tuple_element(ctx, pairs, 1)
    return lower


argmax_p = _arg_chooser("argmax", _argmax_reference)
argmin_p = _arg_chooser("argmin", _argmin_reference)
argmax_p.lower = _arg_chooser_lower(larger=True)
argmin_p.lower = _arg_chooser_lower(larger=False)


def _arg_chooser_params(name: str, operand: Any, axis: int,
                        index_dtype: Any) -> dict[str, Any]:
    ndim = np.ndim(operand)
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"Invalid axis {axis} for operand shape {np.shape(operand)}")
    index_dtype = dtypes.check_and_canonicalize_user_dtype(index_dtype, name)
    return {"axes": (axis % ndim,), "index_dtype": index_dtype}


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the maximum along `axis` (mirrors `jax.lax.argmax`).

    The first NaN wins; among equal maxima the first index wins (-0.0 equals +0.0 here).
    Differences from JAX: a negative `axis` counts from the end instead of raising.
    """
    return argmax_p.bind(operand, **_arg_chooser_params("argmax", operand, axis, index_dtype))


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the minimum along `axis` (mirrors `jax.lax.argmin`).

    The first NaN wins; among equal minima the first index wins (-0.0 equals +0.0 here).
    Differences from JAX: a negative `axis` counts from the end instead of raising.
    """
    return argmin_p.bind(operand, **_arg_chooser_params("argmin", operand, axis, index_dtype))
