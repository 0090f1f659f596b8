"""Powers: pow(x, y) and cbrt(x).

pow computes exp(y log|x|) with the logarithm carried in more than the working precision:
float32 works in float64 (log and exp good to ~1e-16, one rounding to float32 at the end);
float64 takes log|x| = e ln2 + log(c_i) + log1p(r) from a 256-entry table of c_i (r = m/c_i - 1
is exact by the table's construction, |r| < 2**-8) summed in double-double, multiplies by y
in double-double, and passes the low part to the exponential's reduced argument.
The special cases are C99's (which numpy and XLA follow): pow(x, +-0) = 1 and pow(1, y) = 1
even for NaN, pow(-1, +-inf) = 1, pow(x < 0, non-integer y) = NaN, odd integer y keeps the
sign of x (of -0 and -inf too), and the 0 / inf cases by the sign of y and |x| vs 1.

cbrt scales x = 2**(3q + j) m (m in [1, 2)), guesses cbrt(m 2**j) with a polynomial, and does
one Halley step with y**2 split exactly by fma, then applies 2**q.
"""
from __future__ import annotations

from ._ir import (
    BIAS,
    INF,
    INT_OF,
    MANTISSA,
    NAN,
    V,
    clamp,
    coeffs,
    copysign,
    fabs,
    floor,
    fma,
    horner,
    parts,
    pow2,
    select,
    two_prod,
)
from .exp_log import exp_core, exp_limits, log1p_poly, log_dd, log_parts, to_float


def _log_f64(ax: V) -> V:
    """log(ax) for positive finite float64 ax (about 1 ulp)."""
    ie, f = log_parts(ax)
    e = to_float(ie, "double")
    hi, lo, _ = parts("ln2", "double")
    return fma(e, hi, fma(e, lo, log1p_poly(f)))


def _is_int(y: V) -> V:
    return floor(y).eq(y)


def _is_odd(y: V) -> V:
    """y is an odd integer (false for inf, NaN and |y| >= 2**mantissa+1)."""
    half = y * 0.5
    return _is_int(y) & floor(half).ne(half)


def _pow_special(x: V, y: V, res: V) -> V:
    """Apply C99's special cases of pow to the magnitude `res` = |x|**y."""
    ax = fabs(x)
    odd = _is_odd(y)
    res = select(odd & (x.b.bits(x) < 0), -res, res)
    finite_negative = (x < 0.0) & (x > -INF)
    res = select(finite_negative & ~_is_int(y), NAN, res)
    res = select(x.b.isnan(x) | x.b.isnan(y), x + y, res)
    one = y.eq(0.0) | x.eq(1.0) | (ax.eq(1.0) & fabs(y).eq(INF))
    return select(one, 1.0, res)


def pow(x: V, y: V) -> V:
    """x**y.

    Accuracy: f32 <= 1 ulp (measured 0.50); f64 <= 1.5 ulp (measured 1.18).
    """
    b = x.b
    if x.elem == "float":
        xd, yd = b.cast("fpext", x, "double"), b.cast("fpext", y, "double")
        ax = fabs(xd)
        lg = _log_f64(select((ax > 0.0) & (ax < INF), ax, 1.0))
        lg = select(ax.eq(0.0), -INF, select(ax.eq(INF), INF, lg))
        t = yd * lg
        t = select(b.isnan(t) & ~b.isnan(xd) & ~b.isnan(yd), 0.0, t)  # 0 * inf: |x| == 1
        mag = b.cast("fptrunc", exp_core(clamp(t, -746.0, 710.0)), "float")
        return _pow_special(x, y, mag)
    ax = fabs(x)
    lh, ll = log_dd(select((ax > 0.0) & (ax < INF), ax, 1.0))
    th, tl = two_prod(y, lh)
    tl = fma(y, ll, tl)
    lo, hi = exp_limits("double")
    ok = (th > lo) & (th < hi)
    tl = select(ok, tl, 0.0)
    special = ax.eq(0.0) | ax.eq(INF)
    th = select(special, y * select(ax.eq(0.0), b.const("double", -INF), INF), th)
    th = select(b.isnan(th) & ~b.isnan(x) & ~b.isnan(y), 0.0, th)
    mag = exp_core(clamp(th, lo, hi), lo=tl)
    return _pow_special(x, y, mag)


CBRT_SMALL = {"float": (2.0 ** -100, 48), "double": (2.0 ** -1000, 54)}  # (below, scale 2**k)


def cbrt(x: V) -> V:
    """Cube root.

    Accuracy: f32 <= 1 ulp (measured 0.50); f64 <= 1 ulp (measured 0.50).
    """
    b = x.b
    elem, ielem = x.elem, INT_OF[x.elem]
    ax = fabs(x)
    below, k = CBRT_SMALL[elem]
    small = ax < below
    xs = select(small, ax * 2.0 ** k, ax)
    mant, bias = MANTISSA[elem], BIAS[elem]
    ix = b.bits(xs)
    e = to_float((ix >> mant) - bias, elem)
    m = b.from_bits((ix & ((1 << mant) - 1)) | (bias << mant), elem)
    q = floor((e + 0.5) * (1.0 / 3.0))
    j = e - 3.0 * q
    one = b.const(elem, 1.0)
    scale_j = select(j.eq(0.0), one, select(j.eq(1.0), one * 2.0 ** (1 / 3), 2.0 ** (2 / 3)))
    a = m * select(j.eq(0.0), one, select(j.eq(1.0), one * 2.0, 4.0))
    y = horner(m, coeffs("cbrt", elem)) * scale_j
    # Halley: y - y (y^3 - a) / (2 y^3 + a), with y^3 - a computed from an exact y^2
    y2h, y2l = two_prod(y, y)
    d = fma(y2h, y, -a) + y2l * y
    y = y - y * d / (2.0 * (y2h * y) + a)
    qi = b.cast("fptosi", q, ielem) + select(small, b.const(ielem, -(k // 3)), 0)
    res = copysign(y * pow2(qi, elem), x)
    return select((ax > 0.0) & (ax < INF), res, x + x)


FUNCTIONS = {"pow": pow, "cbrt": cbrt}
