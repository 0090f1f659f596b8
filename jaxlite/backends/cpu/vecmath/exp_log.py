"""Exponentials and logarithms: exp, exp2, expm1, log, log2, log1p.

Exponentials reduce x = k ln2 + r (|r| <= ln2/2) with k from the "shifter" trick (adding
1.5 * 2**mantissa rounds to an integer whose bits are k), two fma steps of Cody-Waite
(ln2 split into hi + lo, the first step exact), a minimax polynomial for expm1(r), and a
scaling by 2**k written into the exponent bits. The scaling uses two factors 2**(k//2) and
2**(k - k//2): each is a normal number over the whole range, the first product is exact and
the second rounds once, so overflow gives inf and results in the subnormal range are rounded
correctly from the polynomial's value.

Logarithms split x = 2**e m with m in [sqrt(1/2), sqrt(2)) by integer arithmetic on the bits
(subnormals are first scaled by 2**mantissa), f = m - 1 is exact, and log(x) = e ln2 + log1p(f)
with a polynomial in f (float32) or in s = f / (2 + f) (float64, fdlibm's arrangement
f - (f^2/2 - s (f^2/2 + R)) that keeps the bulk exact).

Special values follow C99/numpy: NaN propagates, exp(-inf) = 0, exp(inf) = inf,
log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, expm1(-0) = -0, log1p(-1) = -inf.
"""
from __future__ import annotations

import math

from . import xla_kernels
from ._ir import (
    BIAS,
    CONSTANTS,
    INF,
    INT_OF,
    MANTISSA,
    NAN,
    V,
    clamp,
    coeffs,
    fabs,
    fast_two_sum,
    float_consts,
    fma,
    horner,
    parts,
    pow2,
    select,
    two_prod,
    two_sum,
)

LOG2E = 1 / math.log(2)
POW_TABLE_BITS = 8
POW_TABLE_OFFSET = 0x3FE6A00000000000  # bits of 0.70703125; must match tools/fit_vecmath.py


# ----------------------------------------------------------------------------------------------
# shared cores

def shifter(elem: str) -> float:
    return 1.5 * 2.0 ** MANTISSA[elem]


def round_to_int(t: V) -> tuple[V, V]:
    """(k as float, k as integer) for the nearest integer k to t, |t| < 2**(mantissa - 1)."""
    b = t.b
    big = shifter(t.elem)
    s = t + big
    return s - big, b.bits(s) - b.bits(b.const(t.elem, big))


def round_scaled(x: V, c: float) -> tuple[V, V]:
    """(k as float, k as integer) for the nearest integer k to x * c (one rounding, by fma)."""
    b = x.b
    big = shifter(x.elem)
    s = fma(x, c, big)
    return s - big, b.bits(s) - b.bits(b.const(x.elem, big))


def scale(p: V, k: V) -> V:
    """p * 2**k for |k| up to about twice the exponent range, rounding once."""
    k1 = k >> 1
    return (p * pow2(k1, p.elem)) * pow2(k - k1, p.elem)


def reduce_ln2(x: V, precise: bool = False) -> tuple[V, V, V | None]:
    """(k, r, c) with x = k ln2 + r + c, |r| <= ln2/2 (plus rounding), x already clamped.

    The first Cody-Waite step is exact (fma, |r| < 1 and ln2's high part has the precision's
    digits); c is the rounding error of the second step when `precise`, else None.
    """
    hi, lo, _ = parts("ln2", x.elem)
    kf, k = round_scaled(x, LOG2E)
    r1 = fma(kf, -hi, x)
    r = fma(kf, -lo, r1)
    c = fma(kf, -lo, r1 - r) if precise else None
    return k, r, c


def expm1_poly(r: V) -> V:
    """expm1(r) for |r| <= ln2/2, about 0.25 eps relative error before rounding."""
    return fma(r * r, horner(r, coeffs("expm1", r.elem)), r)


def exp_core(x: V, lo: V | None = None, extra: int = 0, precise: bool = False,
             factor: V | None = None) -> V:
    """factor * exp(x + lo) * 2**extra, for x clamped to the exponential's range (NaN passes).

    `precise` adds the rounding error of the reduced argument back (3 more instructions);
    `factor` multiplies before the final scaling, so that a result in the subnormal range
    rounds only once.
    """
    k, r, c = reduce_ln2(x, precise or lo is not None)
    q = expm1_poly(r)
    if c is not None:
        q = q + (c if lo is None else c + lo * (q + 1.0))
    p = q + 1.0 if factor is None else fma(q, factor, factor)
    if extra:
        k = k + extra
    return scale(p, k)


