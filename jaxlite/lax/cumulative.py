"""Cumulative reductions along one axis: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Mirrors `jax.lax.cumsum`, `cumprod`, `cummax`, `cummin` and `cumlogsumexp` (XLA computes
them as reduce-windows). `cumsum` is linear and transposes to the reversed cumsum. The other
derivatives are defined, as in JAX, as the derivative of a parallel prefix scan (the
odd/even recursion of Blelloch's scan): ties in cummax/cummin split the tangent in halves at
each combine of that tree, so the weights depend on the tree's shape, which
`_associative_scan` reproduces.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.core.shape_poly import is_symbolic_dim
from jaxlite.interpreters import ad
from jaxlite.interpreters.ad import Zero, tangent_aval
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import FLOATING, NUMERIC, check_dtype_kind
from jaxlite.lax.arithmetic import add, full_like, mul, neg, sub
from jaxlite.lax.comparisons import eq, ne
from jaxlite.lax.math_functions import abs as abs_, exp, extremum_reference, log1p, max as max_, \
    min as min_
from jaxlite.lax.selection import select_n
from jaxlite.lax.shape_ops import rev
from jaxlite.lax.slicing import concatenate, pad, slice_in_dim
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.cumulative_scan import BLOCK
from jaxlite.xla.shape import Shape, xla_type_name

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
           "cumsum_p", "cumprod_p", "cummax_p", "cummin_p", "cumlogsumexp_p"]


# ----------------------------------------------------------------------- shared rules

def _cumulative(name: str, reference: Callable[..., np.ndarray],
                kinds: Sequence[str]) -> Primitive:
    """Declare a cumulative reduction: shape rule, dtype check, reference and batching."""
    primitive = Primitive(name)

    def abstract_eval(operand: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        if not 0 <= axis < operand.ndim:
            raise TypeError(f"{name}: axis {axis} is out of bounds for an operand of shape "
                            f"{operand.shape}.")
        check_dtype_kind(name, operand.dtype, kinds)
        return operand

    def batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *, axis: int,
              reverse: bool) -> tuple[Any, int]:
        (operand,), (dim,) = args, dims
        new_axis = axis + 1 if dim <= axis else axis
        return primitive.bind(operand, axis=new_axis, reverse=reverse), dim

    def oriented(operand: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
        x = operand.astype(np.float32) if operand.dtype in (np.float16, dtypes.bfloat16) \
            else operand
        with np.errstate(all="ignore"):
            out = reference(x, axis, reverse, operand.dtype)
        return np.asarray(out).astype(operand.dtype)

    primitive.abstract_eval = abstract_eval
    primitive.reference = oriented
    primitive.batch = batch
    return primitive


def _canonical_axis(name: str, operand: Any, axis: int) -> int:
    ndim = np.ndim(operand)
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of shape "
                         f"{np.shape(operand)} ({name})")
    return axis % ndim


# ------------------------------------------------------------------ the prefix scan

Combine = Callable[[np.ndarray, np.ndarray], np.ndarray]
Pair = tuple[Any, Any]


def _interleave(even: Any, odd: Any, axis: int) -> Any:
    """Elements of `even` at positions 0, 2, 4, ... and of `odd` at 1, 3, ... of `axis`.

    Each is spread out with zeros in between and the two are added, as JAX does; the sum
    turns a -0.0 into +0.0, which keeps the signs of zero in derivatives equal to JAX's.
    """
    ndim = np.ndim(even)
    odd_total = np.shape(even)[axis] == np.shape(odd)[axis] + 1

    def spread(x: Any, low: int, high: int) -> Any:
        config = [(0, 0, 0)] * ndim
        config[axis] = (low, high, 1)
        return pad(x, full_like(x, 0, shape=()), config)

    if odd_total:
        return add(spread(even, 0, 0), spread(odd, 1, 1))
    return add(spread(even, 0, 1), spread(odd, 1, 0))


def _scan(combine: Callable[[Pair, Pair], Pair], elems: Pair, axis: int) -> Pair:
    """Inclusive prefix scan of (value, tangent) pairs along `axis`.

    Combines neighbours (0,1), (2,3), ...; scans those sums recursively, which gives the
    prefixes ending at odd positions; then the prefixes ending at even positions are the
    previous odd prefix combined with the element itself. The same tree as JAX's
    `associative_scan`, so that tie-breaking derivatives agree.
    """
    n = np.shape(elems[0])[axis]
    if n < 2:
        return elems

    def part(x: Any, start: int, stop: int, stride: int = 1) -> Any:
        return slice_in_dim(x, start, stop, stride, axis)

    firsts = tuple(part(x, 0, n - 1, 2) for x in elems)
    seconds = tuple(part(x, 1, n, 2) for x in elems)
    odd = _scan(combine, combine(firsts, seconds), axis)  # prefixes ending at 1, 3, 5, ...
    rest = tuple(part(x, 2, n, 2) for x in elems)
    n_odd = np.shape(odd[0])[axis]
    if n % 2 == 0:
        even = combine(tuple(part(x, 0, n_odd - 1) for x in odd), rest)
    else:
        even = combine(odd, rest)
    even = tuple(concatenate([part(x, 0, 1), e], axis) for x, e in zip(elems, even))
    return tuple(_interleave(e, o, axis) for e, o in zip(even, odd))  # type: ignore


def _associative_scan(combine: Callable[[Pair, Pair], Pair], elems: Pair, axis: int,
                      reverse: bool) -> Pair:
    if reverse:
        flipped = tuple(rev(x, (axis,)) for x in elems)
        return tuple(rev(x, (axis,)) for x in _scan(combine, flipped, axis))  # type: ignore
    return _scan(combine, elems, axis)


def _cumulative_jvp(primitive: Primitive,
                    combine: Callable[[Pair, Pair], Pair]) -> Callable[..., Any]:
    """jvp as the derivative of the prefix scan of `combine` over (value, tangent) pairs."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int,
            reverse: bool) -> tuple[Any, Any]:
        (operand,), (tangent,) = primals, tangents
        out = primitive.bind(operand, axis=axis, reverse=reverse)
        if isinstance(tangent, Zero) or not dtypes.is_inexact(get_aval(operand).dtype):
            return out, Zero(tangent_aval(get_aval(out)))
        _, tangent_out = _associative_scan(combine, (operand, tangent), axis, reverse)
        return out, tangent_out
    return jvp


