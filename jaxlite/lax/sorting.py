"""Sorting: the sort primitive and the wrappers sort, sort_key_val and top_k.

Mirrors `jax.lax.sort`, `sort_key_val` and `top_k` (XLA's Sort with a comparator
computation, and TopK). Several operands are sorted together along one dimension, ordered by the
first `num_keys` of them lexicographically. Floats order as JAX sorts them: NaNs last and
equal to each other, -0.0 equal to 0.0 (a stable sort keeps their order); complex numbers
order by real part, then imaginary part.

The derivative is a permutation of the tangents: the jvp sorts an iota alongside the
operands and gathers each tangent at the resulting permutation. The `top_k` primitive
lowers to a sort with integer keys that order floats totally (-NaN < -inf < ... < -0.0 <
0.0 < ... < NaN) in descending order, as XLA's TopK does; its derivative gathers the
tangents at the indices it returns.
"""
from __future__ import annotations

from collections.abc import Sequence
import operator
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import batch_at_front
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._composed import lower_by_expansion
from jaxlite.lax._gather_scatter_util import GatherDimensionNumbers
from jaxlite.lax.bitwise import (
    bitwise_and,
    bitwise_not,
    bitwise_xor,
    shift_right_arithmetic,
)
from jaxlite.lax.convert import bitcast_convert_type, convert_element_type
from jaxlite.lax.gather_scatter import gather
from jaxlite.lax.shape_ops import broadcasted_iota, expand_dims
from jaxlite.lax.slicing import slice_in_dim
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["sort", "sort_key_val", "sort_p", "top_k", "top_k_p"]

sort_p = Primitive("sort", multiple_results=True)


def _sort_abstract_eval(*operands: ShapedArray, dimension: int, is_stable: bool,
                        num_keys: int) -> list[ShapedArray]:
    if not operands:
        raise TypeError("sort requires at least one operand.")
    shapes = {o.shape for o in operands}
    if len(shapes) != 1:
        listed = " ".join(str(o.shape) for o in operands)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {listed}")
    ndim = operands[0].ndim
    if not 0 <= dimension < max(ndim, 1):
        raise ValueError(f"axis {dimension} is out of bounds for array of dimension {ndim}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and "
                         f"len(operand)={len(operands)}")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


def _numpy_keys(x: np.ndarray) -> list[np.ndarray]:
    """Keys for np.lexsort, most significant first, giving JAX's order of `x`."""
    x = np.asarray(x)
    if dtypes.is_complex(x.dtype):
        return _numpy_keys(x.real) + _numpy_keys(x.imag)
    if dtypes.is_inexact(x.dtype):
        wide = x.astype(np.float64)
        nan = np.isnan(wide)
        return [nan, np.where(nan, 0.0, wide)]
    return [x]


def _sort_reference(*operands: np.ndarray, dimension: int, is_stable: bool,
                    num_keys: int) -> list[np.ndarray]:
    operands = [np.asarray(o) for o in operands]
    if operands[0].ndim == 0:
        return [o.copy() for o in operands]
    moved = [np.moveaxis(o, dimension, -1) for o in operands]
    keys = [k for o in moved[:num_keys] for k in _numpy_keys(o)]
    perm = np.lexsort(keys[::-1], axis=-1)
    return [np.moveaxis(np.take_along_axis(m, perm, -1), -1, dimension) for m in moved]


def _take_along(x: Any, perm: Any, dimension: int) -> Any:
    """`x` reordered along `dimension` by the int32 permutation `perm` (of x's shape)."""
    shape = get_aval(x).shape
    if 0 in shape:  # an empty array has nothing to reorder (and no slice of size 1)
        return x
    ndim = len(shape)
    others = tuple(d for d in range(ndim) if d != dimension)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(dimension,),
                                   start_index_map=(dimension,),
                                   operand_batching_dims=others,
                                   start_indices_batching_dims=others)
    return gather(x, expand_dims(perm, (ndim,)), dnums, (1,) * ndim,
                  indices_are_sorted=False, unique_indices=True)


def _sort_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, dimension: int,
              is_stable: bool, num_keys: int) -> tuple[list[Any], list[Any]]:
    shape = get_aval(primals[0]).shape
    if not shape:
        outs = sort_p.bind(*primals, dimension=dimension, is_stable=is_stable,
                           num_keys=num_keys)
        return outs, list(tangents)
    iota = broadcasted_iota(np.int32, shape, dimension)
    outs = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)
    perm = outs[-1]
    out_tangents = []
    for out, t in zip(outs, tangents):
        if isinstance(t, ad.Zero):
            out_tangents.append(ad.Zero(ad.tangent_aval(get_aval(out))))
        else:
            out_tangents.append(_take_along(t, perm, dimension))
    return list(outs[:-1]), out_tangents


