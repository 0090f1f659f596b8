"""Test records of the elementwise primitives: arithmetic, math functions, special functions.

References are written independently of the primitives' own numpy rules where that is
practical (Python integer arithmetic for integer division, float64 numpy for powers, the
`math` module for special functions); float16 and bfloat16 are computed in float32.
Values stay inside each function's domain and, for the derivative checks, away from the
points where a function jumps or has a kink.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

from jaxlite import lax
from jaxlite.lax.fused_multiply_add import fused_multiply_add
from records import Case, Record, standard_values

BOOL = (np.bool_,)
SIGNED = (np.int8, np.int16, np.int32)
UNSIGNED = (np.uint8, np.uint32)
INTS = SIGNED + UNSIGNED
FLOATS = (np.float16, ml_dtypes.bfloat16, np.float32)
COMPLEX = (np.complex64,)
NUMERIC = INTS + FLOATS + COMPLEX
INEXACT = FLOATS + COMPLEX

SHAPES = [(), (0,), (5,), (2, 3), (3, 1, 2)]
Values = Callable[[np.random.Generator, tuple, Any], np.ndarray]


# ----------------------------------------------------------------------------- values

def _real_values(draw: Callable[[np.random.Generator, tuple], np.ndarray]) -> Values:
    """Values from `draw` for real floats; standard values for other dtypes."""
    def values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
        if np.dtype(dtype).kind != "f" and np.dtype(dtype) != ml_dtypes.bfloat16:
            return standard_values(rng, shape, dtype)
        return draw(rng, shape).astype(dtype)
    return values


positive = _real_values(lambda rng, shape: rng.uniform(0.5, 3.0, shape))
unit_interval = _real_values(lambda rng, shape: rng.uniform(-0.9, 0.9, shape))
above_one = _real_values(lambda rng, shape: rng.uniform(1.2, 4.0, shape))
small = _real_values(lambda rng, shape: rng.uniform(-1.2, 1.2, shape))
nonzero = _real_values(
    lambda rng, shape: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 3.0, shape))
# Whole numbers plus a fraction in (0.1, 0.4) or (0.6, 0.9): far from the jumps of floor,
# ceil, round (at the halves) and sign, so finite differences see a flat function.
off_grid = _real_values(
    lambda rng, shape: rng.integers(-3, 3, shape) + rng.choice([0.1, 0.6], shape)
    + rng.uniform(0.0, 0.3, shape))
# lgamma and digamma: positive values and negative ones between the poles.
gamma_domain = _real_values(
    lambda rng, shape: np.where(rng.random(shape) < 0.7, rng.uniform(0.3, 5.0, shape),
                                -rng.integers(0, 3, shape) - rng.uniform(0.2, 0.8, shape)))


def nonzero_ints(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Nonzero values for every dtype (integers included)."""
    if np.issubdtype(np.dtype(dtype), np.integer):
        low = 1 if np.issubdtype(np.dtype(dtype), np.unsignedinteger) else -10
        draw = rng.integers(low, 10, shape)
        return np.where(draw == 0, 1, draw).astype(dtype)
    return nonzero(rng, shape, dtype)


