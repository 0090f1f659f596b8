"""Exchanging arrays with other frameworks through DLPack (mirrors `jax.dlpack`).

Host tensors come in through numpy's DLPack import and go out through `Array.__dlpack__`
(numpy's export): any host tensor with `__dlpack__` (numpy, torch or cupy CPU tensors)
converts both ways, without a copy in either direction (`jaxlite.runtime.dlpack_buffers`
says what is shared and how bfloat16 travels). Tensors in a GPU's memory (CuPy arrays,
torch CUDA tensors) go through CuPy's DLPack on the gpu backend's device and stay in
device memory both ways (`jaxlite.runtime.device_dlpack`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.numpy._io import dlpack_to_array
from jaxlite.runtime.dlpack_buffers import EXCHANGED_DTYPES

__all__ = ["from_dlpack", "is_supported_dtype"]



def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Any:
    """An array holding the contents of a DLPack tensor (mirrors `jax.dlpack.from_dlpack`).

    `external_array` is any object with `__dlpack__` and `__dlpack_device__`; `device` (a
    Device or a one-device Sharding) commits the result there; `copy=False` refuses a copy
    and `copy=True` always makes one. 64-bit data is narrowed when x64 is off, as JAX does.
    """
    return dlpack_to_array(external_array, device, copy)


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` can go through DLPack (mirrors
    `jax.dlpack.is_supported_dtype`)."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in EXCHANGED_DTYPES
