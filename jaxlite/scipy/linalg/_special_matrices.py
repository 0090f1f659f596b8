"""Special matrices: block_diag, toeplitz, hankel, circulant, leslie, companion, fiedler,
fiedler_companion, convolution_matrix, hilbert, invhilbert, pascal, invpascal, helmert,
hadamard and dft (mirror the same names of `jax.scipy.linalg`).

As in JAX (and unlike scipy), the constructors from vectors map over leading dimensions:
toeplitz of c (..., m) and r (..., n) is (..., m, n). dtypes follow JAX: pascal is always
float32, hilbert, invhilbert, invpascal and helmert use the default float dtype, dft the
default complex dtype.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import promote_args_inexact, promote_dtypes
from jaxlite.scipy.linalg._util import as_arrays
from jaxlite.scipy.special import gammaln

__all__ = ["block_diag", "toeplitz", "hankel", "circulant", "leslie", "companion", "fiedler",
           "fiedler_companion", "convolution_matrix", "hilbert", "invhilbert", "pascal",
           "invpascal", "helmert", "hadamard", "dft"]


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of the given matrices (scalars and vectors are 1 x 1 and
    1 x n blocks) (mirrors `jax.scipy.linalg.block_diag`)."""
    if not arrs:
        arrs = (jnp.zeros((1, 0)),)
    arrs = tuple(promote_dtypes(*as_arrays("block_diag", *arrs)))
    bad = [i for i, a in enumerate(arrs) if a.ndim > 2]
    if bad:
        raise ValueError(f"Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                         f"dimensions, got {arrs[bad[0]]} at argument {bad[0]}.")
    blocks = [jnp.atleast_2d(a) for a in arrs]
    total = sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for block in blocks:
        cols = block.shape[1]
        rows.append(jnp.pad(block, ((0, 0), (start, total - cols - start))))
        start += cols
    return jnp.concatenate(rows, axis=0)


# --------------------------------------------------- matrices from one or two vectors

def _toeplitz_matrix(c: Any, r: Any) -> Any:
    m, n = c.shape[0], r.shape[0]
    dtype = jnp.promote_types(c.dtype, r.dtype)
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=dtype)
    elements = jnp.concatenate((c[::-1], r[1:])).astype(dtype)
    return elements[(m - 1) - jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column c and first row r (default conj(c)); r[0] is
    ignored (mirrors `jax.scipy.linalg.toeplitz`)."""
    if r is None:
        (c,) = as_arrays("toeplitz", c)
        r = jnp.conjugate(c)
    else:
        c, r = as_arrays("toeplitz", c, r)
    return jnp.vectorize(_toeplitz_matrix, signature="(m),(n)->(m,n)")(
        jnp.atleast_1d(c), jnp.atleast_1d(r))


def _hankel_matrix(c: Any, r: Any) -> Any:
    m, n = c.shape[0], r.shape[0]
    dtype = jnp.result_type(c, r)
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=dtype)
    elements = jnp.concatenate((c, r[1:])).astype(dtype)
    return elements[jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column c and last row r (default zeros); r[0] is
    ignored (mirrors `jax.scipy.linalg.hankel`)."""
    if r is None:
        (c,) = as_arrays("hankel", c)
        r = jnp.zeros_like(c)
    else:
        c, r = as_arrays("hankel", c, r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    if c.ndim < r.ndim:
        c = lax.expand_dims(c, tuple(range(r.ndim - c.ndim)))
    elif r.ndim < c.ndim:
        r = lax.expand_dims(r, tuple(range(c.ndim - r.ndim)))
    return jnp.vectorize(_hankel_matrix, signature="(m),(n)->(m,n)")(c, r)


def circulant(c: Any) -> Any:
    """The circulant matrix with first column c (mirrors `jax.scipy.linalg.circulant`)."""
    (c,) = as_arrays("circulant", c)

    def matrix(c: Any) -> Any:
        n = c.shape[0]
        return c[(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n]
    return jnp.vectorize(matrix, signature="(n)->(n,n)")(jnp.atleast_1d(c))


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix of fecundities f (n) and survival rates s (n - 1) (mirrors
    `jax.scipy.linalg.leslie`)."""
    f, s = (jnp.atleast_1d(x) for x in as_arrays("leslie", f, s))
    if f.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape "
                         f"{f.shape}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError(f"Incorrect lengths for f and s. The length of s along the last axis "
                         f"must be one less than the length of f; got f shape {f.shape} and "
                         f"s shape {s.shape}.")

    def matrix(f: Any, s: Any) -> Any:
        f, s = promote_dtypes(f, s)
        return jnp.diag(s, k=-1).at[0].set(f)
    return jnp.vectorize(matrix, signature="(n),(m)->(n,n)")(f, s)


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients a (highest first) (mirrors
    `jax.scipy.linalg.companion`)."""
    (a,) = promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got "
                         f"shape {a.shape}.")

    def matrix(a: Any) -> Any:
        first_row = -a[1:] / a[0]
        m = a.shape[0] - 1
        return jnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)
    return jnp.vectorize(matrix, signature="(n)->(m,m)")(a)


def fiedler(a: Any) -> Any:
    """The symmetric matrix |a_i - a_j| (mirrors `jax.scipy.linalg.fiedler`)."""
    (a,) = as_arrays("fiedler", a)
    a = jnp.atleast_1d(a)
    return jnp.abs(a[..., None] - a[..., None, :])


def _fiedler_companion_matrix(a: Any) -> Any:
    n = a.shape[0] - 1
    if n == 0:
        return jnp.empty((0, 0), dtype=a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    one, zero = jnp.array(1, dtype=a.dtype), jnp.array(0, dtype=a.dtype)
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even,
                  (j == i + 2) & even, (j == i - 1) & even & (i >= 2),
                  (j == i - 2) & odd & (i >= 3)]
    choices = [-a[1], one, -a[jnp.minimum(i + 2, n)], one, -a[jnp.minimum(i + 1, n)], one]
    return jnp.select(conditions, choices, default=zero)


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial with coefficients a
    (mirrors `jax.scipy.linalg.fiedler_companion`)."""
    (a,) = promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError(f"fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {a.shape}.")
    return jnp.vectorize(_fiedler_companion_matrix, signature="(n)->(m,m)")(a)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix A with A @ v = convolve(a, v, mode) for v of length n (mirrors
    `jax.scipy.linalg.convolution_matrix`)."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    (a,) = as_arrays("convolution_matrix", a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a "
                         "scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    widths = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    padded = jnp.pad(a, widths)
    reversed_padded = jnp.pad(jnp.flip(a, axis=-1), widths)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        begin, end = trim // 2, trim - trim // 2
    elif mode == "valid":
        begin = end = min(n, m) - 1
    else:
        begin = end = 0
    column = lax.slice_in_dim(padded, begin, length - end, axis=-1)
    row = lax.slice_in_dim(reversed_padded, length - n - begin, length - begin, axis=-1)
    return toeplitz(column, row)


# --------------------------------------------------------------- numbered matrices

def hilbert(n: int) -> Any:
    """The Hilbert matrix 1 / (i + j + 1) (mirrors `jax.scipy.linalg.hilbert`)."""
    a = lax.broadcasted_iota(dtypes.canonicalize_dtype(float), (n, 1), 0)
    return 1 / (a + a.T + 1)


def _binomial(n: Any, k: Any) -> Any:
    """n choose k as floats, through log-gamma; 0 outside 0 <= k <= n."""
    valid = (k <= n) & (n >= 0) & (k >= 0)
    safe_n, safe_k = jnp.where(valid, n, 0.0), jnp.where(valid, k, 0.0)
    value = jnp.exp(gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k))
    return jnp.where(valid, value, 0.0)


def invhilbert(n: int) -> Any:
    """The inverse of the n x n Hilbert matrix, in floats (mirrors
    `jax.scipy.linalg.invhilbert`)."""
    a = jnp.arange(n, dtype=dtypes.canonicalize_dtype(float))
    i, j = a[:, None], a[None, :]
    s = i + j
    return ((-1.0) ** s * (s + 1.0) * _binomial(n + i, n - j - 1)
            * _binomial(n + j, n - i - 1) * _binomial(s, i) ** 2)


def _gamma_binomial(n: Any, k: Any) -> Any:
    return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _check_kind(kind: str | None, one_of: str = "one of") -> str:
    """The kind of Pascal matrix; `one_of` words the error as JAX does (pascal says
    "on of")."""
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be {one_of}: {valid}; got {kind}")
    return kind


def pascal(n: int, kind: str | None = None) -> Any:
    """The Pascal matrix: binomial coefficients, 'lower', 'upper' or 'symmetric' (the
    default) (mirrors `jax.scipy.linalg.pascal`; float32, as in JAX)."""
    kind = _check_kind(kind, "on of")
    a = jnp.arange(n, dtype=np.float32)
    lower = _gamma_binomial(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return jnp.dot(lower, lower.T)


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of `pascal(n, kind)` (mirrors `jax.scipy.linalg.invpascal`)."""
    kind = _check_kind(kind)
    a = jnp.arange(n, dtype=dtypes.canonicalize_dtype(float))
    i, j = a[:, None], a[None, :]
    lower = ((-1.0) ** (i - j)) * _gamma_binomial(i, j)
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return jnp.dot(lower.T, lower)


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix, (n - 1) x n, or n x n with `full` (mirrors
    `jax.scipy.linalg.helmert`)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = (i + 1).astype(dtypes.canonicalize_dtype(float))
    denominator = jnp.sqrt(k * (k + 1))
    h = jnp.where(j <= i, 1.0 / denominator,
                  jnp.where(j == i + 1, -k / denominator, jnp.zeros_like(denominator)))
    if full:
        first_row = jnp.full((1, n), 1.0 / jnp.sqrt(n), dtype=h.dtype)
        h = jnp.concatenate([first_row, h], axis=0)
    return h


def hadamard(n: int, dtype: Any = int) -> Any:
    """The n x n Hadamard matrix, n a power of 2 (mirrors `jax.scipy.linalg.hadamard`)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.block([[h, h], [h, -h]])
    return h


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n), divided by
    sqrt(n) or n for scale 'sqrtn' or 'n' (mirrors `jax.scipy.linalg.dft`)."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.canonicalize_dtype(complex)
    else:
        dtype = dtypes.canonicalize_dtype(dtype)
        if not dtypes.is_complex(dtype):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        return omegas / jnp.sqrt(n)
    if scale == "n":
        return omegas / n
    return omegas
