"""Fit the coefficients of jaxlite's vector math library (jaxlite/backends/cpu/vecmath).

Usage: `python tools/fit_vecmath.py [NAME ...]` refits the named approximations (all of them
without arguments), prints each one's fitting error and rewrites
`jaxlite/backends/cpu/vecmath/_coeffs.py`, keeping the entries it did not refit. The package
never imports this script; it only reads the generated table.

Method. Every approximation has the shape

    value(x) = fixed(x) + factor(x) * P(u(x))            (polynomial fits)
    value(x) = fixed(x) + factor(x) * P(u(x)) / Q(u(x))  (rational fits, Q(0) = 1)

where `fixed` holds the leading terms that are exact (for instance `r` in
`expm1(r) = r + r**2 * P(r)`), so that the fitted part is a small correction. The reference
values come from mpmath at 40 digits and are kept as numpy long doubles (64-bit mantissa);
each weighted least-squares problem is solved by Householder QR in long double and refined
once with its long-double residual (float64 LAPACK is not precise enough for the
ill-conditioned rational problems). The max-norm (minimax) solution is reached with Lawson's
iteration:
the least-squares weights of the sample points are multiplied by their current error, which
drives the error curve towards equioscillation. Rational fits linearize `P - f * Q` and
reweight by `1 / Q` of the previous iterate (Loeb's method) inside the same loop. Finally the
coefficients are rounded to the target precision one at a time, lowest degree first, refitting
the remaining ones after each rounding. The script also writes the split constants (ln2,
pi/2, ... as sums of two or three numbers of each precision), 2/pi in 53-bit chunks for the
reduction of huge trigonometric arguments, and pow's table of 1/c_i and log(c_i).

The fits take about 40 seconds. The errors it prints are those of the rounded coefficients
evaluated exactly; tests/backends/cpu/test_vecmath.py measures the compiled functions.
"""
from __future__ import annotations

import argparse
import ast
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import mpmath as mp
import numpy as np

mp.mp.dps = 40
LD = np.longdouble
OUTPUT = Path(__file__).resolve().parents[1] / "jaxlite/backends/cpu/vecmath/_coeffs.py"

Fn = Callable[[np.ndarray], np.ndarray]


def ld(value: mp.mpf) -> LD:
    return LD(mp.nstr(value, 30, strip_zeros=False))


def ld_array(values: list) -> np.ndarray:
    return np.array([ld(v) for v in values], dtype=LD)


@dataclass
class Fit:
    """One approximation to fit: see the module docstring for the shape of `value(x)`."""

    name: str
    precision: str                       # "f32" or "f64": what the coefficients round to
    interval: tuple[float, float]
    target: Callable[[mp.mpf], mp.mpf]   # the exact value(x), in mpmath
    degree: int                          # number of coefficients of P
    fixed: Fn = lambda x: np.zeros_like(x)
    factor: Fn = lambda x: np.ones_like(x)
    u: Fn = lambda x: x
    denominator: int = 0                 # coefficients of Q after its constant 1 (rational)
    relative: bool = True                # relative error, else absolute error
    points: int = 2000
    note: str = ""
    weight: Fn | None = None             # extra weight on the error (multiplies relative/abs)
    first: tuple[float, ...] = field(default_factory=tuple)   # leading P coefficients, fixed


def sample_points(fit: Fit) -> np.ndarray:
    a, b = fit.interval
    n = fit.points
    k = np.arange(n, dtype=np.float64)
    cheb = np.cos(np.pi * (k + 0.5) / n)[::-1]
    x = 0.5 * (a + b) + 0.5 * (b - a) * cheb
    x = np.concatenate([[a], x, [b]])
    return np.unique(x.astype(np.float64))


def _round(value: float, precision: str) -> float:
    return float(np.float32(value)) if precision == "f32" else float(value)


