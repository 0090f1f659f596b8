"""The process and its arrays: process and host counts, live arrays, cache clearing and the
environment report (mirrors `jax.process_count`, `jax.live_arrays`, `jax.clear_caches`,
`jax.print_environment_info`, `jax.make_array_from_callback` and friends).

The process index and count are those of the MPI run `jaxlite.distributed.initialize`
joined (one process, index 0, otherwise).
"""
from __future__ import annotations

import gc
import math
import platform
import sys
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.backends import processes
from jaxlite.backends.registry import get_backend
from jaxlite.runtime import dispatch
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.device import device_put
from jaxlite.version import JAX_API_VERSION, __version__


def process_count(backend: Any = None) -> int:
    """The number of processes of the run (mirrors `jax.process_count`): one unless
    `jaxlite.distributed.initialize` joined an MPI run."""
    return processes.current().count


def process_index(backend: Any = None) -> int:
    """This process's index in the run (mirrors `jax.process_index`)."""
    return processes.current().index


def process_indices(backend: Any = None) -> list[int]:
    """The indices of all processes (mirrors `jax.process_indices`)."""
    return list(range(process_count()))


host_count, host_id, host_ids = process_count, process_index, process_indices


def live_arrays(platform: str | None = None) -> list[ArrayImpl]:
    """Every array that is alive and not deleted (mirrors `jax.live_arrays`)."""
    if platform is not None and platform != get_backend().platform:
        return []
    return [obj for obj in gc.get_objects()
            if type(obj) is ArrayImpl and not obj.is_deleted()]


def clear_caches(live_jits: Any = ()) -> None:
    """Forget every traced and compiled program, so the next calls trace and compile again
    (mirrors `jax.clear_caches`)."""
    for fn in list(live_jits):
        fn.clear_cache()
    dispatch.COMPILE_CACHE.clear()
    dispatch.EXECUTABLES.clear()


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or return) the versions, devices and platform jaxlite runs with (mirrors
    `jax.print_environment_info`)."""
    text = _environment_info()
    if return_string:
        return text
    print(text, end="")
    return None


def _environment_info() -> str:
    devices = get_backend().devices()
    return "\n".join([
        f"jaxlite: {__version__} (JAX {JAX_API_VERSION}'s API)",
        f"numpy:   {np.__version__}",
        f"python:  {sys.version}",
        f"device info: {get_backend().platform}-{len(devices)}, {len(devices)} local devices",
        f"process_count: {process_count()}",
        f"platform: {platform.uname()}",
    ]) + "\n"


def make_array_from_callback(shape: Sequence[int], sharding: Any,
                             data_callback: Callable[[Any], Any],
                             dtype: Any = None) -> ArrayImpl:
    """An array of `shape` whose data `data_callback(index)` gives for each device's part
    (mirrors `jax.make_array_from_callback`); one device holds it all."""
    index = tuple(slice(None) for _ in shape)
    data = np.asarray(data_callback(index), dtype=dtype)
    if data.shape != tuple(shape):
        raise ValueError(f"make_array_from_callback: the callback returned shape "
                         f"{data.shape} for the whole array of shape {tuple(shape)}.")
    return device_put(data, sharding)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any,
                                         arrays: Sequence[Any], *,
                                         dtype: Any = None) -> ArrayImpl:
    """One array from its per-device parts (mirrors
    `jax.make_array_from_single_device_arrays`); with one device, the one part."""
    if len(arrays) != 1 or tuple(np.shape(arrays[0])) != tuple(shape):
        raise ValueError(f"make_array_from_single_device_arrays: jaxlite has one device, "
                         f"so it takes one array of the full shape {tuple(shape)}, got "
                         f"{[np.shape(a) for a in arrays]}.")
    data = np.asarray(arrays[0], dtype=dtype)
    return device_put(data, sharding)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Sequence[int] | None = None
                                       ) -> ArrayImpl:
    """An array from this process's data (mirrors
    `jax.make_array_from_process_local_data`); one process holds all of it."""
    data = np.asarray(local_data)
    if global_shape is not None and math.prod(global_shape) != data.size:
        raise ValueError(f"make_array_from_process_local_data: global shape "
                         f"{tuple(global_shape)} differs from the one process's data "
                         f"{data.shape}.")
    return device_put(data.reshape(data.shape if global_shape is None else global_shape),
                      sharding)
