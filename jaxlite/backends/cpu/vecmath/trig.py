"""Trigonometric functions and their inverses: sin, cos, tan, atan, atan2, asin, acos.

sin, cos and tan reduce x = k pi/2 + r (_reduce.py: Cody-Waite for moderate |x|, a
Payne-Hanek reduction behind one rarely taken branch for huge |x|), evaluate both minimax
polynomials sin(r) = r + r^3 S(r^2) and cos(r) = 1 - r^2/2 + r^4 C(r^2) (the latter in
fdlibm's arrangement w + ((1 - w) - r^2/2) with w = 1 - r^2/2 rounded), pick one by the
quadrant k mod 4 and flip the sign bit; tan is sin/cos or -cos/sin with one division.

atan reduces |x| to |t| <= 1/2 by t = x, (x - 1)/(x + 1) (for 1/2 < |x| <= 2, where x - 1
is exact) or -1/x (one division for all three, chosen by selects) and adds 0, pi/4 or pi/2 in
two parts. atan2 does the same with
the ratio of |y| and |x|, and handles the signed zeros and infinities of C99/numpy by selects.
asin and acos use s = |x| below 1/2 and s = sqrt((1 - |x|)/2) above, with the rounding error of
the square root added back.
"""
from __future__ import annotations

from ._ir import (
    INF,
    V,
    coeffs,
    copysign,
    fabs,
    fma,
    horner,
    parts,
    select,
    sqrt,
)
from ._reduce import reduce


def sin_cos_poly(r: V) -> tuple[V, V]:
    """(sin r, cos r) for |r| <= pi/4."""
    z = r * r
    s = fma(r * z, horner(z, coeffs("sin", r.elem)), r)
    s = select(r.eq(0.0), r, s)  # keeps the sign of -0
    hz = 0.5 * z
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz) + (z * z) * horner(z, coeffs("cos", r.elem)))
    return s, c


def _negate_if(v: V, mask_bit: V) -> V:
    """v with its sign flipped where bit 1 of the integer vector mask_bit is set."""
    b = v.b
    shift = 30 if v.elem == "float" else 62
    return b.from_bits(b.bits(v) ^ ((mask_bit & 2) << shift), v.elem)


def _sin_or_cos(x: V, quadrant_shift: int) -> V:
    r, k = reduce(x)
    s, c = sin_cos_poly(r)
    q = k + quadrant_shift if quadrant_shift else k
    odd = (q & 1).ne(0)
    return _negate_if(select(odd, c, s), q)


def sin(x: V) -> V:
    """Sine, accurate for every finite x (huge arguments take a slower exact reduction).

    Accuracy: f32 <= 2 ulp (measured 1.52); f64 <= 2 ulp (measured 1.47).
    """
    return _sin_or_cos(x, 0)


def cos(x: V) -> V:
    """Cosine, accurate for every finite x.

    Accuracy: f32 <= 2 ulp (measured 1.52); f64 <= 2 ulp (measured 1.44).
    """
    return _sin_or_cos(x, 1)


def tan(x: V) -> V:
    """Tangent: sin(r)/cos(r) or -cos(r)/sin(r) by quadrant.

    Accuracy: f32 <= 4 ulp (measured 3.35); f64 <= 3.5 ulp (measured 2.84).
    """
    r, k = reduce(x)
    s, c = sin_cos_poly(r)
    odd = (k & 1).ne(0)
    return select(odd, -c, s) / select(odd, s, c)


def _atan_poly(t: V) -> V:
    z = t * t
    return fma(t * z, horner(z, coeffs("atan", t.elem)), t)


def atan(x: V) -> V:
    """Arctangent.

    Accuracy: f32 <= 2 ulp (measured 1.61); f64 <= 2 ulp (measured 1.57).
    """
    a = fabs(x)
    far = a > 2.0
    mid = a > 0.5
    num = select(far, x.b.const(x.elem, -1.0), select(mid, a - 1.0, a))
    den = select(far, a, select(mid, a + 1.0, 1.0))
    t = num / den
    p4h, p4l, _ = parts("pio4", x.elem)
    p2h, p2l, _ = parts("pio2", x.elem)
    zero = x.b.const(x.elem, 0.0)
    base_hi = select(far, p2h, select(mid, p4h, zero))
    base_lo = select(far, p2l, select(mid, p4l, zero))
    return copysign(base_hi + (_atan_poly(t) + base_lo), x)


