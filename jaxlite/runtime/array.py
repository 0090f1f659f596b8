"""`ArrayImpl`: the immutable concrete array that users hold (a `jax.Array`).

An Array owns a read-only numpy buffer on the host, its dtype already canonical, and the
weak-type flag of values that came from Python scalars; an Array placed on a GPU holds a
`DeviceValue` instead, its contents in device memory (see `device_values`). Operators and
numpy-style methods come from the operator table that `jaxlite.numpy` fills, shared with
tracers.

`delete()` (which donating the Array to a jitted call does) hands its memory back: the
Array keeps its shape and dtype, and every use of its contents raises `RuntimeError`, as
JAX's deleted arrays do.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.backends import processes
from jaxlite.backends.registry import get_backend
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.sharding_rules import aval_sharding
from jaxlite.core.basearray import Array
from jaxlite.runtime.device_values import DeviceValue, place
from jaxlite.runtime.device_dlpack import device_pair, export_device_capsule
from jaxlite.runtime.dlpack_buffers import CPU_DEVICE, export_capsule
from jaxlite.runtime.sharding import Sharding, SingleDeviceSharding


class _DeletedValue:
    """What a deleted Array holds instead of its numpy buffer: its shape and dtype, and an
    error for any use of the contents (numpy conversion, indexing, attributes)."""

    __slots__ = ("shape", "dtype", "ndim", "size", "nbytes", "itemsize")

    def __init__(self, value: np.ndarray) -> None:
        self.shape, self.dtype, self.ndim = value.shape, value.dtype, value.ndim
        self.size, self.nbytes, self.itemsize = value.size, value.nbytes, value.itemsize

    def gone(self, *args: Any, **kwargs: Any) -> Any:
        dims = ",".join(str(d) for d in self.shape)
        raise RuntimeError(f"Array has been deleted with shape={self.dtype.name}[{dims}]. "
                           "It was donated to a jitted call (donate_argnums) or deleted; "
                           "use the call's result, or keep a copy before donating.")

    __array__ = __getitem__ = __bool__ = __int__ = __float__ = __complex__ = gone
    __index__ = __len__ = __iter__ = __str__ = gone

    def __getattr__(self, name: str) -> Any:
        self.gone()


class Shard:
    """The part of an array on one device (mirrors `jax.Shard`)."""

    def __init__(self, device: Any, sharding: Any, global_shape: tuple[int, ...],
                 index: tuple[slice, ...], data: Any = None, replica_id: int = 0) -> None:
        self.device, self.sharding, self.index = device, sharding, index
        self.global_shape, self.data, self.replica_id = global_shape, data, replica_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shard) and (self.device, self.index, self.replica_id) == \
            (other.device, other.index, other.replica_id) and self.data is other.data

    def __hash__(self) -> int:
        return hash((self.device, str(self.index), self.replica_id))

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


class ArrayImpl(Array):
    """A concrete array (mirrors JAX's `ArrayImpl`, the class of values `jax.Array` covers).

    Parameters
    ----------
    value : numpy.ndarray
        The contents, which the Array takes over and marks read-only: callers pass a buffer
        nobody else writes to, with its dtype already canonical.
    weak_type : bool
        Whether the value came from a Python scalar (see type promotion).
    """

    __slots__ = ("_value", "weak_type", "_aval", "_sharding", "_shards")

    def __init__(self, value: np.ndarray, weak_type: bool = False) -> None:
        if type(value) is not DeviceValue:
            value = np.asarray(value)
            if value.flags.writeable:
                value.flags.writeable = False
        self._value = value
        self.weak_type = bool(weak_type)
        self._aval: ShapedArray | None = None
        # Set by device_put or jit's out_shardings (the array is then "committed").
        self._sharding: Sharding | None = None
        # On several devices: each device's block, a committed one-device Array (in the
        # sharding's device order); `_value` is then the assembled global value.
        self._shards: tuple["ArrayImpl", ...] | None = None

    def with_sharding(self, sharding: Sharding) -> "ArrayImpl":
        """The same contents, placed with `sharding`: on one device the read-only buffer is
        shared (or moved into, or out of, a GPU's memory: `device_values.place`); on
        several, each device gets a copy of its block."""
        out = ArrayImpl(place(self._value, sharding.device_set), self.weak_type)
        out._sharding = sharding
        if len(sharding.device_set) > 1:
            out._shards = tuple(
                ArrayImpl(np.array(self._value[index]), self.weak_type).with_sharding(
                    SingleDeviceSharding(device))
                for device, index in sharding.devices_indices_map(self.shape).items())
        return out

    @property
    def aval(self) -> ShapedArray:
        if self._aval is None:
            # On a mesh, the type carries the sharding (JAX's sharding in types).
            typed = None if self._sharding is None else aval_sharding(self._sharding,
                                                                      self._value.ndim)
            self._aval = ShapedArray(self._value.shape, self._value.dtype, self.weak_type,
                                     sharding=typed)
        return self._aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def size(self) -> int:
        return self._value.size

    @property
    def nbytes(self) -> int:
        return self._value.nbytes

    @property
    def itemsize(self) -> int:
        return self._value.itemsize

    # ------------------------------------------------------------------- host conversion

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self._value
        if type(value) is _DeletedValue:
            value.gone()
        if type(value) is DeviceValue:
            value = value.host()  # (one transfer, kept)
        if dtype is None:
            return value if not copy else value.copy()
        return value.astype(dtype)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """The contents as a DLPack capsule (mirrors `jax.Array.__dlpack__`): the Array's
        own buffer, shared without a copy unless `copy=True`: host memory (see
        dlpack_buffers), or a GPU's for an Array there (see device_dlpack)."""
        if type(self._value) is DeviceValue:
            return export_device_capsule(self._value, stream=stream,
                                         max_version=max_version, dl_device=dl_device,
                                         copy=copy)
        return export_capsule(self.contiguous_value(), stream=stream,
                              max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[Any, int]:
        """(device type, device id) of the data for DLPack: the host CPU, or the GPU
        holding it (mirrors `jax.Array.__dlpack_device__`)."""
        if type(self._value) is DeviceValue:
            return device_pair(self._value)
        return CPU_DEVICE

    def contiguous_value(self) -> np.ndarray:
        """The contents as a C-ordered numpy array, the form compiled code reads. A
        broadcast or strided view (as `jnp.zeros` and slicing make) is copied once, and
        the Array keeps the copy in its place: the contents are the same, and later calls
        pass the buffer as it is."""
        value = self._value
        if type(value) is _DeletedValue:
            value.gone()
        if type(value) is DeviceValue:
            return value.host()  # (C-ordered, as transfers make it)
        if not value.flags.c_contiguous:
            value = np.array(value, order="C")
            value.setflags(write=False)
            self._value = value
        return value

    def item(self, *args: Any) -> Any:
        """The value as a Python scalar (`numpy.ndarray.item`)."""
        return self._value.item(*args)

    def tolist(self) -> Any:
        """The value as nested Python lists (`numpy.ndarray.tolist`)."""
        return self._value.tolist()

    def block_until_ready(self) -> "ArrayImpl":
        """Wait until the value is computed; eager values on the host always are, those
        in a GPU's memory when the device's stream reaches them."""
        if type(self._value) is _DeletedValue:
            self._value.gone()
        if type(self._value) is DeviceValue:
            self._value.block_until_ready()
        return self

    def copy_to_host_async(self) -> None:
        """Start copying to the host; host arrays are there already."""

    def is_deleted(self) -> bool:
        """Whether `delete` ran, or the Array was donated to a jitted call
        (`jax.Array.is_deleted`)."""
        return type(self._value) is _DeletedValue

    def delete(self) -> None:
        """Give up the contents now (`jax.Array.delete`): later uses raise `RuntimeError`;
        the shape and dtype stay readable."""
        if type(self._value) is not _DeletedValue:
            self._value = _DeletedValue(self._value)  # type: ignore[assignment]
        for shard in self._shards or ():  # each device's block goes too
            shard.delete()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._value)

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if not dtypes.is_integer(self.dtype) or self.ndim:  # not bool either, as JAX
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return int(self._value)

    def _scalar(self, name: str) -> Any:
        if self.ndim != 0:
            raise TypeError("Only scalar arrays can be converted to Python scalars; got "
                            f"arr.ndim={self.ndim}")
        value = self._value[()]
        # A Python complex: int() and float() refuse it with TypeError, as for JAX's arrays
        # (a numpy complex would drop its imaginary part with a warning).
        return value.item() if self.dtype.kind == "c" else value

    # ---------------------------------------------------------------------- printing

    def __repr__(self) -> str:
        prefix = "Array("
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(self.__array__(), separator=", ", prefix=prefix)
        weak = ", weak_type=True" if self.weak_type else ""
        return f"{prefix}{body}, dtype={self.dtype.name}{weak})"

    def __str__(self) -> str:
        return str(self._value)

    def __format__(self, spec: str) -> str:
        # As numpy (and JAX): a scalar takes any format of its type; a larger array only
        # the empty one.
        if self.ndim == 0:
            return format(self._value[()], spec)
        return format(self.__array__(), spec)

    # ----------------------------------------------------------------- Python protocols

    def __reduce__(self) -> tuple:
        return (ArrayImpl, (np.array(self._value), self.weak_type))

    def __copy__(self) -> "ArrayImpl":
        return self

    def __deepcopy__(self, memo: Any) -> "ArrayImpl":
        return self

    @property
    def device(self) -> Any:
        """The device holding the array (the default backend's first one unless placed
        elsewhere); the sharding for an array on several devices, as in JAX."""
        if self._sharding is None:
            return get_backend().local_devices()[0]
        devices = self._sharding.device_set
        return next(iter(devices)) if len(devices) == 1 else self._sharding

    def devices(self) -> set[Any]:
        return set(self.sharding.device_set)

    # ---------------------------------------------------------------- placement

    @property
    def sharding(self) -> Sharding:
        """How the array is placed (mirrors `jax.Array.sharding`): the sharding it was put
        with, else the whole array on its device."""
        return self._sharding or SingleDeviceSharding(self.device)

    @property
    def committed(self) -> bool:
        """Whether the array was placed explicitly (device_put with a device or sharding)."""
        return self._sharding is not None

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every device of the array belongs to this process (mirrors
        `jax.Array.is_fully_addressable`); in an MPI run, arrays placed over every
        process's devices are not (each process still holds the global value)."""
        here = processes.current().index
        return all(device.process_index == here for device in self.sharding.device_set)

    @property
    def addressable_shards(self) -> list["Shard"]:
        """One `Shard` per device of this process holding part of the array, in the
        sharding's device order (mirrors `jax.Array.addressable_shards`)."""
        here = processes.current().index
        return [shard for shard in self.global_shards if shard.device.process_index == here]

    @property
    def global_shards(self) -> list["Shard"]:
        """One `Shard` per device holding part of the array, every process's included, in
        the sharding's device order (mirrors `jax.Array.global_shards`)."""
        sharding = self.sharding
        if self._shards is None:
            index = (slice(None),) * self.ndim
            return [Shard(self.device, sharding, self.shape, index, self)]
        replicas: dict[tuple, int] = {}
        shards = []
        for (device, index), data in zip(sharding.devices_indices_map(self.shape).items(),
                                         self._shards):
            key = tuple((s.start, s.stop) for s in index)
            replicas[key] = replicas.get(key, -1) + 1
            shards.append(Shard(device, sharding, self.shape, index, data, replicas[key]))
        return shards

    def addressable_data(self, index: int) -> "ArrayImpl":
        return self.addressable_shards[index].data

    def is_ready(self) -> bool:
        return True

    def on_device_size_in_bytes(self) -> int:
        return self.nbytes

    def unsafe_buffer_pointer(self) -> int:
        """The address of the first element: in device memory for an Array on a GPU
        (mirrors `jax.Array.unsafe_buffer_pointer`)."""
        if type(self._value) is DeviceValue:
            return self._value.launcher.pointer(self._value.array)
        return self.__array__().ctypes.data

    def tobytes(self, order: str = "C") -> bytes:
        return self.__array__().tobytes(order)

    @property
    def platform(self) -> str:
        return self.device.platform


_new_array = object.__new__


def fresh_array(value: np.ndarray, weak_type: bool) -> ArrayImpl:
    """An Array over `value`, a numpy array nothing else writes to, whose dtype is
    canonical: `ArrayImpl(value, weak_type)` without the checks (eager dispatch makes one
    per operation)."""
    array = _new_array(ArrayImpl)
    value.setflags(write=False)
    array._value = value
    array.weak_type = weak_type
    array._aval = None
    array._sharding = None
    array._shards = None
    return array
