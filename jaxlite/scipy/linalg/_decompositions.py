"""Decompositions: svd, eigh, schur, rsf2csf, qr, qr_multiply, hessenberg and polar (mirror
the same names of `jax.scipy.linalg`), over `jaxlite.lax.linalg` with scipy's argument
conventions and JAX's return types.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.core import dtypes
from jaxlite.lax import linalg as lax_linalg
from jaxlite.scipy.linalg._util import adjoint, as_arrays, as_inexact, hdot

__all__ = ["svd", "eigh", "schur", "rsf2csf", "qr", "qr_multiply", "hessenberg", "polar"]


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    """Singular value decomposition a = u diag(s) vh (mirrors `jax.scipy.linalg.svd`):
    (u, s, vh), or s alone without `compute_uv`. `lapack_driver` is unused, as in JAX."""
    del overwrite_a, check_finite, lapack_driver
    (a,) = as_inexact(a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: None = None, type: int = 1, check_finite: bool = True) -> Any:
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices (mirrors
    `jax.scipy.linalg.eigh`): (w, v), or w with `eigvals_only`. As in JAX, the matrix is
    symmetrized ((a + a^H) / 2) first, so `lower` makes no difference, and only the
    standard problem (b=None, type=1, eigvals=None) is implemented."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = as_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def schur(a: Any, output: str = "real") -> Any:
    """Schur decomposition a = z t z^H (mirrors `jax.scipy.linalg.schur`): [t, z], t
    quasi-triangular for real a with output='real', triangular with output='complex'
    (a is converted to complex first). A list, as JAX returns."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    (a,) = as_arrays("schur", a)
    if output == "complex":
        a = a.astype(dtypes.to_complex_dtype(a.dtype))
    return lax_linalg.schur(a)


# -------------------------------------------------------------------------- rsf2csf

def _rotate_block(m: Any, t: Any, z: Any) -> tuple[Any, Any]:
    """Zero t[m, m-1] (a 2 x 2 block of a real Schur form, now complex) by the Givens
    rotation G that maps the block's first eigenvalue to position m-1: rows m-1, m of t
    become G times them, columns m-1, m of t and z are multiplied by G^H."""
    n = t.shape[0]
    block = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
    mu = jnp.linalg.eigvals(block) - t[m, m]
    r = jnp.linalg.norm(jnp.array([mu[0], t[m, m - 1]])).astype(t.dtype)
    c, s = mu[0] / r, t[m, m - 1] / r
    g = jnp.array([[jnp.conj(c), s], [-s, c]], dtype=t.dtype)
    rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
    in_cols = jnp.arange(n) >= m - 1
    rows = jnp.where(in_cols, g @ jnp.where(in_cols, rows, 0), rows)
    t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
    cols = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
    in_rows = (jnp.arange(n) < m + 1)[:, None]
    cols = jnp.where(in_rows, jnp.where(in_rows, cols, 0) @ adjoint(g), cols)
    t = lax.dynamic_update_slice_in_dim(t, cols, m - 1, axis=1)
    z_cols = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
    z = lax.dynamic_update_slice_in_dim(z, z_cols @ adjoint(g), m - 1, axis=1)
    return t, z


