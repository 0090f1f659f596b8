"""What the rules of the linear-algebra primitives share: matrix helpers written with lax
(for the derivative rules), the dtype and shape checks, the batching rule (every
decomposition maps over leading dimensions), and the lowering to a custom-call of the
primitive's numpy kernel (see `linalg_kernels`).
"""
from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.interpreters.batching import batch_at_front
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.arithmetic import add, conj, imag, mul, real, sub
from jaxlite.lax.broadcast import broadcast_in_dim, reduce_sum, transpose
from jaxlite.lax.comparisons import eq, ge
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.dot import dot_general
from jaxlite.lax.selection import select
from jaxlite.lax.shape_ops import broadcasted_iota
from jaxlite.lax.linalg_kernels import target_name
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["LINALG_DTYPES", "check_matrix", "check_dtype", "batch_leading", "lower_kernel",
           "kernel_rules",
           "mT", "adjoint", "matmul", "tril", "triu", "eye_like", "diagonal", "diag_embed",
           "is_complex", "real_part_of", "imag_part_of"]

LINALG_DTYPES = tuple(np.dtype(d) for d in (np.float32, np.float64, np.complex64,
                                            np.complex128))


# --------------------------------------------------------------------------- checks

def check_dtype(name: str, arg: str, aval: ShapedArray, position: int = 0) -> None:
    """`aval`'s dtype is one the kernels take; JAX's error otherwise: NotImplementedError
    for float16 and bfloat16 (JAX accepts them, then finds no CPU kernel when it lowers),
    TypeError for the rest."""
    dtype = np.dtype(aval.dtype)
    if dtype not in LINALG_DTYPES and dtypes.is_inexact(dtype):
        raise NotImplementedError(f"Unsupported dtype {dtype.name}. (lax.linalg.{name}: no "
                                  f"CPU kernel takes {dtype.name}; convert {arg} to "
                                  "float32 first.)")
    if dtype not in LINALG_DTYPES:
        raise TypeError(f"{name} does not accept dtype {np.dtype(aval.dtype).name} at position "
                        f"{position}. Accepted dtypes at position {position} are subtypes of "
                        f"floating, complexfloating (lax.linalg.{name}: {arg} must be float32, "
                        f"float64, complex64 or complex128; convert it first, "
                        f"x.astype(jnp.float32)).")


def check_matrix(name: str, arg: str, aval: ShapedArray, square: bool = False,
                 position: int = 0) -> None:
    """`aval` is a batch of (square) matrices of a dtype the kernels take; JAX's error
    types and words (TypeError for a rank below 2, ValueError for a non-square matrix)."""
    check_dtype(name, arg, aval, position)
    if aval.ndim < 2:
        raise TypeError(f"Input {position} to {name} must have rank at least 2, but got "
                        f"shape={aval.shape} (lax.linalg.{name}: {arg} must be a batch of "
                        f"matrices).")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"The input to {name} must be a square matrix. Got shape "
                         f"{aval.shape[-2:]}. (lax.linalg.{name}: {arg} must be a batch of "
                         f"square matrices, got shape {aval.shape}.)")


# ------------------------------------------------------------------------- batching

