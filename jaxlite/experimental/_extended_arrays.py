"""Extended-dtype arrays, primal/tangent dtypes and quasi-dynamic data (mirrors
`jax.experimental.EArray`, `primal_tangent_dtype` and `cur_qdd`).

An `EArray` pairs an abstract value of an extended dtype with the array that stores it, as
JAX's does; it offers the same attributes and is a pytree leaf. `primal_tangent_dtype`
builds JAX's extended dtype whose values are stored as their primal dtype and whose
tangents have another dtype. Computing on such values needs JAX's extended-dtype rules for
every primitive, which jaxlite has only for typed PRNG keys: the dtype's conversions raise
NotImplementedError, so a computation that needs them stops with a clear message.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from jaxlite.core import dtypes
from jaxlite.core.basearray import Array
from jaxlite.core.trace import Tracer

__all__ = ["EArray", "PrimalTangentDType", "cur_qdd", "primal_tangent_dtype"]


class primal_tangent_dtype_scalar(dtypes.extended):  # noqa: N801  (JAX's name)
    """Scalar class of the dtypes `primal_tangent_dtype` makes."""


@dataclasses.dataclass(frozen=True)
class PrimalTangentDType(dtypes.ExtendedDType):
    """An extended dtype whose values are stored as `primal_dtype` and whose tangents are
    of `tangent_dtype` (mirrors JAX's `PrimalTangentDType`)."""

    primal_dtype: Any
    tangent_dtype: Any
    name: str
    type = primal_tangent_dtype_scalar

    @property
    def physical_dtype(self) -> Any:
        return self.primal_dtype

    def _unsupported(self, *args: Any) -> Any:
        raise NotImplementedError(
            f"jaxlite cannot compute on arrays of the extended dtype {self.name}: JAX's "
            "per-primitive rules for extended dtypes exist in jaxlite for typed PRNG keys only.")

    to_physical = from_physical = full = _unsupported

    @property
    def itemsize(self) -> int:  # type: ignore[override]
        # JAX gives this dtype no item size (its storage is the primal dtype's).
        raise AttributeError("'PrimalTangentDType' object has no attribute 'itemsize'")

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


def _short_name(dtype: Any) -> str:
    if isinstance(dtype, dtypes.ExtendedDType):
        return str(dtype)
    return (dtype.name.replace("float", "f").replace("uint", "u").replace("int", "i")
            .replace("complex", "c"))


def primal_tangent_dtype(primal_dtype: Any, tangent_dtype: Any,
                         name: str | None = None) -> dtypes.ExtendedDType:
    """The extended dtype of values stored as `primal_dtype` whose tangents are of
    `tangent_dtype`, named `name` or `PrimalTangentDType{f32/bf16}` (mirrors
    `jax.experimental.primal_tangent_dtype`). 64-bit types narrow as JAX's `dtype` does."""
    primal, tangent = (_canonical(d) for d in (primal_dtype, tangent_dtype))
    return PrimalTangentDType(primal, tangent, name or
                              f"PrimalTangentDType{{{_short_name(primal)}/{_short_name(tangent)}}}")


def _canonical(dtype: Any) -> Any:
    if isinstance(dtype, dtypes.ExtendedDType):
        return dtype
    if dtype is None:
        raise ValueError("Invalid argument to dtype: None.")
    return dtypes.canonicalize_dtype(dtypes.dtype(dtype))


class EArray(Array):
    """An array of an extended dtype: its abstract value `aval` and the array `data` that
    stores it (mirrors `jax.experimental.EArray`)."""

    __slots__ = ("_aval", "_data")
    __hash__ = None  # type: ignore[assignment]
    __array_priority__ = 100

    def __init__(self, aval: Any, data: Any) -> None:
        self._aval = aval
        self._data = data

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))
    size = property(lambda self: math.prod(self._aval.shape))
    itemsize = property(lambda self: self._aval.dtype.itemsize)
    sharding = property(lambda self: self._data.sharding)
    committed = property(lambda self: self._data.committed)
    is_fully_addressable = property(lambda self: self._data.is_fully_addressable)
    is_fully_replicated = property(lambda self: self._data.is_fully_replicated)

    def devices(self) -> Any:
        return self._data.devices()

    def block_until_ready(self) -> "EArray":
        self._data.block_until_ready()
        return self

    def copy_to_host_async(self) -> None:
        self._data.copy_to_host_async()

    def copy(self) -> "EArray":
        return EArray(self._aval, self._data.copy())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        raise NotImplementedError("Iterating over an EArray is not implemented (nor in JAX).")

    def __repr__(self) -> str:
        return "E" + repr(self._data)


def cur_qdd(x: Any) -> Any:
    """The current quasi-dynamic data of `x` (mirrors `jax.experimental.cur_qdd`): what a
    mutable high-level value holds now. Inside a transformation, a value whose type has no
    such data gives None, as in JAX; a concrete value asks its own `cur_qdd` method, so an
    array raises AttributeError as JAX's does."""
    if isinstance(x, Tracer) and not hasattr(type(x), "cur_qdd"):
        return None
    return x.cur_qdd()
