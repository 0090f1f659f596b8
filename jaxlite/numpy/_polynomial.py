"""Polynomials as 1-d coefficient arrays, highest power first, and 1-d convolution.

Mirrors `jax.numpy`'s polyval, polyadd, polysub, polymul, polydiv, polyder, polyint, poly,
polyfit, roots, convolve and correlate. Coefficient arrays have static lengths, so loops
over coefficients unroll at trace time. Options that would make a length depend on values
(`trim_leading_zeros`, `strip_zeros`) need concrete inputs, as in JAX. `roots` and `poly`
of a matrix use eigenvalues and so always give complex results, as JAX's do.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy.linalg as linalg
from jaxlite.core import dtypes
from jaxlite.numpy._nonzero import concrete_or_none
from jaxlite.numpy._promotion import (check_arraylike, convert, ensure_array, promote_dtypes,
                                      promote_dtypes_inexact, user_dtype)

__all__ = ["convolve", "correlate", "polyval", "polyadd", "polysub", "polymul", "polydiv",
           "polyder", "polyint", "poly", "polyfit", "roots"]


def _vectors(fun_name: str, *args: Any, inexact: bool) -> list[Any]:
    check_arraylike(fun_name, *args)
    arrays = promote_dtypes_inexact(*args) if inexact else promote_dtypes(*args)
    out = []
    for x in arrays:
        if x.ndim > 1:
            raise ValueError(f"jnp.{fun_name}: inputs must be 0-d or 1-d coefficient arrays, "
                             f"got shape {x.shape}.")
        out.append(lax.reshape(x, (x.size,)) if x.ndim == 0 else x)
    return out


# ------------------------------------------------------------------------ convolution

def _correlate_full(a: Any, v: Any, low: int, high: int, precision: Any,
                    preferred: Any) -> Any:
    """Sliding products `sum_j a_padded[k + j] * v[j]` with a padded by (low, high)."""
    dtype = a.dtype if preferred is None else user_dtype(preferred, "convolve")
    out = lax.conv_general_dilated(lax.reshape(a, (1, 1, a.shape[0])),
                                   lax.reshape(v, (1, 1, v.shape[0])), (1,), [(low, high)],
                                   precision=precision, preferred_element_type=dtype)
    return lax.reshape(out, (out.shape[2],))


def _window(mode: str, n: int, m: int, fun_name: str) -> tuple[int, int]:
    """Where each mode's result lies in the full result: (offset, length).

    numpy centres 'same' on the shorter input; for a correlation with the longer input
    second it rounds the other way.
    """
    short, long_ = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        centre = short // 2 if (fun_name == "correlate" and n < m) else (short - 1) // 2
        return centre, long_
    if mode == "valid":
        return short - 1, long_ - short + 1
    raise ValueError(f"jnp.{fun_name}: mode must be 'full', 'same' or 'valid', got "
                     f"{mode!r}.")


def _convolve(fun_name: str, a: Any, v: Any, mode: str, precision: Any, preferred: Any,
              flip: bool) -> Any:
    a, v = _vectors(fun_name, a, v, inexact=True)
    n, m = a.shape[0], v.shape[0]
    if n == 0 or m == 0:
        raise ValueError(f"jnp.{fun_name}: inputs cannot be empty, got shapes {a.shape} "
                         f"and {v.shape}.")
    offset, length = _window(mode, n, m, fun_name)
    if flip:
        v = lax.rev(v, (0,))
    elif dtypes.is_complex(v.dtype):
        v = lax.conj(v)
    full = _correlate_full(a, v, m - 1, m - 1, precision, preferred)
    return lax.slice(full, (offset,), (offset + length,))


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Discrete linear convolution of two 1-d arrays (mirrors `jax.numpy.convolve`).

    `mode` 'full' gives every overlap, 'same' the length of the longer input, 'valid'
    the complete overlaps only. Inputs are promoted to an inexact dtype, as in JAX.
    """
    return _convolve("convolve", a, v, mode, precision, preferred_element_type, True)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Cross-correlation `c[k] = sum_n a[n + k] * conj(v[n])` of two 1-d arrays
    (mirrors `jax.numpy.correlate`); modes as in `convolve`."""
    return _convolve("correlate", a, v, mode, precision, preferred_element_type, False)


# ------------------------------------------------------------------------ arithmetic

def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial `p` evaluated at `x`, by Horner's rule (`jax.numpy.polyval`).

    The coefficients run along `p`'s first axis; its other axes broadcast with `x`, so a
    2-d `p` evaluates one polynomial per column. `unroll` is accepted for compatibility;
    the loop over coefficients is always unrolled.
    """
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(p, x)
    if p.ndim == 0:
        raise IndexError("jnp.polyval: p must have at least one dimension (the "
                         "coefficients, highest power first); got a 0-d array.")
    shape = lax.broadcast_shapes(p.shape[1:], x.shape)
    x = _broadcast_right(x, shape)
    result = lax.full_like(x, 0)
    for i in range(p.shape[0]):
        result = lax.add(lax.mul(result, x), _broadcast_right(p[i], shape))
    return result


