"""Block-scaled matrix products: `scaled_dot`.

Mirrors `jax.lax.scaled_dot` as XLA computes it on the CPU (its decomposition): each
operand is rounded to bfloat16 and multiplied, in bfloat16, by its scale repeated over
blocks of its contracting dimensions (a scale of shape s along a contracting dimension of
size n covers blocks of n / s elements); the scaled operands meet in a `dot_general` whose
result type is `preferred_element_type`, bfloat16 by default. Missing scales are ones.

Differences from JAX: JAX has no derivative for scaled_dot; this composition has one.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.lax.arithmetic import mul
from jaxlite.lax.broadcast import broadcast_in_dim, reshape
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.dot import dot_general

__all__ = ["scaled_dot"]

BF16 = np.dtype(dtypes.bfloat16)


def _check_scale(side: str, operand: ShapedArray, scale: ShapedArray,
                 contracting: Sequence[int]) -> None:
    for i, size in enumerate(operand.shape):
        if i in contracting:
            if size % scale.shape[i]:
                raise TypeError(f"{side} contracting dim {i} of size {size} must be "
                                f"divisible by its scale's dim size {scale.shape[i]}.")
            if size // scale.shape[i] < 2:
                raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim "
                                f"size ({size // scale.shape[i]}) must be at least 2.")
        elif scale.shape[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                            f"{scale.shape[i]}.")


def _check(lhs: ShapedArray, rhs: ShapedArray, lhs_scale: ShapedArray,
           rhs_scale: ShapedArray, dimension_numbers: Any) -> None:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    ranks = [lhs.ndim, rhs.ndim, lhs_scale.ndim, rhs_scale.ndim]
    if len(set(ranks)) != 1:
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: {ranks[0]} "
                        f"rhs rank: {ranks[1]} lhs_scale rank: {ranks[2]} rhs_scale rank: "
                        f"{ranks[3]}.")
    if len(lhs_batch) != len(rhs_batch):
        raise TypeError("LHS and RHS must have the same number of batch dimensions, got "
                        f"{len(lhs_batch)} and {len(rhs_batch)}.")
    if len(lhs_contract) != len(rhs_contract):
        raise TypeError("LHS and RHS must have the same number of contracting dimensions, "
                        f"got {len(lhs_contract)} and {len(rhs_contract)}.")
    for i, j in zip(lhs_batch, rhs_batch):
        sizes = {lhs.shape[i], rhs.shape[j], lhs_scale.shape[i], rhs_scale.shape[j]}
        if len(sizes) != 1:
            raise TypeError("All input tensors must have the same batch dimension size for "
                            f"batch dims ({i}, {j}).")
    for i, j in zip(lhs_contract, rhs_contract):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match "
                            f"RHS contracting dim {j} of size {rhs.shape[j]}.")
    _check_scale("LHS", lhs, lhs_scale, lhs_contract)
    _check_scale("RHS", rhs, rhs_scale, rhs_contract)


def _scaled(operand: Any, scale: Any, contracting: Sequence[int]) -> Any:
    """bf16(operand) * bf16(scale repeated over the blocks of the contracting dims)."""
    shape = tuple(get_aval(operand).shape)
    scale_shape = tuple(get_aval(scale).shape)
    # Each contracting dim i of the scale becomes (scale dim, block): broadcast, then merge.
    wide, dims = [], []
    for i, (n, s) in enumerate(zip(shape, scale_shape)):
        dims.append(len(wide))
        wide += [s, n // s] if i in contracting else [s]
    repeated = reshape(broadcast_in_dim(convert_element_type(scale, BF16), tuple(wide),
                                        tuple(dims)), shape)
    return mul(convert_element_type(operand, BF16), repeated)


def _ones_scale(operand: Any, contracting: Sequence[int]) -> Any:
    shape = [1 if i in contracting else n for i, n in enumerate(get_aval(operand).shape)]
    return broadcast_in_dim(np.ones((), BF16), tuple(shape), ())


def scaled_dot(lhs: Any, rhs: Any, *, lhs_scale: Any = None, rhs_scale: Any = None,
               dimension_numbers: Any = None, preferred_element_type: Any = None) -> Any:
    """A dot_general of block-scaled bfloat16 operands (mirrors `jax.lax.scaled_dot`); see
    the module docstring. The default dimension numbers contract the last dimension of
    `lhs` with the second to last of `rhs`, batching the leading ones."""
    if dimension_numbers is None:
        n = np.ndim(lhs)
        if n < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lhs_contract, rhs_contract), _ = dimension_numbers
    if lhs_scale is None:
        lhs_scale = _ones_scale(lhs, lhs_contract)
    if rhs_scale is None:
        rhs_scale = _ones_scale(rhs, rhs_contract)
    _check(get_aval(lhs), get_aval(rhs), get_aval(lhs_scale), get_aval(rhs_scale),
           dimension_numbers)
    element_type = dtypes.check_and_canonicalize_user_dtype(
        BF16 if preferred_element_type is None else preferred_element_type, "scaled_dot")
    return dot_general(_scaled(lhs, lhs_scale, lhs_contract),
                       _scaled(rhs, rhs_scale, rhs_contract), dimension_numbers,
                       preferred_element_type=element_type)
