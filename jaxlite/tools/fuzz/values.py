"""Dtypes and input values for the fuzzer: the dtype lists, categories and edge values.

Every choice goes through a `Draw` (an integer in a range), so that the same code generates
from a seeded `random.Random` or from hypothesis, which then shrinks a program by shrinking
its draws. Choices are listed simplest first, because hypothesis shrinks draws towards the
lower end of their range.
"""
from __future__ import annotations

import random

import ml_dtypes
import numpy as np

from jaxlite.tools.fuzz.interp import dtype_of, scalar_to_json

DTYPES = ("float32", "int32", "bool", "int8", "uint8", "int16", "uint32", "float16",
          "bfloat16", "complex64")
X64_DTYPES = ("float64", "int64", "uint64", "complex128")
INDEX_DTYPES = ("int32", "int8", "uint8", "int16", "uint32")
X64_INDEX_DTYPES = ("int64", "uint64")
# Dimension sizes in the order hypothesis shrinks towards: 1 first; empty (0) one time in 8.
DIM_SIZES = (1, 2, 3, 0, 4, 5, 2, 3)


class Draw:
    """The source of choices: `integer(lo, hi)` (inclusive) and helpers over it."""

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def choice(self, options):
        return options[self.integer(0, len(options) - 1)]

    def boolean(self, chance_in: int = 2) -> bool:
        """True with probability about 1/chance_in (shrinks to False)."""
        return self.integer(0, chance_in - 1) == chance_in - 1


class RandomDraw(Draw):
    """Choices from a seeded `random.Random`."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)


class HypothesisDraw(Draw):
    """Choices from hypothesis's `data` object, so that hypothesis can shrink them."""

    def __init__(self, draw_fn, integers):
        self._draw = draw_fn
        self._integers = integers

    def integer(self, lo, hi):
        return self._draw(self._integers(lo, hi))


def dtype_name(dtype) -> str:
    """The name of a dtype given as a name, a type or a dtype ("bfloat16" included)."""
    return dtype if isinstance(dtype, str) else np.dtype(dtype).name


def category(dtype) -> str:
    """'bool', 'int' (signed), 'uint', 'float' or 'complex'."""
    name = dtype_name(dtype)
    if name == "bool":
        return "bool"
    if name.startswith("int"):
        return "int"
    if name.startswith("uint"):
        return "uint"
    if name.startswith("complex"):
        return "complex"
    return "float"


def is_integer(dtype) -> bool:
    return category(dtype) in ("int", "uint")


def float_info(dtype):
    return ml_dtypes.finfo(dtype_of(dtype_name(dtype)))


def _float_pool(dtype) -> list[float]:
    info = float_info(dtype)
    big = float(info.max)
    return [0.0, 1.0, -1.0, 0.5, 2.0, -0.0, 3.0, -2.5, 10.0, 100.0, float("inf"),
            float("-inf"), float("nan"), big, -big, float(info.tiny), -float(info.tiny),
            float(info.eps), 1e4, -7.25]


def _int_pool(dtype) -> list[int]:
    info = np.iinfo(np.dtype(dtype))
    pool = [0, 1, -1, 2, 3, -2, 7, 100, int(info.min), int(info.max), int(info.max) - 1,
            int(info.min) + 1, 1000, 31, 8]
    return [v for v in pool if info.min <= v <= info.max]


def _round_to(value, dtype):
    """`value` as the nearest value of `dtype`, back as a Python scalar."""
    return np.asarray(value).astype(dtype_of(dtype_name(dtype))).item()


def draw_scalar(draw: Draw, dtype, smooth: bool = False):
    """One input element of `dtype`: an edge value or an arbitrary one."""
    cat = category(dtype)
    if cat == "bool":
        return draw.boolean()
    if smooth:
        return _round_to(draw.integer(-300, 300) / 100, dtype)
    if cat in ("int", "uint"):
        pool = _int_pool(dtype)
        i = draw.integer(0, len(pool))
        if i < len(pool):
            return pool[i]
        info = np.iinfo(np.dtype(dtype))
        return draw.integer(max(int(info.min), -50), min(int(info.max), 50))
    part_dtype = np.float32 if dtype_name(dtype) == "complex64" else np.float64
    if cat == "complex":
        return complex(_draw_float(draw, part_dtype), _draw_float(draw, part_dtype))
    return _draw_float(draw, dtype)


def _draw_float(draw, dtype):
    pool = _float_pool(dtype)
    i = draw.integer(0, len(pool))
    if i < len(pool):
        return _round_to(pool[i], dtype)
    return _round_to(draw.integer(-4000, 4000) / 64, dtype)


def draw_shape(draw: Draw, max_ndim: int = 3) -> list[int]:
    return [draw.choice(DIM_SIZES) for _ in range(draw.integer(0, max_ndim))]


def input_spec(draw: Draw, dtype: str, shape, smooth: bool = False) -> dict:
    """An input of the program spec: dtype, shape and values drawn element by element."""
    size = int(np.prod(shape, dtype=np.int64))
    values = [draw_scalar(draw, dtype, smooth) for _ in range(size)]
    if smooth:  # distinct values: ties are kinks of max and sort, where derivatives jump
        values = [_round_to(v + j * 1.23e-4, dtype) for j, v in enumerate(values)]
    values = [scalar_to_json(v) for v in values]
    return {"dtype": dtype, "shape": list(shape), "values": values}


def index_spec(draw: Draw, dtype: str, shape, n: int, in_bounds: bool = False) -> dict:
    """An index array of `dtype` for an axis of size `n`: mostly valid, negative where signed."""
    info = np.iinfo(np.dtype(dtype))
    lo = 0 if category(dtype) == "uint" else -n
    values = []
    for _ in range(int(np.prod(shape, dtype=np.int64))):
        if not in_bounds and draw.boolean(8):
            v = draw.choice([n, -n - 1, int(info.max), int(info.min), n + 3])
        else:
            v = draw.integer(lo, max(n - 1, lo))
        values.append(int(min(max(v, info.min), info.max)))
    return {"dtype": dtype, "shape": list(shape), "values": values}


def has_subnormal(x) -> bool:
    """Whether a float or complex array holds a subnormal (nonzero, below the smallest normal)."""
    a = np.asarray(x)
    if category(a.dtype) not in ("float", "complex"):
        return False
    if category(a.dtype) == "complex":
        return has_subnormal(a.real) or has_subnormal(a.imag)
    tiny = float(float_info(a.dtype).tiny)
    f = np.abs(a.astype(np.float64))
    return bool(np.any((f > 0) & (f < tiny)))
