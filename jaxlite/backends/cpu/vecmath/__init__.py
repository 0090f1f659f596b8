"""jaxlite's vector math library: elementwise transcendental functions emitted as LLVM IR.

LLVM's `llvm.exp`, `llvm.sin`, ... intrinsics become one scalar libm call per lane when no
vector library is configured (XLA:CPU ships its own polynomial kernels for the same reason).
This package emits each function as a branch-free LLVM IR function on vectors of any width:
`<16 x float>` / `<8 x double>` for AVX-512, `<8 x float>` / `<4 x double>` for AVX2, or plain
scalars (width 1) for loop tails (LLVM's loop vectorizer also vectorizes a scalar loop that
calls them). Only instructions that lower to a few machine instructions are used (fma, sqrt,
floor, bit casts, integer ops, compares, selects, and gathers from small constant tables in
float64 pow and lgamma); the one rare slow path (trigonometric arguments beyond 2**16 / 2**27)
sits behind one branch on "any lane needs it". float32 pow, lgamma and digamma work in float64
inside and round once.

    emit("exp", np.float32, 16)        # text of `define internal <16 x float> @jl_exp_f32x16`
    definitions([("exp", np.float32, 16), ("tanh", np.float32, 1)])   # a module's set

The functions are `internal` and `alwaysinline`: every kernel module includes the definitions
it uses (once, via `definitions`), and the optimizer inlines them into the vectorized loops.
Intrinsics are not declared (LLVM's parser declares them on first use), so the text can be
appended to any module. Each function's docstring states its accuracy (a bound and the maximum
ulp error measured over the sweeps of tests/backends/cpu/test_vecmath.py against float64,
long-double or mpmath references), and the special values follow numpy (C99) and XLA.
The coefficients come from tools/fit_vecmath.py (generated into _coeffs.py).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from . import exp_log, hyperbolic, power, special, trig
from ._ir import NUMPY_NAME, Builder, V

FUNCTIONS: dict[str, Callable[..., V]] = {}
for _family in (exp_log, hyperbolic, trig, power, special):
    FUNCTIONS.update(_family.FUNCTIONS)

ARITY = {"atan2": 2, "pow": 2}


def _elem(dtype: object) -> str:
    dt = np.dtype(dtype)  # type: ignore[call-overload]
    if dt == np.float32:
        return "float"
    if dt == np.float64:
        return "double"
    raise TypeError(f"vecmath: dtype must be float32 or float64, got {dt}")


def function_name(name: str, dtype: object, width: int) -> str:
    """The IR name (without '@') of `name` for `dtype` and `width`, e.g. 'jl_exp_f32x16'."""
    if name not in FUNCTIONS:
        raise ValueError(f"vecmath: unknown function {name!r}; known: {sorted(FUNCTIONS)}")
    suffix = NUMPY_NAME[_elem(dtype)] + (f"x{width}" if width > 1 else "")
    return f"jl_{name}_{suffix}"


def emit(name: str, dtype: object, width: int) -> str:
    """The IR text defining `@jl_<name>_<f32|f64>[x<width>]` (and any constant table it reads).

    The function takes `arity(name)` arguments and returns one value, all of type
    `<width x float|double>` (`float`/`double` when width is 1).
    """
    if width < 1 or width & (width - 1):
        raise ValueError(f"vecmath.emit: width must be a power of two, got {width}")
    elem = _elem(dtype)
    fname = function_name(name, dtype, width)
    b = Builder(width)
    b.fname = fname
    args = [V(f"%a{i}", elem, b) for i in range(arity(name))]
    result = FUNCTIONS[name](*args)
    ty = b.ty(elem)
    params = ", ".join(f"{ty} {a.ref}" for a in args)
    head = f"define internal {ty} @{fname}({params}) alwaysinline nounwind {{\nentry:"
    body = "\n".join([head, *b.lines, f"  ret {ty} {result.ref}", "}"])
    return "\n".join([*b.globals, body]) + "\n"


def arity(name: str) -> int:
    """How many arguments the function takes (2 for atan2 and pow, else 1)."""
    return ARITY.get(name, 1)


def definitions(names_and_types: Iterable[tuple[str, object, int]]) -> str:
    """The definitions of all requested (name, dtype, width) functions, each once."""
    seen: dict[str, str] = {}
    for name, dtype, width in names_and_types:
        fname = function_name(name, dtype, width)
        if fname not in seen:
            seen[fname] = emit(name, dtype, width)
    return "\n".join(seen.values())


__all__ = ["FUNCTIONS", "arity", "definitions", "emit", "function_name"]
