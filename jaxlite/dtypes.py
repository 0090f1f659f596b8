"""Dtypes and JAX's type promotion (mirrors `jax.dtypes`).

A thin face over `jaxlite.core.dtypes`, where promotion, canonicalization and the dtype
lattice are implemented.
"""
from __future__ import annotations

from typing import Any

from jaxlite.core import dtypes as _core
from jaxlite.core.dtypes import (TypePromotionError, bfloat16, finfo, float0, iinfo,
                                 issubdtype, itemsize_bits, result_type, scalar_type_of)

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "finfo", "float0", "iinfo",
           "issubdtype", "itemsize_bits", "result_type", "scalar_type_of"]


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> Any:
    """The dtype jaxlite stores for `dtype`: 64-bit types become 32-bit unless
    `jax_enable_x64` is on (mirrors `jax.dtypes.canonicalize_dtype`)."""
    return _core.canonicalize_dtype(dtype)
