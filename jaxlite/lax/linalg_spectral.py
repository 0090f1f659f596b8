"""Orthogonal and spectral decompositions: the primitives qr, eigh, svd and eig (mirror
those of `jax.lax.linalg`), each with all its rules.

The numbers come from the numpy kernels of `linalg_kernels`. The derivative rules (Omega
denotes a skew-Hermitian matrix Q^H dQ, U^H dU or V^H dV; "o" the elementwise product):

- qr (m >= n, Q m x n): C = Q^H dA R^{-1} = Omega + dR R^{-1}, the second term upper
  triangular with a real diagonal, so Omega's strict lower triangle is C's and its
  diagonal is i Im(diag C); then dQ = Q Omega + (I - Q Q^H) dA R^{-1}, dR = (C - Omega) R.
  Wide matrices (m < n): the square case for the first m columns, and dR2 = dQ^H A2 +
  Q^H dA2 for the others; the extra columns of a full Q (m > n) follow JAX's formula.
- eigh (distinct eigenvalues): with D = V^H dA V, dw = Re diag(D) and dV = V (F o D),
  F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it.
- svd (reduced, distinct nonzero singular values): with dP = U^H dA V, ds = Re diag(dP),
  Omega_U = F o (dP S + S dP^H), Omega_V = F o (S dP + dP^H S), F_ij = 1 / (s_j^2 - s_i^2);
  the imaginary part of diag(dP) (complex matrices) goes to U's phases; columns outside the
  span of U (tall matrices) or V (wide ones) add (I - U U^H) dA V / S or
  (I - V V^H) dA^H U / S.
- eig: dw_i = (vl_i^H dA vr_i) / (vl_i^H vr_i), with the left and right eigenvectors.
  Derivatives of eigenvectors are not implemented, as in JAX.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.lax import linalg_kernels as kernels
from jaxlite.lax.arithmetic import add, div, mul, sub
from jaxlite.lax.broadcast import broadcast_in_dim
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.linalg_factorizations import lu_p, permute_rows, triangular_solve_p
from jaxlite.lax.linalg_util import (adjoint, check_matrix, diag_embed, diagonal, kernel_rules,
                                    eye_like, is_complex, matmul, real_part_of,
                                    tril)
from jaxlite.lax.shape_ops import expand_dims
from jaxlite.lax.slicing import concatenate, slice_in_dim

__all__ = ["qr_p", "eigh_p", "svd_p", "eig_p"]


def _aval(shape: Sequence[int], dtype: Any) -> ShapedArray:
    return ShapedArray(tuple(shape), np.dtype(dtype), False)


def _imaginary_diagonal(x: Any) -> Any:
    """i Im(diag x) as diagonal matrices of x's dtype (complex x)."""
    d = diagonal(x)
    return diag_embed(sub(d, convert_element_type(real_part_of(d), get_aval(x).dtype)))


def _reciprocal_gaps(values: Any, dtype: Any) -> Any:
    """F with F_ij = 1 / (values_j - values_i) off the diagonal and 0 on it."""
    gaps = sub(expand_dims(values, (len(get_aval(values).shape) - 1,)),
               expand_dims(values, (len(get_aval(values).shape),)))
    eye = eye_like(get_aval(gaps).shape, get_aval(gaps).dtype)
    inverse = div(sub(np.ones((), get_aval(gaps).dtype), eye), add(gaps, eye))
    return convert_element_type(inverse, dtype)


# ------------------------------------------------------------------------------ qr

qr_p = Primitive("qr", multiple_results=True)


def _qr_abstract_eval(a: ShapedArray, *, full_matrices: bool) -> list[ShapedArray]:
    check_matrix("qr", "x", a)
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    return [_aval(a.shape[:-2] + (m, k), a.dtype), _aval(a.shape[:-2] + (k, n), a.dtype)]


def _thin_qr_tangents(q: Any, r: Any, da: Any) -> tuple[Any, Any]:
    """dQ and dR of a thin QR decomposition (Q m x n, R n x n, m >= n); see the module
    docstring."""
    da_rinv = triangular_solve_p.bind(r, da, left_side=False, lower=False, transpose_a=False,
                                      conjugate_a=False, unit_diagonal=False)
    c = matmul(adjoint(q), da_rinv)
    strict = tril(c, -1)
    omega = sub(strict, adjoint(strict))
    if is_complex(c):
        omega = add(omega, _imaginary_diagonal(c))
    return add(matmul(q, sub(omega, c)), da_rinv), matmul(sub(c, omega), r)