def _mul_pair(a: Pair, b: Pair) -> Pair:
    return mul(a[0], b[0]), add(mul(a[1], b[0]), mul(a[0], b[1]))


def _tie_weight(x: Any, out: Any, y: Any) -> Any:
    """The share of x's tangent in max(x, y) or min(x, y): 1 if x won, 1/2 on a tie."""
    one, half, zero = full_like(x, 1), full_like(x, 0.5), full_like(x, 0)
    return select_n(eq(x, out), zero, select_n(eq(y, out), one, half))


def _chooser_pair(choose: Callable[[Any, Any], Any]) -> Callable[[Pair, Pair], Pair]:
    def combine(a: Pair, b: Pair) -> Pair:
        out = choose(a[0], b[0])
        return out, add(mul(a[1], _tie_weight(a[0], out, b[0])),
                        mul(b[1], _tie_weight(b[0], out, a[0])))
    return combine


def _finite_or_zero(x: Any) -> Any:
    """+inf replaced by 0, as JAX's logaddexp derivative does (so inf - inf is avoided)."""
    return select_n(eq(x, full_like(x, np.inf)), x, full_like(x, 0))


def _logaddexp_pair(a: Pair, b: Pair) -> Pair:
    x, y = a[0], b[0]
    delta = sub(x, y)
    # delta is NaN for a NaN operand or two infinities of one sign: x + y is then right.
    out = select_n(ne(delta, delta), add(max_(x, y), log1p(exp(neg(abs_(delta))))), add(x, y))
    out_finite = _finite_or_zero(out)
    return out, add(mul(a[1], exp(sub(_finite_or_zero(x), out_finite))),
                    mul(b[1], exp(sub(_finite_or_zero(y), out_finite))))


# ---------------------------------------------------------------------- primitives

