"""The instructions the gpu backend runs with its array module `xp` (CuPy on a GPU, numpy
under the interpreter launcher) rather than with generated kernels: layout changes and
dot products. Values are flat arrays in their shape's memory order (its layout), as the
kernels read and write them.

- `dot`: XLA's dot semantics (batch, then lhs free, then rhs free dimensions; products
  summed in `accumulation_dtype`, then rounded to the result type) as one batched
  `xp.matmul`, which CuPy runs through cuBLAS / hipBLAS for floating-point and complex
  types (cuBLAS's complex GEMMs) and through its own generated kernel for integers.
  Integer products are summed in 64-bit *unsigned* integers, whose arithmetic wraps
  modulo 2**64 by definition (a signed overflow is undefined in C, which CuPy's kernel
  is written in); the cast to the result type keeps the low bits, which is JAX's
  wrap-around in the result type. Dots whose types `xp` does not store natively (CuPy has
  no bfloat16), and those of bools, go elsewhere (see `dot_supported`).
- `copy`, `transpose`, `reshape`: a move through the logical order (`to_logical`,
  `to_memory`); `bitcast` keeps the memory as it is.
(Dynamic slices and updates, gathers and scatters are kernels: `update_kernels`.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.xla.evaluator_reductions import accumulation_dtype
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["LAYOUT_OPCODES", "canonical_operands", "dot", "dot_supported", "layout_op",
           "summing_dtype", "to_logical", "to_memory"]

LAYOUT_OPCODES = (Opcode.BITCAST, Opcode.COPY, Opcode.TRANSPOSE, Opcode.RESHAPE)


def _major_to_minor(shape: Shape) -> tuple[int, ...]:
    return tuple(reversed(shape.layout or ()))


def to_memory(xp: Any, logical: Any, shape: Shape) -> Any:
    """The flat, contiguous memory of a logical array laid out as `shape` says."""
    order = _major_to_minor(shape)
    if order != tuple(range(len(order))):
        logical = xp.transpose(logical, order)
    return xp.ascontiguousarray(logical).reshape(-1)


def to_logical(xp: Any, flat: Any, shape: Shape) -> Any:
    """The logical array (possibly a strided view) of flat memory laid out as `shape`."""
    order = _major_to_minor(shape)
    physical = flat.reshape([shape.dims[d] for d in order])
    if order == tuple(range(len(order))):
        return physical
    return xp.transpose(physical, tuple(int(d) for d in np.argsort(order)))


def layout_op(xp: Any, inst: HloInstruction, flat: Any) -> Any:
    """A bitcast, copy, transpose or reshape of the flat array `flat`."""
    source = inst.operands[0].shape
    if inst.opcode is Opcode.BITCAST or (inst.opcode is Opcode.COPY
                                         and source.layout == inst.shape.layout):
        return flat  # buffers are never written after they are made, so no copy
    logical = to_logical(xp, flat, source)
    if inst.opcode is Opcode.TRANSPOSE:
        logical = xp.transpose(logical, tuple(inst.attr("dimensions")))
    elif inst.opcode is Opcode.RESHAPE:
        logical = xp.ascontiguousarray(logical).reshape(inst.shape.dims)
    return to_memory(xp, logical, inst.shape)


def dot_supported(inst: HloInstruction, storage_dtype: Any) -> bool:
    """Whether `dot` runs `inst` with an `xp` whose storage type of a dtype is
    `storage_dtype(dtype)`: floating-point products in float32 or float64, complex ones
    in a complex type, integer ones of integer operands (summed with wrap-around)."""
    lhs, rhs = (o.shape.dtype for o in inst.operands)
    out = inst.shape.dtype
    if any(np.dtype(storage_dtype(d)) != np.dtype(d) for d in (lhs, rhs, out)):
        return False
    accumulation = np.dtype(accumulation_dtype(lhs, rhs, out))
    if out.kind == "f":
        return accumulation in (np.float32, np.float64)
    if out.kind == "c":
        return accumulation.kind == "c"
    return out.kind in "iu" and accumulation.kind in "iu"


def summing_dtype(accumulation: Any) -> np.dtype:
    """The type a product's sums are computed in on the device: `accumulation`, except
    that integer sums use 64-bit unsigned integers (they wrap by definition; see the
    module docstring)."""
    accumulation = np.dtype(accumulation)
    return np.dtype(np.uint64) if accumulation.kind in "iu" else accumulation


def canonical_operands(xp: Any, inst: HloInstruction, lhs_flat: Any,
                       rhs_flat: Any) -> tuple[Any, Any]:
    """A dot's operands as (batch, m, k) and (batch, k, n) arrays (batch, then free, then
    contracting dimensions of lhs; batch, contracting, free of rhs)."""
    lhs = to_logical(xp, lhs_flat, inst.operands[0].shape)
    rhs = to_logical(xp, rhs_flat, inst.operands[1].shape)
    lc, rc = list(inst.attr("lhs_contracting", ())), list(inst.attr("rhs_contracting", ()))
    lb, rb = list(inst.attr("lhs_batch", ())), list(inst.attr("rhs_batch", ()))
    lf = [d for d in range(lhs.ndim) if d not in lc + lb]
    rf = [d for d in range(rhs.ndim) if d not in rc + rb]

    def size(x: Any, dims: list[int]) -> int:
        return int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    a = xp.transpose(lhs, lb + lf + lc).reshape(size(lhs, lb), size(lhs, lf), size(lhs, lc))
    b = xp.transpose(rhs, rb + rc + rf).reshape(size(rhs, rb), size(rhs, rc), size(rhs, rf))
    return a, b


def dot(xp: Any, inst: HloInstruction, lhs_flat: Any, rhs_flat: Any) -> Any:
    """XLA's dot (dot_general) of two flat operands, as one batched matmul."""
    a, b = canonical_operands(xp, inst, lhs_flat, rhs_flat)
    acc = summing_dtype(accumulation_dtype(a.dtype, b.dtype, inst.shape.dtype))
    product = xp.matmul(a.astype(acc), b.astype(acc)).reshape(inst.shape.dims)
    return to_memory(xp, product.astype(inst.shape.dtype), inst.shape)
