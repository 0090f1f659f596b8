"""Dtype conversion: `convert_element_type` (XLA's Convert).

Mirrors `jax.lax.convert_element_type`. Converting complex to real keeps the real part;
converting float to integer truncates toward zero and saturates (NaN becomes 0), as XLA does.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import Zero, tangent_aval
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

convert_element_type_p = Primitive("convert_element_type")


def _convert_element_type_abstract_eval(operand: ShapedArray, *, new_dtype: np.dtype,
                                        weak_type: bool) -> ShapedArray:
    return ShapedArray(operand.shape, np.dtype(new_dtype), weak_type)


def _convert_element_type_reference(operand: np.ndarray, *, new_dtype: np.dtype,
                                    weak_type: bool) -> np.ndarray:
    operand = np.asarray(operand)
    new_dtype = np.dtype(new_dtype)
    if dtypes.is_complex(operand.dtype) and not dtypes.is_complex(new_dtype):
        operand = operand.real
    if dtypes.is_inexact(operand.dtype) and dtypes.is_integer(new_dtype):
        return _float_to_int(operand, new_dtype)
    if new_dtype == np.bool_:
        return operand != 0
    with np.errstate(over="ignore", invalid="ignore"):
        return operand.astype(new_dtype)


def _float_to_int(operand: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(new_dtype)
    wide = operand.astype(np.float64)
    wide = np.where(np.isnan(wide), 0.0, np.trunc(wide))
    clipped = np.clip(wide, float(info.min), float(info.max))
    # float64 cannot hold int64's max exactly: saturate through the integer type instead.
    result = clipped.astype(new_dtype) if info.bits < 64 else _saturate_64(clipped, new_dtype)
    return result


def _saturate_64(values: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(new_dtype)
    result = np.empty(values.shape, new_dtype)
    too_big = values >= float(info.max)
    result[too_big] = info.max
    result[~too_big] = values[~too_big].astype(new_dtype)
    return result


def _convert_element_type_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                              new_dtype: np.dtype, weak_type: bool) -> tuple[Any, Any]:
    (operand,), (tangent,) = primals, tangents
    out = convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)
    out_aval = get_aval(out)
    if isinstance(tangent, Zero) or not dtypes.is_inexact(new_dtype) \
            or not dtypes.is_inexact(get_aval(operand).dtype):
        return out, Zero(tangent_aval(out_aval))
    return out, convert_element_type_p.bind(tangent, new_dtype=new_dtype, weak_type=weak_type)


def _convert_element_type_transpose(ct: Any, operand: Any, *, new_dtype: np.dtype,
                                    weak_type: bool) -> list[Any]:
    assert is_undefined(operand)
    aval = operand.aval
    return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type)]


def _convert_element_type_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any],
                                **params: Any) -> tuple[Any, Any]:
    return convert_element_type_p.bind(args[0], **params), dims[0]


def _convert_element_type_lower(ctx: LoweringContext, operand: HloInstruction, *,
                                new_dtype: np.dtype, weak_type: bool) -> HloInstruction:
    return hlo.convert(ctx, operand, ctx.shape(ctx.avals_out[0]).dtype)


convert_element_type_p.abstract_eval = _convert_element_type_abstract_eval
convert_element_type_p.reference = _convert_element_type_reference
convert_element_type_p.jvp = _convert_element_type_jvp
convert_element_type_p.transpose = _convert_element_type_transpose
convert_element_type_p.batch = _convert_element_type_batch
convert_element_type_p.lower = _convert_element_type_lower


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """Convert `operand` to `new_dtype` (mirrors `jax.lax.convert_element_type`).

    64-bit dtypes become 32-bit unless `jax_enable_x64` is on; the result is not weakly typed.
    A dtype arrays cannot hold (object, str, ...) raises JAX's TypeError.
    """
    dtypes.check_user_dtype_supported(new_dtype, "convert_element_type")
    return _convert_element_type(operand, new_dtype, weak_type=False)


def _convert_element_type(operand: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """`convert_element_type` that can also set the weak-type flag (for library code)."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    aval = get_aval(operand)
    if aval.dtype == new_dtype and aval.weak_type == weak_type \
            and not isinstance(operand, (bool, int, float, complex)):
        return operand
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)


