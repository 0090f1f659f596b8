"""What `jaxlite.numpy` declares to the Python array API standard (2024.12).

Array-API code finds the namespace of an array with `x.__array_namespace__()` and asks it
about itself through `__array_namespace_info__()`: which dtypes and devices exist, which
dtypes creation functions default to, and what the library can do. The answers mirror
`jax.numpy`'s: the dtypes are those the standard names (no float16 or bfloat16), 64-bit
ones only while x64 is on; the default device is None, which means "not committed to a
device" (jaxlite picks the backend's first), and `devices()` lists None before the real
devices for that reason.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.runtime.device import devices as backend_devices

__all__ = ["__array_api_version__", "__array_namespace_info__"]

# The revision of the standard that jax.numpy 0.10.2 declares.
__array_api_version__ = "2024.12"

_STANDARD_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64", "complex64", "complex128")

# The kinds of `dtypes(kind=...)`, with the test each dtype must pass to belong to one.
_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def __array_namespace_info__() -> "ArrayNamespaceInfo":
    """The inspection object of the array API (mirrors `jax.numpy.__array_namespace_info__`)."""
    return ArrayNamespaceInfo()


class ArrayNamespaceInfo:
    """Answers about this namespace, as the array API's inspection functions ask them
    (mirrors JAX's `ArrayNamespaceInfo`). `device` arguments are accepted and ignored:
    every device has the same dtypes."""

    def capabilities(self) -> dict[str, Any]:
        """What the namespace supports. Boolean masks and data-dependent shapes work
        eagerly but not under `jit`, so, as JAX, both are declared unsupported."""
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self) -> None:
        """None: new arrays are not committed to a device (as JAX's)."""
        return None

    def devices(self) -> list[Any]:
        """None (uncommitted) followed by the default backend's devices."""
        return [None, *backend_devices()]

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        """The dtypes that creation functions use when given none (x64 decides)."""
        integer = dtypes.default_int_dtype()
        return {"real floating": dtypes.default_float_dtype(),
                "complex floating": dtypes.default_complex_dtype(),
                "integral": integer, "indexing": integer}

    def dtypes(self, *, device: Any = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, np.dtype]:
        """The standard's dtypes available now, by name; `kind` (a kind name or a tuple
        of them) keeps those of that kind. An unknown kind raises KeyError, as in JAX."""
        # With x64 off the 64-bit types canonicalize to 32-bit ones: they are not there.
        available = [d for d in map(np.dtype, _STANDARD_DTYPES)
                     if dtypes.canonicalize_dtype(d) == d]
        if kind is None:
            kinds: tuple[str, ...] = ("bool", "numeric")
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
        tests = [_KINDS[k] for k in kinds]
        return {d.name: d for d in available if any(test(d) for test in tests)}
