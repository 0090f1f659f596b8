"""numpy kernels of the special functions the evaluator needs: erf, erfc, erf-inv, lgamma,
digamma (XLA expands these into polynomial approximations; our opcode table keeps them
whole). They compute in float64 and the caller rounds to the operand's type, so they are at
least as accurate as XLA's float32 approximations.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["digamma", "erf", "erf_inv", "erfc", "lgamma"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _lgamma_scalar(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf  # the poles 0, -1, -2, ... (where math.lgamma raises)
    return math.lgamma(x)


_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)
_LGAMMA = np.frompyfunc(_lgamma_scalar, 1, 1)


def _apply(table: np.ufunc, x: np.ndarray) -> np.ndarray:
    wide = np.asarray(x, np.float64)
    return np.asarray(table(wide), np.float64).reshape(wide.shape)


def erf(x: np.ndarray) -> np.ndarray:
    return _apply(_ERF, x)


def erfc(x: np.ndarray) -> np.ndarray:
    return _apply(_ERFC, x)


def lgamma(x: np.ndarray) -> np.ndarray:
    return _apply(_LGAMMA, x)


def erf_inv(x: np.ndarray) -> np.ndarray:
    """Inverse error function: ±inf at ±1, nan outside [-1, 1]."""
    x = np.asarray(x, np.float64)
    out = np.where(np.abs(x) == 1, np.copysign(np.inf, x), np.nan)
    inside = np.abs(x) < 1
    v = x[inside]
    # A closed-form first guess (Winitzki's; relative error below 1%), then Newton steps on
    # erfc(y) = 1 - |v|, which keeps its digits where |v| is close to 1 and erf does not.
    log_term = np.log1p(-v * v)
    b = 2.0 / (math.pi * 0.147) + log_term / 2.0
    y = np.sqrt(np.maximum(np.sqrt(b * b - log_term / 0.147) - b, 0.0))
    target = 1.0 - np.abs(v)  # exact for a float32 |v| < 1 held in a float64
    for _ in range(6):
        slope = _TWO_OVER_SQRT_PI * np.exp(-y * y)
        step = np.divide(erfc(y) - target, slope, out=np.zeros_like(y), where=slope > 0)
        y = y + step
    out[inside] = np.copysign(y, v)  # erf_inv(-0.) is -0.
    return out


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx lgamma(x): nan at the poles 0, -1, -2, ... (as XLA gives)."""
    x = np.asarray(x, np.float64)
    pole = np.isnan(x) | (x == -np.inf) | ((x <= 0) & (x == np.floor(x)))
    reflect = x < 0.5
    # psi(x) = psi(1 - x) - pi / tan(pi x) moves x where the series converges; tan has
    # period pi, so reducing x by a whole number first keeps pi x from losing digits.
    with np.errstate(all="ignore"):
        reduced = x - np.floor(x + 0.5)
        reflection = np.where(reflect, -math.pi / np.tan(math.pi * reduced), 0.0)
        z = np.where(reflect, 1.0 - x, x)
        # psi(z) = psi(z + n) - sum 1/(z + k), then the asymptotic series at z + n >= 16,
        # where its first omitted term is below float64's resolution.
        shift = np.zeros_like(z)
        for _ in range(16):
            small = z < 16.0
            shift -= np.where(small, 1.0 / z, 0.0)
            z = np.where(small, z + 1.0, z)
        inv2 = 1.0 / (z * z)
        series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
            1 / 240 - inv2 * (1 / 132)))))
        out = reflection + shift + np.log(z) - 0.5 / z - series
    out = np.where(x == np.inf, np.inf, out)
    return np.where(pole, np.nan, out)
