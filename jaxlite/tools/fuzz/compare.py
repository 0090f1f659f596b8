"""Comparing two outcomes of one program.

An outcome is `{"ok": True, "value": ndarray}` or `{"ok": False, "type", "base", "message"}`.
Two outcomes agree when:

- both raised, with the same builtin exception class underneath (TypeError, ValueError,
  IndexError, RuntimeError, ...; JAX's and jaxlite's own classes derive from those);
- both returned arrays of exactly the same dtype and shape, and
  - integers and booleans are equal;
  - floats and complex numbers have NaNs at the same elements (any NaN part makes an element
    NaN); elsewhere (complex numbers part by part) the same infinities, and elsewhere |got - want| <= rtol * |want| + atol with
    `rtol = 2 * tol_ops * eps(dtype)` and `atol = rtol * scale`. `tol_ops` is the program's
    op-count factor (generate.py: 4 per inexact op, plus one per summed element, times loop
    trip counts; 0 when the result is exact, which makes the comparison bitwise), and
    `scale` the largest finite magnitude among the program's values (cancellation in a
    sum leaves an error relative to the terms, not to the result);
  - exact results also agree in the sign of zeros.

A disagreement is a `(category, detail)` pair; categories are listed in CATEGORIES.
"""
from __future__ import annotations

import numpy as np

from jaxlite.tools.fuzz.values import category, float_info

CATEGORIES = ("value", "nan", "inf", "signed zero", "dtype", "shape", "exception type",
              "raises only in reference", "raises only here")


def tolerance(dtype, tol_ops: int, scale: float) -> tuple[float, float]:
    """(rtol, atol) for a float or complex result of `dtype` (see the module docstring)."""
    part = np.float32 if np.dtype(dtype).name == "complex64" else (
        np.float64 if np.dtype(dtype).name == "complex128" else dtype)
    eps = float(float_info(part).eps)
    rtol = 2 * tol_ops * eps
    return rtol, rtol * scale


def compare(want: dict, got: dict, tol_ops: int = 0, scale: float = 1.0):
    """None when the outcomes agree, else (category, detail)."""
    if not want["ok"] or not got["ok"]:
        return _compare_exceptions(want, got)
    a, b = np.asarray(want["value"]), np.asarray(got["value"])
    if a.dtype != b.dtype:
        return "dtype", f"want {a.dtype}, got {b.dtype}"
    if a.shape != b.shape:
        return "shape", f"want {a.shape}, got {b.shape}"
    cat = category(a.dtype)
    if cat in ("bool", "int", "uint"):
        if np.array_equal(a, b):
            return None
        return "value", _first_difference(a, b, a != b)
    return _compare_floats(a, b, tol_ops, scale)


def _compare_exceptions(want, got):
    if not want["ok"] and not got["ok"]:
        if want["base"] == got["base"]:
            return None
        return "exception type", (f"want {want['type']}({want['base']}), got "
                                  f"{got['type']}({got['base']}): {got['message'][:200]}")
    if not want["ok"]:
        return "raises only in reference", f"{want['type']}: {want['message'][:200]}"
    return "raises only here", f"{got['type']}: {got['message'][:200]}"


def _nan_mask(x):
    if np.iscomplexobj(x):
        return np.isnan(x.real) | np.isnan(x.imag)
    return np.isnan(x)


def _compare_floats(a, b, tol_ops, scale):
    wide = np.complex128 if np.iscomplexobj(a) else np.float64
    x, y = a.astype(wide), b.astype(wide)
    nan_x, nan_y = _nan_mask(x), _nan_mask(y)
    if not np.array_equal(nan_x, nan_y):
        return "nan", _first_difference(a, b, nan_x != nan_y)
    keep = ~nan_x
    x, y = x[keep], y[keep]
    if np.iscomplexobj(x):  # the parts are compared as floats, each with its own infinities
        x, y = np.concatenate([x.real, x.imag]), np.concatenate([y.real, y.imag])
    inf_x, inf_y = ~np.isfinite(x), ~np.isfinite(y)
    if np.any(inf_x | inf_y):
        bad = (inf_x | inf_y) & (x != y)
        if np.any(bad):
            return "inf", _first_difference(x, y, bad)
    finite = ~(inf_x | inf_y)
    x, y = x[finite], y[finite]
    rtol, atol = tolerance(a.dtype, tol_ops, scale)
    with np.errstate(all="ignore"):  # |x| of a huge complex128 overflows; the test stays false
        bad = np.abs(y - x) > rtol * np.abs(x) + atol
    if np.any(bad):
        return "value", _first_difference(x, y, bad) + f" (rtol {rtol:.3g}, atol {atol:.3g})"
    if tol_ops == 0:
        zeros = (x == 0) & (np.signbit(x) != np.signbit(y))
        if np.any(zeros):
            return "signed zero", _first_difference(x, y, zeros)
    return None


def _first_difference(a, b, mask) -> str:
    where = np.argwhere(np.asarray(mask))
    count = len(where)
    if a.ndim == 0:
        return f"want {a!r}, got {b!r}"
    i = tuple(where[0])
    return f"{count} elements differ, first at {list(i)}: want {a[i]!r}, got {b[i]!r}"


def magnitude(values) -> float:
    """The largest finite magnitude among float and complex arrays (1.0 if none)."""
    best = 0.0
    for v in values:
        a = np.asarray(v)
        if category(a.dtype) not in ("float", "complex") or a.size == 0:
            continue
        f = np.abs(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64))
        f = f[np.isfinite(f)]
        if f.size:
            best = max(best, float(f.max()))
    return best if best > 0 else 1.0
