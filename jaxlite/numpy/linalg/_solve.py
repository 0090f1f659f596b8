"""Linear systems and determinants: solve, inv, det, slogdet, tensorinv, tensorsolve.

Mirror the same names of `jax.numpy.linalg`. All of them factor with the LU decomposition
of `jaxlite.lax.linalg` (P A = L U, L unit lower triangular, U upper) and solve with two
triangular solves. Their derivatives are written by hand, as JAX does, so that no
derivative of the factorization is needed:

- solve: dx = A^-1 (db - dA x);
- det: d det = det * tr(A^-1 dA); slogdet: d log|det| = Re tr(A^-1 dA), and for complex
  matrices the sign turns by i Im tr(A^-1 dA).

Differences from JAX: at singular matrices these derivatives are NaN or infinite (JAX's
det derivative uses cofactors and stays finite there).
"""
from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

import jaxlite.lax as lax
from jaxlite.core import dtypes
from jaxlite.lax import linalg as lax_linalg
from jaxlite.numpy._promotion import broadcast_shapes, broadcast_to_shape
from jaxlite.numpy._selection import take_along_axis
from jaxlite.numpy.linalg._decompositions import qr
from jaxlite.numpy.linalg._util import (batched_eye, check_square, custom_jvp, diag_of,
                                        inexact_args, matmul, real_dtype, swap_last)

__all__ = ["SlogdetResult", "solve", "inv", "det", "slogdet", "tensorinv", "tensorsolve"]


class SlogdetResult(NamedTuple):
    """det(A) = sign * exp(logabsdet); sign is 0 (and logabsdet -inf) for singular A."""
    sign: Any
    logabsdet: Any


# ----------------------------------------------------------------------------- LU helpers

def _lu_solve(lu: Any, perm: Any, b: Any) -> Any:
    """x with A x = b from P A = L U packed in `lu`; b (..., n, k) with A's batch shape."""
    # rows gathered, not a product with the permutation matrix: exact for infinite or NaN
    # entries, and the compiled product in front of the triangular solves' loops cost
    # three times the solves (32x32, batch 64: 2.5 ms against 0.8 ms measured)
    pb = take_along_axis(b, lax.expand_dims(perm, (perm.ndim,)), axis=-2)
    y = lax_linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)


def _pivot_parity(pivots: Any) -> Any:
    """1 where the row swaps of LU are odd in number, else 0 (int32)."""
    positions = lax.broadcasted_iota(pivots.dtype, pivots.shape, pivots.ndim - 1)
    swaps = lax.convert_element_type(lax.ne(pivots, positions), np.dtype(np.int32))
    return lax.rem(lax.reduce_sum(swaps, (pivots.ndim - 1,)), np.int32(2))


def _parity_sign(pivots: Any, dtype: Any) -> Any:
    return lax.convert_element_type(lax.sub(np.int32(1), lax.mul(np.int32(2),
                                                                 _pivot_parity(pivots))),
                                    dtype)


def _inverse_transposed(a: Any) -> Any:
    """(A^-1)^T, so that sum(A^-T * dA) = tr(A^-1 dA)."""
    return swap_last(_solve_square(a, batched_eye(a.shape, a.dtype)))


# ----------------------------------------------------------------------------- solve

def _solve_square_impl(a: Any, b: Any) -> Any:
    if a.shape[-1] == 0 or b.shape[-1] == 0:
        return lax.full_like(b, 0)
    lu, _, perm = lax_linalg.lu(a)
    return _lu_solve(lu, perm, b)


