"""Abstract values: what a transformation knows about an array without its contents.

Mirrors `jax.core.ShapedArray`: shape, dtype and the weak-type flag that Python scalars carry
through type promotion. `get_aval` is the one place that decides the abstract value of any
value jaxlite accepts (arrays, tracers, numpy values, Python scalars).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.shape_poly import canonical_dim, is_symbolic_dim, shape_size
from jaxlite.core.sharding import NO_MANUAL_AXES, ManualAxisType, dims_text, unsharded
from jaxlite.core.sharding_rules import checked_axes, varying_axes

_SHORT_DTYPE_NAMES = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bfloat16": "bf16", "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128", "float0": "float0",
}


def short_dtype_name(dtype: np.dtype) -> str:
    """The dtype as jaxprs print it: f32, i32, bool, bf16, ..."""
    if isinstance(dtype, dtypes.ExtendedDType):
        return dtype.name
    if dtype == dtypes.float0:
        return "float0"
    return _SHORT_DTYPE_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)


class AbstractValue:
    """The base class of abstract values (mirrors `jax.core.AbstractValue`)."""

    __slots__ = ()


@dataclass(frozen=True)
class ShapedArray(AbstractValue):
    """An array known only by its shape and dtype (mirrors `jax.core.ShapedArray`).

    `weak_type` marks values that came from Python scalars: they take the dtype of the
    other operand in type promotion instead of forcing their own. `sharding` is the
    value's sharding in JAX's types; outside a mesh (jaxlite's one device) it is the
    unsharded `NamedSharding` of the rank, as in JAX, and takes no part in comparisons.
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False
    sharding: Any = field(default=None, compare=False, repr=False, kw_only=True)
    # Inside shard_map: the manual mesh axes the value varies over (`{V:x}` when printed).
    manual_axis_type: Any = field(default=NO_MANUAL_AXES, compare=False, repr=False,
                                  kw_only=True)

    def __post_init__(self) -> None:
        # Users write ShapedArray(shape, jnp.float32) or pass a list shape: store what
        # every rule expects, a tuple and a numpy dtype (extended dtypes stay as given).
        if not isinstance(self.shape, tuple):
            object.__setattr__(self, "shape", tuple(canonical_dim(d) for d in self.shape))
        if self.sharding is None:
            object.__setattr__(self, "sharding", unsharded(len(self.shape)))
        if not isinstance(self.dtype, np.dtype):
            try:
                object.__setattr__(self, "dtype", np.dtype(self.dtype))
            except TypeError:
                pass

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        if any(is_symbolic_dim(d) for d in self.shape):
            return shape_size(self.shape)
        return int(np.prod(self.shape, dtype=np.int64))

    def update(self, shape: tuple[int, ...] | None = None, dtype: Any = None,
               weak_type: bool | None = None, sharding: Any = None) -> "ShapedArray":
        if dtype is not None and not isinstance(dtype, dtypes.ExtendedDType):
            dtype = np.dtype(dtype)
        if sharding is None and (shape is None or len(shape) == self.ndim):
            sharding = self.sharding  # (a new rank starts unsharded)
        return ShapedArray(self.shape if shape is None else tuple(shape),
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           sharding=sharding)

    def to_tangent_aval(self) -> "ShapedArray":
        """The aval of this value's tangents: float0 for non-inexact dtypes (JAX's method)."""
        if dtypes.is_inexact(self.dtype):
            return self
        return ShapedArray(self.shape, dtypes.float0, self.weak_type, sharding=self.sharding)

    def strip_weak_type(self) -> "ShapedArray":
        return self if not self.weak_type else self.update(weak_type=False)

    def str_short(self) -> str:
        dims = dims_text(self.shape, self.sharding)
        return f"{short_dtype_name(self.dtype)}[{dims}]{self.manual_axis_type.text()}"

    def str_long(self) -> str:
        """The type as JAX prints an aval: the full dtype name, `~` marking a weak type,
        split dimensions followed by their mesh axes (`4@x`)."""
        name = getattr(self.dtype, "name", str(self.dtype))
        dims = dims_text(self.shape, self.sharding)
        varying = self.manual_axis_type.text()
        return f"{'~' if self.weak_type else ''}{name}[{dims}]{varying}"

    def __str__(self) -> str:
        return self.str_long()

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_long().lstrip('~')}{weak})"


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """The aval of the data that stores `aval`'s values: `aval` itself, or for an extended
    dtype (typed PRNG keys) its physical dtype, with the physical dimensions appended."""
    dtype = aval.dtype
    if not isinstance(dtype, dtypes.ExtendedDType):
        return aval
    return ShapedArray(tuple(aval.shape) + tuple(dtype.physical_shape), dtype.physical_dtype)