class _System:
    """The sample of one fit: reference values, weights and the design matrix, in long double."""

    def __init__(self, fit: Fit):
        self.fit = fit
        x = sample_points(fit)
        self.x = x.astype(LD)
        self.f = ld_array([fit.target(mp.mpf(float(v))) for v in x])
        self.fixed = fit.fixed(self.x)
        self.factor = fit.factor(self.x)
        self.u = fit.u(self.x)
        scale = np.abs(self.f) if fit.relative else np.ones_like(self.f)
        scale = np.where(scale == 0, LD(1), scale)
        self.w = 1 / scale
        if fit.weight is not None:
            self.w = self.w * fit.weight(self.x)
        self.powers = np.stack([self.u ** k for k in range(max(fit.degree, fit.denominator + 1))],
                               axis=1)

    def value(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        num = self.powers[:, :len(p)] @ p
        den = LD(1) + (self.powers[:, 1:len(q) + 1] @ q if len(q) else 0)
        return self.fixed + self.factor * num / den

    def error(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        return (self.value(p, q) - self.f) * self.w


def lstsq_ld(a: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Least squares min |a c - rhs| by Householder QR in long double (64-bit mantissa)."""
    a = a.astype(LD).copy()
    rhs = rhs.astype(LD).copy()
    n = a.shape[1]
    for k in range(n):
        col = a[k:, k]
        norm = np.sqrt(np.sum(col * col))
        if norm == 0:
            continue
        alpha = -norm if col[0] >= 0 else norm
        v = col.copy()
        v[0] -= alpha
        v /= np.sqrt(np.sum(v * v))
        a[k:, k:] -= 2 * np.outer(v, v @ a[k:, k:])
        rhs[k:] -= 2 * v * (v @ rhs[k:])
    c = np.zeros(n, dtype=LD)
    for k in reversed(range(n)):
        c[k] = (rhs[k] - a[k, k + 1:n] @ c[k + 1:]) / a[k, k] if a[k, k] != 0 else 0
    return c


def _solve(system: _System, lawson: np.ndarray, p: np.ndarray, q: np.ndarray,
           free_p: np.ndarray, free_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One weighted least-squares step for the free coefficients (Loeb: Q of the previous
    iterate divides the linearized residual fixed + factor P - f Q), solved in long double
    and refined twice with the residual of the same linear problem."""
    den = LD(1) + (system.powers[:, 1:len(q) + 1] @ q if len(q) else 0)
    g = system.f - system.fixed
    cols = [system.factor * system.powers[:, k] / den for k in range(len(p)) if free_p[k]]
    cols += [-g * system.powers[:, k + 1] / den for k in range(len(q)) if free_q[k]]
    if not cols:
        return p, q
    rw = np.sqrt(lawson).astype(LD) * system.w
    a = np.stack(cols, axis=1) * rw[:, None]
    col_scale = np.sqrt((a * a).sum(axis=0))
    col_scale[col_scale == 0] = 1
    a = a / col_scale
    p, q = p.copy(), q.copy()
    for _ in range(2):
        qq = LD(1) + (system.powers[:, 1:len(q) + 1] @ q if len(q) else 0)
        resid = (system.factor * (system.powers[:, :len(p)] @ p) - g * qq) / den
        delta = lstsq_ld(a, -resid * rw) / col_scale
        i = 0
        for k in range(len(p)):
            if free_p[k]:
                p[k] += delta[i]
                i += 1
        for k in range(len(q)):
            if free_q[k]:
                q[k] += delta[i]
                i += 1
    return p, q


def run_fit(fit: Fit, iterations: int = 80) -> tuple[list[float], list[float], float]:
    """Minimax-fit `fit`; returns (P coefficients, Q coefficients, max weighted error)."""
    system = _System(fit)
    p = np.zeros(fit.degree, dtype=LD)
    q = np.zeros(fit.denominator, dtype=LD)
    free_p = np.ones(fit.degree, dtype=bool)
    free_q = np.ones(fit.denominator, dtype=bool)
    for k, c in enumerate(fit.first):
        p[k] = LD(c)
        free_p[k] = False
    lawson = np.full(len(system.x), 1.0 / len(system.x))
    best = (np.inf, p, q, lawson)
    for _ in range(iterations):
        p, q = _solve(system, lawson, p, q, free_p, free_q)
        err = np.abs(system.error(p, q)).astype(np.float64)
        if err.max() < best[0]:
            best = (err.max(), p, q, lawson)
        # Lawson's update, with a floor so that no sample point drops out of the fit
        lawson = lawson * (err + 1e-300)
        lawson /= lawson.sum()
        lawson = np.maximum(lawson, 1e-9 / len(lawson))
        lawson /= lawson.sum()
    _, p, q, lawson = best
    # round to the target precision one coefficient at a time, refitting the others
    order = [("p", k) for k in range(fit.degree)] + [("q", k) for k in range(fit.denominator)]
    for kind, k in order:
        if kind == "p":
            if free_p[k]:
                p[k] = LD(_round(float(p[k]), fit.precision))
                free_p[k] = False
        else:
            q[k] = LD(_round(float(q[k]), fit.precision))
            free_q[k] = False
        p, q = _solve(system, lawson, p, q, free_p, free_q)
    final = [_round(float(c), fit.precision) for c in p]
    final_q = [_round(float(c), fit.precision) for c in q]
    pe = np.array(final, dtype=LD)
    qe = np.array(final_q, dtype=LD)
    return final, final_q, float(np.max(np.abs(system.error(pe, qe))))


# ---------------------------------------------------------------------------------------------
# The approximations. `mp.mpf` targets; long-double `fixed`, `factor`, `u` on the sample.

FITS: list[Fit] = []


def fits(*items: Fit) -> None:
    FITS.extend(items)


LN2 = math.log(2)


def _margin(v: float) -> float:
    return v * (1 + 1 / 64)


# exp_log.py ---------------------------------------------------------------------------------
# exp, expm1: x = k ln2 + r, |r| <= ln2/2; expm1(r) = r + r^2 P(r) (exp adds 1 to it);
# expm1 itself uses k = 0 for |x| < ln2 (expm1w), which avoids cancellation for k = 1.
# exp2: x = k + r, |r| <= 1/2; 2^r = 1 + r P(r).
# log: x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1.
#   float32: log1p(f) = f + f^2 P(f).
#   float64: s = f / (2 + f), log1p(f) = 2 atanh(s) = 2 s + s^3 P(s^2).
_H = _margin(LN2 / 2)
_F_LO, _F_HI = _margin(math.sqrt(0.5) - 1), _margin(math.sqrt(2) - 1)
_S = _margin((math.sqrt(2) - 1) / (math.sqrt(2) + 1))
for _prec, _deg in (("f32", 5), ("f64", 10)):
    fits(Fit(f"expm1_{_prec}", _prec, (-_H, _H), mp.expm1, _deg,
             fixed=lambda r: r, factor=lambda r: r * r, note="expm1(r) = r + r^2 P(r)"))
for _prec, _deg in (("f32", 7), ("f64", 13)):
    fits(Fit(f"expm1w_{_prec}", _prec, (-_margin(LN2), _margin(LN2)), mp.expm1, _deg,
             fixed=lambda r: r, factor=lambda r: r * r,
             note="expm1(r) = r + r^2 P(r) on |r| <= ln2 (expm1 keeps k = 0 up to ln2)"))
for _prec, _deg in (("f32", 6), ("f64", 11)):
    fits(Fit(f"exp2_{_prec}", _prec, (-0.5 * (1 + 1 / 64), 0.5 * (1 + 1 / 64)),
             lambda r: mp.power(2, r), _deg, fixed=lambda r: np.ones_like(r),
             factor=lambda r: r, note="2^r = 1 + r P(r)"))
fits(Fit("log1p_f32", "f32", (_F_LO, _F_HI), mp.log1p, 9, fixed=lambda f: f,
         factor=lambda f: f * f, note="log1p(f) = f + f^2 P(f)"))
fits(Fit("log1p_f64", "f64", (-_S, _S), lambda s: 2 * mp.atanh(s), 7, fixed=lambda s: 2 * s,
         factor=lambda s: s ** 3, u=lambda s: s * s,
         note="s = f/(2+f): log1p(f) = 2 s + s^3 P(s^2)"))


# hyperbolic.py ------------------------------------------------------------------------------
# tanh float32: rational z P(z^2) / Q(z^2) on [0, 4.5]; tanh(x) for x >= 1 comes from
# z = x/2 by the doubling formula (tanh rounds to 1 beyond 9.01).
# sinh on |x| < 1: x + x^3 P(x^2) (beyond: (e^x - e^-x)/2 from exp).
fits(Fit("tanh_f32", "f32", (0.0, 4.5), mp.tanh, 5, denominator=3, factor=lambda x: x,
         u=lambda x: x * x, points=3000, note="tanh(z) = z P(z^2) / Q(z^2)"))
for _prec, _deg in (("f32", 4), ("f64", 7)):
    fits(Fit(f"sinh_{_prec}", _prec, (0.0, 1.0), mp.sinh, _deg, fixed=lambda x: x,
             factor=lambda x: x ** 3, u=lambda x: x * x, note="sinh(x) = x + x^3 P(x^2)"))


# trig.py ------------------------------------------------------------------------------------
# sin, cos: x = k pi/2 + r, |r| <= pi/4: sin(r) = r + r^3 P(r^2), cos(r) = 1 - r^2/2 + r^4 P(r^2).
# atan: |t| <= 1/2 after the reductions t = x (|x| <= 1/2), (x-1)/(x+1) (1/2 < |x| <= 2, where
#   x - 1 is exact), -1/x (|x| > 2): t + t^3 P(t^2).
# asin: |s| <= 1/2 after s = sqrt((1-|x|)/2) for |x| > 1/2: s + s^3 P(s^2).
_PIO4 = _margin(math.pi / 4)
_ATAN_T = _margin(0.5)
for _prec, (_ds, _dc, _da, _dasin) in (("f32", (3, 3, 6, 5)), ("f64", (6, 6, 14, 13))):
    fits(Fit(f"sin_{_prec}", _prec, (0.0, _PIO4), mp.sin, _ds, fixed=lambda r: r,
             factor=lambda r: r ** 3, u=lambda r: r * r, note="sin(r) = r + r^3 P(r^2)"),
         Fit(f"cos_{_prec}", _prec, (0.0, _PIO4), mp.cos, _dc, fixed=lambda r: 1 - r * r / 2,
             factor=lambda r: r ** 4, u=lambda r: r * r, note="cos(r) = 1 - r^2/2 + r^4 P(r^2)"),
         Fit(f"atan_{_prec}", _prec, (0.0, _ATAN_T), mp.atan, _da, fixed=lambda t: t,
             factor=lambda t: t ** 3, u=lambda t: t * t, note="atan(t) = t + t^3 P(t^2)"),
         Fit(f"asin_{_prec}", _prec, (0.0, 0.5), mp.asin, _dasin, fixed=lambda s: s,
             factor=lambda s: s ** 3, u=lambda s: s * s, note="asin(s) = s + s^3 P(s^2)"))


# power.py -----------------------------------------------------------------------------------
# cbrt: a first guess cbrt(m) ~ P(m) on [1, 2] that one Halley step makes exact.
# pow (float64): log(m) = log(c_i) + log1p(r), r = m / c_i - 1 exact, |r| < 2^-8 (table below,
#   256 subintervals);
#   log1p(r) = r - r^2/2 + r^3 P(r).
fits(Fit("cbrt_f64", "f64", (1.0, 2.0), mp.cbrt, 7, note="cbrt(m) ~ P(m), first guess"),
     Fit("cbrt_f32", "f32", (1.0, 2.0), mp.cbrt, 4, note="cbrt(m) ~ P(m), first guess"))
fits(Fit("powlog_f64", "f64", (-2.0 ** -7.5, 2.0 ** -7.5), mp.log1p, 5,
         fixed=lambda r: r - r * r / 2, factor=lambda r: r ** 3,
         note="log1p(r) = r - r^2/2 + r^3 P(r)"))


# special.py ---------------------------------------------------------------------------------
# erf: |x| < a: x + x P(x^2). float32: a = 1, and 1 <= |x| < 3.92 a polynomial in x - 2.5
#   (absolute error; erf rounds to 1 beyond). float64: a = 0.84375, and erf = 1 - erfc above.
# erfc: x >= 0.84375: erfc(x) = exp(-x^2) R(s) / x, s = 1/x^2, R a rational on two pieces of
#   x for float64, [0.84375, 2] and [2, 28], and one for float32, [0.84375, 10.1] (all its
#   coefficients come out positive, so evaluating it at s >= 0 cannot cancel).
def _erfc_scaled(s: mp.mpf) -> mp.mpf:
    x = 1 / mp.sqrt(s)
    return mp.erfc(x) * mp.exp(x * x) * x


fits(Fit("erf_f32", "f32", (0.0, 1.0), mp.erf, 7, fixed=lambda x: x, factor=lambda x: x,
         u=lambda x: x * x, note="erf(x) = x + x P(x^2), |x| < 1"),
     Fit("erfbig_f32", "f32", (1.0, 3.92), mp.erf, 14, u=lambda x: x - 2.5, relative=False,
         note="erf(x) = P(x - 2.5) on [1, 3.92], absolute error"),
     Fit("erf_f64", "f64", (0.0, 0.84375), mp.erf, 12, fixed=lambda x: x, factor=lambda x: x,
         u=lambda x: x * x, note="erf(x) = x + x P(x^2), |x| < 0.84375"))
for _name, (_a, _b), _deg in (("erfca_f64", (0.84375, 2.0), 8), ("erfcb_f64", (2.0, 28.0), 8),
                              ("erfc_f32", (0.84375, 10.1), 5)):
    fits(Fit(_name, _name[-3:], (1 / _b ** 2, 1 / _a ** 2), _erfc_scaled, _deg,
             denominator=_deg, points=1500,
             note=f"x e^(x^2) erfc(x) = P(s)/Q(s), s = 1/x^2, x in [{_a}, {_b}]"))


# erf_inv(x) = x p(w), w = -log((1 - x)(1 + x)); p(w) = erfinv(x)/x is a polynomial in
#   w - c (central piece) or sqrt(w) - c (tail pieces).
def _erfinv_ratio(w: mp.mpf) -> mp.mpf:
    if w == 0:
        return mp.sqrt(mp.pi) / 2
    x = mp.sqrt(-mp.expm1(-w))
    return mp.erfinv(x) / x


def _erfinv_of_root(v: mp.mpf) -> mp.mpf:
    return _erfinv_ratio(v * v)


ERFINV_PIECES = {
    "f32": [(0.0, 5.0, "w", 2.5, 13), (5.0, 16.2, "sqrt", 3.0, 11)],
    "f64": [(0.0, 6.25, "w", 3.125, 26), (6.25, 16.0, "sqrt", 3.25, 22),
            (16.0, 36.8, "sqrt", 5.0, 20)],
}
for _prec, _pieces in ERFINV_PIECES.items():
    for _i, (_lo, _hi, _kind, _c, _deg) in enumerate(_pieces):
        if _kind == "w":
            fits(Fit(f"erfinv{_i}_{_prec}", _prec, (_lo, _hi), _erfinv_ratio, _deg,
                     u=lambda w, c=_c: w - c, note=f"erfinv(x)/x = P(w - {_c}), w in "
                                                    f"[{_lo}, {_hi}]"))
        else:
            fits(Fit(f"erfinv{_i}_{_prec}", _prec, (math.sqrt(_lo), math.sqrt(_hi)),
                     _erfinv_of_root, _deg, u=lambda v, c=_c: v - c,
                     note=f"erfinv(x)/x = P(sqrt(w) - {_c}), w in [{_lo}, {_hi}]"))


# lgamma (float64): lgamma(2 + t) = t P(t) on |t| <= 1/2; for x >= 8 Stirling's
#   (x - 1/2)(log x - 1) + (log(2 pi) - 1)/2 + S(1/x^2)/x; sin(pi r), cos(pi r) on |r| <= 1/4.
# digamma (float64): digamma(1 + t) = (t - t0) P(t - 1/2) on [0, 1] (t0 + 1 is the positive
#   zero); for x >= 10: log x - 1/(2x) - S(1/x^2)/x^2.
_T0 = mp.findroot(mp.digamma, 1.4616) - 1


def _stirling(w: mp.mpf) -> mp.mpf:
    if w == 0:
        return mp.mpf(1) / 12
    x = 1 / mp.sqrt(w)
    return x * (mp.loggamma(x) - ((x - 0.5) * mp.log(x) - x + mp.log(2 * mp.pi) / 2))


def _digamma_tail(w: mp.mpf) -> mp.mpf:
    if w == 0:
        return mp.mpf(1) / 12
    x = 1 / mp.sqrt(w)
    return (mp.log(x) - 1 / (2 * x) - mp.digamma(x)) / w


fits(Fit("lgamma_f64", "f64", (-0.5, 0.5), lambda t: mp.loggamma(2 + t), 20,
         factor=lambda t: t, points=1500, note="lgamma(2 + t) = t P(t)"),
     Fit("stirling_f64", "f64", (0.0, 1 / 64), _stirling, 8, points=800,
         note="x (lgamma(x) - (x - 1/2) log x + x - log(2 pi)/2) = P(1/x^2), x >= 8"),
     Fit("sinpi_f64", "f64", (0.0, 0.25), lambda r: mp.sin(mp.pi * r), 9,
         factor=lambda r: r, u=lambda r: r * r, note="sin(pi r) = r P(r^2)"),
     Fit("cospi_f64", "f64", (0.0, 0.25), lambda r: mp.cos(mp.pi * r), 9,
         fixed=lambda r: np.ones_like(r), factor=lambda r: r * r, u=lambda r: r * r,
         note="cos(pi r) = 1 + r^2 P(r^2)"),
     Fit("digamma_f64", "f64", (0.0, 1.0), lambda t: mp.digamma(1 + t), 22,
         factor=lambda t: t - ld(_T0), u=lambda t: t - 0.5, points=1500,
         note="digamma(1 + t) = (t - t0) P(t - 1/2), t0 = 0.4616..."),
     Fit("digammatail_f64", "f64", (0.0, 0.01), _digamma_tail, 8, points=800,
         note="digamma(x) = log x - 1/(2x) - P(1/x^2)/x^2, x >= 10"))


# ---------------------------------------------------------------------------------------------
# Constants split into parts: value = sum(parts), each part rounded to the precision, so that
# range reductions can subtract k * value in steps with small error.

def split_constant(value: mp.mpf, precision: str, parts: int) -> tuple[float, ...]:
    out = []
    rest = value
    for _ in range(parts):
        part = _round(float(rest), precision)
        out.append(part)
        rest = rest - mp.mpf(part)
    return tuple(out)


def chunks_of_two_over_pi(count: int, bits: int = 53) -> tuple[float, ...]:
    """Integers C_i < 2**bits with 2/pi = sum(C_i * 2**(-bits * (i + 1))) (truncated)."""
    with mp.workdps(count * bits // 3 + 50):
        scaled = mp.floor((2 / mp.pi) * mp.mpf(2) ** (bits * count))
        out = []
        for i in reversed(range(count)):
            out.append(float(scaled % (2 ** bits)))
            scaled = mp.floor(scaled / 2 ** bits)
    return tuple(reversed(out))


def constants() -> dict[str, tuple[float, ...]]:
    table: dict[str, tuple[float, ...]] = {}
    named = {
        "ln2": mp.log(2), "log2e": 1 / mp.log(2), "pi": mp.pi, "pio2": mp.pi / 2,
        "pio4": mp.pi / 4, "3pio4": 3 * mp.pi / 4, "2opi": 2 / mp.pi,
        "half_log_2pi": mp.log(2 * mp.pi) / 2, "log_pi": mp.log(mp.pi),
        "digamma_zero": mp.findroot(mp.digamma, 1.4616),
    }
    for name, value in named.items():
        for precision in ("f32", "f64"):
            table[f"{name}_{precision}"] = split_constant(value, precision, 3)
    table["2opi_chunks"] = chunks_of_two_over_pi(24)
    table.update(pow_log_table())
    return table


POW_TABLE_BITS = 8
POW_TABLE_OFFSET = 0x3FE6A00000000000   # bits of 0.70703125: subintervals start here


def _from_bits(bits: int) -> float:
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def pow_log_table() -> dict[str, tuple[float, ...]]:
    """For pow's logarithm: 1/c_i with 9 significant bits and -log(1/c_i) as hi + lo.

    Subinterval i of m in [0.70703125, 1.4140625) holds the m whose bits minus the offset
    have i in bits 45..51; c_i is its midpoint. The script checks that r = m/c_i - 1
    computed as fma(m, invc_i, -1) is exact (|r| < 2**-8 and at most 53 significant bits).
    """
    n = 1 << POW_TABLE_BITS
    invc, logc_hi, logc_lo = [], [], []
    shift = 52 - POW_TABLE_BITS
    for i in range(n):
        lo = _from_bits(POW_TABLE_OFFSET + (i << shift))
        hi = _from_bits(POW_TABLE_OFFSET + ((i + 1) << shift))
        c = (lo + hi) / 2
        m_, e_ = math.frexp(1 / c)
        inv = math.ldexp(round(math.ldexp(m_, 9)), e_ - 9)
        if lo == 1.0:
            inv = 1.0   # log(1) must come out exactly 0 (pow(-1, 2**60) = 1)
        for m in (lo, float(np.nextafter(hi, 0.0)), c):
            r = mp.mpf(m) * mp.mpf(inv) - 1
            assert abs(r) < 2.0 ** -8, (i, m, r)
        # exactness: the product's last bit is lsb(m) * lsb(inv); r spans at most 53 bits
        lsb_m = 2.0 ** (math.frexp(lo)[1] - 53)
        lsb_inv = 2.0 ** (math.frexp(inv)[1] - 9)
        assert 2.0 ** -8 / (lsb_m * lsb_inv) <= 2.0 ** 53, i
        value = -mp.log(mp.mpf(inv))
        h = float(value)
        invc.append(inv)
        logc_hi.append(h)
        logc_lo.append(float(value - mp.mpf(h)))
    return {"pow_invc": tuple(invc), "pow_logc_hi": tuple(logc_hi),
            "pow_logc_lo": tuple(logc_lo)}


# ---------------------------------------------------------------------------------------------

def write_table(table: dict[str, dict], consts: dict[str, tuple[float, ...]]) -> None:
    lines = [
        '"""Coefficients of the vector math library, generated by tools/fit_vecmath.py.',
        "",
        "Do not edit by hand: change the fit in the script and rerun it. Each entry gives the",
        "coefficients of P (and Q for rational fits) lowest degree first, the interval, and",
        "the fitting error (relative or absolute, as noted) before rounding in the kernel.",
        '"""',
        "",
        "COEFFS: dict[str, dict] = {",
    ]
    for name in sorted(table):
        entry = table[name]
        lines.append(f"    {name!r}: {{")
        for key in ("note", "interval", "error", "p", "q"):
            if key not in entry:
                continue
            value = entry[key]
            if key in ("p", "q"):
                lines.append(f"        {key!r}: (")
                for c in value:
                    lines.append(f"            {c!r},")
                lines.append("        ),")
            else:
                lines.append(f"        {key!r}: {value!r},")
        lines.append("    },")
    lines.append("}")
    lines.append("")
    lines.append("# Constants as sums of parts in each precision (hi, mid, lo), and 2/pi as")
    lines.append("# 53-bit integer chunks, 2/pi = sum(C_i 2**(-53 (i + 1))), for the reduction")
    lines.append("# of huge trigonometric arguments.")
    lines.append("CONSTANTS: dict[str, tuple[float, ...]] = {")
    for name in sorted(consts):
        values = consts[name]
        if len(values) <= 3:
            lines.append(f"    {name!r}: {values!r},")
            continue
        lines.append(f"    {name!r}: (")
        for i in range(0, len(values), 3):
            lines.append("        " + " ".join(f"{v!r}," for v in values[i:i + 3]))
        lines.append("    ),")
    lines.append("}")
    OUTPUT.write_text("\n".join(lines) + "\n")


def load_table() -> dict[str, dict]:
    if not OUTPUT.exists():
        return {}
    for node in ast.parse(OUTPUT.read_text()).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "COEFFS":
            return dict(ast.literal_eval(node.value))
    return {}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="fits to redo (default: all)")
    parser.add_argument("--dry-run", action="store_true", help="print, do not write")
    args = parser.parse_args(argv)
    table = load_table()
    chosen = [f for f in FITS if not args.names or f.name in args.names]
    unknown = set(args.names) - {f.name for f in FITS}
    if unknown:
        raise SystemExit(f"unknown fits: {sorted(unknown)}")
    for fit in chosen:
        p, q, err = run_fit(fit)
        eps = 2.0 ** (-24 if fit.precision == "f32" else -53)
        kind = "rel" if fit.relative else "abs"
        print(f"{fit.name:24s} deg {fit.degree:2d}/{fit.denominator:d}  {kind} error "
              f"{err:.3e} = {err / eps:7.3f} eps")
        entry = {"note": fit.note, "interval": tuple(fit.interval),
                 "error": float(f"{err:.3e}"), "p": tuple(p)}
        if q:
            entry["q"] = tuple(q)
        table[fit.name] = entry
    if not args.dry_run:
        write_table(table, constants())


if __name__ == "__main__":
    main(sys.argv[1:])
