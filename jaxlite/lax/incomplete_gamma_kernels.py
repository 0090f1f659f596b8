"""Float64 numpy kernels for the derivative of the regularized incomplete gamma function
with respect to its shape parameter: `igamma_grad_a` and `random_gamma_grad`.

With P(a, x) = gamma(a, x) / Gamma(a) and Q = 1 - P, the kernels compute dP/da and the
derivative of a Gamma(a, 1) sample x with respect to a at fixed P (the implicit
reparameterization gradient), dx/da = -(dP/da) / (dP/dx).

Two expansions, each carried with its derivative in a (forward-mode dual numbers):

- below x = a + 1, the series P = x^a e^-x / Gamma(a + 1) * S with
  S = sum_n x^n / ((a + 1) ... (a + n));
- above, Legendre's continued fraction Q = x^a e^-x / Gamma(a) * F with
  F = 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))),
  evaluated by the modified Lentz method.

Writing dP/dx = x^(a-1) e^-x / Gamma(a) shows that the sample derivative is free of the
prefactor x^a e^-x / Gamma(.) (the series gives -x/a (S (log x - psi(a+1)) + dS/da), the
fraction x (F (log x - psi(a)) + dF/da)), so it stays finite where that prefactor
underflows. Iterations stop element by element when the relative change of the value and
of its derivative fall below float64's epsilon (at most 5000 terms; more are needed only
for a and x beyond 10**7, where both expansions are slow).
"""
from __future__ import annotations

import numpy as np
import scipy.special as sp

__all__ = ["gammainc_da", "gamma_sample_da"]

_EPS = np.finfo(np.float64).eps
_TINY = 1e-300
_MAX_TERMS = 5000


def _series(a: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """S and dS/da of the series of P (a > 0, x >= 0)."""
    term = np.ones_like(x)
    d_term = np.zeros_like(x)
    total, d_total = term.copy(), d_term.copy()
    active = np.ones(x.shape, bool)
    for n in range(1, _MAX_TERMS):
        if not active.any():
            break
        ratio = x / (a + n)
        d_term = np.where(active, (d_term - term / (a + n)) * ratio, 0.0)
        term = np.where(active, term * ratio, 0.0)
        total = total + term
        d_total = d_total + d_term
        small = (np.abs(term) <= _EPS * np.abs(total)) & (
            np.abs(d_term) <= _EPS * np.abs(d_total))
        active &= ~small
    return total, d_total


def _fraction(a: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F and dF/da of the continued fraction of Q (x > 0), by modified Lentz with duals."""
    b = x + 1.0 - a  # b_1; db/da = -1 for every b_n
    f = np.where(b == 0, _TINY, b)
    d_f = -np.ones_like(x)
    c, d_c = f.copy(), d_f.copy()
    dd, d_dd = np.zeros_like(x), np.zeros_like(x)
    active = np.ones(x.shape, bool)
    for n in range(1, _MAX_TERMS):
        if not active.any():
            break
        b = b + 2.0
        num, d_num = -n * (n - a), float(n)  # the partial numerator a_(n+1) and d/da
        raw = b + num * dd
        d_raw = -1.0 + d_num * dd + num * d_dd
        raw = np.where(raw == 0, _TINY, raw)
        dd, d_dd = 1.0 / raw, -d_raw / (raw * raw)
        c_new = b + num / c
        d_c = -1.0 + d_num / c - num * d_c / (c * c)
        c = np.where(c_new == 0, _TINY, c_new)
        delta, d_delta = c * dd, d_c * dd + c * d_dd
        f_new, d_f_new = f * delta, d_f * delta + f * d_delta
        f = np.where(active, f_new, f)
        d_f = np.where(active, d_f_new, d_f)
        small = (np.abs(delta - 1.0) <= _EPS) & (
            np.abs(d_delta) * np.abs(f) <= _EPS * np.abs(d_f) + _TINY)
        active &= ~small
    # F = 1 / G where G is the fraction evaluated above.
    return 1.0 / f, -d_f / (f * f)


def _derivative(a: np.ndarray, x: np.ndarray, sample: bool) -> np.ndarray:
    """dP/da (sample=False) or dx/da at fixed P (sample=True), for a > 0 and x > 0."""
    out = np.zeros_like(x)
    use_fraction = (x > a + 1.0) & (x > 1.0)
    with np.errstate(all="ignore"):
        log_x = np.log(x)
        lo_a, lo_x = a[~use_fraction], x[~use_fraction]
        s, d_s = _series(lo_a, lo_x)
        inner = s * (log_x[~use_fraction] - sp.digamma(lo_a + 1.0)) + d_s
        if sample:
            out[~use_fraction] = -lo_x / lo_a * inner
        else:
            log_prefactor = lo_a * log_x[~use_fraction] - lo_x - sp.gammaln(lo_a + 1.0)
            out[~use_fraction] = np.exp(log_prefactor) * inner
        hi_a, hi_x = a[use_fraction], x[use_fraction]
        f, d_f = _fraction(hi_a, hi_x)
        inner = f * (log_x[use_fraction] - sp.digamma(hi_a)) + d_f
        if sample:
            out[use_fraction] = hi_x * inner
        else:
            log_prefactor = hi_a * log_x[use_fraction] - hi_x - sp.gammaln(hi_a)
            out[use_fraction] = -np.exp(log_prefactor) * inner
    return out


def _with_edges(a: np.ndarray, x: np.ndarray, sample: bool) -> np.ndarray:
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    invalid = np.isnan(a) | np.isnan(x) | (a <= 0) | (x < 0)
    regular = ~invalid & (x > 0) & np.isfinite(x) & np.isfinite(a)
    out = np.zeros(a.shape)
    out[regular] = _derivative(a[regular], x[regular], sample)
    return np.where(invalid, np.nan, out)


def gammainc_da(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dP(a, x)/da in float64; nan where a <= 0, x < 0 or either is nan; 0 at x = 0."""
    return _with_edges(a, x, sample=False)


def gamma_sample_da(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d x / d a at fixed P(a, x), for a Gamma(a, 1) sample x, in float64."""
    return _with_edges(a, x, sample=True)
