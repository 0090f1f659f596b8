"""Array methods beyond the operator table's original set, to match `jax.Array`'s.

`install` adds, to the base class shared by `Array` and every tracer, the methods and
dunders that `jax.Array` has and the core's table does not list: `__array_namespace__`
(the Python Array API entry point, giving `jaxlite.numpy`), `__contains__`, `__round__`,
`compress`, `byteswap`, `to_device`, and `argpartition`. It also gives the table real
`take` and `choose` methods, and makes `sort`, `argsort`, `searchsorted` and `nonzero`
call the `jaxlite.numpy` function of that name when the namespace has one (they live in
another module and may arrive later).
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
from jaxlite.core.operators import OPERATOR_TABLE, ArrayOperators
from jaxlite.numpy import _math, _reductions, _selection
from jaxlite.numpy._array_api import __array_api_version__
from jaxlite.numpy._promotion import ensure_array
from jaxlite.runtime.device import device_put

__all__ = ["install"]

API_VERSIONS = (__array_api_version__,)
_NAMESPACE = "jaxlite.numpy"


def _namespace() -> Any:
    return sys.modules[_NAMESPACE]


def __array_namespace__(self: Any, *, api_version: str | None = None) -> Any:
    """The Array API namespace of this array: `jaxlite.numpy`."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"api_version={api_version!r} is not available; available "
                         f"versions are: {list(API_VERSIONS)}")
    return _namespace()


def __contains__(self: Any, other: Any) -> Any:
    """`other in x`: whether any element equals `other`."""
    return _reductions.any(self == other)


def __round__(self: Any, ndigits: int | None = None) -> Any:
    """`round(x)` rounds half to even and gives int32; `round(x, n)` keeps the dtype."""
    if ndigits is None:
        return _math.round(self).astype(np.int32)
    return _math.round(self, ndigits)


def compress(self: Any, condition: Any, axis: int | None = None, *, out: None = None,
             size: int | None = None, fill_value: Any = 0) -> Any:
    """`jnp.compress(condition, x, ...)`."""
    return _selection.compress(condition, self, axis, out=out, size=size,
                               fill_value=fill_value)


def byteswap(self: Any, inplace: bool = False) -> Any:
    """The array with the bytes of every element reversed, as numpy's `byteswap`."""
    if inplace:
        raise ValueError("byteswap: jaxlite arrays are immutable; inplace=True is not "
                         "supported.")
    x = ensure_array(self)
    if x.dtype.itemsize == 1:
        return x
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    if x.dtype.kind == "c":
        raise NotImplementedError("byteswap of complex arrays is not supported.")
    as_bytes = lax.bitcast_convert_type(lax.bitcast_convert_type(x, unsigned), np.uint8)
    swapped = lax.rev(as_bytes, (as_bytes.ndim - 1,))
    return lax.bitcast_convert_type(lax.bitcast_convert_type(swapped, unsigned), x.dtype)


def to_device(self: Any, device: Any, *, stream: Any = None) -> Any:
    """The array placed on `device` (a Device or a Sharding), committed there, as
    `device_put` does (mirrors `jax.Array.to_device`)."""
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device(): jaxlite arrays "
                                  "live in host memory, which has no streams.")
    return device_put(self, device)


def _choose(self: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    return _selection.choose(self, choices, out=out, mode=mode)


def _from_namespace(name: str) -> Callable[..., Any]:
    """A method calling `jaxlite.numpy.<name>`, looked up when called."""
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        fun = getattr(_namespace(), name, None)
        if fun is None:
            raise NotImplementedError(f"Array.{name} needs jnp.{name}, which jaxlite does "
                                      "not provide yet.")
        return fun(self, *args, **kwargs)
    method.__name__ = name
    return method


_NEW_ATTRIBUTES = {
    "__array_namespace__": __array_namespace__, "__contains__": __contains__,
    "__round__": __round__, "compress": compress, "byteswap": byteswap,
    "to_device": to_device, "argpartition": _from_namespace("argpartition"),
}

_TABLE_ENTRIES = {
    "take": _selection.take, "choose": _choose,
    **{name: _from_namespace(name) for name in ("sort", "argsort", "searchsorted",
                                                 "nonzero")},
}


def install() -> None:
    """Add the methods above to arrays and tracers; called once by `_operators.install`."""
    for name, fun in _NEW_ATTRIBUTES.items():
        setattr(ArrayOperators, name, fun)
    OPERATOR_TABLE.update(_TABLE_ENTRIES)