def _columns(x: Any, start: int, stop: int) -> Any:
    return slice_in_dim(x, start, stop, 1, len(get_aval(x).shape) - 1)


def _rows(x: Any, start: int, stop: int) -> Any:
    return slice_in_dim(x, start, stop, 1, len(get_aval(x).shape) - 2)


def _solve_square(a: Any, b: Any) -> Any:
    """a^{-1} b by LU with partial pivoting."""
    packed, _, perm = lu_p.bind(a)
    lower = triangular_solve_p.bind(packed, permute_rows(b, perm), left_side=True, lower=True,
                                    transpose_a=False, conjugate_a=False, unit_diagonal=True)
    return triangular_solve_p.bind(packed, lower, left_side=True, lower=False,
                                   transpose_a=False, conjugate_a=False, unit_diagonal=False)


def _completion_tangent(q: Any, dq_mn: Any, n: int) -> Any:
    """The tangent of the last m - n columns of a full Q (m > n), JAX's choice for this
    non-unique part: with Z^H = (Q_nn - I)^{-H} Q_pn^H (Q_nn the first n rows of the first n
    columns, Q_pn the rest of them), dQ_mp = dQ_mn Z^H - (Q_mn + Q_mp Z)(dQ_pn - Z dQ_nn)^H."""
    m = get_aval(q).shape[-2]
    q_mn, q_mp = _columns(q, 0, n), _columns(q, n, m)
    q_nn, q_pn = _rows(q_mn, 0, n), _rows(q_mn, n, m)
    dq_nn, dq_pn = _rows(dq_mn, 0, n), _rows(dq_mn, n, m)
    shifted = sub(q_nn, eye_like(get_aval(q_nn).shape, get_aval(q_nn).dtype))
    z_h = _solve_square(adjoint(shifted), adjoint(q_pn))
    z = adjoint(z_h)
    return sub(matmul(dq_mn, z_h),
               matmul(add(q_mn, matmul(q_mp, z)), adjoint(sub(dq_pn, matmul(z, dq_nn)))))


def _qr_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
            full_matrices: bool) -> tuple[list[Any], list[Any]]:
    (a,), (da,) = primals, tangents
    m, n = get_aval(a).shape[-2:]
    last = len(get_aval(a).shape) - 1
    q, r = qr_p.bind(a, full_matrices=full_matrices)
    da = ad.instantiate(da)
    if m < n:  # Q R1 = A1 (the first m columns), R2 = Q^H A2
        dq, dr1 = _thin_qr_tangents(q, _columns(r, 0, m), _columns(da, 0, m))
        dr2 = add(matmul(adjoint(dq), _columns(a, m, n)), matmul(adjoint(q), _columns(da, m, n)))
        return [q, r], [dq, concatenate([dr1, dr2], last)]
    full = full_matrices and m > n
    q_mn = _columns(q, 0, n) if full else q
    r_nn = _rows(r, 0, n) if full else r
    dq, dr = _thin_qr_tangents(q_mn, r_nn, da)
    if full:
        dq = concatenate([dq, _completion_tangent(q, dq, n)], last)
        shape = get_aval(r).shape[:-2] + (m - n, n)
        zeros = broadcast_in_dim(np.zeros((), get_aval(r).dtype), shape, ())
        dr = concatenate([dr, zeros], last - 1)
    return [q, r], [dq, dr]


qr_p.abstract_eval = _qr_abstract_eval
qr_p.jvp = _qr_jvp
kernel_rules(qr_p, kernels.qr)


# ---------------------------------------------------------------------------- eigh

eigh_p = Primitive("eigh", multiple_results=True)


def _eigh_abstract_eval(a: ShapedArray, *, lower: bool,
                        sort_eigenvalues: bool) -> list[ShapedArray]:
    check_matrix("eigh", "x", a, square=True)
    return [_aval(a.shape, a.dtype), _aval(a.shape[:-1], dtypes.real_dtype(a.dtype))]


def _eigh_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool,
              sort_eigenvalues: bool) -> tuple[list[Any], list[Any]]:
    (a,), (da,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower, sort_eigenvalues=sort_eigenvalues)
    projected = matmul(adjoint(v), matmul(ad.instantiate(da), v))
    dw = real_part_of(diagonal(projected))
    dv = matmul(v, mul(_reciprocal_gaps(w, get_aval(v).dtype), projected))
    return [v, w], [dv, dw]


