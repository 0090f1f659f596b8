"""Tensor contraction: `dot_general` and the functions built on it (XLA's DotGeneral).

Mirrors `jax.lax.dot_general`, `jax.lax.dot`, `jax.lax.batch_matmul` and `jax.lax.Precision`.
The output's dimensions are the batch dimensions (in the order the dimension numbers list
them), then the free dimensions of the lhs, then those of the rhs, each in increasing order,
as XLA orders them. The operands may differ in dtype: the result takes the more precise of
the two (XLA's rule), or `preferred_element_type`, which also sets the accumulation type.
"""
from __future__ import annotations

import enum
from typing import Any, Sequence, Union

import numpy as np

from jaxlite.config import config
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.core.sharding_rules import requested_sharding
from jaxlite.interpreters.ad import Zero, add_tangents, tangent_aval
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.broadcast import transpose
from jaxlite.lax.convert import _convert_element_type, _float_to_int
from jaxlite.lax.dot_algorithms import (DotAlgorithm, DotAlgorithmPreset,
                                        algorithm_compute_types, is_algorithm)
from jaxlite.xla.evaluator_reductions import blocked_matmul
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["Precision", "PrecisionLike", "DotDimensionNumbers", "dot_general_p", "dot_general",
           "dot", "batch_matmul"]

DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                         tuple[tuple[int, ...], tuple[int, ...]]]


class Precision(enum.Enum):
    """Precision of a contraction on accelerators (mirrors `jax.lax.Precision`).

    It is carried as a parameter and has no effect on the CPU, where every dot product is
    computed in full precision of its accumulation type.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> "Precision | None":
        return _PRECISION_NAMES.get(value)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


# The types a `precision` or `dimension_numbers` argument may have (mirror `jax.lax`'s
# aliases of the same names).
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]

_PRECISION_NAMES: dict[Any, Precision] = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
}


def canonicalize_precision(precision: Any) -> Any:
    """One `Precision` per operand, a dot algorithm, or None (mirrors `jax.lax` precision
    handling)."""
    if precision is None:
        default = config.read("jax_default_matmul_precision")
        return None if default is None else canonicalize_precision(default)
    if isinstance(precision, Precision):
        return precision, precision
    if is_algorithm(precision):
        return precision
    if isinstance(precision, str) and precision in _PRECISION_NAMES:
        return _PRECISION_NAMES[precision], _PRECISION_NAMES[precision]
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    if isinstance(precision, (list, tuple)) and len(precision) == 2:
        pair = [canonicalize_precision(p) if p is not None else (Precision.DEFAULT,) * 2
                for p in precision]
        return pair[0][0], pair[1][0]  # type: ignore[index]
    raise ValueError(f"Precision argument must be one of: None, a lax.Precision, one of "
                     f"the names {sorted(_PRECISION_NAMES)}, a pair of those, a "
                     f"lax.DotAlgorithmPreset or its name, or a lax.DotAlgorithm; but got "
                     f"{precision!r}.")


# ---------------------------------------------------------------------- dtype rule

def _bit_width(dtype: np.dtype) -> int:
    if dtype == np.bool_:
        return 1
    return dtypes.itemsize_bits(dtypes.real_dtype(dtype))  # a complex type counts its parts


def _precision_rank(dtype: np.dtype) -> tuple:
    """A key ordering dtypes by how much they can represent, as XLA's result-type rule does."""
    real = dtypes.real_dtype(dtype)
    floating = dtypes.is_floating(real)
    info = dtypes.finfo(real) if floating else None
    return (dtypes.is_complex(dtype),
            int(info.maxexp) if info is not None else -1,
            int(info.nmant) if info is not None else -1,
            _bit_width(real),
            not dtypes.is_unsigned(real))