def divisors(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Nonzero divisors, but now and then integer zeros: XLA defines x / 0 for integers."""
    if np.issubdtype(np.dtype(dtype), np.integer) and rng.random() < 0.3:
        return standard_values(rng, shape, dtype)
    return nonzero_ints(rng, shape, dtype)


def _wide(x: np.ndarray) -> np.ndarray:
    """float16 and bfloat16 as float32, for references computed at full precision."""
    if x.dtype in (np.float16, ml_dtypes.bfloat16):
        return x.astype(np.float32)
    return x


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    return lambda *args: function(*map(_wide, args))


# ------------------------------------------------------------------------ record makers

def _shape(rng: np.random.Generator) -> tuple:
    return SHAPES[rng.integers(len(SHAPES))]


def _unary(name: str, reference: Callable[..., Any], dtypes: Sequence[Any],
           values: Values = standard_values, **record: Any) -> Record:
    fun = getattr(lax, name)

    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        return Case(fun, _wrap(reference), [values(rng, _shape(rng), dtype)], values)
    return Record(name, make_case, dtypes=dtypes, **record)


def _binary(name: str, reference: Callable[..., Any], dtypes: Sequence[Any],
            values: Values = standard_values, second: Values | None = None,
            **record: Any) -> Record:
    """Both operands of one shape, or (one case in four) the second a scalar to broadcast."""
    fun = getattr(lax, name)
    second = values if second is None else second

    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        other = () if rng.random() < 0.25 else shape
        args = [values(rng, shape, dtype), second(rng, other, dtype)]
        return Case(fun, _wrap(reference), args, values)
    return Record(name, make_case, dtypes=dtypes, **record)


# --------------------------------------------------------------------------- references

def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    def one(a: int, b: int) -> int:
        if b == 0:
            return -1
        quotient = abs(a) // abs(b)
        return quotient if (a < 0) == (b < 0) else -quotient
    out = [one(int(a), int(b)) for a, b in zip(x.ravel(), y.ravel())]
    return np.array(out, np.int64).reshape(x.shape).astype(x.dtype)


def _div_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    if np.issubdtype(x.dtype, np.integer):
        return _int_div(x, y)
    return x / y


def _rem_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.broadcast_arrays(x, y)
    if np.issubdtype(x.dtype, np.integer):
        out = [int(a) if b == 0 else int(math.fmod(int(a), int(b)))
               for a, b in zip(x.ravel(), y.ravel())]
        return np.array(out, np.int64).reshape(x.shape).astype(x.dtype)
    return np.vectorize(math.fmod, otypes=[x.dtype])(x, y) if x.size else x.copy()


def _lexicographic(larger: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if not np.iscomplexobj(x):
            return np.maximum(x, y) if larger else np.minimum(x, y)
        a, b = (x, y) if larger else (y, x)
        pick_x = (a.real > b.real) | ((a.real == b.real) & (a.imag >= b.imag))
        return np.where(pick_x, x, y)
    return reference


def _round_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _sign_reference(x: np.ndarray) -> np.ndarray:
    if np.iscomplexobj(x):
        magnitude = np.abs(x)
        return np.where(magnitude == 0, 0, x / np.where(magnitude == 0, 1, magnitude))
    return np.sign(x)


def _vectorized(function: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    def reference(x: np.ndarray) -> np.ndarray:
        wide = np.asarray(x, np.float64)
        return np.vectorize(function, otypes=[np.float64])(wide) if wide.size else wide
    return reference


def _digamma_by_series(x: float) -> float:
    # An independent check: psi(x) = -gamma + sum_k (1/(k+1) - 1/(k+x)), with reflection.
    if x < 0.5:
        return _digamma_by_series(1 - x) - math.pi / math.tan(math.pi * x)
    if x < 30:  # the recurrence, then the asymptotic series at large x
        return _digamma_by_series(x + 1) - 1 / x
    return math.log(x) - 1 / (2 * x) - 1 / (12 * x ** 2) + 1 / (120 * x ** 4) \
        - 1 / (252 * x ** 6)


def _erf_inv_by_bisection(y: float) -> float:
    low, high = -6.0, 6.0
    for _ in range(80):
        middle = (low + high) / 2
        low, high = (middle, high) if math.erf(middle) < y else (low, middle)
    return (low + high) / 2


def _integer_pow_record() -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        integer = np.issubdtype(np.dtype(dtype), np.integer)
        y = int(rng.integers(0, 5)) if integer else int(rng.integers(-3, 5))
        values = nonzero if y < 0 else standard_values

        def reference(x: np.ndarray) -> np.ndarray:
            if integer:
                return np.power(x, y)  # numpy wraps around as XLA's multiplies do
            return np.power(_wide(x).astype(np.complex128 if np.iscomplexobj(x)
                                            else np.float64), y)
        return Case(lambda x: lax.integer_pow(x, y), reference,
                    [values(rng, _shape(rng), dtype)], values)
    return Record("integer_pow", make_case, dtypes=NUMERIC)


def _pow_record() -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        complex_base = np.iscomplexobj(np.zeros((), dtype))
        base = standard_values(rng, shape, dtype) if complex_base else positive(rng, shape,
                                                                                 dtype)
        if rng.random() < 0.3:
            exponent = rng.integers(-4, 5, shape).astype(np.int32)
        else:
            exponent = standard_values(rng, shape, dtype)

        def values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
            if np.issubdtype(np.dtype(dtype), np.integer):
                return rng.integers(-4, 5, shape).astype(dtype)
            if np.iscomplexobj(np.zeros((), dtype)):
                return standard_values(rng, shape, dtype)
            return positive(rng, shape, dtype)

        def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            wide = np.complex128 if np.iscomplexobj(x) else np.float64
            return np.power(_wide(x).astype(wide), _wide(y).astype(wide))
        return Case(lambda x, y: lax.pow(x, y), reference, [base, exponent], values)
    return Record("pow", make_case, dtypes=INEXACT)


def _round_record() -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        method = lax.RoundingMethod(int(rng.integers(0, 2)))
        # Ties (exact halves) are in test_elementwise.py: here finite differences must not
        # straddle a jump.
        x = off_grid(rng, _shape(rng), dtype)
        reference = np.rint if method == lax.RoundingMethod.TO_NEAREST_EVEN else _round_away
        return Case(lambda x: lax.round(x, method), _wrap(reference), [x], off_grid)
    return Record("round", make_case, dtypes=FLOATS)


def _rem_record() -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        if np.issubdtype(np.dtype(dtype), np.integer):
            args = [standard_values(rng, shape, dtype), standard_values(rng, shape, dtype)]
        else:
            # x / y = k + f with f in (0.2, 0.8): away from the jumps of the remainder.
            y = nonzero(rng, shape, dtype)
            ratio = rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)
            args = [(y.astype(np.float64) * ratio).astype(dtype), y]
        return Case(lambda x, y: lax.rem(x, y), _wrap(_rem_reference), args, nonzero_ints)
    return Record("rem", make_case, dtypes=INTS + FLOATS)


def _complex_record() -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        args = [standard_values(rng, shape, dtype), standard_values(rng, shape, dtype)]
        return Case(lambda x, y: lax.complex(x, y), lambda x, y: x + 1j * y, args)
    # The derivative checks pair cotangents with a complex inner product, which does not
    # fit these real-to-complex maps; tests/lax/test_elementwise.py checks their vjps.
    return Record("complex", make_case, dtypes=(np.float32,), grad=False)


def _atan2_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if np.iscomplexobj(x):
        x, y = x.astype(np.complex128), y.astype(np.complex128)
        return -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))
    return np.arctan2(x, y)


def _fma_reference(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c computed exactly (fractions), then rounded once to the operands' dtype
    (through float64, which is exact enough: the test's tolerance is an ulp)."""
    exact = [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
             for x, y, z in zip(a.ravel(), b.ravel(), c.ravel())]
    return np.array(exact, np.float64).astype(a.dtype).reshape(a.shape)


def _fma_record() -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        args = [standard_values(rng, shape, dtype) for _ in range(3)]
        return Case(fused_multiply_add, _fma_reference, args)
    return Record("fused_multiply_add", make_case, dtypes=(np.float32, np.float64),
                  notes="float32 and float64 only: one rounding of a * b + c")


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)))