def batch_leading(primitive: Any) -> Any:
    """The batch rule of a primitive that maps over the leading dimensions of all its
    operands: every batch axis is moved to the front."""
    def rule(axis_size: int, args: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[Any, Any]:
        out = primitive.bind(*batch_at_front(args, dims, axis_size), **params)
        return out, ([0] * len(out) if primitive.multiple_results else 0)
    rule.__name__ = f"batch_{primitive.name}"
    return rule


# ------------------------------------------------------------------------- lowering

def lower_kernel(kernel: str, multiple_results: bool) -> Any:
    """The lowering rule that calls the numpy kernel `kernel` through a custom-call whose
    backend_config holds the primitive's parameters (JSON); several outputs become a tuple
    result. `multiple_results`: whether the primitive returns a list."""
    def rule(ctx: LoweringContext, *operands: HloInstruction,
             **params: Any) -> HloInstruction | list[HloInstruction]:
        shapes = [ctx.shape(a) for a in ctx.avals_out]
        shape = shapes[0] if len(shapes) == 1 else Shape.tuple(shapes)
        config = json.dumps(params, sort_keys=True)
        call = ctx.builder.add(Opcode.CUSTOM_CALL, shape, operands,
                               {"target": target_name(kernel), "backend_config": config,
                                "custom_call_has_side_effect": False})  # a pure kernel
        if len(shapes) == 1:
            return [call] if multiple_results else call
        return [hlo.get_tuple_element(ctx, call, i) for i in range(len(shapes))]
    rule.__name__ = f"lower_{kernel}"
    return rule


def kernel_rules(primitive: Any, reference: Any) -> None:
    """The rules every linalg primitive gets from its numpy kernel `reference`: eager
    evaluation with it, batching over leading dimensions, and lowering to a custom-call of
    it (target `jaxlite_lapack_<primitive name>`)."""
    primitive.reference = reference
    primitive.batch = batch_leading(primitive)
    primitive.lower = lower_kernel(primitive.name, primitive.multiple_results)


# ---------------------------------------------------------------- matrix helpers

def is_complex(x: Any) -> bool:
    return dtypes.is_complex(get_aval(x).dtype)


def mT(x: Any) -> Any:
    """The matrices of `x` transposed (last two axes swapped)."""
    ndim = len(get_aval(x).shape)
    return transpose(x, tuple(range(ndim - 2)) + (ndim - 1, ndim - 2))


def adjoint(x: Any) -> Any:
    """The conjugate transpose of the matrices of `x`."""
    return mT(conj(x)) if is_complex(x) else mT(x)


def matmul(a: Any, b: Any) -> Any:
    """Matrix products batched over the leading dimensions (equal in a and b)."""
    nd = len(get_aval(a).shape)
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _band_mask(shape: Sequence[int], k: int, lower: bool) -> Any:
    rows = broadcasted_iota(np.int32, tuple(shape), len(shape) - 2)
    cols = broadcasted_iota(np.int32, tuple(shape), len(shape) - 1)
    shifted = add(rows, np.int32(k)) if lower else sub(cols, np.int32(k))
    return ge(shifted, cols) if lower else ge(shifted, rows)


def tril(x: Any, k: int = 0) -> Any:
    """The entries of `x` on and below diagonal k, zeros elsewhere."""
    aval = get_aval(x)
    return select(_band_mask(aval.shape, k, True), x, np.zeros((), aval.dtype))


def triu(x: Any, k: int = 0) -> Any:
    """The entries of `x` on and above diagonal k, zeros elsewhere."""
    aval = get_aval(x)
    return select(_band_mask(aval.shape, k, False), x, np.zeros((), aval.dtype))


def eye_like(shape: Sequence[int], dtype: Any) -> Any:
    """Identity matrices of the trailing two dimensions of `shape`, broadcast to it."""
    rows = broadcasted_iota(np.int32, tuple(shape), len(shape) - 2)
    cols = broadcasted_iota(np.int32, tuple(shape), len(shape) - 1)
    return convert_element_type(eq(rows, cols), dtype)


def diagonal(x: Any) -> Any:
    """The main diagonals of the (square) matrices of `x`: shape (..., n)."""
    aval = get_aval(x)
    return reduce_sum(mul(x, eye_like(aval.shape, aval.dtype)), (len(aval.shape) - 1,))


def diag_embed(d: Any) -> Any:
    """Diagonal matrices with the vectors of `d` on their diagonals."""
    aval = get_aval(d)
    n = aval.shape[-1]
    shape = aval.shape + (n,)
    columns = broadcast_in_dim(d, shape, tuple(range(len(aval.shape))))
    return mul(columns, eye_like(shape, aval.dtype))


def real_part_of(x: Any) -> Any:
    return real(x) if is_complex(x) else x


def imag_part_of(x: Any) -> Any:
    return imag(x) if is_complex(x) else sub(x, x)