def _dot_result_dtype(lhs: np.dtype, rhs: np.dtype, preferred: np.dtype | None) -> np.dtype:
    lhs_rank, rhs_rank = _precision_rank(lhs), _precision_rank(rhs)
    if lhs_rank == rhs_rank and lhs != rhs:
        raise TypeError(f"lax.dot_general argument type error: {np.dtype(lhs).name}, "
                        f"{np.dtype(rhs).name}: neither type holds the other; convert one "
                        "operand with lax.convert_element_type.")
    result = np.dtype(lhs if lhs_rank >= rhs_rank else rhs)
    if preferred is None or preferred == result:
        return result
    if not dtypes.is_floating(result) and _bit_width(preferred) < _bit_width(result):
        raise TypeError("dot_general: `preferred_element_type` must not be narrower than the "
                        f"original type, got preferred_element_type of "
                        f"{np.dtype(preferred).name} for result type of {result.name}.")
    return np.dtype(preferred)


# ---------------------------------------------------------------------- shape rule

def _free_dims(ndim: int, contracting: Sequence[int], batch: Sequence[int]) -> list[int]:
    return [d for d in range(ndim) if d not in contracting and d not in batch]


def _check_side(side: str, aval: ShapedArray, contracting: tuple[int, ...],
                batch: tuple[int, ...]) -> None:
    if any(not 0 <= d < aval.ndim for d in contracting + batch):
        raise TypeError(
            f"dot_general requires {side} dimension numbers to be nonnegative and less than "
            f"the number of axes of the {side} value, got {side}_batch of {batch} and "
            f"{side}_contracting of {contracting} for {side} of rank {aval.ndim}.")
    for kind, dims in (("batch", batch), ("contracting", contracting)):
        if len(set(dims)) != len(dims):
            raise TypeError(f"dot_general requires {side} {kind} dimensions to be distinct, "
                            f"got {side}_{kind} {dims}.")
    if set(batch) & set(contracting):
        raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                        f"contracting dimensions, got {side}_batch {batch} and "
                        f"{side}_contracting {contracting}.")


def _dot_general_abstract_eval(lhs: ShapedArray, rhs: ShapedArray, *,
                               dimension_numbers: DimensionNumbers, precision: Any,
                               preferred_element_type: np.dtype | None) -> ShapedArray:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    _check_side("lhs", lhs, lhs_contract, lhs_batch)
    _check_side("rhs", rhs, rhs_contract, rhs_batch)
    if len(lhs_batch) != len(rhs_batch):
        raise TypeError(f"dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {lhs_batch} and rhs_batch {rhs_batch}.")
    if len(lhs_contract) != len(rhs_contract):
        raise TypeError(f"dot_general requires equal numbers of lhs and rhs contracting "
                        f"dimensions, got lhs_contracting {lhs_contract} and rhs_contracting "
                        f"{rhs_contract}.")
    lhs_batch_shape = tuple(lhs.shape[d] for d in lhs_batch)
    rhs_batch_shape = tuple(rhs.shape[d] for d in rhs_batch)
    if lhs_batch_shape != rhs_batch_shape:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions "
                        f"to have the same shape, got {lhs_batch_shape} and {rhs_batch_shape} "
                        f"(lhs shape {lhs.shape}, rhs shape {rhs.shape}).")
    lhs_contract_shape = tuple(lhs.shape[d] for d in lhs_contract)
    rhs_contract_shape = tuple(rhs.shape[d] for d in rhs_contract)
    if lhs_contract_shape != rhs_contract_shape:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {lhs_contract_shape} and {rhs_contract_shape} (lhs shape "
                        f"{lhs.shape}, rhs shape {rhs.shape}).")
    dtype = _dot_result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    shape = (lhs_batch_shape
             + tuple(lhs.shape[d] for d in _free_dims(lhs.ndim, lhs_contract, lhs_batch))
             + tuple(rhs.shape[d] for d in _free_dims(rhs.ndim, rhs_contract, rhs_batch)))
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# ---------------------------------------------------------------------- reference

