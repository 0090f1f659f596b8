"""FFI attributes: Python values to the text a custom-call carries, and that text to the
C API's attribute structures (`XLA_FFI_Attrs`).

`ffi_call(...)(*args, **attributes)` passes keyword arguments as attributes, typed as JAX
types them when it builds the StableHLO custom-call: a Python bool is a PRED scalar, int an
s64 scalar, float an f64 scalar; a numpy scalar (or 0-d array) keeps its dtype; a string is
a string; an array of one or more dimensions is a flat array of its dtype; a dict is a
dictionary of such values. In jaxlite's HLO they travel as the custom-call's
`backend_config`, a canonical JSON text (keys sorted, so equal attributes give equal
modules and one compiled program).

`AttributeBlock(text)` lays the decoded attributes out in memory the way handlers read
them: names sorted (XLA sorts them, and handlers built with XLA's headers find each bound
attribute by its rank in that order), a type code, a name span and a value pointer each.
The block owns its memory; whoever hands its pointers to a handler keeps it alive.
"""
from __future__ import annotations

import ctypes
import json
from typing import Any

import numpy as np

from jaxlite.xla.ffi import c_api

__all__ = ["encode_attributes", "AttributeBlock"]


def _encode(name: str, value: Any) -> list[Any]:
    if isinstance(value, (bool, np.bool_)) and np.ndim(value) == 0:
        return ["bool", bool(value)]
    if isinstance(value, int):
        return ["int64", value]
    if isinstance(value, float):
        return ["float64", value]
    if isinstance(value, (str, bytes)):
        return ["string", value if isinstance(value, str) else value.decode()]
    if isinstance(value, dict):
        return ["dict", {str(k): _encode(f"{name}.{k}", v) for k, v in sorted(value.items())}]
    if isinstance(value, (np.generic, np.ndarray)):
        array = np.asarray(value)
        c_api.dtype_code(array.dtype)  # raises TypeError for dtypes the FFI lacks
        if np.iscomplexobj(array):
            raise TypeError(f"ffi_call attribute {name!r}: complex attributes are not "
                            "supported by jaxlite's FFI")
        # ml_dtypes' types (bfloat16, int4, ...) have no Python scalar of their own.
        values = (array.astype(np.float64) if array.dtype.kind == "V" else array).tolist()
        kind = "scalar" if array.ndim == 0 else "array"
        return [kind, array.dtype.name, values]
    raise TypeError(f"Non-hashable or unsupported keyword argument to ffi_call {name}: "
                    f"{value!r} (attributes are bools, ints, floats, strings, numpy scalars "
                    "and arrays, and dicts of those)")


def encode_attributes(attributes: dict[str, Any]) -> str:
    """The canonical text of an ffi_call's keyword attributes (JSON, keys sorted)."""
    encoded = {str(k): _encode(str(k), v) for k, v in sorted(attributes.items())}
    return json.dumps(encoded, sort_keys=True, separators=(",", ":"))


def _dtype(name: str) -> np.dtype:
    return np.dtype(name)


class AttributeBlock:
    """The attributes of one custom-call laid out as an `XLA_FFI_Attrs` (owning the memory
    its pointers reach)."""

    def __init__(self, text: str) -> None:
        self._keep: list[Any] = []
        decoded = json.loads(text) if text else {}
        self.attrs = self._attrs(decoded)

    def address(self) -> int:
        """The address of the top-level `XLA_FFI_Attrs`."""
        return ctypes.addressof(self.attrs)

    def _attrs(self, decoded: dict[str, Any]) -> Any:
        names = sorted(decoded)
        count = len(names)
        types = (ctypes.c_int32 * max(1, count))()
        spans = (ctypes.c_void_p * max(1, count))()
        values = (ctypes.c_void_p * max(1, count))()
        for i, name in enumerate(names):
            types[i], values[i] = self._value(decoded[name])
            spans[i] = ctypes.addressof(self._span(name.encode()))
        attrs = c_api.Attrs(struct_size=c_api.struct_size(c_api.Attrs, "attrs"), size=count,
                            types=ctypes.addressof(types), names=ctypes.addressof(spans),
                            attrs=ctypes.addressof(values))
        self._keep.extend((types, spans, values, attrs))
        return attrs

    def _span(self, data: bytes) -> Any:
        buffer = ctypes.create_string_buffer(data, len(data) + 1)
        span = c_api.ByteSpan(ctypes.addressof(buffer), len(data))
        self._keep.extend((buffer, span))
        return span

    def _value(self, encoded: list[Any]) -> tuple[int, int]:
        """(attribute type code, pointer to the value's structure)."""
        kind = encoded[0]
        if kind == "string":
            return c_api.ATTR_STRING, ctypes.addressof(self._span(encoded[1].encode()))
        if kind == "dict":
            return c_api.ATTR_DICTIONARY, ctypes.addressof(self._attrs(encoded[1]))
        if kind in ("bool", "int64", "float64"):
            kind, encoded = "scalar", ["scalar", {"bool": "bool"}.get(kind, kind), encoded[1]]
        dtype = _dtype(encoded[1])
        data = np.ascontiguousarray(np.array(encoded[2], dtype=dtype))
        self._keep.append(data)
        if kind == "scalar":
            value: Any = c_api.Scalar(c_api.dtype_code(dtype), data.ctypes.data)
            code = c_api.ATTR_SCALAR
        else:
            value = c_api.Array(c_api.dtype_code(dtype), data.size, data.ctypes.data)
            code = c_api.ATTR_ARRAY
        self._keep.append(value)
        return code, ctypes.addressof(value)
