"""Dot-product algorithms: `DotAlgorithm`, `DotAlgorithmPreset`, and what they mean on the
CPU.

Mirrors `jax.lax.DotAlgorithm` and `jax.lax.DotAlgorithmPreset`. Passed as the `precision`
of a dot, an algorithm names the types the operands are converted to and the type the
products accumulate in. As in JAX, the CPU runs only the presets DEFAULT, F16_F16_F16,
F32_F32_F32, F64_F64_F64, BF16_BF16_F32, BF16_BF16_F32_X3 and BF16_BF16_F32_X6, and refuses
the others (and explicit `DotAlgorithm`s) when the dot is computed; a preset converts an
operand whose type it does not support to its first supported type, and computes in the
output type when it supports it, else in its first supported output type (so F64_F64_F64
computes float32 operands in float64, and F16_F16_F16 rounds them to float16).
"""
from __future__ import annotations

import enum
from typing import Any, NamedTuple

import numpy as np

from jaxlite.core import dtypes

__all__ = ["DotAlgorithm", "DotAlgorithmPreset"]


class DotAlgorithm(NamedTuple):
    """The operand and accumulation types of a dot product and how many passes it makes
    (mirrors `jax.lax.DotAlgorithm`)."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


_F8 = ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
       "ANY_F8_ANY_F8_ANY_FAST_ACCUM")


class DotAlgorithmPreset(enum.Enum):
    """The named dot-product algorithms (mirrors `jax.lax.DotAlgorithmPreset`)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple | None:
        """The operand types this algorithm takes as they are (None: any)."""
        if self.name == "DEFAULT" or self.name in _F8:
            return None
        if self.name.startswith("F16_"):
            return (np.dtype(np.float16),)
        if self.name.startswith("BF16_"):
            return (np.dtype(dtypes.bfloat16), np.dtype(np.float32))
        if self.name == "F64_F64_F64":
            return (np.dtype(np.float64),)
        return (np.dtype(np.float32),)

    @property
    def supported_rhs_types(self) -> tuple | None:
        return self.supported_lhs_types

    @property
    def accumulation_type(self) -> np.dtype | None:
        """The type the products accumulate in (None: the natural one)."""
        if self.name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        special = {"F16_F16_F16": np.float16, "BF16_BF16_BF16": dtypes.bfloat16,
                   "F64_F64_F64": np.float64}
        return np.dtype(special.get(self.name, np.float32))

    def supported_output_types(self, lhs_dtype: Any, rhs_dtype: Any) -> tuple | None:
        """The result types the algorithm can produce for these operand types."""
        if self.name in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
            return (np.dtype(np.float32), np.dtype(np.float16), np.dtype(dtypes.bfloat16))
        narrow = {"F16_F16_F32": np.float16, "BF16_BF16_F32": dtypes.bfloat16}.get(self.name)
        if narrow is not None:
            both_narrow = dtypes.promote_types(lhs_dtype, rhs_dtype) == np.dtype(narrow)
            return ((np.dtype(np.float32), np.dtype(narrow)) if both_narrow
                    else (np.dtype(np.float32),))
        accumulation = self.accumulation_type
        return None if accumulation is None else (accumulation,)


_CPU_PRESETS = frozenset({"DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64",
                          "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"})


def is_algorithm(precision: Any) -> bool:
    return isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))


def algorithm_compute_types(algorithm: Any, lhs: np.dtype, rhs: np.dtype,
                            out: np.dtype) -> tuple[np.dtype, np.dtype, np.dtype]:
    """(lhs type, rhs type, result type) the dot is computed with, on the CPU; raises
    JAX's ValueError for the algorithms the CPU does not run."""
    if not (isinstance(algorithm, DotAlgorithmPreset) and algorithm.name in _CPU_PRESETS):
        raise ValueError(f"The precision '{algorithm}' is not supported by dot_general on CPU")

    def pick(dtype: np.dtype, supported: tuple | None) -> np.dtype:
        return np.dtype(dtype) if supported is None or np.dtype(dtype) in supported \
            else supported[0]
    lhs_type = pick(lhs, algorithm.supported_lhs_types)
    rhs_type = pick(rhs, algorithm.supported_rhs_types)
    return lhs_type, rhs_type, pick(out, algorithm.supported_output_types(lhs_type, rhs_type))
