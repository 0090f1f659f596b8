"""Dtype objects and dtype utilities: `jnp.float32`, `jnp.dtype`, `jnp.result_type`, ...

Mirrors `jax.numpy`'s scalar types (`jax._src.numpy.scalar_types`). `jnp.float32` is a class
that stands for its numpy scalar type wherever a dtype is expected (it compares and hashes
equal to `np.float32` and carries a `dtype` attribute, which numpy reads), and that creates
arrays when called: `jnp.float32(3)` is a float32 `Array`, not a numpy scalar.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from jaxlite.core import dtypes
from jaxlite.numpy._creation import asarray

__all__ = [
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128", "int_", "uint",
    "float_", "complex_", "single", "double", "csingle", "cdouble", "generic", "number",
    "inexact", "floating", "complexfloating", "integer", "signedinteger", "unsignedinteger",
    "character", "flexible", "object_", "dtype", "result_type", "promote_types", "finfo",
    "iinfo", "issubdtype", "isdtype", "can_cast", "ComplexWarning",
]


class _ScalarMeta(type):
    """Metaclass of the scalar types: equal to the numpy type, callable to make arrays."""

    dtype: np.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'jaxlite.numpy.{cls.__name__}'>"


def _scalar_type(name: str, np_type: Any) -> _ScalarMeta:
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type),
                                         "__module__": "jaxlite.numpy",
                                         "__doc__": f"The {name} scalar type and dtype."})


bool_ = _scalar_type("bool", np.bool_)
int8 = _scalar_type("int8", np.int8)
int16 = _scalar_type("int16", np.int16)
int32 = _scalar_type("int32", np.int32)
int64 = _scalar_type("int64", np.int64)
uint8 = _scalar_type("uint8", np.uint8)
uint16 = _scalar_type("uint16", np.uint16)
uint32 = _scalar_type("uint32", np.uint32)
uint64 = _scalar_type("uint64", np.uint64)
bfloat16 = _scalar_type("bfloat16", ml_dtypes.bfloat16)
float16 = _scalar_type("float16", np.float16)
float32 = _scalar_type("float32", np.float32)
float64 = _scalar_type("float64", np.float64)
complex64 = _scalar_type("complex64", np.complex64)
complex128 = _scalar_type("complex128", np.complex128)

# numpy's aliases, as JAX keeps them: the 64-bit types, narrowed to 32 bits on use.
int_, uint, float_, complex_ = int64, uint64, float64, complex128
single, double, csingle, cdouble = float32, float64, complex64, complex128

SCALAR_TYPES: dict[str, _ScalarMeta] = {
    t.__name__: t for t in (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                            bfloat16, float16, float32, float64, complex64, complex128)}
"""The scalar types by name; narrow ml_dtypes types are added by `narrow_scalar_types`."""


def narrow_scalar_types() -> dict[str, _ScalarMeta]:
    """Scalar types of the sub-16-bit floats and ints that this ml_dtypes release has."""
    out = {}
    for dt in (*dtypes.NARROW_FLOAT_DTYPES, *dtypes.NARROW_SIGNED_DTYPES,
               *dtypes.NARROW_UNSIGNED_DTYPES):
        out[dt.name] = _scalar_type(dt.name, dt)
    return out


# Abstract classes are numpy's own, as in JAX.
generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
complexfloating, integer = np.complexfloating, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
character, flexible, object_ = np.character, np.flexible, np.object_

dtype = np.dtype
ComplexWarning = np.exceptions.ComplexWarning  # complex values cast to a real dtype


def result_type(*args: Any) -> np.dtype:
    """The dtype of an operation on `args`, by JAX's promotion (`jnp.result_type`).

    Python scalars are weak and take the dtype of the arrays; the result is canonical
    (32-bit when x64 is off).
    """
    return dtypes.result_type(*args)


def promote_types(a: Any, b: Any) -> np.dtype:
    """The join of two dtypes on JAX's lattice (mirrors `jax.numpy.promote_types`)."""
    return dtypes.promote_types(a, b)


# Classes, as JAX's (ml_dtypes' finfo and iinfo, taking bfloat16, float8 and int4 too).
finfo = dtypes.finfo
iinfo = dtypes.iinfo


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """numpy's `issubdtype`, aware of bfloat16 and the narrow types (`jnp.issubdtype`)."""
    return dtypes.issubdtype(arg1, arg2)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Array API kind test (mirrors `jax.numpy.isdtype`)."""
    return dtypes.isdtype(dtype, kind)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """numpy's casting rules between dtypes (mirrors `jax.numpy.can_cast`)."""
    source = dtypes.dtype(from_, canonicalize=False)
    return bool(np.can_cast(source, np.dtype(to), casting=casting))