def _accumulation_dtype(lhs: np.dtype, rhs: np.dtype, out: np.dtype) -> np.dtype:
    """The type numpy computes the products and sums in, before rounding to `out`."""
    exact = not (dtypes.is_inexact(lhs) or dtypes.is_inexact(rhs))
    if out == np.bool_ or (dtypes.is_integer(out) and exact):
        # Integer sums wrap modulo 2**bits, so a 64-bit sum cast down gives XLA's result.
        return np.dtype(np.uint64 if dtypes.is_unsigned(out) else np.int64)
    if dtypes.is_complex(lhs) or dtypes.is_complex(rhs):
        # A real result type keeps the real part of the complex contraction, as XLA does.
        return np.dtype(out if dtypes.is_complex(out) else np.complex128)
    if not dtypes.is_inexact(out):
        return np.dtype(np.float64)
    if out in (np.float16, dtypes.bfloat16) or dtypes.itemsize_bits(out) < 16:
        return np.dtype(np.float32)  # XLA's CPU dots accumulate low-precision floats in f32
    return np.dtype(out)


def _as_matrices(x: np.ndarray, batch: Sequence[int], free: Sequence[int],
                 contract: Sequence[int], contract_last: bool) -> np.ndarray:
    """`x` as a stack of matrices: (batch, free, contract) or (batch, contract, free)."""
    def size(dims: Sequence[int]) -> int:
        return int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    if contract_last:
        order, shape = (*batch, *free, *contract), (size(batch), size(free), size(contract))
    else:
        order, shape = (*batch, *contract, *free), (size(batch), size(contract), size(free))
    return np.transpose(x, order).reshape(shape)


def _dot_general_reference(lhs: np.ndarray, rhs: np.ndarray, *,
                           dimension_numbers: DimensionNumbers, precision: Any,
                           preferred_element_type: np.dtype | None) -> np.ndarray:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    out_dtype = _dot_result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    if is_algorithm(precision):
        lhs_type, rhs_type, compute = algorithm_compute_types(precision, lhs.dtype, rhs.dtype,
                                                              out_dtype)
        return _dot_general_reference(
            lhs.astype(lhs_type), rhs.astype(rhs_type), dimension_numbers=dimension_numbers,
            precision=None, preferred_element_type=compute).astype(out_dtype)
    acc = _accumulation_dtype(lhs.dtype, rhs.dtype, out_dtype)
    lhs_free = _free_dims(lhs.ndim, lhs_contract, lhs_batch)
    rhs_free = _free_dims(rhs.ndim, rhs_contract, rhs_batch)
    a = _as_matrices(lhs, lhs_batch, lhs_free, lhs_contract, True)
    b = _as_matrices(rhs, rhs_batch, rhs_free, rhs_contract, False)
    product = blocked_matmul(a.astype(acc), b.astype(acc))  # accurate long contractions
    if dtypes.is_complex(acc) and not dtypes.is_complex(out_dtype):
        product = product.real
    shape = (tuple(lhs.shape[d] for d in lhs_batch) + tuple(lhs.shape[d] for d in lhs_free)
             + tuple(rhs.shape[d] for d in rhs_free))
    product = product.reshape(shape)
    if out_dtype == np.bool_:
        return product != 0
    if dtypes.is_integer(out_dtype) and dtypes.is_inexact(product.dtype):
        return _float_to_int(product, out_dtype)  # XLA's convert: NaN to 0, saturating
    return product.astype(out_dtype)


# ---------------------------------------------------------------------- jvp

def _dot_general_jvp(primals: Sequence[Any], tangents: Sequence[Any],
                     **params: Any) -> tuple[Any, Any]:
    lhs, rhs = primals
    lhs_dot, rhs_dot = tangents
    out = dot_general_p.bind(lhs, rhs, **params)
    out_aval = get_aval(out)
    tangent: Any = Zero(tangent_aval(out_aval))
    if not dtypes.is_inexact(out_aval.dtype):
        return out, tangent
    # Bilinear: the tangent is the sum of the products with one operand perturbed.
    if not isinstance(lhs_dot, Zero):
        tangent = add_tangents(tangent, _matching(dot_general_p.bind(lhs_dot, rhs, **params),
                                                  out_aval))
    if not isinstance(rhs_dot, Zero):
        tangent = add_tangents(tangent, _matching(dot_general_p.bind(lhs, rhs_dot, **params),
                                                  out_aval))
    return out, tangent


