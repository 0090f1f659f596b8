"""The primitives eager mode runs on a device's array module `xp` (CuPy on a GPU), each a
numpy reference rule of `jaxlite.lax` with `xp` in numpy's place.

`device_rule(primitive, in_avals, params)` gives `rule(xp, *operands) -> result(s)` or
None. Two families:

- elementwise primitives whose reference is a numpy ufunc (add, sub, mul, neg, floor,
  ceil, cbrt, comparisons, bitwise and/or/xor/not, is_finite): the same ufunc by name in
  `xp`; the real-floating ones whose reference is numpy's function for real operands
  (exp, expm1, sqrt, sin, cos, tan, their inverses and the hyperbolic ones, abs) likewise
  for real operands; real and imag. float16 is computed in float32 and rounded once, as
  the references do;
- max, min (real), div (floating), and structure, reductions and products, written over
  `xp` step for step as their references do: iota, convert_element_type, broadcast_in_dim,
  reshape, transpose, squeeze, rev, slice, concatenate, select_n, reduce_sum / max / min
  / prod / and / or, argmax / argmin, stop_gradient, dot_general.

Everything else runs its reference on the host (`device_eager`): rules over scipy
(special functions, LAPACK through `scipy.linalg`), complex special values and the
correctly rounded float32 log / log1p kernels, custom rounding and integer division
rules, sorts, gathers and scatters, control flow; and any operand of a type the device
does not store (bfloat16 on CuPy), or a case a rule declines below (empty reductions,
float-to-64-bit-integer conversions, algorithm precisions, bool or float-to-integer
dots) — these have numpy-only details the `xp` versions do not repeat.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite.core import dtypes
from jaxlite.xla.evaluator_reductions import accumulation_dtype

__all__ = ["device_rule"]

# Real-floating math whose reference is numpy's function for real operands.
_REAL_MATH = {"exp": "exp", "expm1": "expm1", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
              "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
              "sinh": "sinh", "cosh": "cosh", "asinh": "arcsinh", "acosh": "arccosh",
              "atanh": "arctanh"}
_LOW = (np.dtype(np.float16),)


def _reference_ufunc(primitive: Any) -> np.ufunc | None:
    """The numpy ufunc an elementwise primitive's reference calls (`elementwise` wraps it
    in its float16 upcast), or None."""
    reference = primitive.reference
    if isinstance(reference, np.ufunc):
        return reference
    cells = getattr(reference, "__closure__", None) or ()
    found = [c.cell_contents for c in cells if isinstance(c.cell_contents, np.ufunc)]
    return found[0] if len(found) == 1 else None


def _elementwise(name: str) -> Callable[..., Any]:
    def rule(xp: Any, *operands: Any) -> Any:
        low = [x.dtype for x in operands if x.dtype in _LOW]
        if low:  # as `upcast_low_precision`: float32, one rounding
            wide = [x.astype(np.float32) if x.dtype in _LOW else x for x in operands]
            out = getattr(xp, name)(*wide)
            return out.astype(low[0]) if out.dtype == np.float32 else out
        return getattr(xp, name)(*operands)
    return rule


def _upcast(rule: Callable[..., Any]) -> Callable[..., Any]:
    """`rule` on float16 operands computed in float32 and rounded once (as
    `upcast_low_precision` does for the references)."""
    def upcast(xp: Any, *operands: Any) -> Any:
        if not any(x.dtype in _LOW for x in operands):
            return rule(xp, *operands)
        out = rule(xp, *[x.astype(np.float32) if x.dtype in _LOW else x for x in operands])
        return out.astype(np.float16) if out is not None else None
    return upcast


def _max_min(larger: bool) -> Callable[..., Any]:
    def rule(xp: Any, x: Any, y: Any) -> Any:
        if dtypes.is_complex(x.dtype):
            return None  # (lexicographic order: the reference on the host)
        out = xp.maximum(x, y) if larger else xp.minimum(x, y)  # both propagate nan
        if dtypes.is_floating(x.dtype):
            # Of two zeros XLA's max is -0 only if both are, its min -0 if either is.
            out = xp.where((x == 0) & (y == 0), x + y if larger else -((-x) + (-y)), out)
        return out
    return rule


def _div(xp: Any, x: Any, y: Any) -> Any:
    if not dtypes.is_floating(x.dtype):
        return None  # integers truncate, complex special values: the host
    if any(stride == 0 and size > 1 for stride, size in zip(y.strides, y.shape)):
        # A broadcast divisor: a multiplication by its reciprocal, as the reference does
        # (and as XLA rewrites it).
        return xp.multiply(x, xp.divide(xp.ones((), y.dtype), y))
    return xp.divide(x, y)


def _convert(xp: Any, x: Any, *, new_dtype: Any, weak_type: bool) -> Any:
    new_dtype = np.dtype(new_dtype)
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = x.real
    if dtypes.is_inexact(x.dtype) and dtypes.is_integer(new_dtype):
        info = np.iinfo(new_dtype)
        if info.bits == 64:
            return None  # (float64 cannot hold the bound: the reference saturates)
        wide = xp.where(xp.isnan(x), 0.0, xp.trunc(x.astype(np.float64)))
        return xp.clip(wide, float(info.min), float(info.max)).astype(new_dtype)
    if new_dtype == np.bool_:
        return x != 0
    return x.astype(new_dtype)


def _broadcast_in_dim(xp: Any, x: Any, *, shape: tuple, broadcast_dimensions: tuple,
                      **_: Any) -> Any:
    expanded = [1] * len(shape)
    for size, dim in zip(x.shape, broadcast_dimensions):
        expanded[dim] = size
    return xp.broadcast_to(x.reshape(expanded), shape)


def _reshape(xp: Any, x: Any, *, new_sizes: tuple, dimensions: tuple | None,
             **_: Any) -> Any:
    if dimensions is not None:
        x = xp.transpose(x, dimensions)
    return xp.reshape(x, new_sizes)


def _slice(xp: Any, x: Any, *, start_indices: tuple, limit_indices: tuple,
           strides: tuple | None) -> Any:
    steps = strides or (1,) * x.ndim
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, steps))]


def _select_n(xp: Any, which: Any, *cases: Any) -> Any:
    # Out-of-range indices clamp to the first or last case, as the reference's loop.
    index = which.astype(np.int64)
    out = cases[0]
    for i, case in enumerate(cases[1:], start=1):
        out = xp.where(index >= i, case, out)
    return xp.broadcast_to(out, cases[0].shape)


def _reduce_sum(xp: Any, x: Any, *, axes: tuple, **_: Any) -> Any:
    if all(x.shape[d] == 1 for d in axes):  # one term: XLA adds no 0
        return x.reshape(tuple(n for d, n in enumerate(x.shape) if d not in axes))
    wide = np.float32 if x.dtype in _LOW else None
    return xp.sum(x, axis=axes, dtype=wide).astype(x.dtype)  # integers wrap


def _extremum(largest: bool) -> Callable[..., Any]:
    def rule(xp: Any, x: Any, *, axes: tuple, **_: Any) -> Any:
        if any(x.shape[d] == 0 for d in axes):
            return None  # (the reference's identities: on the host)
        result = (xp.max if largest else xp.min)(x, axis=axes)
        if dtypes.is_floating(x.dtype):
            # XLA orders -0.0 below +0.0, as the reference does.
            zeros = (x == 0) & (xp.signbit(x) != largest)
            signed = xp.any(zeros, axis=axes)
            zero = xp.where(signed == largest, x.dtype.type(0.0), x.dtype.type(-0.0))
            result = xp.where(result == 0, zero, result)
        return result.astype(x.dtype)
    return rule


def _arg_extremum(largest: bool) -> Callable[..., Any]:
    def rule(xp: Any, x: Any, *, axes: tuple, index_dtype: Any) -> Any:
        if x.shape[axes[0]] == 0:
            return None
        # Ties: the first index (CuPy's, as numpy's). The first NaN wins, as the
        # reference's numpy and XLA choose, whatever CuPy does with NaNs.
        found = (xp.argmax if largest else xp.argmin)(x, axis=axes[0])
        if dtypes.is_floating(x.dtype):
            nans = xp.isnan(x)
            found = xp.where(xp.any(nans, axis=axes[0]), xp.argmax(nans, axis=axes[0]), found)
        return found.astype(index_dtype)
    return rule


def _reduce_prod(xp: Any, x: Any, *, axes: tuple, **_: Any) -> Any:
    if all(x.shape[d] == 1 for d in axes):  # one factor: XLA multiplies by no 1
        return x.reshape(tuple(n for d, n in enumerate(x.shape) if d not in axes))
    if x.dtype in _LOW:
        return xp.prod(x.astype(np.float32), axis=axes).astype(x.dtype)
    return xp.prod(x, axis=axes, dtype=x.dtype)  # integers wrap


def _dot_general(xp: Any, lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: Any,
                 preferred_element_type: Any, **_: Any) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    out = _dot_out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    if out is None or isinstance(precision, str) or (
            precision is not None and not isinstance(precision, (tuple, list))):
        return None  # algorithm precisions and unusual types: the reference on the host
    accumulation = np.dtype(accumulation_dtype(lhs.dtype, rhs.dtype, out))
    if accumulation.kind in "iu":
        accumulation = np.dtype(np.uint64)  # wraps by definition; the low bits are JAX's
    lf = [d for d in range(lhs.ndim) if d not in (*lc, *lb)]
    rf = [d for d in range(rhs.ndim) if d not in (*rc, *rb)]

    def size(x: Any, dims: Any) -> int:
        return int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    a = xp.transpose(lhs, (*lb, *lf, *lc))
    a = a.reshape(size(lhs, lb), size(lhs, lf), size(lhs, lc))
    b = xp.transpose(rhs, (*rb, *rc, *rf))
    b = b.reshape(size(rhs, rb), size(rhs, rc), size(rhs, rf))
    product = xp.matmul(a.astype(accumulation), b.astype(accumulation))
    if accumulation.kind == "c" and out.kind != "c":
        product = product.real
    shape = tuple(lhs.shape[d] for d in (*lb, *lf)) + tuple(rhs.shape[d] for d in rf)
    return product.reshape(shape).astype(out)


def _dot_out_dtype(lhs: np.dtype, rhs: np.dtype, preferred: Any) -> np.dtype | None:
    """The result type of a dot the device rule takes: operands' common type or the
    preferred one, of one kind with the operands (no bools, no floats into integers)."""
    out = np.dtype(preferred) if preferred is not None else np.promote_types(lhs, rhs)
    kinds = {lhs.kind, rhs.kind}
    if out.kind == "b" or "b" in kinds or (out.kind in "iu" and not kinds <= {"i", "u"}):
        return None
    return out  # (halves are summed in float32, as `accumulation_dtype` says)


def _iota(xp: Any, *, dtype: Any, shape: tuple, dimension: int) -> Any:
    # As the reference: counted in int64 (float64) and converted once.
    count_type = np.int64 if dtypes.is_integer(dtype) else np.float64
    counts = xp.arange(shape[dimension], dtype=count_type).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return xp.broadcast_to(counts.reshape(expanded), shape)


_RULES: dict[str, Callable[..., Any]] = {
    "iota": _iota, "convert_element_type": _convert, "broadcast_in_dim": _broadcast_in_dim,
    "reshape": _reshape, "slice": _slice, "select_n": _select_n,
    "transpose": lambda xp, x, *, permutation: xp.transpose(x, permutation),
    "squeeze": lambda xp, x, *, dimensions: xp.squeeze(x, axis=tuple(dimensions)),
    "rev": lambda xp, x, *, dimensions: xp.flip(x, tuple(dimensions)) if dimensions else x,
    "concatenate": lambda xp, *xs, dimension: xp.concatenate(xs, axis=dimension),
    "reduce_sum": _reduce_sum, "reduce_max": _extremum(True),
    "reduce_min": _extremum(False), "reduce_prod": _reduce_prod,
    "argmax": _arg_extremum(True), "argmin": _arg_extremum(False),
    "stop_gradient": lambda xp, x: x,
    "reduce_and": lambda xp, x, *, axes: xp.all(x, axis=axes),
    "reduce_or": lambda xp, x, *, axes: xp.any(x, axis=axes),
    "dot_general": _dot_general, "real": lambda xp, x: xp.real(x),
    "imag": lambda xp, x: xp.imag(x), "max": _upcast(_max_min(True)),
    "min": _upcast(_max_min(False)), "div": _upcast(_div),
}


def device_rule(primitive: Any, in_avals: Any) -> Callable[..., Any] | None:
    """The `xp` rule of `primitive` for operands of `in_avals` (see the module
    docstring), or None: its reference runs on the host."""
    name = primitive.name
    rule = _RULES.get(name)
    if rule is not None:
        if name in ("reduce_and", "reduce_or") and in_avals[0].dtype != np.bool_:
            return None  # (bitwise on integers: the reference's)
        return rule
    if not getattr(primitive, "elementwise", False):
        return None
    if name in _REAL_MATH or name == "abs":
        if any(dtypes.is_complex(a.dtype) for a in in_avals):
            return None  # (complex special values: the reference on the host)
        return _elementwise(_REAL_MATH.get(name, "absolute"))
    ufunc = _reference_ufunc(primitive)
    return None if ufunc is None else _elementwise(ufunc.__name__)