def _solve_square_rule(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (a, b), (da, db) = primals, tangents
    x = _solve_square(a, b)
    inverse = swap_last(_inverse_transposed(a))
    return x, matmul(inverse, lax.sub(db, matmul(da, x)))


_solve_square = custom_jvp(_solve_square_impl, _solve_square_rule)


def solve(a: Any, b: Any) -> Any:
    """x with a @ x == b (mirrors `jax.numpy.linalg.solve`).

    `a` is (..., n, n). A 1-d `b` (n,) is one right-hand side, giving x (..., n);
    otherwise `b` is (..., n, k) and the batch axes of a and b broadcast.
    """
    a, b = inexact_args("jnp.linalg.solve", a, b)
    check_square("solve", a)
    n = a.shape[-1]
    if b.ndim == 1:
        if b.shape[0] != n:
            raise ValueError(f"jnp.linalg.solve: b of shape {b.shape} does not match a of "
                             f"shape {a.shape}: b.shape[0] must be {n}.")
        b = lax.expand_dims(b, (1,))
        vector = True
    else:
        if b.shape[-2] != n:
            raise ValueError(
                f"Invalid shapes for solve: {a.shape}, {b.shape}. b must be (n,) or "
                f"(..., n, k) with n = a.shape[-1] = {n}; for a batch of vectors use "
                "solve(a, b[..., None])[..., 0].")
        vector = False
    batch = broadcast_shapes("jnp.linalg.solve", a.shape[:-2], b.shape[:-2])
    a = broadcast_to_shape(a, batch + a.shape[-2:])
    b = broadcast_to_shape(b, batch + b.shape[-2:])
    x = _solve_square(a, b)
    return lax.squeeze(x, (x.ndim - 1,)) if vector else x


def inv(a: Any) -> Any:
    """Inverse of each square matrix (mirrors `jax.numpy.linalg.inv`); solves A X = I."""
    (a,) = inexact_args("jnp.linalg.inv", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {a.shape}.")
    return _solve_square(a, batched_eye(a.shape, a.dtype))


# ----------------------------------------------------------------------------- det

def _entry(a: Any, i: int, j: int) -> Any:
    """Entry (i, j) of each matrix of the batch `a`."""
    row = lax.index_in_dim(a, i, axis=a.ndim - 2, keepdims=False)
    return lax.index_in_dim(row, j, axis=row.ndim - 1, keepdims=False)


def _det_2x2(a: Any) -> Any:
    e = lambda i, j: _entry(a, i, j)  # noqa: E731
    return lax.sub(lax.mul(e(0, 0), e(1, 1)), lax.mul(e(0, 1), e(1, 0)))


def _det_3x3(a: Any) -> Any:
    """The rule of Sarrus, its six products summed in JAX's order (the same rounding)."""
    e = lambda i, j: _entry(a, i, j)  # noqa: E731
    def product(j0: int, j1: int, j2: int) -> Any:
        return lax.mul(lax.mul(e(0, j0), e(1, j1)), e(2, j2))
    total = lax.add(lax.add(product(0, 1, 2), product(1, 2, 0)), product(2, 0, 1))
    total = lax.sub(total, product(2, 1, 0))
    total = lax.sub(total, product(0, 2, 1))
    return lax.sub(total, product(1, 0, 2))


def _det_impl(a: Any) -> Any:
    # sign * exp(log|det|), as JAX computes it: a 1x1 determinant is not exactly a[0, 0].
    sign, logdet = slogdet(a)
    return lax.mul(sign, lax.convert_element_type(lax.exp(logdet), sign.dtype))


def _det_rule(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    y = _det(a)
    derivative = lax.reduce_sum(lax.mul(_inverse_transposed(a), da), (a.ndim - 2, a.ndim - 1))
    return y, lax.mul(y, derivative)


_det = custom_jvp(_det_impl, _det_rule)


def det(a: Any) -> Any:
    """Determinant of each square matrix (mirrors `jax.numpy.linalg.det`).

    As in JAX: 2x2 and 3x3 matrices by their closed forms (so also in float16), other
    sizes as sign * exp(logabsdet) of `slogdet`.
    """
    (a,) = inexact_args("jnp.linalg.det", a)
    check_square("det", a)
    if a.shape[-1] == 2:
        return _det_2x2(a)
    if a.shape[-1] == 3:
        return _det_3x3(a)
    return _det(a)


def _slogdet_small_impl(a: Any) -> SlogdetResult:
    """slogdet of 1x1 and 2x2 matrices from their closed-form determinant, as JAX."""
    d = _entry(a, 0, 0) if a.shape[-1] == 1 else _det_2x2(a)
    return SlogdetResult(lax.sign(d), lax.log(lax.abs(d)))


def _slogdet_lu_impl(a: Any) -> SlogdetResult:
    real = real_dtype(a.dtype)
    if a.shape[-1] == 0:
        return SlogdetResult(lax.full(a.shape[:-2], 1, a.dtype),
                             lax.full(a.shape[:-2], 0, real))
    lu, pivots, _ = lax_linalg.lu(a)
    diagonal = diag_of(lu)
    last = (diagonal.ndim - 1,)
    magnitude = lax.abs(diagonal)
    is_zero = lax.reduce_or(lax.eq(magnitude, lax.full_like(magnitude, 0)), last)
    if dtypes.is_complex(a.dtype):
        units = lax.div(diagonal, lax.convert_element_type(magnitude, a.dtype))
    else:
        units = lax.sign(diagonal)
    sign = lax.mul(lax.reduce_prod(units, last), _parity_sign(pivots, a.dtype))
    logdet = lax.reduce_sum(lax.log(magnitude), last)
    sign = lax.select(is_zero, lax.full_like(sign, 0), sign)
    logdet = lax.select(is_zero, lax.full_like(logdet, -np.inf), logdet)
    return SlogdetResult(sign, logdet)


def _slogdet_rule(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    sign, logdet = (_slogdet_small if a.shape[-1] <= 2 else _slogdet_lu)(a)
    g = lax.reduce_sum(lax.mul(_inverse_transposed(a), da), (a.ndim - 2, a.ndim - 1))
    if dtypes.is_complex(a.dtype):
        re = lax.real(g)
        turn = lax.sub(g, lax.convert_element_type(re, a.dtype))
        return SlogdetResult(sign, logdet), SlogdetResult(lax.mul(sign, turn), re)
    return SlogdetResult(sign, logdet), SlogdetResult(lax.full_like(sign, 0), g)


_slogdet_lu = custom_jvp(_slogdet_lu_impl, _slogdet_rule)
_slogdet_small = custom_jvp(_slogdet_small_impl, _slogdet_rule)


def _slogdet_qr(a: Any) -> SlogdetResult:
    """sign and log|det| from A = Q R: R's diagonal gives both, up to det(Q) = +-1."""
    if dtypes.is_complex(a.dtype):
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    q, r = qr(a)
    diagonal = diag_of(r)
    last = (diagonal.ndim - 1,)
    q_sign = _slogdet_lu(q).sign
    sign = lax.mul(q_sign, lax.reduce_prod(lax.sign(diagonal), last))
    return SlogdetResult(sign, lax.reduce_sum(lax.log(lax.abs(diagonal)), last))


def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """Sign and natural log of |det| of each square matrix (`jax.numpy.linalg.slogdet`).

    method None or 'lu' factors with LU, 'qr' with QR (real inputs only). The sign has
    a's dtype (a unit complex number for complex a); logabsdet is real.
    """
    (a,) = inexact_args("jnp.linalg.slogdet", a)
    check_square("slogdet", a)
    if method is None or method == "lu":
        # 1x1 and 2x2 by the closed form, as JAX (so also in float16)
        return _slogdet_small(a) if a.shape[-1] in (1, 2) else _slogdet_lu(a)
    if method == "qr":
        return _slogdet_qr(a)
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                     "(`None`), and 'qr'.")


# ----------------------------------------------------------------------------- tensors

def tensorinv(a: Any, ind: int = 2) -> Any:
    """Inverse of `a` read as a matrix, its first `ind` axes against the rest.

    Mirrors `jax.numpy.linalg.tensorinv`: the result has shape a.shape[ind:] +
    a.shape[:ind], and tensordot(result, a, ind) is the identity.
    """
    (a,) = inexact_args("jnp.linalg.tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    head, tail = a.shape[:ind], a.shape[ind:]
    rows, cols = math.prod(head), math.prod(tail)
    if rows != cols:
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={a.shape} with ind={ind}.")
    return lax.reshape(inv(lax.reshape(a, (rows, cols))), tail + head)


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """x with tensordot(a, x, x.ndim) == b (mirrors `jax.numpy.linalg.tensorsolve`).

    `axes` names axes of `a` to move to the end first, in that order.
    """
    a, b = inexact_args("jnp.linalg.tensorsolve", a, b)
    if axes is not None:
        moved = [ax % a.ndim for ax in axes]
        order = [ax for ax in range(a.ndim) if ax not in moved] + moved
        a = lax.transpose(a, order)
    out_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of "
                         f"b. got a.shape={a.shape}, b.shape={b.shape}")
    matrix = lax.reshape(a, (math.prod(b.shape), math.prod(out_shape)))
    return lax.reshape(solve(matrix, lax.reshape(b, (math.prod(b.shape),))), out_shape)