def _broadcast_right(a: Any, shape: tuple[int, ...]) -> Any:
    """`a` broadcast to `shape` numpy-style (its axes aligned with the last ones)."""
    if a.shape == shape:
        return a
    offset = len(shape) - a.ndim
    kept = [i for i in range(a.ndim) if a.shape[i] == shape[offset + i]]
    a = lax.reshape(a, tuple(a.shape[i] for i in kept))
    return lax.broadcast_in_dim(a, shape, tuple(offset + i for i in kept))


def _align(a1: Any, a2: Any) -> tuple[Any, Any]:
    """Both coefficient arrays padded at the front to one length."""
    n = max(a1.shape[0], a2.shape[0])
    return tuple(lax.pad(a, convert(0, a.dtype), ((n - a.shape[0], 0, 0),)) for a in (a1, a2))


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (mirrors `jax.numpy.polyadd`)."""
    a1, a2 = _align(*_vectors("polyadd", a1, a2, inexact=False))
    return lax.add(a1, a2)


def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials (mirrors `jax.numpy.polysub`)."""
    a1, a2 = _align(*_vectors("polysub", a1, a2, inexact=False))
    return lax.sub(a1, a2)


def _trim_leading_zeros(fun_name: str, p: Any) -> Any:
    value = concrete_or_none(p)
    if value is None:
        raise ValueError(f"jnp.{fun_name}: trim_leading_zeros=True needs concrete "
                         "coefficients (the length depends on them); pass "
                         "trim_leading_zeros=False under jit.")
    nonzero = np.flatnonzero(value)
    start = int(nonzero[0]) if nonzero.size else max(value.shape[0] - 1, 0)
    return p[start:]


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (mirrors `jax.numpy.polymul`)."""
    a1, a2 = _vectors("polymul", a1, a2, inexact=True)
    if trim_leading_zeros:
        a1, a2 = (_trim_leading_zeros("polymul", a) for a in (a1, a2))
    if a1.shape[0] == 0 or a2.shape[0] == 0:
        return lax.full((1,), 0, a1.dtype)
    return convolve(a1, a2)


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """Quotient and remainder of the polynomial division u / v (`jax.numpy.polydiv`).

    Long division, unrolled; the remainder keeps u's length unless `trim_leading_zeros`.
    """
    u, v = _vectors("polydiv", u, v, inexact=True)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = lax.div(convert(1, v.dtype), v[0])
    quotient = lax.full((max(m - n + 1, 1),), 0, u.dtype)
    remainder = u
    for k in range(m - n + 1):
        d = lax.mul(scale, remainder[k])
        quotient = lax.dynamic_update_slice(quotient, lax.reshape(d, (1,)), (k,))
        window = lax.sub(remainder[k:k + n + 1], lax.mul(d, v))
        remainder = lax.dynamic_update_slice(remainder, window, (k,))
    if trim_leading_zeros:
        remainder = _trim_leading_zeros("polydiv", remainder)
    return quotient, remainder


def _order(m: Any, fun_name: str) -> int:
    try:
        m = operator.index(m)
    except TypeError:
        raise TypeError(f"jnp.{fun_name}: the order m must be a static integer, got "
                        f"{m!r}.") from None
    if m < 0:
        raise ValueError(f"jnp.{fun_name}: the order m must be nonnegative, got {m}.")
    return m


def polyder(p: Any, m: int = 1) -> Any:
    """The `m`-th derivative of the polynomial `p` (mirrors `jax.numpy.polyder`)."""
    p, = _vectors("polyder", p, inexact=True)
    for _ in range(_order(m, "polyder")):
        n = p.shape[0]
        if n <= 1:
            return lax.full((0,), 0, p.dtype)
        powers = lax.rev(lax.iota(p.dtype, n - 1), (0,))
        p = lax.mul(lax.slice(p, (0,), (n - 1,)), lax.add(powers, lax.full_like(powers, 1)))
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The `m`-th antiderivative of `p` (mirrors `jax.numpy.polyint`).

    `k` gives the integration constants, lowest order last: a scalar or `m` values.
    """
    m = _order(m, "polyint")
    p, = _vectors("polyint", p, inexact=True)
    constants = lax.full((m,), 0, p.dtype) if k is None else ensure_array(k)
    if k is not None:
        check_arraylike("polyint", k)
        constants = convert(constants, p.dtype)
        if constants.ndim == 0:
            constants = lax.broadcast_in_dim(constants, (m,), ())
        if constants.shape != (m,):
            raise ValueError(f"jnp.polyint: k must be a scalar or hold m={m} constants, got "
                             f"shape {constants.shape}.")
    for step in range(m):
        n = p.shape[0]
        divisors = lax.rev(lax.add(lax.iota(p.dtype, n), lax.full((n,), 1, p.dtype)), (0,))
        p = lax.concatenate([lax.div(p, divisors), constants[step:step + 1]], 0)
    return p


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots (`jax.numpy.poly`).

    A square matrix stands for its eigenvalues (the result is then complex, as in JAX).
    """
    check_arraylike("poly", seq_of_zeros)
    zeros, = promote_dtypes_inexact(seq_of_zeros)
    if zeros.ndim == 2 and zeros.shape[0] == zeros.shape[1] and zeros.shape[0] > 0:
        zeros = linalg.eigvals(zeros)
    elif zeros.ndim == 0:
        zeros = lax.reshape(zeros, (1,))
    elif zeros.ndim != 1:
        raise ValueError(f"jnp.poly: input must be 1-d or a non-empty square matrix, got "
                         f"shape {zeros.shape}.")
    coefficients = lax.full((1,), 1, zeros.dtype)
    for i in range(zeros.shape[0]):
        factor = lax.concatenate([lax.full((1,), 1, zeros.dtype),
                                  lax.neg(zeros[i:i + 1])], 0)
        coefficients = convolve(coefficients, factor)
    return coefficients


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial `p`, as complex numbers (mirrors `jax.numpy.roots`).

    They are the eigenvalues of the companion matrix. With `strip_zeros` (which needs
    concrete coefficients) leading zeros are dropped first; without it each leading zero
    gives a NaN root at the end, as in JAX.
    """
    p, = _vectors("roots", p, inexact=True)
    if strip_zeros:
        value = concrete_or_none(p)
        if value is None:
            raise ValueError("jnp.roots: strip_zeros=True needs concrete coefficients; pass "
                             "strip_zeros=False under jit.")
        nonzero = np.flatnonzero(value)
        p = p[int(nonzero[0]):] if nonzero.size else p[:0]
    complex_dtype = dtypes.canonicalize_dtype(dtypes.result_type(p.dtype, np.complex64))
    if p.shape[0] < 2:
        return lax.full((0,), 0, complex_dtype)
    if strip_zeros:
        return convert(_companion_roots(p), complex_dtype)
    return _roots_with_leading_zeros(p, complex_dtype)