def _window_fold(combine: Combine, identity: Any, x: np.ndarray,
                 reverse: bool) -> np.ndarray:
    """The running reduction along the last axis as a reduce-window computes it: each output
    folds the identity, then its window's elements in index order (identities padding it)."""
    n = x.shape[-1]
    padding = np.full(x.shape[:-1] + (n - 1,), identity, x.dtype)
    padded = np.concatenate([x, padding] if reverse else [padding, x], axis=-1)
    out = np.full(x.shape, identity, x.dtype)
    for k in range(n):
        out = combine(out, padded[..., k:k + n])
    return out


def _scan_in_blocks(combine: Combine, identity: Any, x: np.ndarray,
                    reverse: bool) -> np.ndarray:
    """The running reduction along the last axis in the compiled order (xla/passes/
    cumulative_scan.py, XLA's too): windows of `BLOCK`, then the blocks' totals. numpy's
    sequential order was off by ~400 for a float32 cumsum of 2**24 terms (JAX: 1.8)."""
    n = x.shape[-1]
    if n <= BLOCK:
        return _window_fold(combine, identity, x, reverse)
    blocks = -(-n // BLOCK)
    padding = np.full(x.shape[:-1] + (blocks * BLOCK - n,), identity, x.dtype)
    split = np.concatenate([x, padding], axis=-1).reshape(x.shape[:-1] + (blocks, BLOCK))
    inner = _window_fold(combine, identity, split, reverse)
    running = _scan_in_blocks(combine, identity, inner[..., 0 if reverse else -1], reverse)
    edge = np.full(running.shape[:-1] + (1,), identity, x.dtype)
    before = np.concatenate([running[..., 1:], edge] if reverse else [edge, running[..., :-1]],
                            axis=-1)
    return combine(inner, before[..., None]).reshape(x.shape[:-1] + (blocks * BLOCK,))[..., :n]


def _scan_reference(combine: Combine, identity: Any) -> Callable[..., np.ndarray]:
    """A float running reduction in the compiled order; float16 and bfloat16 (given as
    float32) are rounded to their dtype after every step, as XLA's reducer does."""
    def reference(x: np.ndarray, axis: int, reverse: bool, dtype: np.dtype) -> np.ndarray:
        step = combine
        if x.dtype != dtype:
            def step(a: np.ndarray, b: np.ndarray) -> np.ndarray:
                return combine(a, b).astype(dtype).astype(x.dtype)
        moved = np.moveaxis(x, axis, -1)
        if moved.size == 0:
            return x
        return np.moveaxis(_scan_in_blocks(step, identity, moved, reverse), -1, axis)
    return reference


def _order_free(accumulate: Callable[[np.ndarray, int], np.ndarray]
                ) -> Callable[..., np.ndarray]:
    """A reference whose result does not depend on the order (integers, max, min)."""
    def reference(x: np.ndarray, axis: int, reverse: bool, dtype: np.dtype) -> np.ndarray:
        if reverse:
            return np.flip(accumulate(np.flip(x, axis), axis), axis)
        return accumulate(x, axis)
    return reference


def _by_kind(inexact: Callable[..., np.ndarray],
             exact: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def reference(x: np.ndarray, axis: int, reverse: bool, dtype: np.dtype) -> np.ndarray:
        chosen = inexact if dtypes.is_inexact(x.dtype) else exact
        return chosen(x, axis, reverse, dtype)
    return reference


def _logaddexp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(e**a + e**b) as the compiled reducer computes it (`_logaddexp_computation`)."""
    delta = a - b
    stable = np.maximum(a, b) + np.log1p(np.exp(-np.abs(delta)))
    return np.where(delta != delta, a + b, stable)


# integers wrap, as in XLA
_cumsum_reference = _by_kind(_scan_reference(np.add, 0),
                             _order_free(lambda x, axis: np.cumsum(x, axis, x.dtype)))
_cumprod_reference = _by_kind(_scan_reference(np.multiply, 1),
                              _order_free(lambda x, axis: np.cumprod(x, axis, x.dtype)))
_cumlogsumexp_reference = _scan_reference(_logaddexp, -np.inf)


def _signed_zeros(x: np.ndarray, out: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    """XLA orders -0.0 below +0.0: a running max that is zero is +0.0 once a +0.0 was seen."""
    if not dtypes.is_floating(x.dtype):
        return out
    seen = np.logical_or.accumulate((x == 0) & (np.signbit(x) != largest), axis=axis)
    zero = np.where(seen == largest, np.asarray(0.0, x.dtype), np.asarray(-0.0, x.dtype))
    return np.where(out == 0, zero, out)


def _running_extremum(x: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    """The running max (or min) along `axis`. Complex values fold in order through XLA's
    lexicographic comparison, where a NaN loses on one side only (numpy's accumulate would
    propagate it), as JAX's cummax does."""
    if not dtypes.is_complex(x.dtype):
        running = np.maximum if largest else np.minimum
        return _signed_zeros(x, running.accumulate(x, axis=axis), axis, largest)
    moved = np.moveaxis(x, axis, -1)
    out = np.empty_like(moved)
    if moved.shape[-1]:
        out[..., 0] = moved[..., 0]
    for k in range(1, moved.shape[-1]):
        out[..., k] = extremum_reference(out[..., k - 1], moved[..., k], larger=largest)
    return np.moveaxis(out, -1, axis)


_cummax_reference = _order_free(lambda x, axis: _running_extremum(x, axis, largest=True))
_cummin_reference = _order_free(lambda x, axis: _running_extremum(x, axis, largest=False))


def _logaddexp_body(inner: LoweringContext, a: HloInstruction,
                    b: HloInstruction) -> HloInstruction:
    """log(e**a + e**b), stable for large operands."""
    delta = hlo.binary(inner, Opcode.SUBTRACT, a, b)
    correction = hlo.unary(inner, Opcode.LOG1P, hlo.unary(inner, Opcode.EXP, hlo.unary(
        inner, Opcode.NEGATE, hlo.unary(inner, Opcode.ABS, delta))))
    stable = hlo.binary(inner, Opcode.ADD, hlo.extremum(inner, a, b, larger=True), correction)
    # delta is NaN for a NaN operand or two infinities of one sign: a + b is then right.
    undefined = hlo.compare(inner, delta, delta, "NE")
    return hlo.select(inner, undefined, hlo.binary(inner, Opcode.ADD, a, b), stable)


Body = Callable[[LoweringContext, HloInstruction, HloInstruction], HloInstruction]
Reducer = Callable[[LoweringContext, np.dtype, np.dtype], HloComputation]


def _rounding_reducer(name: str, body: Body) -> Reducer:
    """The scalar reducer `body` in the wide dtype, rounded to the operand's dtype after
    every step when that is float16 or bfloat16 (XLA's reduce-window does so: JAX's
    cumsum of bfloat16 values accumulates in bfloat16)."""
    def reducer(ctx: LoweringContext, wide: np.dtype, narrow: np.dtype) -> HloComputation:
        def build() -> HloComputation:
            builder = ctx.new_builder(f"{name}_{xla_type_name(narrow)}")
            inner = ctx.with_builder(builder)
            scalar = Shape(wide, ())
            a, b = builder.parameter(scalar, "lhs"), builder.parameter(scalar, "rhs")
            out = body(inner, a, b)
            if narrow != wide:
                out = hlo.convert(inner, hlo.convert(inner, out, narrow), wide)
            return builder.build(out)
        return ctx.cached_computation((name, wide, narrow), build)
    return reducer


def _cumulative_lower(reducer: Reducer, identity: Callable[[np.dtype], Any]) -> hlo.Rule:
    """The rule of a cumulative reduction: a reduce-window (which xla/passes/
    cumulative_scan.py turns into blocks), in float32 for float16 and bfloat16."""
    def lower(ctx: LoweringContext, operand: HloInstruction, *, axis: int,
              reverse: bool) -> HloInstruction:
        length = operand.shape.dims[axis]
        if (not is_symbolic_dim(length) and length <= 1) or operand.shape.size == 0:
            return operand
        dtype = operand.shape.dtype
        wide = hlo.widen_low_precision(dtype)
        out = hlo.cumulative_window(ctx, hlo.convert(ctx, operand, wide), axis, reverse,
                                    reducer(ctx, wide, dtype), identity(wide))
        return hlo.convert(ctx, out, dtype)
    return lower


cumsum_p = _cumulative("cumsum", _cumsum_reference, NUMERIC)
cumprod_p = _cumulative("cumprod", _cumprod_reference, NUMERIC)
cummax_p = _cumulative("cummax", _cummax_reference, NUMERIC)
cummin_p = _cumulative("cummin", _cummin_reference, NUMERIC)
cumlogsumexp_p = _cumulative("cumlogsumexp", _cumlogsumexp_reference, (FLOATING,))


def _cumsum_transpose(ct: Any, operand: Any, *, axis: int, reverse: bool) -> list[Any]:
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


ad.deflinear(cumsum_p)
cumsum_p.transpose = _cumsum_transpose
cumprod_p.jvp = _cumulative_jvp(cumprod_p, _mul_pair)
cummax_p.jvp = _cumulative_jvp(cummax_p, _chooser_pair(max_))
cummin_p.jvp = _cumulative_jvp(cummin_p, _chooser_pair(min_))
cumlogsumexp_p.jvp = _cumulative_jvp(cumlogsumexp_p, _logaddexp_pair)
cumsum_p.lower = _cumulative_lower(_rounding_reducer(
    "add", lambda c, a, b: hlo.binary(c, Opcode.ADD, a, b)), hlo.zero)
cumprod_p.lower = _cumulative_lower(_rounding_reducer(
    "multiply", lambda c, a, b: hlo.binary(c, Opcode.MULTIPLY, a, b)), hlo.one)
cummax_p.lower = _cumulative_lower(lambda c, wide, _: hlo.extremum_computation(c, wide, True),
                                   hlo.lowest)
cummin_p.lower = _cumulative_lower(lambda c, wide, _: hlo.extremum_computation(c, wide, False),
                                   hlo.highest)
cumlogsumexp_p.lower = _cumulative_lower(_rounding_reducer("logaddexp", _logaddexp_body),
                                         hlo.lowest)


# ---------------------------------------------------------------------- wrappers

def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running sum along `axis`, from the end if `reverse` (mirrors `jax.lax.cumsum`).

    Differences from JAX: a negative `axis` counts from the end instead of raising.
    """
    return cumsum_p.bind(operand, axis=_canonical_axis("cumsum", operand, axis),
                         reverse=bool(reverse))


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running product along `axis` (mirrors `jax.lax.cumprod`).

    Differences from JAX: a negative `axis` counts from the end instead of raising.
    """
    return cumprod_p.bind(operand, axis=_canonical_axis("cumprod", operand, axis),
                          reverse=bool(reverse))


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running maximum along `axis` (mirrors `jax.lax.cummax`); NaN propagates.

    Differences from JAX: a negative `axis` counts from the end instead of raising.
    """
    return cummax_p.bind(operand, axis=_canonical_axis("cummax", operand, axis),
                         reverse=bool(reverse))


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running minimum along `axis` (mirrors `jax.lax.cummin`); NaN propagates.

    Differences from JAX: a negative `axis` counts from the end instead of raising.
    """
    return cummin_p.bind(operand, axis=_canonical_axis("cummin", operand, axis),
                         reverse=bool(reverse))


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Running log(sum(exp(x))) along `axis` (mirrors `jax.lax.cumlogsumexp`).

    Differences from JAX: complex operands are rejected; a negative `axis` counts from the
    end instead of raising.
    """
    return cumlogsumexp_p.bind(operand, axis=_canonical_axis("cumlogsumexp", operand, axis),
                               reverse=bool(reverse))


def exclusive_cumprod(operand: Any, axis: int, reverse: bool) -> Any:
    """Products of the elements strictly before (after, if `reverse`) each one along `axis`.

    The first (last) entry is 1. Used by `reduce_prod`'s derivative, which must not divide.
    """
    n = np.shape(operand)[axis]
    if n == 0:
        return operand
    inclusive = cumprod(operand, axis, reverse)
    one = full_like(slice_in_dim(operand, 0, 1, axis=axis), 1)
    if reverse:
        return concatenate([slice_in_dim(inclusive, 1, n, axis=axis), one], axis)
    return concatenate([one, slice_in_dim(inclusive, 0, n - 1, axis=axis)], axis)
