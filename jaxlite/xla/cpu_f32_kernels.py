"""XLA's CPU kernels of float32 log, log1p, erf and erf_inv, and an exact fused multiply-add,
in numpy, bit for bit.

JAX on CPU computes float32 `erf` with XLA's polynomial kernel and `erf_inv` by CHLO's
expansion (M. Giles' polynomials in w = -log1p(-x^2)) with XLA's `log1p` kernel; LLVM
contracts the multiply-adds of those polynomials into fused multiply-adds. The functions here
make the same roundings in the same order, `fma` standing for each fused pair, so their
results are JAX's (checked on 2e5 inputs each, and on 5e5 `jax.random.normal` samples). The
evaluator and the primitives' references use them; the cpu backend's vector math writes the
same operations in LLVM IR.

`fma(a, b, c)` is a*b + c rounded once, for float16, bfloat16, float32 and float64: narrow
types compute in float64 (where a*b is exact) and round the sum to odd before the final
rounding, so that rounding twice gives the correctly rounded result; float64 uses the
error-free product and sum with the same rounding to odd (S. Boldo and G. Melquiond,
"Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd", 2008).
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["fma", "log_f32", "log1p_f32", "erf_f32", "erf_inv_f32", "for_float32"]

_F32 = np.float32


def _c(bits: int) -> np.float32:
    """A float32 constant from its bits (XLA's kernels give them so)."""
    return np.array([bits], np.uint32).view(_F32)[0]


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_to_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """`s` (float64), moved one ulp toward `s + err` when inexact with an even last bit."""
    bits = s.view(np.int64)
    inexact = (err != 0) & ((bits & 1) == 0) & np.isfinite(s)
    step = np.where((err > 0) == (s > 0), 1, -1)
    return np.where(inexact, bits + step, bits).view(np.float64)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split of float64 values into two halves of 26 bits."""
    t = a * 134217729.0  # 2**27 + 1
    high = t - (t - a)
    return high, a - high


def _fma_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    product = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    product_err = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    total, total_err = _two_sum(c, product)
    tail, tail_err = _two_sum(total_err, product_err)
    result = total + _round_to_odd(tail, tail_err)
    # Products and sums out of the error-free range (infinities, nans, overflow) as IEEE.
    plain = a * b + c
    return np.where(np.isfinite(result) & np.isfinite(product), result, plain)


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c with one rounding, in the operands' (common) float dtype (broadcast)."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    dtype = np.result_type(a.dtype, b.dtype, c.dtype)
    with np.errstate(all="ignore"):
        if dtype == np.float64:
            wide = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in (a, b, c)))
            return _fma_f64(*wide)
        product = np.asarray(a, np.float64) * b  # exact: at most 2 * 24 significant bits
        s, err = _two_sum(product, np.asarray(c, np.float64))
        return _round_to_odd(np.asarray(s), err).astype(dtype)


# XLA's log f32 kernel: a Cephes-style polynomial on the mantissa in [sqrt(1/2), sqrt(2)).
LOG_P = ((0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A), (0xBDFE5D4F, 0x3E11E9BF, 0xBE2AAE50),
          (0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA))
LN2_LOW, LN2_HIGH = _c(0xB95E8083), _c(0x3F318000)


def log_f32(s: np.ndarray) -> np.ndarray:
    """XLA's float32 natural logarithm (-inf at 0, nan below). Subnormal inputs are scaled by
    2**23 first (XLA's CPU code treats them as zero and gives -inf)."""
    s = np.asarray(s, _F32)
    subnormal = (s > 0) & (s < _F32(np.finfo(_F32).tiny))
    if subnormal.any():
        scaled = _log_kernel(np.where(subnormal, s * _F32(8388608), s))
        return np.where(subnormal, scaled + _F32(-15.942385152878742), _log_kernel(s))
    return _log_kernel(s)


def _log_kernel(s: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        bits = np.maximum(s, _F32(np.finfo(_F32).tiny)).view(np.int32)
        exponent = ((bits >> 23) - 127).astype(_F32) + _F32(1)
        mantissa = ((bits & np.int32(-2139095041)) | np.int32(0x3F000000)).view(_F32)
        small = mantissa < _c(0x3F3504F3)
        exponent = np.where(small, exponent - _F32(1), exponent)
        x = (mantissa + _F32(-1)) + np.where(small, mantissa, _F32(0))
        p0, p1, p2 = (fma(fma(x, _c(c0), _c(c1)), x, _c(c2)) for c0, c1, c2 in LOG_P)
        z = x * x
        z3 = z * x
        y = fma(fma(p0, z3, p1), z3, p2)
        tail = fma(y, z3, exponent * LN2_LOW)
        result = fma(exponent, LN2_HIGH, fma(_F32(-0.5), z, x) + tail)
    result = np.where(s == 0, _F32(-np.inf), result)
    result = np.where(s == np.inf, _F32(np.inf), result)
    return np.where((s < 0) | np.isnan(s), _F32(np.nan), result).astype(_F32)


# XLA's log1p f32 kernel below sqrt(2) - 1: t - t^2/2 + t^3 P(t)/Q(t) (Cephes' rational).
LOG1P_P = (0x3EFF40C5, 0x40D284FA, 0x41EF4B9C, 0x4273CC76, 0x426473AD, 0x41A05101)
LOG1P_Q = (0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3, 0x43586D8A, 0x42707982)


def log1p_f32(t: np.ndarray) -> np.ndarray:
    """XLA's float32 log(1 + t)."""
    t = np.asarray(t, _F32)
    with np.errstate(all="ignore"):
        start = t * _F32(0)  # 0, or nan for infinite t, as the kernel starts its Horner
        p = start + _F32(4.527e-05)
        for coefficient in LOG1P_P:
            p = fma(p, t, _c(coefficient))
        q = start + _F32(1)
        for coefficient in LOG1P_Q:
            q = fma(q, t, _c(coefficient))
        t2 = t * t
        small = t + fma(_F32(-0.5), t2, (t * t2) * (p / q))
    return np.where(np.abs(t) < _c(0x3ED413CD), small, log_f32(t + _F32(1))).astype(_F32)


ERF_P = (0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA)
ERF_Q = (0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21, 0x3EFEB44A, 0x3F800000)


def erf_f32(x: np.ndarray) -> np.ndarray:
    """XLA's float32 error function: x P(x^2) / Q(x^2), +-1 from |x| >= 3.8325."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        x2 = x * x
        p = fma(x2, _c(ERF_P[0]), _c(ERF_P[1]))
        for coefficient in ERF_P[2:]:
            p = fma(x2, p, _c(coefficient))
        q = fma(x2, _c(ERF_Q[0]), _c(ERF_Q[1]))
        for coefficient in ERF_Q[2:]:
            q = fma(x2, q, _c(coefficient))
        result = (x * p) / q
    return np.where(np.abs(x) >= _c(0x407547CB), np.copysign(_F32(1), x), result).astype(_F32)


# CHLO's erf_inv for float32: Giles' polynomials in w - 2.5 (w < 5) and sqrt(w) - 3.
ERF_INV_SMALL_W = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
ERF_INV_LARGE_W = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                   0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erf_inv_f32(x: np.ndarray) -> np.ndarray:
    """CHLO's float32 inverse error function with XLA's log1p: +-inf at +-1, nan outside."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        log = log1p_f32(x * -x)
        small = -log < _F32(5)
        u = np.where(small, _F32(-2.5) - log, np.sqrt(-log) + _F32(-3))
        p = np.where(small, _F32(ERF_INV_SMALL_W[0]), _F32(ERF_INV_LARGE_W[0]))
        for a, b in zip(ERF_INV_SMALL_W[1:], ERF_INV_LARGE_W[1:]):
            p = fma(p, u, np.where(small, _F32(a), _F32(b)))
        return np.where(np.abs(x) == 1, x * _F32(np.inf), p * x).astype(_F32)


def tanh_f32(x: np.ndarray) -> np.ndarray:
    """float32 (or narrower) tanh saturating as XLA's CPU kernel does: exactly +-1 from
    |x| = 9 on, where numpy's tanh still gives 1 - 2**-24 up to ~9.7 (so 1 + tanh(-9.5)
    is 0 as in JAX). Below 9 numpy's value, within an ulp of XLA's, not bit for bit."""
    y = np.tanh(x)
    return np.where(np.abs(x) >= 9, np.copysign(np.ones((), y.dtype), x), y).astype(y.dtype)


def for_float32(kernel: Any, other: Any) -> Any:
    """`kernel` for float32 operands, `other` for the rest (a numpy unary function)."""
    def function(x: np.ndarray) -> np.ndarray:
        return kernel(x) if np.asarray(x).dtype == _F32 else other(x)
    function.__name__ = getattr(other, "__name__", kernel.__name__)
    return function