def _matching(x: Any, aval: ShapedArray) -> Any:
    """`x` with the dtype and weak type of `aval` (tangents must match their primal)."""
    x_aval = get_aval(x)
    if x_aval.dtype == aval.dtype and x_aval.weak_type == aval.weak_type:
        return x
    return _convert_element_type(x, aval.dtype, weak_type=aval.weak_type)


# ---------------------------------------------------------------------- transpose

def _transpose_operand(ct: Any, other: Any, x_aval: ShapedArray, x_contract: Sequence[int],
                       other_contract: Sequence[int], x_batch: Sequence[int],
                       other_batch: Sequence[int], other_free_in_ct: Sequence[int],
                       precision: Any) -> Any:
    """The cotangent of operand x of a dot_general whose output cotangent is `ct`.

    Contracting `ct` with the other operand over the other's free dimensions (and batching
    over the batch dimensions) gives an array laid out as (batch, x free, x contracting in
    the order of the other operand's matching dimensions); a transpose puts it in x's layout.
    """
    other_ndim = len(get_aval(other).shape)
    other_free = _free_dims(other_ndim, other_contract, other_batch)
    n_batch = len(x_batch)
    dims = ((tuple(other_free_in_ct), tuple(other_free)),
            (tuple(range(n_batch)), tuple(other_batch)))
    product = dot_general_p.bind(ct, other, dimension_numbers=dims, precision=precision,
                                 preferred_element_type=None)
    x_free = _free_dims(x_aval.ndim, x_contract, x_batch)
    contract_order = np.argsort(other_contract, kind="stable")
    layout = list(x_batch) + x_free + [x_contract[i] for i in contract_order]
    result = transpose(product, tuple(int(i) for i in np.argsort(layout)))
    return _matching(result, x_aval)


def _dot_general_transpose(ct: Any, lhs: Any, rhs: Any, *,
                           dimension_numbers: DimensionNumbers, precision: Any,
                           preferred_element_type: np.dtype | None) -> list[Any]:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_aval = lhs.aval if is_undefined(lhs) else get_aval(lhs)
    rhs_aval = rhs.aval if is_undefined(rhs) else get_aval(rhs)
    n_batch = len(lhs_batch)
    n_lhs_free = lhs_aval.ndim - len(lhs_contract) - n_batch
    n_rhs_free = rhs_aval.ndim - len(rhs_contract) - n_batch
    lhs_free_in_ct = range(n_batch, n_batch + n_lhs_free)
    rhs_free_in_ct = range(n_batch + n_lhs_free, n_batch + n_lhs_free + n_rhs_free)
    if is_undefined(lhs) and is_undefined(rhs):
        raise ValueError("dot_general is bilinear, not linear: it cannot be transposed with "
                         "respect to both operands at once.")
    if is_undefined(lhs):
        lhs_ct = _transpose_operand(ct, rhs, lhs_aval, lhs_contract, rhs_contract, lhs_batch,
                                    rhs_batch, rhs_free_in_ct, precision)
        return [lhs_ct, None]
    rhs_ct = _transpose_operand(ct, lhs, rhs_aval, rhs_contract, lhs_contract, rhs_batch,
                                lhs_batch, lhs_free_in_ct, precision)
    return [None, rhs_ct]


# ---------------------------------------------------------------------- batching

def _shifted(dims: Sequence[int], inserted: int) -> tuple[int, ...]:
    """Dimension indices after a new axis is inserted at position `inserted`."""
    return tuple(d + 1 if d >= inserted else d for d in dims)


