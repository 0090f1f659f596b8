"""Declarations for the differential tests of `jaxlite.numpy` against numpy.

A `Case` names one `jnp` function and how to call it: `fn(xp, *arrays, **kwargs)` runs with
`xp` = numpy (the reference), `jaxlite.numpy` (under test) or `jax.numpy` (the oracle that
`tools/gen_numpy_dtypes.py` asks once for result dtypes, committed under
`tests/data/numpy_dtypes/`). This module imports neither jaxlite nor jax, so that the same
declarations serve both sides.

Record modules are `tests/numpy/cases_*.py`, each with a list `CASES`.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path
from typing import Any, Callable

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

# Input dtype codes. With x64 off JAX canonicalizes 64-bit inputs to 32 bits; the committed
# dtype tables record whatever JAX does.
DTYPE_CODES = {
    "b1": np.dtype(bool), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128),
}
CODE_OF_DTYPE = {v: k for k, v in DTYPE_CODES.items()}

BOOL = ("b1",)
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("u8", "u16", "u32", "u64")
INTS = SIGNED + UNSIGNED
FLOATS = ("f16", "bf16", "f32", "f64")
COMPLEX = ("c64", "c128")
REAL = BOOL + INTS + FLOATS
NUMERIC = INTS + FLOATS + COMPLEX
ALL = BOOL + NUMERIC
INEXACT = FLOATS + COMPLEX


def small_shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 0,
                 max_side: int = 4) -> st.SearchStrategy:
    """Shapes with 0-d and empty axes included by default."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims,
                    max_size=max_dims).map(tuple)


@st.composite
def broadcastable_shapes(draw, nargs: int, min_dims: int = 0, max_dims: int = 3,
                         min_side: int = 0) -> tuple:
    """`nargs` shapes that broadcast together (some axes of size 1, some dropped)."""
    base = draw(small_shapes(min_dims, max_dims, min_side))
    shapes = []
    for _ in range(nargs):
        drop = draw(st.integers(0, len(base) - min_dims)) if len(base) > min_dims else 0
        shape = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else side
                      for side in base[drop:])
        shapes.append(shape)
    return tuple(shapes)


def same_shapes(nargs: int, **kwargs) -> st.SearchStrategy:
    """`nargs` copies of one drawn shape."""
    return small_shapes(**kwargs).map(lambda shape: (shape,) * nargs)


@st.composite
def axis_kwargs(draw, shapes, name: str = "axis", allow_none: bool = True,
                allow_tuple: bool = False) -> dict:
    """An `axis` argument valid for the first shape (negative axes included)."""
    ndim = len(shapes[0])
    choices = [None] if allow_none or ndim == 0 else []
    if ndim:
        choices += list(range(-ndim, ndim))
    axis = draw(st.sampled_from(choices))
    if allow_tuple and ndim >= 2 and draw(st.booleans()):
        axis = tuple(sorted(draw(st.sets(st.integers(0, ndim - 1), min_size=1))))
    return {name: axis}


