"""StableHLO's spelling of types and attributes, as tables a printer and a parser share.

Element types: `f32`, `bf16`, `i1` (pred), `i32` (s32), `ui8` (u8), `complex<f32>` (c64).
Tensor types: `tensor<3x4xf32>`, `tensor<f32>` for a scalar. Attributes: `1 : i64`,
`array<i64: 1, 2>`, `array<i1: true>`, `dense<[[0, 1]]> : tensor<1x2xi64>`, and the enum
attributes `#stablehlo<comparison_direction LT>`. Constants: `dense<1.5>` (the shortest
decimal that reads back in the element type), `dense<[1, 2]>`, `dense<(1.0, 2.0)>`
(complex), `dense<true>`, a splat `dense<0.0>` for any shape, and for more than
`MAX_LISTED_ELEMENTS` elements or non-finite floats the raw little-endian bytes
`dense<"0x0000C07F">`.

Each table maps our names to StableHLO's; its inverse (`*_OF_*`) is what a parser reads.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from jaxlite.xla.shape import Shape, dtype_of_type_name, xla_type_name

# XLA element type name -> StableHLO element type.
ELEMENT_TYPES: dict[str, str] = {
    "pred": "i1", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64",
    "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64",
    "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
    "c64": "complex<f32>", "c128": "complex<f64>",
}
XLA_TYPE_OF_ELEMENT_TYPE: dict[str, str] = {v: k for k, v in ELEMENT_TYPES.items()}

# The `compare_type` StableHLO infers when HLO's compare leaves it out, by numpy kind.
DEFAULT_COMPARE_TYPES: dict[str, str] = {
    "f": "FLOAT", "c": "FLOAT", "V": "FLOAT",  # V: ml_dtypes' bfloat16
    "i": "SIGNED", "u": "UNSIGNED", "b": "UNSIGNED",
}

# Constants with more elements than this print as raw bytes (`dense<"0x...">`).
MAX_LISTED_ELEMENTS = 64


def element_type(dtype: Any) -> str:
    """StableHLO's name of a numpy dtype's element type (`f32`, `i1`, `complex<f64>`)."""
    return ELEMENT_TYPES[xla_type_name(dtype)]


def dtype_of_element_type(name: str) -> np.dtype:
    """The numpy dtype of a StableHLO element type (the parser's direction)."""
    try:
        return dtype_of_type_name(XLA_TYPE_OF_ELEMENT_TYPE[name])
    except KeyError:
        raise ValueError(f"unknown StableHLO element type {name!r}") from None


def tensor_type(shape: Shape) -> str:
    """`tensor<3x4xf32>` for an array shape (tuples have no tensor type: flatten them); a
    symbolic dimension (shape polymorphism) is dynamic, `tensor<?x4xf32>`."""
    if shape.is_tuple:
        raise TypeError(f"a tuple shape {shape} has no tensor type; flatten it first")
    dims = "".join("?x" if getattr(d, "is_symbolic_dim", False) else f"{d}x"
                   for d in shape.dims)
    return f"tensor<{dims}{element_type(shape.dtype)}>"


def leaf_shapes(shape: Shape) -> list[Shape]:
    """The array shapes of a (possibly nested) tuple shape, depth first."""
    if not shape.is_tuple:
        return [shape]
    return [leaf for part in shape.tuple_shapes or () for leaf in leaf_shapes(part)]


def function_type(inputs: Sequence[str], results: Sequence[str]) -> str:
    """`(tensor<f32>, tensor<f32>) -> tensor<f32>`; several or no results in parentheses."""
    out = results[0] if len(results) == 1 else f"({', '.join(results)})"
    return f"({', '.join(inputs)}) -> {out}"


# ----------------------------------------------------------------------------- attributes

def i64(value: int) -> str:
    return f"{int(value)} : i64"


def i64_array(values: Iterable[int]) -> str:
    """`array<i64: 1, 2>` (`array<i64>` when empty): a dense array of dimensions."""
    items = ", ".join(str(int(v)) for v in values)
    return f"array<i64: {items}>" if items else "array<i64>"


def bool_array(values: Iterable[bool]) -> str:
    items = ", ".join("true" if v else "false" for v in values)
    return f"array<i1: {items}>" if items else "array<i1>"


def boolean(value: Any) -> str:
    return "true" if value else "false"


def padding_attr(low: Sequence[int], high: Sequence[int]) -> str:
    """`dense<[[lo, hi], ...]> : tensor<Nx2xi64>`, the padding of windowed ops."""
    rows = ", ".join(f"[{int(lo)}, {int(hi)}]" for lo, hi in zip(low, high))
    return f"dense<[{rows}]> : tensor<{len(low)}x2xi64>" if rows else \
        "dense<> : tensor<0x2xi64>"


def enum_attr(kind: str, value: str) -> str:
    """`#stablehlo<comparison_direction LT>` and the like."""
    return f"#stablehlo<{kind} {value}>"


def dims_list(values: Iterable[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def struct_attr(name: str, fields: Sequence[tuple[str, Any]]) -> str:
    """`#stablehlo.gather<offset_dims = [1], index_vector_dim = 1>`: lists left out when
    empty, as StableHLO prints them."""
    parts = []
    for key, value in fields:
        if isinstance(value, (tuple, list)):
            if value:
                parts.append(f"{key} = {dims_list(value)}")
        else:
            parts.append(f"{key} = {int(value)}")
    return f"#stablehlo.{name}<{', '.join(parts)}>"


def string(value: str) -> str:
    """An MLIR string literal: quotes, backslashes and control characters escaped as hex."""
    out = []
    for char in value:
        if char in '"\\' or not char.isprintable() or ord(char) > 126:
            out.extend(f"\\{byte:02X}" for byte in char.encode("utf-8"))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


# ----------------------------------------------------------------------------- constants

def dense_literal(array: np.ndarray) -> str:
    """The `dense<...>` attribute holding `array` (without its `: tensor<...>` type)."""
    array = np.asarray(array)
    if array.size == 0:
        return "dense<>"
    flat = array.reshape(-1)
    if array.dtype != np.bool_ and (flat.size > MAX_LISTED_ELEMENTS or not _all_finite(flat)):
        return f'dense<"0x{_hex_bytes(array)}">'
    if bool(np.all(flat == flat[0])) and _same_bits(flat):
        return f"dense<{_element(flat[0], array.dtype)}>"  # a splat
    return f"dense<{_nested(array)}>"


def _nested(array: np.ndarray) -> str:
    if array.ndim == 0:
        return _element(array[()], array.dtype)
    return "[" + ", ".join(_nested(row) for row in array) + "]"


def _element(value: Any, dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return "true" if value else "false"
    if dtype.kind in "iu":
        return str(int(value))
    if dtype.kind == "c":
        part = np.float32 if dtype.itemsize == 8 else np.float64
        return f"({_float(part(value.real))}, {_float(part(value.imag))})"
    return _float(value)


def _float(value: Any) -> str:
    """The shortest decimal that reads back as `value` in its own type; MLIR's float
    literals need a point (`1.0e+20`, not `1e+20`)."""
    if not isinstance(value, (np.float16, np.float32, np.float64)):
        value = np.float32(value)  # bfloat16: exact in float32, and rounds back to itself
    text = str(value)
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = mantissa + ".0" + (f"e{exponent}" if exponent else "")
    return text


def _all_finite(flat: np.ndarray) -> bool:
    if flat.dtype.kind in "iub":
        return True
    with np.errstate(invalid="ignore"):
        values = flat.astype(np.complex128 if flat.dtype.kind == "c" else np.float64)
    return bool(np.all(np.isfinite(values)))


def _same_bits(flat: np.ndarray) -> bool:
    # -0.0 == 0.0: a splat must repeat the very same bits.
    raw = flat.view(np.uint8).reshape(flat.size, -1)
    return bool(np.all(raw == raw[0]))


def _hex_bytes(array: np.ndarray) -> str:
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return np.ascontiguousarray(little).tobytes().hex().upper()