def _dot_general_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                       dimension_numbers: DimensionNumbers, precision: Any,
                       preferred_element_type: np.dtype | None) -> tuple[Any, int]:
    lhs, rhs = args
    lhs_dim, rhs_dim = dims
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    n_batch = len(lhs_batch)
    if lhs_dim is not None and rhs_dim is not None:
        # Both mapped: the mapped axis becomes one more (leading) batch dimension.
        new = ((_shifted(lhs_contract, lhs_dim), _shifted(rhs_contract, rhs_dim)),
               ((lhs_dim,) + _shifted(lhs_batch, lhs_dim),
                (rhs_dim,) + _shifted(rhs_batch, rhs_dim)))
        out_dim = 0
    elif lhs_dim is not None:
        # Only the lhs mapped: its mapped axis is one more free lhs dimension.
        new = ((_shifted(lhs_contract, lhs_dim), rhs_contract),
               (_shifted(lhs_batch, lhs_dim), rhs_batch))
        free = _free_dims(np.ndim(lhs), new[0][0], new[1][0])
        out_dim = n_batch + free.index(lhs_dim)
    else:
        assert rhs_dim is not None
        new = ((lhs_contract, _shifted(rhs_contract, rhs_dim)),
               (lhs_batch, _shifted(rhs_batch, rhs_dim)))
        free = _free_dims(np.ndim(rhs), new[0][1], new[1][1])
        n_lhs_free = np.ndim(lhs) - len(lhs_contract) - n_batch
        out_dim = n_batch + n_lhs_free + free.index(rhs_dim)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=new, precision=precision,
                             preferred_element_type=preferred_element_type)
    return out, out_dim


# ---------------------------------------------------------------------- lowering

def _dot_compute_dtype(lhs: np.dtype, rhs: np.dtype, out: np.dtype) -> np.dtype:
    """The dtype both operands are converted to and the dot computes in, before the result
    becomes `out` (the accumulation type of the reference)."""
    if out == np.bool_:
        return np.dtype(np.int32)  # true where some product is nonzero
    if dtypes.is_integer(out) and not (dtypes.is_inexact(lhs) or dtypes.is_inexact(rhs)):
        return out  # integer sums wrap modulo 2**bits: the output type is enough
    natural = _dot_result_dtype(lhs, rhs, None)
    if dtypes.is_complex(natural) and not dtypes.is_complex(out):
        return natural  # the real part of the complex contraction
    if not dtypes.is_inexact(out):
        return natural
    return hlo.widen_low_precision(out)


def _dot_general_lower(ctx: LoweringContext, lhs: HloInstruction, rhs: HloInstruction, *,
                       dimension_numbers: DimensionNumbers, precision: Any,
                       preferred_element_type: np.dtype | None) -> HloInstruction:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    out_shape = ctx.shape(ctx.avals_out[0])
    out_dtype = out_shape.dtype
    if is_algorithm(precision):
        # The algorithm's operand and result types, as JAX converts them in its lowering.
        lhs_type, rhs_type, out_dtype = algorithm_compute_types(
            precision, lhs.shape.dtype, rhs.shape.dtype, out_dtype)
        lhs, rhs = hlo.convert(ctx, lhs, lhs_type), hlo.convert(ctx, rhs, rhs_type)
    compute = _dot_compute_dtype(lhs.shape.dtype, rhs.shape.dtype, out_dtype)
    product = hlo.emit(ctx, Opcode.DOT, out_shape.with_dtype(compute),
                       (hlo.convert(ctx, lhs, compute), hlo.convert(ctx, rhs, compute)),
                       lhs_contracting=tuple(lhs_contract), rhs_contracting=tuple(rhs_contract),
                       lhs_batch=tuple(lhs_batch), rhs_batch=tuple(rhs_batch))
    return hlo.convert(ctx, hlo.convert(ctx, product, out_dtype), out_shape.dtype)