eigh_p.abstract_eval = _eigh_abstract_eval
eigh_p.jvp = _eigh_jvp
kernel_rules(eigh_p, kernels.eigh)


# ----------------------------------------------------------------------------- svd

svd_p = Primitive("svd", multiple_results=True)


def _svd_abstract_eval(a: ShapedArray, *, full_matrices: bool,
                       compute_uv: bool) -> list[ShapedArray]:
    check_matrix("svd", "x", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    s = _aval(batch + (k,), dtypes.real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    cols, rows = (m, n) if full_matrices else (k, k)
    return [s, _aval(batch + (m, cols), a.dtype), _aval(batch + (rows, n), a.dtype)]


def _svd_vector_tangents(da: Any, s: Any, u: Any, v: Any, dp: Any) -> tuple[Any, Any]:
    """dU and dV of the reduced decomposition (see the module docstring)."""
    dtype = get_aval(u).dtype
    s_row = convert_element_type(expand_dims(s, (len(get_aval(s).shape) - 1,)), dtype)
    s_col = convert_element_type(expand_dims(s, (len(get_aval(s).shape),)), dtype)
    gaps = _reciprocal_gaps(mul(s, s), dtype)
    dp_h = adjoint(dp)
    omega_u = mul(gaps, add(mul(dp, s_row), mul(s_col, dp_h)))
    omega_v = mul(gaps, add(mul(s_col, dp), mul(dp_h, s_row)))
    if is_complex(dp):
        omega_u = add(omega_u, div(_imaginary_diagonal(dp), s_row))
    du, dv = matmul(u, omega_u), matmul(v, omega_v)
    m, n = get_aval(u).shape[-2], get_aval(v).shape[-2]
    k = get_aval(s).shape[-1]
    if m > k:
        du = add(du, div(sub(matmul(da, v), matmul(u, dp)), s_row))
    if n > k:
        dv = add(dv, div(sub(matmul(adjoint(da), u), matmul(v, dp_h)), s_row))
    return du, dv


def _svd_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool,
             compute_uv: bool) -> tuple[list[Any], list[Any]]:
    (a,), (da,) = primals, tangents
    m, n = get_aval(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"lax.linalg.svd: the derivative of U and V^H with full_matrices=True is "
            f"implemented for square matrices only, got shape {get_aval(a).shape}; use "
            f"full_matrices=False.")
    outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)
    s, u, vh = svd_p.bind(a, full_matrices=False, compute_uv=True) if not compute_uv \
        else outs
    da = ad.instantiate(da)
    v = adjoint(vh)
    dp = matmul(adjoint(u), matmul(da, v))
    ds = real_part_of(diagonal(dp))
    if not compute_uv:
        return outs, [ds]
    du, dv = _svd_vector_tangents(da, s, u, v, dp)
    return outs, [ds, du, adjoint(dv)]


svd_p.abstract_eval = _svd_abstract_eval
svd_p.jvp = _svd_jvp
kernel_rules(svd_p, kernels.svd)


# ----------------------------------------------------------------------------- eig

eig_p = Primitive("eig", multiple_results=True)


def _eig_abstract_eval(a: ShapedArray, *, compute_left_eigenvectors: bool,
                       compute_right_eigenvectors: bool) -> list[ShapedArray]:
    check_matrix("eig", "x", a, square=True)
    dtype = np.result_type(a.dtype, np.complex64)
    count = 1 + compute_left_eigenvectors + compute_right_eigenvectors
    return [_aval(a.shape[:-1], dtype)] + [_aval(a.shape, dtype)] * (count - 1)


def _eig_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
             compute_left_eigenvectors: bool,
             compute_right_eigenvectors: bool) -> tuple[list[Any], list[Any]]:
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError(
            "lax.linalg.eig: derivatives of eigenvectors are not implemented, only of "
            "eigenvalues; call eig with compute_left_eigenvectors=False and "
            "compute_right_eigenvectors=False (jnp.linalg.eigvals) to differentiate.")
    (a,), (da,) = primals, tangents
    w, vl, vr = eig_p.bind(a, compute_left_eigenvectors=True, compute_right_eigenvectors=True)
    da = convert_element_type(ad.instantiate(da), get_aval(w).dtype)
    numerator = diagonal(matmul(adjoint(vl), matmul(da, vr)))
    return [w], [div(numerator, diagonal(matmul(adjoint(vl), vr)))]


eig_p.abstract_eval = _eig_abstract_eval
eig_p.jvp = _eig_jvp
kernel_rules(eig_p, kernels.eig)
