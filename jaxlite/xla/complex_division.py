"""Complex division as XLA computes it, in numpy (the evaluator's and eager mode's rule).

XLA divides by Smith's algorithm (as numpy does), except that a zero denominator and a
numerator not all NaN give copysign(inf, y.real) * x (so 1 / (-0 + 0j) is -inf + NaN j,
where numpy gives inf + NaN j); where Smith's algorithm gives NaN in both parts, it restores
the values C99's Annex G asks for:

1. an infinite numerator over a finite denominator: inf * (x' * conj(y)), where x' holds
   +-1 for each infinite part of x and +-0 for the others (the signs of x's parts);
2. a finite numerator over an infinite denominator: 0 * (x * conj(y')), y' built from y
   likewise.

So 1 / (inf - inf j) is 0, (inf + nan j) / 2 is inf + nan j, and (3 + 4j) / (nan + inf j)
is 0 - 0j, as in JAX. The cpu backend emits the same selects (codegen/complex_values.py).
"""
from __future__ import annotations

import numpy as np


def _signed_unit_if_inf(v: np.ndarray) -> np.ndarray:
    """+-1 where v is infinite, +-0 elsewhere, with v's sign."""
    return np.copysign(np.where(np.isinf(v), 1, 0).astype(v.dtype), v)


def complex_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x / y for complex arrays with XLA's special values (see the module docstring)."""
    with np.errstate(all="ignore"):
        q = np.asarray(np.divide(x, y))  # an array even for 0-d operands (parts writable)
        x, y = np.broadcast_to(x, q.shape), np.broadcast_to(y, q.shape)
        ar, ai, br, bi = x.real, x.imag, y.real, y.imag
        zero_den = (br == 0) & (bi == 0) & ~(np.isnan(ar) & np.isnan(ai))
        replace = (np.isnan(q.real) & np.isnan(q.imag)) | zero_den
        if not np.any(replace):
            return q
        inf, zero = q.real.dtype.type(np.inf), q.real.dtype.type(0)
        s = np.copysign(inf, br)
        inf_num = (np.isinf(ar) | np.isinf(ai)) & np.isfinite(br) & np.isfinite(bi)
        ar1, ai1 = _signed_unit_if_inf(ar), _signed_unit_if_inf(ai)
        inf_den = (np.isinf(br) | np.isinf(bi)) & np.isfinite(ar) & np.isfinite(ai)
        br1, bi1 = _signed_unit_if_inf(br), _signed_unit_if_inf(bi)
        re = np.select([zero_den, inf_num, inf_den],
                       [s * ar, inf * (ar1 * br + ai1 * bi), zero * (ar * br1 + ai * bi1)],
                       q.real)
        im = np.select([zero_den, inf_num, inf_den],
                       [s * ai, inf * (ai1 * br - ar1 * bi), zero * (ai * br1 - ar * bi1)],
                       q.imag)
        out = q.copy()
        out.real = np.where(replace, re, q.real)
        out.imag = np.where(replace, im, q.imag)
        return out