@dataclasses.dataclass(frozen=True)
class Case:
    """How to test one `jaxlite.numpy` function against numpy.

    name : the `jnp` attribute this case covers (the coverage test reads it).
    fn : `fn(xp, *arrays, **kwargs)`; `xp` is numpy, jaxlite.numpy or jax.numpy.
    nargs : how many array arguments `fn` takes.
    dtypes : input dtype codes (every array argument gets the same dtype).
    shapes : a strategy for the tuple of `nargs` shapes.
    kwargs : `kwargs(shapes)` gives a strategy for static keyword arguments, or None.
    domain : where values are drawn: "real", "positive", "unit", "above1", "small", "int",
        or "special" (floats half from NaN, +-inf, +-0 and a few exact values; integers as
        for "real").
    example_shapes, example_kwargs : the fixed call used for the dtype table.
    grad, jit, vmap : which transformation tests apply.
    ulps : tolerance in units of the result dtype's epsilon (scaled by the values).
    upcast : the numpy reference runs on widened inputs (signed ints to int64, unsigned to
        uint64, floats to float64, complex to complex128), so that it is exact where jnp
        rounds; integer results are compared after wrapping to jnp's dtype. Set False for
        functions whose meaning depends on the input dtype itself.
    variant : a label when one function has several cases.
    """
    name: str
    fn: Callable[..., Any]
    nargs: int = 1
    dtypes: tuple = ALL
    shapes: Any = None
    kwargs: Callable[[tuple], st.SearchStrategy] | None = None
    domain: str = "real"
    example_shapes: tuple | None = None
    example_kwargs: dict = dataclasses.field(default_factory=dict)
    grad: bool = True
    jit: bool = True
    vmap: bool = True
    ulps: float = 8.0
    upcast: bool = True
    variant: str = ""

    @property
    def key(self) -> str:
        return f"{self.name}:{self.variant}" if self.variant else self.name

    def shape_strategy(self) -> st.SearchStrategy:
        if self.shapes is not None:
            return self.shapes
        return broadcastable_shapes(self.nargs)

    def fixed_shapes(self) -> tuple:
        return self.example_shapes if self.example_shapes is not None else ((3,),) * self.nargs


def draw_values(rng: np.random.Generator, shape, code: str, domain: str = "real") -> np.ndarray:
    """Values for one argument: small integers, or floats in the case's domain."""
    dtype = DTYPE_CODES[code]
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        low = {"positive": 1, "unit": 0, "above1": 1}.get(domain, 0 if dtype.kind == "u" else -9)
        high = {"unit": 1}.get(domain, 9)
        return rng.integers(low, high + 1, shape).astype(dtype)
    if domain == "special":
        real = _special_values(rng, shape)
        if dtype.kind == "c":
            return (real + 1j * _special_values(rng, shape)).astype(dtype)
        return real.astype(dtype)
    low, high = {"positive": (0.1, 4.0), "unit": (-0.9, 0.9), "above1": (1.1, 4.0),
                 "small": (-1.2, 1.2), "int": (-5, 5)}.get(domain, (-3.0, 3.0))
    real = rng.uniform(low, high, shape)
    if domain == "int":
        real = np.round(real)
    if dtype.kind == "c":
        return (real + 1j * rng.uniform(-1.0, 1.0, shape)).astype(dtype)
    return real.astype(dtype)


# Values that classification and cleanup functions must get right; exactly representable in
# every float dtype, so that the tolerances of `isclose` meet them without rounding.
SPECIAL_VALUES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0])


def _special_values(rng: np.random.Generator, shape) -> np.ndarray:
    """Half the entries from SPECIAL_VALUES, half uniform in [-3, 3]."""
    pick = SPECIAL_VALUES[rng.integers(0, len(SPECIAL_VALUES), shape)]
    return np.where(rng.random(shape) < 0.5, pick, rng.uniform(-3.0, 3.0, shape))


def example_args(case: Case, code: str) -> list:
    """The deterministic arguments behind a case's dtype-table entry."""
    rng = np.random.default_rng(0)
    return [draw_values(rng, shape, code, case.domain) for shape in case.fixed_shapes()]


def dtype_code(value) -> str:
    """`f32`, or `f32*` for a weak-typed result (any array with `.dtype`)."""
    code = CODE_OF_DTYPE[np.dtype(value.dtype)]
    return code + ("*" if getattr(value, "weak_type", False) else "")


def output_leaves(value) -> list:
    """The arrays in a result: tuples, lists and namedtuples are flattened in order."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in output_leaves(item)]
    return [value]


CASES_DIR = Path(__file__).parent
TABLE_DIR = CASES_DIR.parent / "data" / "numpy_dtypes"


def load_cases() -> tuple[list[Case], dict]:
    """Every `CASES` of `cases_*.py` here, and the dtype tables committed for them."""
    cases, tables = [], {}
    for path in sorted(CASES_DIR.glob("cases_*.py")):
        cases.extend(importlib.import_module(path.stem).CASES)
        table_path = TABLE_DIR / f"{path.stem}.json"
        if table_path.exists():
            tables.update(json.loads(table_path.read_text()))
    return cases, tables
