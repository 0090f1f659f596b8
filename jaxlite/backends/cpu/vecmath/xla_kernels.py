"""XLA's CPU kernels of float32 log, log1p, erf and erf_inv, operation for operation.

JAX's float32 `log`, `log1p`, `erf` and `erf_inv` (so `jax.random.normal`, `exponential`,
`gumbel`, ...) are XLA's polynomial kernels, with LLVM's fused multiply-adds where XLA's code
generator gets them. These functions write the same roundings in the same order (`fma` for
each fused pair), so the compiled code gives JAX's values bit for bit;
`jaxlite.xla.cpu_f32_kernels` is the same in numpy, for the evaluator and eager execution,
and holds the coefficients (XLA's float32 bits). Differences from XLA: subnormal inputs of
log are scaled into the normal range (XLA's CPU code treats them as zero and gives -inf).
"""
from __future__ import annotations

import struct

from jaxlite.xla.cpu_f32_kernels import (ERF_INV_LARGE_W, ERF_INV_SMALL_W, ERF_P, ERF_Q,
                                         LN2_HIGH, LN2_LOW, LOG1P_P, LOG1P_Q, LOG_P)

from ._ir import V, fabs, fma, select, sqrt


def _c(bits: int) -> float:
    """The float32 constant of `bits`, as a Python float."""
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def log_f32(s: V) -> V:
    """XLA's float32 log kernel (Cephes' polynomial on the mantissa); subnormals are scaled
    by 2**23 first."""
    subnormal = (s > 0.0) & (s < _c(0x00800000))
    return select(subnormal, _log(s * 8388608.0) + -15.942385152878742, _log(s))


def _log(s: V) -> V:
    """XLA's float32 log kernel (Cephes' polynomial on the mantissa)."""
    b = s.b
    bits = b.bits(select(s > _c(0x00800000), s, _c(0x00800000)))
    exponent = b.cast("sitofp", bits.lshr(23) - 127, "float") + 1.0
    mantissa = b.from_bits((bits & -2139095041) | 0x3F000000, "float")
    small = mantissa < _c(0x3F3504F3)
    exponent = select(small, exponent - 1.0, exponent)
    x = (mantissa + -1.0) + select(small, mantissa, 0.0)
    p0, p1, p2 = (fma(fma(x, _c(c0), _c(c1)), x, _c(c2)) for c0, c1, c2 in LOG_P)
    z = x * x
    z3 = z * x
    y = fma(fma(p0, z3, p1), z3, p2)
    tail = fma(y, z3, exponent * float(LN2_LOW))
    result = fma(exponent, float(LN2_HIGH), fma(z, -0.5, x) + tail)
    result = select(s.eq(0.0), float("-inf"), result)
    result = select(s.eq(float("inf")), float("inf"), result)
    return select((s < 0.0) | b.isnan(s), float("nan"), result)


def log1p_f32(t: V) -> V:
    """XLA's float32 log1p kernel: a rational approximation below sqrt(2) - 1."""
    start = t * 0.0
    p = start + 4.527e-05
    for c in LOG1P_P:
        p = fma(p, t, _c(c))
    q = start + 1.0
    for c in LOG1P_Q:
        q = fma(q, t, _c(c))
    t2 = t * t
    small = t + fma(t2, -0.5, (t * t2) * (p / q))
    return select(fabs(t) < _c(0x3ED413CD), small, _log(t + 1.0))


def erf_f32(x: V) -> V:
    """XLA's float32 erf: x P(x^2) / Q(x^2), +-1 from |x| >= 3.8325."""
    x2 = x * x
    p = fma(x2, _c(ERF_P[0]), _c(ERF_P[1]))
    for c in ERF_P[2:]:
        p = fma(x2, p, _c(c))
    q = fma(x2, _c(ERF_Q[0]), _c(ERF_Q[1]))
    for c in ERF_Q[2:]:
        q = fma(x2, q, _c(c))
    one = x.b.intrinsic("copysign", "float", x.b.const("float", 1.0), x)
    return select(fabs(x) >= _c(0x407547CB), one, (x * p) / q)


def erf_inv_f32(x: V) -> V:
    """CHLO's float32 erf_inv: Giles' polynomials in w - 2.5 and sqrt(w) - 3, w = -log1p(-x^2)."""
    log = log1p_f32(x * -x)
    small = log > -5.0
    u = select(small, -2.5 - log, sqrt(-log) + -3.0)
    p = select(small, ERF_INV_SMALL_W[0], x.b.const("float", ERF_INV_LARGE_W[0]))
    for a, c in zip(ERF_INV_SMALL_W[1:], ERF_INV_LARGE_W[1:]):
        p = fma(p, u, select(small, a, x.b.const("float", c)))
    return select(fabs(x).eq(1.0), x * float("inf"), p * x)
