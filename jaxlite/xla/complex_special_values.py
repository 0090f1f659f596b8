"""Complex elementary functions with XLA's values at special inputs.

numpy (and the C library's cexp, clog, csqrt, ...) follow C99 Annex G at infinities, NaNs
and signed zeros; XLA, and so JAX, does not. These functions compute numpy's value for
ordinary inputs (accurate to an ulp or two) and replace it where XLA's differs, the rules
measured on JAX 0.10.2 (tests/numpy/test_complex_special_values.py):

- exp, expm1: a zero imaginary part gives (exp(a), +0) / (expm1(a) + 0, +0), so exp(inf + 0j)
  is inf + 0j and exp(x - 0j) has a +0 imaginary part; an infinite real part with an
  infinite or NaN imaginary part gives NaN + NaNj (XLA multiplies exp(a) by cos(b) and
  sin(b) plainly);
- log, log1p: any NaN part gives NaN + NaNj (log(inf + NaNj) is inf + NaNj in C99);
- sqrt: the sign of a zero imaginary part is ignored (sqrt(-1.5 - 0j) is +1.2247j), and
  any NaN part gives NaN + NaNj;
- sign: x / |x| part by part (|x| NaN when a part is NaN), x itself where |x| is 0;
- tanh: a zero imaginary part, or an infinite real part with a non-finite imaginary part,
  gives a +0 imaginary part; a zero real part with a non-finite imaginary part gives
  NaN + NaNj;
- tan: tan(a + bi) = -i tanh(-b + ai) with that tanh (so tan(-0 + 1.5j) has a +0 real
  part and tan(inf + 0j) is NaN + NaNj);
- arcsin: a zero imaginary part counts as +0 (arcsin(1.5 - 0j) has a +0.96 imaginary
  part); a NaN imaginary part gives NaN + NaNj, except where |a| >= sqrt(max float) / 8:
  (NaN, log 2|a|) (the threshold measured on JAX by bisection, in both widths);
- arccos, arccosh: the same rules, the large-|a| value being (NaN, -log 2|a|) and
  (log 2|a|, NaN);
- arcsinh: -i arcsin(i x) with that arcsin (so arcsinh(-0 + 1.5j) has a +0.96 real part);
- arctanh: where |a| > 4 / eps**2 (past the next float above it, bisected on JAX in both
  widths) or a part is NaN, the imaginary part is pi/2 if b >= 0 (a -0 too), else -pi/2
  (NaN too); a NaN imaginary part gives a NaN real part, +-0 where a is infinite; a zero
  real part gives +0 whatever its sign, NaN +- inf j a -0 real part, and +-1 + bj with
  b*b at most the smallest normal float an infinite real part (measured by bisection);
- arctan: -i arctanh(i x) with that arctanh (so arctan(nan + 0j) is -pi/2 + NaNj);
- power: XLA's polar formula in double precision; a zero exponent gives 1 whatever the
  base, so does a base of exactly 1 whatever the exponent (NaN and infinities too); a zero
  base gives 0 for a positive real exponent, else NaN.

The cpu backend's code generation (`backends/cpu/codegen/complex_values.py`) applies the
same rules after the C library's function; eager mode and the HLO evaluator call these.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["arctanh_far_limit", "complex_arccos", "complex_arccosh", "complex_arcsin",
           "complex_arcsinh", "complex_arctan", "complex_arctanh", "complex_exp",
           "complex_expm1", "complex_log", "complex_log1p", "complex_power", "complex_sqrt",
           "complex_sign", "complex_tan", "complex_tanh", "for_complex", "join_parts"]


def join_parts(re: np.ndarray, im: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A complex array from its parts (unlike re + 1j * im, keeps infinite parts)."""
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


def _nan_where(pred: np.ndarray, value: np.ndarray) -> np.ndarray:
    return np.where(pred, np.array(complex(np.nan, np.nan), value.dtype), value)


def _any_nan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x.real) | np.isnan(x.imag)


def _real_on_zero_imag(x: np.ndarray, real_value: np.ndarray, value: np.ndarray) -> np.ndarray:
    """`value`, but (real_value, +0) where x's imaginary part is a zero of either sign, and
    NaN + NaNj where x's real part is infinite and its imaginary part is not finite."""
    zero_imag = x.imag == 0
    value = np.where(zero_imag, join_parts(real_value, np.zeros_like(x.real), x.dtype), value)
    return _nan_where(np.isinf(x.real) & ~np.isfinite(x.imag), value)


