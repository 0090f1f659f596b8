"""Window reductions: reduce_window_sum, reduce_window_max, reduce_window_min.

The primitives behind `jax.lax.reduce_window` (XLA's ReduceWindow) for the monoids add, max
and min; `lax.reduce_window` itself, with the general primitive for any reducer, is in
`general_windows.py`.
A window of `window_dimensions` (with holes of
`window_dilation` - 1 between its elements) slides in steps of `window_strides` over the
operand, dilated by `base_dilation` (holes filled with the identity) and padded with
`padding` (low, high) identities per dimension; each position gives one reduced element.

The sum is linear: its transpose spreads each cotangent back over its window, which is a
reduce_window_sum of the cotangent dilated by the strides (the window is symmetric), cut
back to the operand's places. The derivative of max and min is JAX's: `select_and_gather_add`
of the tangents (whose transpose, `select_and_scatter_add`, is max-pooling's gradient).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._window_util import Pairs, check_params, out_size
from jaxlite.lax.comparisons import ge_p, le_p
from jaxlite.lax.select_scatter import select_and_gather_add_p
from jaxlite.lax.slicing import pad_p, slice
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = [
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_sum_p",
]

def _window_abstract_eval(name: str) -> Callable[..., ShapedArray]:
    def rule(operand: ShapedArray, *, window_dimensions: tuple, window_strides: tuple,
             padding: Pairs, base_dilation: tuple, window_dilation: tuple) -> ShapedArray:
        check_params(operand.ndim, window_dimensions, window_strides, padding, base_dilation,
                window_dilation, name)
        shape = tuple(out_size(*args) for args in zip(
            operand.shape, window_dimensions, window_strides, (p[0] for p in padding),
            (p[1] for p in padding), base_dilation, window_dilation))
        return ShapedArray(shape, operand.dtype, operand.weak_type)
    return rule


def _identity(kind: str, dtype: Any) -> Any:
    dtype = np.dtype(dtype)
    if kind == "sum":
        return hlo.zero(dtype)
    if dtype == np.bool_:
        return np.bool_(kind == "min")
    return hlo.lowest(dtype) if kind == "max" else hlo.highest(dtype)


def _window_reference(kind: str) -> Callable[..., np.ndarray]:
    def rule(operand: np.ndarray, *, window_dimensions: tuple, window_strides: tuple,
             padding: Pairs, base_dilation: tuple, window_dilation: tuple) -> np.ndarray:
        x = np.asarray(operand)
        init = np.asarray(_identity(kind, x.dtype), x.dtype)
        out = [out_size(*args) for args in zip(
            x.shape, window_dimensions, window_strides, (p[0] for p in padding),
            (p[1] for p in padding), base_dilation, window_dilation)]
        if 0 in out or x.ndim == 0:
            return np.full(out, init, x.dtype) if 0 in out else x.copy()
        config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation))
        padded = pad_p.reference(x, init, padding_config=config)
        extent = [(w - 1) * d + 1 for w, d in zip(window_dimensions, window_dilation)]
        view = np.lib.stride_tricks.sliding_window_view(padded, extent)
        view = view[tuple(np.s_[0:o * s:s] for o, s in zip(out, window_strides))
                    + tuple(np.s_[::d] for d in window_dilation)]
        axes = tuple(range(x.ndim, 2 * x.ndim))
        if kind == "sum":
            wide = hlo.widen_low_precision(x.dtype)
            return np.sum(view.astype(wide), axis=axes, dtype=wide).astype(x.dtype)
        return (np.max if kind == "max" else np.min)(view, axis=axes)
    return rule


def _window_batch(primitive: Primitive) -> Callable[..., tuple[Any, int]]:
    def rule(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
             window_dimensions: tuple, window_strides: tuple, padding: Pairs,
             base_dilation: tuple, window_dilation: tuple) -> tuple[Any, int]:
        (operand,), (dim,) = args, dims

        def widen(values: tuple, one: Any) -> tuple:
            return tuple(values[:dim]) + (one,) + tuple(values[dim:])
        out = primitive.bind(operand, window_dimensions=widen(window_dimensions, 1),
                             window_strides=widen(window_strides, 1),
                             padding=widen(padding, (0, 0)),
                             base_dilation=widen(base_dilation, 1),
                             window_dilation=widen(window_dilation, 1))
        return out, dim
    return rule


def _window_lower(kind: str) -> Callable[..., HloInstruction]:
    opcode = {"sum": Opcode.ADD, "max": Opcode.MAXIMUM, "min": Opcode.MINIMUM}[kind]

    def rule(ctx: LoweringContext, operand: HloInstruction, *, window_dimensions: tuple,
             window_strides: tuple, padding: Pairs, base_dilation: tuple,
             window_dilation: tuple) -> HloInstruction:
        dtype = operand.shape.dtype
        wide = hlo.widen_low_precision(dtype) if kind == "sum" else dtype
        if kind != "sum" and dtype == np.bool_:
            opcode_here = Opcode.OR if kind == "max" else Opcode.AND
            computation = ctx.scalar_computation(opcode_here, dtype)
        else:
            computation = hlo.reduction_computation(ctx, opcode, wide)
        window = {"size": tuple(window_dimensions), "stride": tuple(window_strides),
                  "pad": tuple(tuple(p) for p in padding),
                  "lhs_dilate": tuple(base_dilation), "rhs_dilate": tuple(window_dilation)}
        x = hlo.convert(ctx, operand, wide)
        init = hlo.constant(ctx, _identity(kind, wide), wide)
        shape = ctx.shape(ctx.avals_out[0]).with_dtype(wide)
        out = ctx.builder.add(Opcode.REDUCE_WINDOW, shape, (x, init), {"window": window},
                              (computation,))
        return hlo.convert(ctx, out, dtype)
    return rule


def _declare(kind: str) -> Primitive:
    primitive = Primitive(f"reduce_window_{kind}")
    primitive.abstract_eval = _window_abstract_eval(f"reduce_window_{kind}")
    primitive.reference = _window_reference(kind)
    primitive.batch = _window_batch(primitive)
    primitive.lower = _window_lower(kind)
    return primitive


reduce_window_sum_p = _declare("sum")
reduce_window_max_p = _declare("max")
reduce_window_min_p = _declare("min")


def _sum_transpose(ct: Any, operand: Any, *, window_dimensions: tuple, window_strides: tuple,
                   padding: Pairs, base_dilation: tuple,
                   window_dilation: tuple) -> list[Any]:
    shape = get_aval(operand).shape
    out_shape = get_aval(ct).shape
    dtype = get_aval(ct).dtype
    if 0 in out_shape or 0 in shape:
        return [ad.zeros_like_aval(ShapedArray(shape, dtype))]
    # padded[i] receives ct[j] for every window element k with j * stride + k * dilation
    # = i: a window sum over ct dilated by the strides and padded by one window extent.
    pads = []
    for n, o, w, s, (lo, hi), b, d in zip(shape, out_shape, window_dimensions, window_strides,
                                         padding, base_dilation, window_dilation):
        padded_size = (n - 1) * b + 1 + lo + hi
        pads.append(((w - 1) * d, padded_size - (o - 1) * s - 1))
    spread = reduce_window_sum_p.bind(ct, window_dimensions=window_dimensions,
                                      window_strides=(1,) * len(shape), padding=tuple(pads),
                                      base_dilation=window_strides,
                                      window_dilation=window_dilation)
    unpadded = pad_p.bind(spread, np.zeros((), dtype),
                          padding_config=tuple((-lo, -hi, 0) for lo, hi in padding))
    return [slice(unpadded, (0,) * len(shape), get_aval(unpadded).shape, base_dilation)]


ad.deflinear(reduce_window_sum_p)
reduce_window_sum_p.transpose = _sum_transpose


def _chooser_jvp(primitive: Primitive, select_prim: Primitive) -> Callable[..., tuple]:
    """JAX's derivative of max and min: the tangent of the element that select-and-gather
    chooses in each window (the first maximum or minimum in row-major window order)."""
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        (x,), (t,) = primals, tangents
        out = primitive.bind(x, **params)
        if isinstance(t, ad.Zero):
            return out, ad.Zero(ad.tangent_aval(get_aval(out)))
        return out, select_and_gather_add_p.bind(t, x, select_prim=select_prim, **params)
    return rule


reduce_window_max_p.jvp = _chooser_jvp(reduce_window_max_p, ge_p)
reduce_window_min_p.jvp = _chooser_jvp(reduce_window_min_p, le_p)