dot_general_p = Primitive("dot_general")
dot_general_p.abstract_eval = _dot_general_abstract_eval
dot_general_p.reference = _dot_general_reference
dot_general_p.jvp = _dot_general_jvp
dot_general_p.transpose = _dot_general_transpose
dot_general_p.batch = _dot_general_batch
dot_general_p.lower = _dot_general_lower


# ---------------------------------------------------------------------- wrappers

def _index_tuple(dims: Any) -> tuple[int, ...]:
    if isinstance(dims, (int, np.integer)):
        return (int(dims),)
    return tuple(int(d) for d in dims)


def _canonical_dimension_numbers(dimension_numbers: Any) -> DimensionNumbers:
    try:
        (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError("dot_general: dimension_numbers must be of the form "
                        "((lhs_contracting_dims, rhs_contracting_dims), (lhs_batch_dims, "
                        f"rhs_batch_dims)), got {dimension_numbers!r}.") from None
    return ((_index_tuple(lhs_contract), _index_tuple(rhs_contract)),
            (_index_tuple(lhs_batch), _index_tuple(rhs_batch)))


def _operands(lhs: Any, rhs: Any) -> tuple[Any, Any]:
    """Python scalars join the other operand's dtype as weak-typed values."""
    def scalar(x: Any) -> bool:
        return dtypes.is_python_scalar(x) and not isinstance(x, bool)
    if scalar(lhs):
        target = get_aval(lhs).dtype if scalar(rhs) else get_aval(rhs).dtype
        lhs = _convert_element_type(lhs, target, weak_type=True)
    if scalar(rhs):
        rhs = _convert_element_type(rhs, get_aval(lhs).dtype, weak_type=True)
    return lhs, rhs


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, *, out_sharding: Any = None) -> Any:
    """General tensor contraction (mirrors `jax.lax.dot_general`).

    Parameters
    ----------
    lhs, rhs : arrays.
    dimension_numbers : ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
    precision : None, a `Precision`, its name, or a pair of those (no effect on the CPU);
        or a `DotAlgorithmPreset` (or its name), whose operand and accumulation types the
        CPU computes with, as JAX's does (see `jaxlite.lax.dot_algorithms`).
    preferred_element_type : the output (and accumulation) dtype, e.g. int32 for int8
        operands.

    Returns
    -------
    The contraction, with dimensions (batch, lhs free, rhs free).

    `out_sharding`: see `dot`. Differences from JAX: a Python scalar operand takes the
    other operand's dtype (weakly typed).
    """
    return dot(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
               preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def dot(lhs: Any, rhs: Any, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """Dot product or general contraction (mirrors `jax.lax.dot`).

    Without `dimension_numbers`, `lhs` and `rhs` must be vectors or matrices whose last and
    first dimensions agree: vector-vector, matrix-vector, vector-matrix and matrix-matrix
    products. See `dot_general` for the other parameters.

    `out_sharding` is the result's sharding on a mesh of Explicit axes (where contracting
    dimensions split on both sides need one). Differences from JAX: a Python scalar operand
    takes the other operand's dtype (weakly typed).
    """
    lhs, rhs = _operands(lhs, rhs)
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    if dimension_numbers is None:
        if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2
                and lhs_shape[-1] == rhs_shape[0]):
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple "
                "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
                f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}")
        dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    preferred = (None if preferred_element_type is None else
                 dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "dot"))
    with requested_sharding(out_sharding):  # (the result's type on an Explicit mesh)
        return dot_general_p.bind(
            lhs, rhs, dimension_numbers=_canonical_dimension_numbers(dimension_numbers),
            precision=canonicalize_precision(precision), preferred_element_type=preferred)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products batched over all but the last two dimensions (`jax.lax.batch_matmul`).

    Both operands must have the same rank, at least 2.
    """
    lhs_ndim, rhs_ndim = np.ndim(lhs), np.ndim(rhs)
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    if lhs_ndim != rhs_ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    batch = tuple(range(lhs_ndim - 2))
    return dot_general(lhs, rhs, (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)),
                       precision=precision)