def complex_exp(x: np.ndarray) -> np.ndarray:
    """Complex exp with XLA's special values (mirrors `jax.lax.exp` on complex)."""
    with np.errstate(all="ignore"):
        return _real_on_zero_imag(x, np.exp(x.real), np.exp(x)).astype(x.dtype)


def complex_expm1(x: np.ndarray) -> np.ndarray:
    """Complex expm1 with XLA's special values (mirrors `jax.lax.expm1` on complex).
    Ordinary inputs: numpy's formula, expm1(a) cos(b) - 2 sin(b/2)**2 + i exp(a) sin(b)."""
    with np.errstate(all="ignore"):
        real_expm1 = np.expm1(x.real) + x.real.dtype.type(0)  # expm1(-0 + 0j) is +0
        return _real_on_zero_imag(x, real_expm1, np.expm1(x)).astype(x.dtype)


def complex_log(x: np.ndarray) -> np.ndarray:
    """Complex log with XLA's special values (mirrors `jax.lax.log` on complex)."""
    with np.errstate(all="ignore"):
        return _nan_where(_any_nan(x), np.log(x)).astype(x.dtype)


def complex_log1p(x: np.ndarray) -> np.ndarray:
    """Complex log1p with XLA's special values (mirrors `jax.lax.log1p` on complex)."""
    with np.errstate(all="ignore"):
        return _nan_where(_any_nan(x), np.log1p(x)).astype(x.dtype)


def complex_sqrt(x: np.ndarray) -> np.ndarray:
    """Complex sqrt with XLA's special values (mirrors `jax.lax.sqrt` on complex)."""
    unsigned = np.where(x.imag == 0, join_parts(x.real, np.zeros_like(x.real), x.dtype), x)
    with np.errstate(all="ignore"):
        return _nan_where(_any_nan(x), np.sqrt(unsigned)).astype(x.dtype)


def complex_sign(x: np.ndarray) -> np.ndarray:
    """Complex sign, x / |x| part by part, x where |x| is 0 (mirrors `jax.lax.sign`)."""
    with np.errstate(all="ignore"):
        magnitude = np.where(_any_nan(x), np.nan, np.hypot(x.real, x.imag))
        unit = join_parts(x.real / magnitude, x.imag / magnitude, x.dtype)
        return np.where(magnitude == 0, x, unit).astype(x.dtype)


def complex_tanh(x: np.ndarray) -> np.ndarray:
    """Complex tanh with XLA's special values (mirrors `jax.lax.tanh` on complex)."""
    a, b = x.real, x.imag
    with np.errstate(all="ignore"):
        value = np.tanh(x)
        plus_zero_imag = (b == 0) | (np.isinf(a) & ~np.isfinite(b))
        value = join_parts(value.real, np.where(plus_zero_imag, a.dtype.type(0), value.imag),
                           x.dtype)
        return _nan_where((a == 0) & ~np.isfinite(b), value).astype(x.dtype)


def complex_tan(x: np.ndarray) -> np.ndarray:
    """Complex tan, -i tanh(i x), with XLA's special values (mirrors `jax.lax.tan`)."""
    rotated = complex_tanh(join_parts(-x.imag, x.real, x.dtype))
    return join_parts(rotated.imag, -rotated.real, x.dtype)


def _inverse_cosine_or_sine(x: np.ndarray, function: Callable[[np.ndarray], np.ndarray],
                            far_re: float, far_im: float) -> np.ndarray:
    """numpy's `function` (arcsin, arccos or arccosh) of x with a zero imaginary part made
    +0; a NaN imaginary part gives NaN + NaNj, except (far_re, far_im) * log 2|re| (NaN
    where the factor is NaN) where |re| >= sqrt(max float) / 8."""
    a, b = x.real, x.imag
    unsigned = np.where(b == 0, join_parts(a, np.zeros_like(a), x.dtype), x)
    with np.errstate(all="ignore"):
        value = _nan_where(np.isnan(b), function(unsigned))
        large = np.abs(a) >= np.sqrt(np.finfo(a.dtype).max) / 8
        log_twice = np.log(np.abs(a)) + a.dtype.type(np.log(2.0))
        beyond = join_parts(far_re * log_twice, far_im * log_twice, x.dtype)
        return np.where(np.isnan(b) & large, beyond, value).astype(x.dtype)


def complex_arcsin(x: np.ndarray) -> np.ndarray:
    """Complex arcsin with XLA's special values (mirrors `jax.lax.asin` on complex)."""
    return _inverse_cosine_or_sine(x, np.arcsin, np.nan, 1.0)