def _rsf2csf_matrix(t: Any, z: Any) -> tuple[Any, Any]:
    complex_dtype = dtypes.to_complex_dtype(jnp.result_type(t, z))
    t, z = t.astype(complex_dtype), z.astype(complex_dtype)
    n = t.shape[0]
    if n == 1:
        return t, z
    eps = float(np.finfo(complex_dtype).eps)

    def step(i: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
        t, z = state
        m = n - i
        coupled = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(coupled, _rotate_block, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0.0), z
    return lax.fori_loop(1, n, step, (t, z))


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """The complex Schur form (triangular) and vectors from the real Schur form T and
    vectors Z (mirrors `jax.scipy.linalg.rsf2csf`)."""
    del check_finite
    t, z = as_arrays("rsf2csf", T, Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    return jnp.vectorize(_rsf2csf_matrix, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


# ------------------------------------------------------------------------------- QR

def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Any, ...]:
    """QR decomposition (mirrors `jax.scipy.linalg.qr`): (q, r) for mode 'full' or
    'economic', (r,) for mode 'r', with the column permutation p appended when
    `pivoting` (a[:, p] = q r)."""
    del overwrite_a, lwork, check_finite
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = as_inexact(a)
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, p[0]) if pivoting else (r,)
    return (q, r, p[0]) if pivoting else (q, r)


def _check_qr_multiply_shapes(a: Any, c: Any, mode: str) -> None:
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                         f"rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} "
                         f"columns (expected {m}).")


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Any, ...]:
    """Q c (mode 'left') or c Q ('right') for the reduced Q of a = Q R, without forming Q
    (mirrors `jax.scipy.linalg.qr_multiply`); conj(Q) with `conjugate`. Returns (Q c or
    c Q, R), with the column permutation appended when `pivoting`. A 1-d c is a column
    ('left') or a row ('right'), and the product is raveled."""
    del overwrite_a, overwrite_c
    a, c = as_inexact(a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    _check_qr_multiply_shapes(a, c, mode)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    p = None
    if pivoting:
        packed, p, taus = lax_linalg.geqp3(a)
        p = p - 1  # LAPACK's pivots are 1-based
    else:
        packed, taus = lax_linalg.geqrf(a)
    if m > n and mode == "left":
        zeros = jnp.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], dtype=c.dtype)
        c = jnp.concatenate([c, zeros], axis=-2)
    if conjugate:  # conj(Q) c = (c^T Q^H)^T, and c conj(Q) = (Q^H c^T)^T
        c = jnp.swapaxes(c, -1, -2)
    product = lax_linalg.ormqr(packed, taus, c, left=(mode == "left") != conjugate,
                               transpose=conjugate)
    if conjugate:
        product = jnp.swapaxes(product, -1, -2)
    if mode == "right":
        product = product[..., :k]
    if onedim:
        product = product.ravel()
    r = jnp.triu(packed[..., :k, :])
    return (product, r, p) if pivoting else (product, r)


# ----------------------------------------------------------------------- Hessenberg

def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """Upper Hessenberg form h of a = q h q^H (mirrors `jax.scipy.linalg.hessenberg`); with
    `calc_q`, (h, q)."""
    del overwrite_a, check_finite
    (a,) = as_arrays("hessenberg", a)
    n = a.shape[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    packed, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    reflected = lax_linalg.householder_product(packed[..., 1:, :-1], taus)
    q = jnp.zeros_like(packed).at[..., 0, 0].set(1).at[..., 1:, 1:].set(reflected)
    return h, q


# ---------------------------------------------------------------------------- polar

def _polar_matrix(a: Any, side: str, method: str, eps: float | None) -> tuple[Any, Any]:
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = lax_linalg.qdwh(a, is_hermitian=False, eps=eps)
        elif m < n and side == "left":
            unitary, posdef, _, _ = lax_linalg.qdwh(adjoint(a), is_hermitian=False, eps=eps)
            unitary, posdef = adjoint(unitary), adjoint(posdef)
        else:
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' and "
                f"m >= n side='left', got {a.shape} with side={side!r}")
        return unitary, posdef
    if method == "svd":
        u, s, vh = lax_linalg.svd(a, full_matrices=False)
        s = s.astype(u.dtype)
        unitary = hdot(u, vh)
        if side == "right":
            return unitary, hdot(adjoint(vh) * s[None, :], vh)
        return unitary, hdot(u * s[None, :], adjoint(u))
    raise ValueError(f"Unknown polar decomposition method {method}.")


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """Polar decomposition a = u p (side 'right') or a = p u ('left'), u with orthonormal
    columns (rows) and p Hermitian positive semi-definite (mirrors
    `jax.scipy.linalg.polar`), by QDWH (method 'qdwh', for m >= n with side 'right' or
    m < n with 'left') or the SVD ('svd'). `max_iterations` is not passed on to QDWH, as
    in JAX."""
    del max_iterations  # JAX does not use it either
    (arr,) = as_arrays("polar", a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return jnp.vectorize(lambda x: _polar_matrix(x, side, method, eps),
                         signature=signature)(arr)