def exp_limits(elem: str) -> tuple[float, float]:
    """x below the first bound gives exp(x) = 0, above the second inf (both in the clamp)."""
    return (-104.0, 89.0) if elem == "float" else (-746.0, 710.0)


def log_parts(x: V) -> tuple[V, V]:
    """(e, f) with x = 2**e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), for x > 0 finite.

    e is an integer vector; other inputs give some finite e and f.
    """
    b = x.b
    elem, ielem = x.elem, INT_OF[x.elem]
    mant = MANTISSA[elem]
    small = x < float_consts(elem)["min_normal"]
    xs = select(small, x * 2.0 ** mant, x)
    offset = b.bits(b.const(elem, math.sqrt(0.5)))
    ix = b.bits(xs) - offset
    e = (ix >> mant) + select(small, b.const(ielem, -mant), 0)
    m = b.from_bits((ix & ((1 << mant) - 1)) + offset, elem)
    return e, m - 1.0


def to_float(i: V, elem: str) -> V:
    return i.b.cast("sitofp", i, elem)


def log1p_poly(f: V) -> V:
    """log1p(f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] (slightly beyond is fine)."""
    if f.elem == "float":
        return fma(f * f, horner(f, coeffs("log1p", "float")), f)
    s = f / (f + 2.0)
    z = s * s
    hfsq = 0.5 * f * f
    r = z * horner(z, coeffs("log1p", "double"))
    return f - (hfsq - s * (hfsq + r))


def log_dd(ax: V) -> tuple[V, V]:
    """log(ax) as hi + lo (about 2**-68 relative) for positive finite float64 ax.

    log(ax) = e ln2 + log(c_i) + log1p(r), with 1/c_i and log(c_i) from a 256-entry table
    (tools/fit_vecmath.py) and r = m/c_i - 1 exact (|r| < 2**-8), summed in double-double.
    """
    b = ax.b
    mant = MANTISSA["double"]
    small = ax < 2.0 ** -1022
    xs = select(small, ax * 2.0 ** mant, ax)
    ix = b.bits(xs) - POW_TABLE_OFFSET
    i = ix.lshr(mant - POW_TABLE_BITS) & ((1 << POW_TABLE_BITS) - 1)
    ie = (ix >> mant) + select(small, b.const("i64", -mant), 0)
    m = b.from_bits(b.bits(xs) - ((ix >> mant) << mant), "double")
    invc = b.gather(b.table(f"{b.fname}.invc", "double", CONSTANTS["pow_invc"]), "double", i)
    lch = b.gather(b.table(f"{b.fname}.logc_hi", "double", CONSTANTS["pow_logc_hi"]),
                   "double", i)
    lcl = b.gather(b.table(f"{b.fname}.logc_lo", "double", CONSTANTS["pow_logc_lo"]),
                   "double", i)
    r = fma(m, invc, -1.0)
    e = to_float(ie, "double")
    ln2, ln2_rest, _ = CONSTANTS["ln2_f64"]
    ln2_hi = round(ln2 * 2.0 ** 42) * 2.0 ** -42  # 42 bits: e * ln2_hi is exact
    ln2_lo = (ln2 - ln2_hi) + ln2_rest
    r2h, r2l = two_prod(r, r)
    h1, l1 = two_sum(e * ln2_hi, lch)
    h2, l2 = two_sum(h1, r)
    h3, l3 = two_sum(h2, r2h * -0.5)
    tail = fma(r * r2h, horner(r, coeffs("powlog", "double")), r2l * -0.5)
    lo = (l1 + l2) + (l3 + (fma(e, ln2_lo, lcl) + tail))
    return fast_two_sum(h3, lo)


def log_special(x: V, res: V, at: float = 0.0) -> V:
    """res where x > at is finite; -inf at x == at, NaN below, x itself for inf and NaN."""
    ok = (x > at) & (x < INF)
    other = select(x.eq(at), -INF, select(x < at, NAN, x))
    return select(ok, res, other)


# ----------------------------------------------------------------------------------------------
# the functions

def exp(x: V) -> V:
    """e**x.

    Accuracy: f32 <= 1.5 ulp (measured 1.00); f64 <= 1.5 ulp (measured 1.00).
    """
    lo, hi = exp_limits(x.elem)
    return exp_core(clamp(x, lo, hi), precise=x.elem == "double")