def physical_value(value: Any, aval: ShapedArray) -> Any:
    """A concrete value of `aval` as its physical data (`value` itself but for typed keys)."""
    if isinstance(aval.dtype, dtypes.ExtendedDType):
        return aval.dtype.to_physical(value)
    return value


def get_aval(value: Any) -> ShapedArray:
    """The abstract value of anything jaxlite accepts as an array argument."""
    aval = getattr(value, "aval", None)
    if aval is not None:
        return aval
    if isinstance(value, (np.ndarray, np.generic)):
        check_byte_order(value)
        return ShapedArray(value.shape, dtypes.canonicalize_dtype(value.dtype), False)
    # After numpy's scalars: np.float64 subclasses float but has a strong dtype.
    if isinstance(value, (bool, int, float, complex)) or value is None:
        return _python_scalar_aval(value)
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return ShapedArray(tuple(shape), dtypes.canonicalize_dtype(dtype),
                           bool(getattr(value, "weak_type", False)))
    raise TypeError(
        f"Value {value!r} of type {type(value).__name__} is not a valid jaxlite array: "
        "pass an Array, a numpy array or a Python scalar.")


def check_byte_order(value: Any) -> None:
    """Refuse a numpy value stored in the other byte order (big-endian on this machine) with
    JAX's TypeError: compiled code would read its bytes as native numbers."""
    dt = getattr(value, "dtype", None)
    if isinstance(dt, np.dtype) and not dt.isnative:
        raise TypeError(
            f"Dtype {dt.str} is not a valid JAX array type. Only arrays of numeric types are "
            f"supported by JAX. (This numpy value is stored in non-native byte order; convert "
            f"it first with x.astype(x.dtype.newbyteorder('=')).)")


def _python_scalar_aval(value: Any) -> ShapedArray:
    if value is None:
        raise TypeError("None is not a valid jaxlite array value.")
    if isinstance(value, bool):
        return ShapedArray((), np.dtype(np.bool_), False)
    if isinstance(value, int):
        return ShapedArray((), dtypes.default_int_dtype(), True)
    if isinstance(value, float):
        return ShapedArray((), dtypes.default_float_dtype(), True)
    return ShapedArray((), dtypes.default_complex_dtype(), True)


def is_array_like(value: Any) -> bool:
    """Whether `value` can stand as an array argument (a leaf of traced inputs)."""
    if hasattr(value, "aval"):
        return True
    return isinstance(value, (bool, int, float, complex, np.ndarray, np.generic))


def max_dim(d1: int, d2: int) -> int:
    """The larger of two dimension sizes (mirrors `jax.core.max_dim`; jaxlite's shapes are
    concrete integers, so this is `max`)."""
    return max(int(d1), int(d2))


def min_dim(d1: int, d2: int) -> int:
    """The smaller of two dimension sizes (mirrors `jax.core.min_dim`)."""
    return min(int(d1), int(d2))


def typeof(x: Any) -> Any:
    """The abstract value of `x` (mirrors `jax.typeof`): its shape, dtype and weak type, as
    a `ShapedArray` (typed keys give their key aval, refs their `AbstractRef`); inside a
    shard_map body with check_vma, with the manual axes it varies over."""
    aval = get_aval(x)
    varying = varying_axes(x) if checked_axes() else frozenset()
    if not varying or not isinstance(aval, ShapedArray):
        return aval
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type, sharding=aval.sharding,
                       manual_axis_type=ManualAxisType(varying))