def _sort_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                dimension: int, is_stable: bool, num_keys: int) -> tuple[list[Any], list[int]]:
    operands = batch_at_front(args, dims, axis_size)
    outs = sort_p.bind(*operands, dimension=dimension + 1, is_stable=is_stable,
                       num_keys=num_keys)
    return list(outs), [0] * len(outs)


def _key_order(ctx: LoweringContext, a: HloInstruction,
               b: HloInstruction) -> list[tuple[HloInstruction, HloInstruction]]:
    """(less, equal) pairs, most significant first, of JAX's order of scalars a and b."""
    dtype = a.shape.dtype
    if dtypes.is_complex(dtype):
        real = np.finfo(dtype).dtype
        parts = []
        for opcode in (Opcode.REAL, Opcode.IMAG):
            parts += _key_order(ctx, hlo.unary(ctx, opcode, a, real),
                                hlo.unary(ctx, opcode, b, real))
        return parts
    less, equal = hlo.compare(ctx, a, b, "LT"), hlo.compare(ctx, a, b, "EQ")
    if not dtypes.is_inexact(dtype):
        return [(less, equal)]
    a_nan, b_nan = hlo.compare(ctx, a, a, "NE"), hlo.compare(ctx, b, b, "NE")
    a_num = hlo.logical(ctx, Opcode.NOT, a_nan)
    less = hlo.logical(ctx, Opcode.OR, less, hlo.logical(ctx, Opcode.AND, a_num, b_nan))
    equal = hlo.logical(ctx, Opcode.OR, equal, hlo.logical(ctx, Opcode.AND, a_nan, b_nan))
    return [(less, equal)]


def _comparator(ctx: LoweringContext, dtypes_in: Sequence[np.dtype],
                num_keys: int) -> HloComputation:
    def build() -> HloComputation:
        builder = ctx.new_builder("sort_comparator")
        inner = ctx.with_builder(builder)
        params = []
        for i, dtype in enumerate(dtypes_in):
            scalar = Shape(np.dtype(dtype), ())
            params.append((builder.parameter(scalar, f"lhs_{i}"),
                           builder.parameter(scalar, f"rhs_{i}")))
        order = [pair for a, b in params[:num_keys] for pair in _key_order(inner, a, b)]
        result = order[-1][0]
        for less, equal in reversed(order[:-1]):
            result = hlo.logical(inner, Opcode.OR, less,
                                 hlo.logical(inner, Opcode.AND, equal, result))
        return builder.build(result)
    key = ("sort_comparator", tuple(np.dtype(d) for d in dtypes_in), num_keys)
    return ctx.cached_computation(key, build)


def _sort_lower(ctx: LoweringContext, *operands: HloInstruction, dimension: int,
                is_stable: bool, num_keys: int) -> list[HloInstruction]:
    comparator = _comparator(ctx, [o.shape.dtype for o in operands], num_keys)
    return hlo.emit_results(ctx, Opcode.SORT, [o.shape for o in operands], operands,
                            {"dimension": dimension, "is_stable": is_stable}, (comparator,))


sort_p.abstract_eval = _sort_abstract_eval
sort_p.reference = _sort_reference
sort_p.jvp = _sort_jvp
sort_p.batch = _sort_batch
sort_p.lower = _sort_lower