# ------------------------------------------------------------------ bitcast_convert_type

bitcast_convert_type_p = Primitive("bitcast_convert_type")


def _bitcast_convert_type_abstract_eval(operand: ShapedArray, *,
                                        new_dtype: np.dtype) -> ShapedArray:
    old_dtype, new_dtype = np.dtype(operand.dtype), np.dtype(new_dtype)
    special = [dtypes.is_bool(d) or dtypes.is_complex(d) for d in (old_dtype, new_dtype)]
    if old_dtype != new_dtype and any(special):
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the "
            f"operand and destination types match. Got operand dtype={old_dtype.name}, "
            f"new_dtype={new_dtype.name}. Consider using the arr.view() method instead.")
    old_bits, new_bits = dtypes.itemsize_bits(old_dtype), dtypes.itemsize_bits(new_dtype)
    shape = tuple(operand.shape)
    if new_bits < old_bits:
        # Each element becomes several narrower ones, laid out along a new last dimension.
        shape = shape + (old_bits // new_bits,)
    elif new_bits > old_bits:
        ratio = new_bits // old_bits
        if not shape or shape[-1] != ratio:
            last = shape[-1] if shape else 1
            raise ValueError(
                f"Attempting to convert array of shape {shape} from {old_dtype.name} of size "
                f"{old_bits} bits to {new_dtype.name} of size {new_bits} bits, but {last} * "
                f"{old_bits} != {new_bits} (bitcast_convert_type needs a last dimension of "
                f"size {ratio} to merge).")
        shape = shape[:-1]
    return ShapedArray(shape, new_dtype, False)


def _bitcast_convert_type_reference(operand: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    # A C-ordered copy lays each element's bytes out contiguously (little-endian, as XLA on
    # the CPU), so a numpy view reinterprets them exactly as XLA does.
    operand = np.array(operand, order="C")
    new_dtype = np.dtype(new_dtype)
    if new_dtype.itemsize < operand.itemsize:
        return operand.reshape(operand.shape + (1,)).view(new_dtype)
    if new_dtype.itemsize > operand.itemsize:
        return operand.view(new_dtype).reshape(operand.shape[:-1])
    return operand.view(new_dtype)


def _bitcast_convert_type_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                              new_dtype: np.dtype) -> tuple[Any, Any]:
    # Reinterpreting bits is not a smooth function of the value: the tangent is zero.
    out = bitcast_convert_type_p.bind(primals[0], new_dtype=new_dtype)
    return out, Zero(tangent_aval(get_aval(out)))


def _bitcast_convert_type_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                                new_dtype: np.dtype) -> tuple[Any, Any]:
    (operand,), (dim,) = args, dims
    width_changes = dtypes.itemsize_bits(get_aval(operand).dtype) != \
        dtypes.itemsize_bits(new_dtype)
    # A change of width adds or removes the last dimension, which must not be the batch one.
    if width_changes and dim == np.ndim(operand) - 1:
        operand, dim = move_batch_axis(operand, dim, axis_size, 0), 0
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype), dim


def _bitcast_convert_type_lower(ctx: LoweringContext, operand: HloInstruction, *,
                                new_dtype: np.dtype) -> HloInstruction:
    # XLA's bitcast-convert itself adds or merges the last dimension when the width changes.
    return hlo.result(ctx, Opcode.BITCAST_CONVERT, (operand,))


bitcast_convert_type_p.abstract_eval = _bitcast_convert_type_abstract_eval
bitcast_convert_type_p.reference = _bitcast_convert_type_reference
bitcast_convert_type_p.jvp = _bitcast_convert_type_jvp
bitcast_convert_type_p.batch = _bitcast_convert_type_batch
bitcast_convert_type_p.lower = _bitcast_convert_type_lower


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of `operand` as `new_dtype` (mirrors `jax.lax.bitcast_convert_type`).

    Between types of one width the shape is kept. To a narrower type each element becomes a
    new last dimension of `old_bits // new_bits` elements (little-endian order); to a wider
    type the last dimension, which must have `new_bits // old_bits` elements, is merged away.
    bool and complex types can only be "converted" to themselves.
    """
    new_dtype = dtypes.check_and_canonicalize_user_dtype(new_dtype, "bitcast_convert_type")
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)
