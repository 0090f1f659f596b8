"""Type annotations for code that takes arrays and dtypes (mirrors `jax.typing`).

`ArrayLike` is what jaxlite functions accept as an array: a `jax.Array` (arrays and
tracers), a numpy array or scalar, or a Python scalar. `DTypeLike` is what they accept as a
dtype: a name, a scalar type, an `np.dtype`, or anything with a `dtype` attribute. Both are
for annotations; `isinstance` checks use `jaxlite.Array` and `np.dtype` directly.
"""
from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from jaxlite.core.basearray import Array


class SupportsDType(Protocol):
    """Anything with a `dtype` attribute (an array, a ShapeDtypeStruct)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
