"""HLO shapes: element type, dimensions and layout, or a tuple of shapes (mirrors xla::Shape).

The text form follows XLA's: `f32[4,8]{1,0}` is a float32 array of 4x8 whose minor-to-major
layout is {1,0} (row-major); scalars print as `f32[]`; tuples as `(f32[], s32[3]{0})`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxlite.core import dtypes

# numpy dtype name -> XLA primitive type name, and back.
_XLA_TYPE_NAMES = {
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}
_DTYPES_OF_NAMES = {xla: np.dtype(dtypes.bfloat16 if name == "bfloat16" else name)
                    for name, xla in _XLA_TYPE_NAMES.items()}
_NAMES_OF_DTYPES = {dtype: xla for xla, dtype in _DTYPES_OF_NAMES.items()}


def xla_type_name(dtype: Any) -> str:
    """The XLA name of a numpy dtype (f32, s32, pred, ...)."""
    # Printing a module asks this for every instruction; numpy's `dtype.name` is slow.
    known = _NAMES_OF_DTYPES.get(dtype) if isinstance(dtype, np.dtype) else None
    if known is not None:
        return known
    name = np.dtype(dtype).name
    try:
        return _XLA_TYPE_NAMES[name]
    except KeyError:
        raise TypeError(f"dtype {name} has no HLO element type") from None


def dtype_of_type_name(name: str) -> np.dtype:
    """The numpy dtype of an XLA element type name."""
    try:
        return _DTYPES_OF_NAMES[name]
    except KeyError:
        raise ValueError(f"unknown HLO element type {name!r}") from None


@dataclass(frozen=True)
class Shape:
    """An array shape with layout, or a tuple of shapes (`tuple_shapes` set, `dtype` None).

    `layout` is minor-to-major: the first entry is the dimension that varies fastest in
    memory. `None` means the default row-major layout.
    """

    dtype: np.dtype | None
    dims: tuple[int, ...] = ()
    layout: tuple[int, ...] | None = None
    tuple_shapes: tuple["Shape", ...] | None = None

    def __post_init__(self) -> None:
        if self.tuple_shapes is None:
            object.__setattr__(self, "dtype", np.dtype(self.dtype))
            # A symbolic dimension (`core.shape_poly.DimExpr`, in the modules of
            # `jaxlite.export` with shape polymorphism) stays as it is.
            object.__setattr__(self, "dims", tuple(
                d if getattr(d, "is_symbolic_dim", False) else int(d) for d in self.dims))
            if self.layout is None:
                object.__setattr__(self, "layout", tuple(range(len(self.dims) - 1, -1, -1)))
            elif sorted(self.layout) != list(range(len(self.dims))):
                raise ValueError(f"layout {self.layout} is not a permutation of the "
                                 f"dimensions of {self.dims}")

    @staticmethod
    def tuple(shapes: "list[Shape] | tuple[Shape, ...]") -> "Shape":
        return Shape(None, (), None, tuple(shapes))

    @property
    def is_tuple(self) -> bool:
        return self.tuple_shapes is not None

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def size(self) -> int:
        return math.prod(self.dims)

    @property
    def nbytes(self) -> int:
        if self.is_tuple:
            return sum(s.nbytes for s in self.tuple_shapes or ())
        return self.size * np.dtype(self.dtype).itemsize

    def with_dims(self, dims: tuple[int, ...]) -> "Shape":
        return Shape(self.dtype, tuple(dims))

    def with_dtype(self, dtype: Any) -> "Shape":
        return Shape(np.dtype(dtype), self.dims, self.layout)

    def same_array(self, other: "Shape") -> bool:
        """Equal element type and dimensions (layouts may differ)."""
        if self.is_tuple or other.is_tuple:
            return self.is_tuple and other.is_tuple and len(self.tuple_shapes or ()) == len(
                other.tuple_shapes or ()) and all(
                a.same_array(b) for a, b in zip(self.tuple_shapes or (), other.tuple_shapes or ()))
        return self.dtype == other.dtype and self.dims == other.dims

    def __str__(self) -> str:
        if self.is_tuple:
            return "(" + ", ".join(str(s) for s in self.tuple_shapes or ()) + ")"
        text = f"{xla_type_name(self.dtype)}[{','.join(str(d) for d in self.dims)}]"
        if self.dims:
            text += "{" + ",".join(str(d) for d in self.layout or ()) + "}"
        return text

    def __repr__(self) -> str:
        return f"Shape({self})"


def array_shape(dtype: Any, dims: tuple[int, ...] | list[int]) -> Shape:
    return Shape(np.dtype(dtype), tuple(dims))