def sort(operand: Any, dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Any:
    """Sort `operand` along `dimension` (mirrors `jax.lax.sort`).

    `operand` may be one array or a sequence of arrays of one shape, sorted together by
    the first `num_keys` of them (lexicographically); a sequence gives a tuple back. NaNs
    sort last; -0.0 and 0.0 are equal.
    """
    single = not isinstance(operand, (list, tuple))
    operands = [operand] if single else list(operand)
    if not operands:
        raise ValueError("lax.sort: operand must be an array or a non-empty sequence.")
    ndim = len(np.shape(operands[0]))
    if ndim and not -ndim <= int(dimension) < ndim:
        raise ValueError(f"axis {dimension} is out of bounds for array of dimension {ndim}")
    dim = int(dimension) + ndim if dimension < 0 and ndim else int(dimension)
    outs = sort_p.bind(*operands, dimension=dim, is_stable=bool(is_stable),
                       num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """`keys` sorted along `dimension`, and `values` permuted likewise
    (mirrors `jax.lax.sort_key_val`)."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def _descending_key(x: Any) -> Any:
    """Integer keys whose ascending order is the descending total order of `x`."""
    dtype = np.dtype(get_aval(x).dtype)
    if dtype == np.bool_:
        x = convert_element_type(x, np.int32)
    elif dtypes.is_inexact(dtype):
        bits = {2: np.int16, 4: np.int32, 8: np.int64}[dtype.itemsize]
        i = bitcast_convert_type(x, bits)
        sign = shift_right_arithmetic(i, np.array(8 * dtype.itemsize - 1, bits))
        x = bitwise_xor(i, bitwise_and(sign, np.array(np.iinfo(bits).max, bits)))
    return bitwise_not(x)


# ----------------------------------------------------------------------------------- top_k

top_k_p = Primitive("top_k", multiple_results=True)


def _top_k_abstract_eval(operand: ShapedArray, *, k: int, axis: int) -> list[ShapedArray]:
    if dtypes.is_complex(operand.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if not operand.shape or not 0 <= axis < operand.ndim:
        raise ValueError(f"top_k: axis {axis} is not a dimension of an operand of shape "
                         f"{operand.shape} (it needs at least one).")
    if operand.shape[axis] < k:
        raise ValueError("k argument to top_k must be no larger than size along axis; got "
                         f"k={k} with shape={list(operand.shape)} and axis={axis}")
    shape = operand.shape[:axis] + (k,) + operand.shape[axis + 1:]
    return [operand.update(shape=shape), ShapedArray(shape, np.dtype(np.int32))]


def _descending_key_reference(x: np.ndarray) -> np.ndarray:
    """numpy's version of `_descending_key`: ascending order of keys = JAX's top_k order."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        x = x.astype(np.int32)
    elif dtypes.is_inexact(x.dtype):
        i = x.view(np.dtype(f"int{8 * x.dtype.itemsize}"))
        x = i ^ ((i >> i.dtype.type(8 * i.dtype.itemsize - 1)) & np.iinfo(i.dtype).max)
    return ~x


def _top_k_reference(operand: np.ndarray, *, k: int, axis: int) -> list[np.ndarray]:
    order = np.argsort(_descending_key_reference(operand), axis=axis, kind="stable")
    index = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(operand, index, axis=axis), index.astype(np.int32)]


def _top_k_expansion(operand: Any, *, k: int, axis: int) -> list[Any]:
    """top_k as a sort of (descending keys, values, iota), cut to the first k."""
    shape = get_aval(operand).shape
    iota = broadcasted_iota(np.int32, shape, axis)
    _, values, indices = sort_p.bind(_descending_key(operand), operand, iota, dimension=axis,
                                     is_stable=True, num_keys=1)
    return [slice_in_dim(values, 0, k, 1, axis), slice_in_dim(indices, 0, k, 1, axis)]


def _top_k_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, k: int,
               axis: int) -> tuple[list, list]:
    values, indices = top_k_p.bind(*primals, k=k, axis=axis)
    (tangent,) = tangents
    index_zero = ad.Zero(ad.tangent_aval(get_aval(indices)))
    if isinstance(tangent, ad.Zero):
        return [values, indices], [ad.Zero(ad.tangent_aval(get_aval(values))), index_zero]
    return [values, indices], [_take_along(tangent, indices, axis), index_zero]


def _top_k_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *, k: int,
                 axis: int) -> tuple[list, list]:
    (operand,), (dim,) = args, dims
    moved = axis + 1 if axis >= dim else axis
    return top_k_p.bind(operand, k=k, axis=moved), [dim, dim]


top_k_p.abstract_eval = _top_k_abstract_eval
top_k_p.reference = _top_k_reference
top_k_p.jvp = _top_k_jvp
top_k_p.batch = _top_k_batch
top_k_p.lower = lower_by_expansion(top_k_p, _top_k_expansion)


def top_k(operand: Any, k: int, *, axis: int = -1) -> list[Any]:
    """The `k` largest entries along `axis` in descending order, and their int32 indices
    (mirrors `jax.lax.top_k`).

    Floats order totally (-NaN < -inf < ... < -0.0 < 0.0 < ... < NaN); of equal entries the
    one with the lower index comes first.
    """
    ndim = np.ndim(operand)
    axis = int(axis) + ndim if axis < 0 else int(axis)
    return top_k_p.bind(operand, k=operator.index(k), axis=axis)