def atan2(y: V, x: V) -> V:
    """The angle of the point (x, y), in [-pi, pi], with C99/numpy's signed zeros and
    infinities (atan2(+-0, -0) = +-pi, atan2(+-inf, -inf) = +-3pi/4, ...).

    Accuracy: f32 <= 2.5 ulp (measured 1.64); f64 <= 2.5 ulp (measured 1.76).
    """
    b = x.b
    elem = x.elem
    ax, ay = fabs(x), fabs(y)
    # Scale both by the same power of two (exactly) so that the products below neither
    # round in the subnormal range nor overflow; the angle does not change.
    tiny = 2.0 ** (-100 if elem == "float" else -1000)
    up = 2.0 ** (60 if elem == "float" else 100)
    huge = 2.0 ** (126 if elem == "float" else 1022)
    s = select((ax < tiny) & (ay < tiny), b.const(elem, up),
               select((ax > huge) | (ay > huge), b.const(elem, 0.5), 1.0))
    ax, ay = ax * s, ay * s
    both_inf = ax.eq(INF) & ay.eq(INF)
    far = ((ay > ax * 2.0) | ay.eq(INF)) & ~both_inf
    mid = (ay > ax * 0.5) | both_inf
    num = select(far, -ax, select(mid, ay - ax, ay))
    den = select(far, ay, select(mid, ay + ax, ax))
    t = select(ay.eq(0.0) | both_inf, b.const(elem, 0.0), num / den)
    p = _atan_poly(t)
    xneg = (b.bits(x) < 0)
    pih, pil, _ = parts("pi", elem)
    p4h, p4l, _ = parts("pio4", elem)
    p2h, p2l, _ = parts("pio2", elem)
    q3h, q3l, _ = parts("3pio4", elem)
    zero = b.const(elem, 0.0)
    base_hi = select(far, p2h, select(mid, select(xneg, b.const(elem, q3h), p4h),
                                      select(xneg, pih, zero)))
    base_lo = select(far, p2l, select(mid, select(xneg, b.const(elem, q3l), p4l),
                                      select(xneg, pil, zero)))
    res = base_hi + (select(xneg, -p, p) + base_lo)
    res = copysign(res, y)
    return select(b.isnan(x) | b.isnan(y), x + y, res)


def _asin_parts(a: V) -> tuple[V, V, V]:
    """(big, p, c): big = a > 1/2; asin(s) = p + c (c: correction of sqrt's rounding)."""
    big = a > 0.5
    z = select(big, 0.5 - 0.5 * a, a * a)
    s = select(big, sqrt(z), a)
    p = fma(s * z, horner(z, coeffs("asin", a.elem)), s)
    c = select(big & (z > 0.0), fma(-s, s, z) / (s + s), a.b.const(a.elem, 0.0))
    return big, p, c


def asin(x: V) -> V:
    """Arcsine; NaN outside [-1, 1].

    Accuracy: f32 <= 2 ulp (measured 1.58); f64 <= 2 ulp (measured 1.51).
    """
    big, p, c = _asin_parts(fabs(x))
    p2h, p2l, _ = parts("pio2", x.elem)
    res = select(big, fma(p, -2.0, p2h) + (p2l - (c + c)), p)
    return copysign(res, x)


def acos(x: V) -> V:
    """Arccosine; NaN outside [-1, 1].

    Accuracy: f32 <= 1.5 ulp (measured 1.25); f64 <= 1.5 ulp (measured 1.16).
    """
    big, p, c = _asin_parts(fabs(x))
    p2h, p2l, _ = parts("pio2", x.elem)
    pih, pil, _ = parts("pi", x.elem)
    positive = 2.0 * p + (c + c)
    negative = fma(p, -2.0, pih) + (pil - (c + c))
    small = p2h - (copysign(p, x) - p2l)
    return select(big, select(x > 0.0, positive, negative), small)


FUNCTIONS = {"sin": sin, "cos": cos, "tan": tan, "atan": atan, "atan2": atan2, "asin": asin,
             "acos": acos}