def exp2(x: V) -> V:
    """2**x (reduction x = k + r is exact).

    Accuracy: f32 <= 1 ulp (measured 0.83); f64 <= 1 ulp (measured 0.77).
    """
    lo, hi = (-151.0, 129.0) if x.elem == "float" else (-1076.0, 1025.0)
    xc = clamp(x, lo, hi)
    kf, k = round_to_int(xc)
    r = xc - kf
    p = fma(r, horner(r, coeffs("exp2", x.elem)), 1.0)
    return scale(p, k)


def expm1_reduced(xc: V) -> tuple[V, V]:
    """(k, em) with expm1(xc) = 2**k (1 + em) - 1, xc clamped; k = 0 for |xc| < ln2."""
    elem = xc.elem
    hi, lo, _ = parts("ln2", elem)
    kf, k = round_scaled(xc, LOG2E)
    near = fabs(xc) < hi
    kf = select(near, 0.0, kf)
    k = select(near, xc.b.const(k.elem, 0), k)
    r1 = fma(kf, -hi, xc)
    r = fma(kf, -lo, r1)
    c = fma(kf, -lo, r1 - r)
    em = fma(r * r, horner(r, coeffs("expm1w", elem)), r)
    return k, em + fma(c, em, c)


def expm1(x: V) -> V:
    """e**x - 1, accurate near 0: expm1(x) = 2 (2**(k-1) expm1(r) + (2**(k-1) - 1/2)), with
    k = 0 for |x| < ln2 (else the sum cancels for k = 1, r < 0).

    Accuracy: f32 <= 2 ulp (measured 1.38); f64 <= 1.5 ulp (measured 1.15).
    """
    elem = x.elem
    lo, hi = (-30.0, 89.0) if elem == "float" else (-40.0, 710.0)
    k, em = expm1_reduced(clamp(x, lo, hi))
    s = pow2(k - 1, elem)
    res = 2.0 * fma(s, em, s - 0.5)
    tiny = 2.0 ** (-30 if elem == "float" else -60)
    return select(fabs(x) < tiny, x, res)


def log(x: V) -> V:
    """Natural logarithm.

    Accuracy: f32 <= 1.5 ulp (measured 1.17: XLA's kernel, for JAX's values bit for bit);
    f64 <= 1.5 ulp (measured 1.21).
    """
    if x.elem == "float":
        return xla_kernels.log_f32(x)  # XLA's own kernel: JAX's values bit for bit
    ie, f = log_parts(x)
    e = to_float(ie, x.elem)
    hi, lo, _ = parts("ln2", x.elem)
    res = fma(e, hi, fma(e, lo, log1p_poly(f)))
    return log_special(x, res)


def log2(x: V) -> V:
    """Base-2 logarithm: e + log1p(f) log2(e), the product in two parts.

    Accuracy: f32 <= 2 ulp (measured 1.44); f64 <= 2 ulp (measured 1.56).
    """
    ie, f = log_parts(x)
    e = to_float(ie, x.elem)
    hi, lo, _ = parts("log2e", x.elem)
    lp = log1p_poly(f)
    res = fma(lp, hi, fma(lp, lo, e))
    return log_special(x, res)


def log1p(x: V) -> V:
    """log(1 + x), accurate near 0: u = 1 + x rounds, the rounding error d = x - (u - 1) is
    added back to the reduced argument as d / 2**e.

    Accuracy: f32 <= 2.5 ulp (measured 2.43: XLA's kernel, for JAX's values bit for bit);
    f64 <= 2 ulp (measured 1.59).
    """
    if x.elem == "float":
        return xla_kernels.log1p_f32(x)  # XLA's own kernel: JAX's values bit for bit
    b = x.b
    elem = x.elem
    u = x + 1.0
    ie, f = log_parts(u)
    e = to_float(ie, elem)
    d = x - (u - 1.0)
    limit = BIAS[elem] - 2
    f = fma(d, pow2(-select(ie > limit, b.const(INT_OF[elem], limit), ie), elem), f)
    hi, lo, _ = parts("ln2", elem)
    res = fma(e, hi, fma(e, lo, log1p_poly(f)))
    res = select(x.eq(0.0), x, res)
    return log_special(x, res, at=-1.0)


FUNCTIONS = {"exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "log2": log2,
             "log1p": log1p}
