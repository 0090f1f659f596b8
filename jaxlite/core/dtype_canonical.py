"""The dtypes jaxlite knows and how a requested dtype becomes a stored one: the standard and
narrow dtypes, extended dtypes (PRNG keys), and canonicalization under `jax_enable_x64`
(the foundation of `jaxlite.core.dtypes`, which re-exports every name here).
"""
from __future__ import annotations

import functools
from typing import Any

import ml_dtypes
import numpy as np

from jaxlite.errors import warn_at_user
from jaxlite.config import config

DTypeLike = Any
"""Anything `canonicalize_dtype` accepts: an ``np.dtype``, a scalar type, a name, a Python type."""

bfloat16: type = ml_dtypes.bfloat16
# Tangent dtype of integer and boolean primals: a zero-byte void type that holds no data.
float0: np.dtype = np.dtype([("float0", np.void, 0)])


class extended(np.generic):
    """Scalar class of the extended dtypes, which numpy has no type for (mirrors
    ``jax.dtypes.extended``): ``issubdtype(key.dtype, extended)`` holds for typed PRNG keys."""


class prng_key(extended):
    """Scalar class of the dtypes of typed PRNG keys (mirrors ``jax.dtypes.prng_key``)."""


class ExtendedDType:
    """A dtype numpy has no type for, such as ``key<fry>`` of typed PRNG keys (mirrors
    ``jax.dtypes.ExtendedDType``).

    A value of an extended dtype and shape S is stored as its *physical data*: an array of
    dtype `physical_dtype` and shape S + `physical_shape`. Only a few primitives of the
    library defining the dtype see such values; structural primitives are applied to the
    physical data (`Primitive.extended_rule`), and lowering and the backends see only
    physical arrays (`jaxlite.core.avals.physical_aval`). Subclasses set `type` (a subclass
    of `extended`), `name`, the physical layout, and the conversions of concrete values.
    """

    type: type = extended
    name: str = "extended"
    itemsize: int = 0
    physical_dtype: np.dtype = np.dtype(np.uint32)
    physical_shape: tuple[int, ...] = ()

    def to_physical(self, value: Any) -> Any:
        """The physical data (an array) of a concrete value of this dtype."""
        raise NotImplementedError

    def from_physical(self, data: Any) -> Any:
        """The concrete value of this dtype stored as `data` (a concrete array)."""
        raise NotImplementedError

    def full(self, shape: tuple[int, ...], fill_value: Any) -> Any:
        """An array of `shape` of this dtype filled with `fill_value` (`lax.full`)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


def is_extended(dtype_: Any) -> bool:
    """Whether `dtype_` is an extended dtype (a typed PRNG key's, for instance)."""
    return isinstance(dtype_, ExtendedDType)


class TypePromotionError(ValueError):
    """Raised when dtypes have no common type on the lattice (mirrors ``jax.dtypes``)."""


_b1, _u1, _u2, _u4, _u8 = (np.dtype(t) for t in ("bool", "uint8", "uint16", "uint32", "uint64"))
_i1, _i2, _i4, _i8 = (np.dtype(t) for t in ("int8", "int16", "int32", "int64"))
_bf, _f2, _f4, _f8 = (np.dtype(t) for t in (bfloat16, "float16", "float32", "float64"))
_c4, _c8 = np.dtype("complex64"), np.dtype("complex128")

STANDARD_DTYPES: tuple[np.dtype, ...] = (
    _b1, _u1, _u2, _u4, _u8, _i1, _i2, _i4, _i8, _bf, _f2, _f4, _f8, _c4, _c8)
"""The 15 dtypes of JAX's promotion table, in the table's order (b1 u1..u8 i1..i8 bf f2..c8)."""

WEAK_TYPES: tuple[type, ...] = (int, float, complex)
"""Python types that stand for the weak lattice nodes i*, f* and c*."""


def _ml_dtypes(names: tuple[str, ...]) -> tuple[np.dtype, ...]:
    # The set of narrow types differs between ml_dtypes releases; take whichever exist.
    return tuple(np.dtype(getattr(ml_dtypes, n)) for n in names if hasattr(ml_dtypes, n))


NARROW_FLOAT_DTYPES: tuple[np.dtype, ...] = _ml_dtypes((
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu"))
"""The sub-16-bit floats of ml_dtypes. They only promote with bool and weak scalars."""
NARROW_SIGNED_DTYPES: tuple[np.dtype, ...] = _ml_dtypes(("int1", "int2", "int4"))
NARROW_UNSIGNED_DTYPES: tuple[np.dtype, ...] = _ml_dtypes(("uint1", "uint2", "uint4"))

# ml_dtypes scalar types derive straight from np.generic, so NumPy's class hierarchy cannot
# say that bfloat16 is a float; this table supplies the abstract class each one belongs to.
_CUSTOM_CATEGORY: dict[type, type] = {
    **{d.type: np.floating for d in (_bf, *NARROW_FLOAT_DTYPES)},
    **{d.type: np.signedinteger for d in NARROW_SIGNED_DTYPES},
    **{d.type: np.unsignedinteger for d in NARROW_UNSIGNED_DTYPES},
}

_PYTHON_TYPE_DTYPE: dict[type, np.dtype] = {bool: _b1, int: _i8, float: _f8, complex: _c8}
_TO_32BIT: dict[np.dtype, np.dtype] = {_i8: _i4, _u8: _u4, _f8: _f4, _c8: _c4}


def _x64() -> bool:
    return bool(config.read("jax_enable_x64"))


def _strict() -> bool:
    return config.read("jax_numpy_dtype_promotion") == "strict"


# ----------------------------------------------------------------------------- canonicalization

def _to_np_dtype(x: DTypeLike) -> np.dtype:
    """Turns a dtype-like into an ``np.dtype`` without canonicalizing it."""
    if isinstance(x, type) and x in _PYTHON_TYPE_DTYPE:
        return _PYTHON_TYPE_DTYPE[x]  # np.dtype(int) is platform dependent; JAX's is not
    return np.dtype(x)


@functools.lru_cache(maxsize=512, typed=True)
def _canonicalize_cached(x: DTypeLike, x64: bool) -> np.dtype:
    dt = _f8 if x is None else _to_np_dtype(x)
    return dt if x64 else _TO_32BIT.get(dt, dt)


def canonicalize_dtype(dtype: DTypeLike) -> np.dtype:
    """Returns the dtype JAX stores for `dtype` (mirrors ``jax.dtypes.canonicalize_dtype``).

    With ``jax_enable_x64`` off, int64, uint64, float64 and complex128 become their 32-bit
    counterparts. Python types map to the default type of their kind, ``None`` to the
    default float type.
    """
    if isinstance(dtype, ExtendedDType):
        return dtype  # type: ignore[return-value]
    try:
        return _canonicalize_cached(dtype, _x64())
    except TypeError:
        # Unhashable input misses the cache; the uncached call raises NumPy's own error.
        dt = _f8 if dtype is None else _to_np_dtype(dtype)
        return canonicalize_dtype(dt)


def default_int_dtype() -> np.dtype:
    """The dtype of a Python int: int64 with x64 on, else int32 (mirrors JAX's)."""
    return canonicalize_dtype(_i8)


def default_uint_dtype() -> np.dtype:
    """uint64 with x64 on, else uint32 (mirrors ``jax._src.dtypes.default_uint_dtype``)."""
    return canonicalize_dtype(_u8)


def default_float_dtype() -> np.dtype:
    """The dtype of a Python float: float64 with x64 on, else float32."""
    return canonicalize_dtype(_f8)


def default_complex_dtype() -> np.dtype:
    """The dtype of a Python complex: complex128 with x64 on, else complex64."""
    return canonicalize_dtype(_c8)


def check_user_dtype_supported(dtype: DTypeLike, fun_name: str | None = None) -> np.dtype:
    """The numpy dtype of `dtype`, or JAX's ValueError (None) / TypeError (a dtype arrays
    cannot hold: object, str, datetime, void); mirrors JAX's internal
    ``jax._src.dtypes.check_user_dtype_supported``."""
    if dtype is None:
        raise ValueError("dtype must be specified.")
    dt = _to_np_dtype(dtype)
    if not _is_array_dtype(dt) or not dt.isnative:
        where = f" in {fun_name}" if fun_name else ""
        order = "" if dt.isnative else " (a non-native byte order: use the plain dtype)"
        raise TypeError("JAX only supports number, bool, and string dtypes, "
                        f"got dtype {dtype}{where}{order}")
    return dt


def check_and_canonicalize_user_dtype(dtype: DTypeLike, fun_name: str | None = None
                                      ) -> np.dtype:
    """Canonicalizes a dtype a user asked for, warning when x64 being off narrows it.

    Mirrors ``jax._src.dtypes.check_and_canonicalize_user_dtype``. Python types never warn,
    since asking for ``float`` means "the default float", not float64.
    """
    dt = check_user_dtype_supported(dtype, fun_name)
    out = canonicalize_dtype(dt)
    if out != dt and not (isinstance(dtype, type) and dtype in _PYTHON_TYPE_DTYPE):
        where = f" in {fun_name}" if fun_name else ""
        warn_at_user(
            f"Requested dtype {dt}{where} is unavailable while jax_enable_x64 is off; "
            f"using {out} instead. Set jax_enable_x64 (or the JAX_ENABLE_X64 environment "
            "variable) to get 64-bit types.", UserWarning)
    return out


def _is_array_dtype(dt: np.dtype) -> bool:
    # Arrays may hold bool and numeric data, ml_dtypes types (kind 'V') and float0.
    return dt.kind in "biufc" or dt == float0 or dt.type in _CUSTOM_CATEGORY