RECORDS: list[Record] = [
    # arithmetic
    _binary("add", np.add, NUMERIC),
    _binary("sub", np.subtract, NUMERIC),
    _binary("mul", np.multiply, NUMERIC),
    _binary("div", _div_reference, NUMERIC, values=nonzero_ints, second=divisors),
    _rem_record(),
    _unary("neg", np.negative, NUMERIC),
    _integer_pow_record(),
    _unary("sign", _sign_reference, NUMERIC, values=off_grid),
    _unary("floor", np.floor, FLOATS, values=off_grid),
    _unary("ceil", np.ceil, FLOATS, values=off_grid),
    _unary("real", np.real, COMPLEX, grad=False),
    _unary("imag", np.imag, COMPLEX, grad=False),
    _unary("conj", lambda x: np.conj(x).astype(np.complex64), (np.float32,) + COMPLEX,
           grad=False),
    _complex_record(),
    # math functions
    _binary("max", _lexicographic(True), BOOL + NUMERIC),
    _binary("min", _lexicographic(False), BOOL + NUMERIC),
    _pow_record(),
    _unary("abs", np.abs, SIGNED + FLOATS + COMPLEX, values=nonzero),
    _round_record(),
    _unary("is_finite", np.isfinite, FLOATS, grad=False),
    _unary("square", np.square, NUMERIC),
    _unary("exp", np.exp, INEXACT),
    _unary("exp2", lambda x: np.power(2.0, x.astype(np.complex128 if np.iscomplexobj(x)
                                                   else np.float64)), INEXACT),
    _unary("expm1", np.expm1, INEXACT),
    _unary("log", np.log, INEXACT, values=positive),
    _unary("log1p", np.log1p, INEXACT, values=positive),
    _unary("sqrt", np.sqrt, INEXACT, values=positive),
    _unary("rsqrt", lambda x: 1 / np.sqrt(x), INEXACT, values=positive),
    _unary("cbrt", np.cbrt, FLOATS, values=nonzero),
    _unary("tanh", np.tanh, INEXACT),
    _unary("logistic", _logistic, INEXACT),
    _unary("sin", np.sin, INEXACT),
    _unary("cos", np.cos, INEXACT),
    _unary("tan", np.tan, INEXACT, values=small),
    _unary("asin", np.arcsin, INEXACT, values=unit_interval),
    _unary("acos", np.arccos, INEXACT, values=unit_interval),
    _unary("atan", np.arctan, INEXACT),
    _binary("atan2", _atan2_reference, INEXACT, second=positive),
    _fma_record(),
    _unary("sinh", np.sinh, INEXACT),
    _unary("cosh", np.cosh, INEXACT),
    _unary("asinh", np.arcsinh, INEXACT),
    _unary("acosh", np.arccosh, INEXACT, values=above_one),
    _unary("atanh", np.arctanh, INEXACT, values=unit_interval),
    # special functions
    _unary("erf", _vectorized(math.erf), FLOATS),
    _unary("erfc", _vectorized(math.erfc), FLOATS),
    _unary("erf_inv", _vectorized(_erf_inv_by_bisection), FLOATS, values=unit_interval),
    _unary("lgamma", _vectorized(math.lgamma), FLOATS, values=gamma_domain),
    _unary("digamma", _vectorized(_digamma_by_series), FLOATS, values=gamma_domain),
    # bfloat16 has no numpy nextafter to compare with: test_elementwise.py covers it.
    _binary("nextafter", np.nextafter, (np.float16, np.float32), grad=False),
]