def _companion_roots(p: Any) -> Any:
    n = p.shape[0] - 1
    top = lax.reshape(lax.neg(lax.div(p[1:], lax.broadcast_in_dim(p[0], (n,), ()))), (1, n))
    if n == 1:
        return linalg.eigvals(top)
    # Below the first row, the companion matrix shifts by one: ones on the subdiagonal.
    below = lax.convert_element_type(
        lax.eq(lax.broadcasted_iota(np.int32, (n - 1, n), 0),
               lax.broadcasted_iota(np.int32, (n - 1, n), 1)), p.dtype)
    return linalg.eigvals(lax.concatenate([top, below], 0))


def _roots_with_leading_zeros(p: Any, complex_dtype: np.dtype) -> Any:
    """Roots without stripping: the leading zeros are rolled to the end, and the roots
    they would hide become NaN."""
    n = p.shape[0]
    is_zero = lax.eq(p, lax.full_like(p, 0))
    leading = lax.reduce_sum(lax.cumprod(convert(is_zero, np.int32), 0), (0,))
    all_zero = lax.eq(leading, convert(n, np.int32))
    rolled = lax.concatenate([p, p], 0)
    rolled = lax.dynamic_slice(rolled, (lax.select(all_zero, convert(0, np.int32), leading),),
                               (n,))
    rolled = lax.select(lax.broadcast_in_dim(all_zero, (n,), ()), lax.full_like(p, 1), rolled)
    found = convert(_companion_roots(rolled), complex_dtype)
    keep = lax.lt(lax.iota(np.int32, n - 1), lax.sub(convert(n - 1, np.int32), leading))
    return lax.select(keep, found, lax.full_like(found, complex(np.nan, np.nan)))


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: bool = False) -> Any:
    """Least-squares fit of a polynomial of degree `deg` to the points (x, y)
    (mirrors `jax.numpy.polyfit`).

    `y` may hold several data sets as columns. `w` weights the residuals. `full` also
    returns the residuals, rank, singular values and rcond; `cov` the covariance of the
    coefficients (scaled by the residuals, as numpy does by default).
    """
    check_arraylike("polyfit", x, y)
    deg = _order(deg, "polyfit")
    x, y = promote_dtypes_inexact(x, y)
    if x.ndim != 1 or x.shape[0] == 0:
        raise ValueError(f"jnp.polyfit: x must be a non-empty 1-d array, got shape {x.shape}.")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise ValueError(f"jnp.polyfit: y must be 1-d or 2-d with x's length {x.shape[0]}, "
                         f"got shape {y.shape}.")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(dtypes.real_dtype(x.dtype)).eps)
    lhs = _vandermonde(x, order)
    rhs = y
    if w is not None:
        check_arraylike("polyfit", w)
        w = convert(w, x.dtype)
        lhs = lax.mul(lhs, lax.broadcast_in_dim(w, lhs.shape, (0,)))
        rhs = lax.mul(rhs, lax.broadcast_in_dim(w, rhs.shape, (0,)))
    scale = lax.sqrt(lax.reduce_sum(lax.mul(lhs, lhs), (0,)))
    lhs = lax.div(lhs, lax.broadcast_in_dim(scale, lhs.shape, (1,)))
    c, residuals, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = lax.div(c, lax.broadcast_in_dim(scale, c.shape, (0,)))
    if full:
        return c, residuals, rank, s, convert(rcond, dtypes.real_dtype(x.dtype), True)
    if not cov:
        return c
    base = linalg.inv(lax.dot_general(lhs, lhs, (((0,), (0,)), ((), ()))))
    base = lax.div(base, lax.mul(lax.broadcast_in_dim(scale, base.shape, (0,)),
                                 lax.broadcast_in_dim(scale, base.shape, (1,))))
    factor = lax.div(residuals, convert(x.shape[0] - order, residuals.dtype))
    if y.ndim == 1:
        factor = lax.reshape(factor, ())
        return c, lax.mul(base, lax.broadcast_in_dim(factor, base.shape, ()))
    shape = base.shape + factor.shape
    return c, lax.mul(lax.broadcast_in_dim(base, shape, (0, 1)),
                      lax.broadcast_in_dim(factor, shape, (2,)))


def _vandermonde(x: Any, order: int) -> Any:
    """Columns x**(order-1), ..., x, 1."""
    columns = [lax.full_like(x, 1)]
    for _ in range(order - 1):
        columns.append(lax.mul(columns[-1], x))
    return lax.concatenate([lax.expand_dims(c, (1,)) for c in columns[::-1]], 1)
