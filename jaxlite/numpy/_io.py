"""Host input and output: frombuffer, fromstring, from_dlpack, load, save, savez, printing.

Mirrors the `jax.numpy` functions of those names. Reading is numpy's reader followed by
`asarray` (so 64-bit data is narrowed when x64 is off). As in JAX, `save`, `savez`,
`array_repr`, `array_str`, `get_printoptions` and `set_printoptions` are numpy's own
functions, since jaxlite arrays print through numpy; `fromfile` and `fromiter` are refused,
because reading a file or consuming an iterator is a side effect that `jit` would not
repeat.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.sharding import Sharding
from jaxlite.numpy._creation import asarray
from jaxlite.numpy._promotion import user_dtype
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.dlpack_buffers import import_host
from jaxlite.runtime.device import device_put, from_gpu_dlpack
from jaxlite.runtime.device_dlpack import GPU_DEVICE_TYPES

__all__ = [
    "frombuffer", "fromstring", "fromfile", "fromiter", "from_dlpack", "load", "save",
    "savez", "array_repr", "array_str", "printoptions", "get_printoptions",
    "set_printoptions",
]

save = np.save
savez = np.savez
array_repr = np.array_repr
array_str = np.array_str
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """A context manager setting numpy's print options, which jaxlite arrays use too
    (mirrors `jax.numpy.printoptions`)."""
    return np.printoptions(*args, **kwargs)


def _host_dtype(dtype: Any, fun_name: str) -> np.dtype:
    """The dtype numpy reads the data as; the result is then narrowed as JAX would."""
    user_dtype(dtype, fun_name)  # rejects what JAX rejects
    return np.dtype(dtype)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """An array read from the raw bytes of `buffer` (mirrors `jax.numpy.frombuffer`)."""
    host = np.frombuffer(buffer, dtype=_host_dtype(dtype, "frombuffer"), count=count,
                         offset=offset)
    return asarray(host)


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """An array parsed from the numbers in `string` separated by `sep` (mirrors
    `jax.numpy.fromstring`)."""
    host = np.fromstring(string, dtype=_host_dtype(dtype, "fromstring"), count=count,
                         sep=sep)
    return asarray(host)


def fromfile(*args: Any, **kwargs: Any) -> Any:
    """Not provided, as in JAX: use `jnp.asarray(np.fromfile(...))` outside `jit`."""
    raise NotImplementedError(
        "jnp.fromfile is not implemented: reading a file is a side effect that jit and the "
        "other transformations would not repeat. Read it with numpy outside the transformed "
        "function: jnp.asarray(np.fromfile(...)).")


def fromiter(*args: Any, **kwargs: Any) -> Any:
    """Not provided, as in JAX: use `jnp.asarray(np.fromiter(...))` outside `jit`."""
    raise NotImplementedError(
        "jnp.fromiter is not implemented: consuming an iterator is a side effect that jit "
        "and the other transformations would not repeat. Build the array with numpy outside "
        "the transformed function: jnp.asarray(np.fromiter(...)).")


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array from any object with the DLPack protocol (`__dlpack__`), such as a numpy
    array or another framework's tensor (mirrors `jax.numpy.from_dlpack`)."""
    return dlpack_to_array(x, device, copy)


def dlpack_to_array(external: Any, device: Any, copy: bool | None) -> Any:
    """The array behind `jnp.from_dlpack` and `jax.dlpack.from_dlpack`.

    A host tensor is read through numpy's DLPack import (a GPU's through CuPy's, see
    `runtime.device.from_gpu_dlpack`). Its memory becomes the array's buffer, shared
    without a copy unless `copy=True` or x64 narrowing needs one; the producer must not
    write to it afterwards. The result goes on `device` (a Device or
    a one-device Sharding) when one is given.
    """
    if not (hasattr(external, "__dlpack__") and hasattr(external, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    if isinstance(device, Sharding) and len(device.device_set) > 1:
        raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular device, "
                         f"but a Sharding with {len(device.device_set)} devices was provided.")
    if external.__dlpack_device__()[0] in GPU_DEVICE_TYPES:
        return from_gpu_dlpack(external, device, copy)
    host = import_host(external, copy)
    if host.dtype == dtypes.canonicalize_dtype(host.dtype):
        out = ArrayImpl(host)  # the producer's memory itself: a view, or copy=True's copy
    else:
        out = asarray(host)  # 64-bit data with x64 off is narrowed, so copied, as in JAX
    return out if device is None else device_put(out, device)


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """Read a `.npy` file as an array (mirrors `jax.numpy.load`); other contents (`.npz`
    archives, pickled objects) are returned as numpy gives them."""
    value = np.load(file, *args, **kwargs)
    if isinstance(value, np.ndarray) and value.dtype != object:
        return asarray(value)
    return value