def complex_arccos(x: np.ndarray) -> np.ndarray:
    """Complex arccos with XLA's special values (mirrors `jax.lax.acos` on complex)."""
    return _inverse_cosine_or_sine(x, np.arccos, np.nan, -1.0)


def complex_arccosh(x: np.ndarray) -> np.ndarray:
    """Complex arccosh with XLA's special values (mirrors `jax.lax.acosh` on complex)."""
    return _inverse_cosine_or_sine(x, np.arccosh, 1.0, np.nan)


def complex_arcsinh(x: np.ndarray) -> np.ndarray:
    """Complex arcsinh, -i arcsin(i x), with XLA's special values (mirrors `jax.lax.asinh`
    on complex)."""
    rotated = complex_arcsin(join_parts(-x.imag, x.real, x.dtype))
    return join_parts(rotated.imag, -rotated.real, x.dtype)


def arctanh_far_limit(dtype: np.dtype) -> np.floating:
    """The largest |re z| at which XLA's complex arctanh still takes the sign of a zero
    imaginary part: one float above 4 / eps**2 (2**48 in float32, 2**106 in float64)."""
    real = np.finfo(dtype).dtype.type
    return np.nextafter(real(4) / np.finfo(real).eps ** 2, real(np.inf))


def complex_arctanh(x: np.ndarray) -> np.ndarray:
    """Complex arctanh with XLA's special values (mirrors `jax.lax.atanh` on complex)."""
    a, b = x.real, x.imag
    half_pi = a.dtype.type(np.pi / 2)
    with np.errstate(all="ignore"):
        value = np.arctanh(x)
        far = ~(np.abs(a) <= arctanh_far_limit(a.dtype)) | np.isnan(b)
        im = np.where(far, np.where(b >= 0, half_pi, -half_pi), value.imag)
        nan_im_re = np.where(np.isinf(a), np.copysign(a.dtype.type(0), a), np.nan)
        zero = a.dtype.type(0)
        re = np.where(a == 0, zero, np.where(np.isnan(a) & np.isinf(b), -zero, value.real))
        # XLA's (1 - |a|)**2 + b**2 is 0 where a is +-1 and b*b <= the smallest normal
        re = np.where((np.abs(a) == 1) & (b * b <= np.finfo(a.dtype).tiny),
                      np.copysign(a.dtype.type(np.inf), a), re)
        re = np.where(np.isnan(b), nan_im_re, re)
        return join_parts(re, im, x.dtype)


def complex_arctan(x: np.ndarray) -> np.ndarray:
    """Complex arctan, -i arctanh(i x), with XLA's special values (mirrors `jax.lax.atan`
    on complex)."""
    rotated = complex_arctanh(join_parts(-x.imag, x.real, x.dtype))
    return join_parts(rotated.imag, -rotated.real, x.dtype)


def for_complex(complex_function: Callable[[np.ndarray], np.ndarray],
                other: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """`complex_function` for complex operands, `other` for the rest (numpy unary
    functions)."""
    def function(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        return complex_function(x) if x.dtype.kind == "c" else other(x)
    function.__name__ = getattr(other, "__name__", complex_function.__name__)
    return function


def complex_power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x ** y through the polar form |x|**y * e**(i y arg(x)), in the parts' precision as
    XLA computes it (complex64 in float32: its overflows and roundings are JAX's), with
    XLA's rules: 0 ** y, x ** 0, 1 ** y, and +inf ** real (inf or 0, never inf * 0j)."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    with np.errstate(all="ignore"):
        log_magnitude, angle = np.log(np.hypot(a, b)), np.arctan2(b, a)
        radius = np.exp(c * log_magnitude - d * angle)
        phase = c * angle + d * log_magnitude
        # Parts joined directly: `1j * im` would make inf * 0 in the real part.
        out = join_parts(radius * np.cos(phase), radius * np.sin(phase), x.dtype)
    at_zero = np.where((c == 0) & (d == 0), 1 + 0j,
                       np.where((c > 0) & (d == 0), 0j, complex(np.nan, np.nan)))
    out = np.where((a == 0) & (b == 0), at_zero, out)
    real_infinity = (a == np.inf) & (b == 0) & (d == 0) & ~np.isnan(c)
    out = np.where(real_infinity, np.where(c > 0, complex(np.inf, 0), 0j), out)
    unit = ((c == 0) & (d == 0)) | ((a == 1) & (b == 0))
    return np.where(unit, 1 + 0j, out).astype(x.dtype)
