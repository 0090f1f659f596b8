"""Dtypes and JAX's type promotion (mirrors `jax.dtypes`).

A thin face over `jaxlite.core.dtypes`, where promotion, canonicalization and the dtype
lattice are implemented.
"""
from __future__ import annotations

from typing import Any

from jaxlite.core import dtypes as _core
from jaxlite.core.dtypes import (ExtendedDType, TypePromotionError, bfloat16, extended, finfo,
                                 float0, iinfo, issubdtype, itemsize_bits, prng_key,
                                 result_type, scalar_type_of)

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
           "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
           "scalar_type_of"]


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> Any:
    """The dtype jaxlite stores for `dtype`: 64-bit types become 32-bit unless
    `jax_enable_x64` is on (mirrors `jax.dtypes.canonicalize_dtype`). An extended dtype
    (`key<fry>`) is returned as it is when `allow_extended_dtype`, else refused."""
    if isinstance(dtype, ExtendedDType):
        if not allow_extended_dtype:
            raise ValueError(f"Internal: canonicalize_dtype got the extended dtype {dtype}; "
                             "pass allow_extended_dtype=True to accept it.")
        return dtype
    return _core.canonicalize_dtype(dtype)
