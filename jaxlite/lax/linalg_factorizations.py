"""Triangular factorizations and solves: the primitives cholesky, triangular_solve, lu and
lu_pivots_to_permutation (mirror those of `jax.lax.linalg`), each with all its rules.

The numbers come from the numpy kernels of `linalg_kernels` (eagerly, and through a
custom-call when compiled). The derivative rules, in the notation A = L L^H, op(A) X = B,
P A = L U:

- cholesky: L^{-1} dA L^{-H} = X + X^H with X = L^{-1} dL lower triangular, so
  dL = L Phi(L^{-1} dA L^{-H}), Phi keeping the strict lower triangle and half the diagonal.
- triangular_solve is linear in B (its transpose solves with op(A) transposed); in A,
  dX = -op(A)^{-1} op(dA) X (left side) or -X op(dA) op(A)^{-1}, where dA keeps only the
  triangle the solve reads.
- lu: with k = min(m, n) and the leading k x k blocks L1, U1, X = L1^{-1} (P dA)_11 U1^{-1}
  splits into L1^{-1} dL1 (strictly lower) + dU1 U1^{-1} (upper); the remaining rows of L
  (tall matrices) or columns of U (wide ones) follow from P dA = dL U + L dU by one more
  triangular solve. Pivots and permutations are piecewise constant: zero tangents.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import linalg_kernels as kernels
from jaxlite.lax._composed import lower_by_expansion
from jaxlite.lax.arithmetic import add, mul, neg, sub
from jaxlite.lax.comparisons import eq
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.linalg_small import (cholesky_small, is_small, lu_small,
                                     pivots_to_permutation_small, triangular_solve_small)
from jaxlite.lax.linalg_util import (adjoint, check_matrix, diag_embed, diagonal, kernel_rules,
                                    eye_like, matmul, mT, tril, triu)
from jaxlite.lax.shape_ops import broadcasted_iota, expand_dims
from jaxlite.lax.slicing import concatenate, slice_in_dim

__all__ = ["cholesky_p", "triangular_solve_p", "lu_p", "lu_pivots_to_permutation_p",
           "permute_rows"]


def small_matrix_lowering(primitive: Primitive, expansion: Any, small: Any = None) -> None:
    """Lower `primitive` to the lax expansion of `linalg_small` where all its matrices are
    small (or where `small(*avals_in, **params)` holds), and to its LAPACK kernel's
    custom-call (the rule `kernel_rules` set) otherwise."""
    by_kernel = primitive.lower
    by_expansion = lower_by_expansion(primitive, expansion)
    if small is None:
        def small(*avals: ShapedArray, **params: Any) -> bool:
            return is_small(*(aval.shape for aval in avals))

    def rule(ctx: Any, *operands: Any, **params: Any) -> Any:
        if small(*ctx.avals_in, **params):
            return by_expansion(ctx, *operands, **params)
        return by_kernel(ctx, *operands, **params)
    rule.__name__ = f"lower_{primitive.name}"
    primitive.lower = rule


def _like(aval: ShapedArray, shape: Sequence[int] | None = None,
          dtype: Any = None) -> ShapedArray:
    return ShapedArray(tuple(aval.shape if shape is None else shape),
                       aval.dtype if dtype is None else np.dtype(dtype), False)


# ------------------------------------------------------------------------ cholesky

cholesky_p = Primitive("cholesky")


def _cholesky_abstract_eval(a: ShapedArray) -> ShapedArray:
    check_matrix("cholesky", "x", a, square=True)
    return _like(a)


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    chol = cholesky_p.bind(a)
    # dA L^{-H}, then L^{-1} dA L^{-H}
    right = triangular_solve_p.bind(chol, ad.instantiate(da), left_side=False, lower=True,
                                    transpose_a=True, conjugate_a=True, unit_diagonal=False)
    inner = triangular_solve_p.bind(chol, right, left_side=True, lower=True,
                                    transpose_a=False, conjugate_a=False, unit_diagonal=False)
    phi = sub(tril(inner), mul(diag_embed(diagonal(inner)), np.array(0.5, get_aval(a).dtype)))
    return chol, matmul(chol, phi)


cholesky_p.abstract_eval = _cholesky_abstract_eval
cholesky_p.jvp = _cholesky_jvp
kernel_rules(cholesky_p, kernels.cholesky)
small_matrix_lowering(cholesky_p, cholesky_small)


# ---------------------------------------------------------------- triangular solve

triangular_solve_p = Primitive("triangular_solve")


def _triangular_solve_abstract_eval(a: ShapedArray, b: ShapedArray, *, left_side: bool,
                                    lower: bool, transpose_a: bool, conjugate_a: bool,
                                    unit_diagonal: bool) -> ShapedArray:
    check_matrix("triangular_solve", "a", a, square=True)
    check_matrix("triangular_solve", "b", b, position=1)
    if a.dtype != b.dtype:
        raise TypeError(f"lax.linalg.triangular_solve: a and b must have the same dtype, got "
                        f"{a.dtype.name} and {b.dtype.name}.")
    if a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"lax.linalg.triangular_solve: a and b must have the same batch "
                         f"dimensions, got shapes {a.shape} and {b.shape}; broadcast them "
                         f"first.")
    side = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-1] != side:
        which = "rows" if left_side else "columns"
        raise ValueError(f"lax.linalg.triangular_solve: a of shape {a.shape} needs b with "
                         f"{a.shape[-1]} {which} (left_side={left_side}), got b of shape "
                         f"{b.shape}.")
    return _like(b)


def _triangle_read(a: Any, lower: bool, unit_diagonal: bool) -> Any:
    """The part of `a` a solve reads: its triangle (strict, if the diagonal is unit)."""
    if lower:
        return tril(a, -1 if unit_diagonal else 0)
    return triu(a, 1 if unit_diagonal else 0)


def _op(a: Any, transpose_a: bool, conjugate_a: bool) -> Any:
    if transpose_a and conjugate_a:
        return adjoint(a)
    if transpose_a:
        return mT(a)
    return adjoint(mT(a)) if conjugate_a else a


def _triangular_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any],
                          **params: Any) -> tuple[Any, Any]:
    a, b = primals
    da, db = tangents
    x = triangular_solve_p.bind(a, b, **params)
    dx: Any = ad.Zero(ad.tangent_aval(get_aval(x)))
    if not isinstance(db, ad.Zero):
        dx = triangular_solve_p.bind(a, db, **params)
    if not isinstance(da, ad.Zero):
        op_da = _op(_triangle_read(da, params["lower"], params["unit_diagonal"]),
                    params["transpose_a"], params["conjugate_a"])
        product = matmul(op_da, x) if params["left_side"] else matmul(x, op_da)
        dx = ad.add_tangents(dx, neg(triangular_solve_p.bind(a, product, **params)))
    return x, dx


def _triangular_solve_transpose(ct: Any, a: Any, b: Any, **params: Any) -> list[Any]:
    if is_undefined(a):
        raise ValueError("lax.linalg.triangular_solve is linear in b only: it cannot be "
                         "transposed with respect to a.")
    flipped = dict(params, transpose_a=not params["transpose_a"])
    return [None, triangular_solve_p.bind(a, ad.instantiate(ct), **flipped)]


triangular_solve_p.abstract_eval = _triangular_solve_abstract_eval
triangular_solve_p.jvp = _triangular_solve_jvp
triangular_solve_p.transpose = _triangular_solve_transpose
kernel_rules(triangular_solve_p, kernels.triangular_solve)
small_matrix_lowering(triangular_solve_p, triangular_solve_small)


# ------------------------------------------------------------------------------ lu

lu_p = Primitive("lu", multiple_results=True)


def _lu_abstract_eval(a: ShapedArray) -> list[ShapedArray]:
    check_matrix("lu", "x", a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return [_like(a), _like(a, batch + (min(m, n),), np.int32),
            _like(a, batch + (m,), np.int32)]


def permute_rows(x: Any, perm: Any) -> Any:
    """Row i of the result is row perm[i] of x (a product with a permutation matrix, so
    that it stays linear in x for transposition)."""
    m = get_aval(perm).shape[-1]
    shape = get_aval(perm).shape + (m,)
    rows = broadcasted_iota(np.int32, shape, len(shape) - 1)
    chosen = eq(expand_dims(perm, (len(shape) - 1,)), rows)
    return matmul(convert_element_type(chosen, get_aval(x).dtype), x)


def _solve(a: Any, b: Any, left_side: bool, lower: bool, unit_diagonal: bool = False) -> Any:
    """op(a) = a: the triangular solve the LU derivative needs."""
    return triangular_solve_p.bind(a, b, left_side=left_side, lower=lower, transpose_a=False,
                                   conjugate_a=False, unit_diagonal=unit_diagonal)


def _lu_tangent(packed: Any, perm: Any, da: Any) -> Any:
    """The tangent of the packed factors (see the module docstring)."""
    m, n = get_aval(packed).shape[-2:]
    k = min(m, n)
    rows, cols = len(get_aval(packed).shape) - 2, len(get_aval(packed).shape) - 1
    pda = permute_rows(da, perm)
    block = slice_in_dim(slice_in_dim(packed, 0, k, 1, rows), 0, k, 1, cols)
    pda_block = slice_in_dim(slice_in_dim(pda, 0, k, 1, rows), 0, k, 1, cols)
    # L1 and U1 are the unit-lower and upper triangles of `block`, which the solves read.
    inner = _solve(block, _solve(block, pda_block, True, True, unit_diagonal=True),
                   False, False)
    l1 = add(tril(block, -1), eye_like(get_aval(block).shape, get_aval(block).dtype))
    u1 = triu(block)
    dl1, du1 = matmul(l1, tril(inner, -1)), matmul(triu(inner), u1)
    top = add(dl1, du1)
    if m > n:  # the rows of L below L1: dL2 = ((P dA)_2 - L2 dU1) U1^{-1}
        rest = sub(slice_in_dim(pda, k, m, 1, rows),
                   matmul(slice_in_dim(packed, k, m, 1, rows), du1))
        return concatenate([top, _solve(block, rest, False, False)], rows)
    if n > m:  # the columns of U right of U1: dU2 = L1^{-1} ((P dA)_2 - dL1 U2)
        rest = sub(slice_in_dim(pda, k, n, 1, cols),
                   matmul(dl1, slice_in_dim(packed, k, n, 1, cols)))
        return concatenate([top, _solve(block, rest, True, True, unit_diagonal=True)], cols)
    return top


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    (a,), (da,) = primals, tangents
    packed, pivots, perm = lu_p.bind(a)
    zeros = [ad.Zero(ad.tangent_aval(get_aval(v))) for v in (pivots, perm)]
    return [packed, pivots, perm], [_lu_tangent(packed, perm, ad.instantiate(da)), *zeros]


lu_p.abstract_eval = _lu_abstract_eval
lu_p.jvp = _lu_jvp
kernel_rules(lu_p, kernels.lu)
small_matrix_lowering(lu_p, lu_small)


# --------------------------------------------------------- lu_pivots_to_permutation

lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")


def _lu_pivots_to_permutation_abstract_eval(pivots: ShapedArray, *,
                                            permutation_size: int) -> ShapedArray:
    if pivots.dtype != np.int32 or pivots.ndim < 1:
        raise TypeError(f"lax.linalg.lu_pivots_to_permutation: pivots must be an int32 array "
                        f"of at least 1 dimension, got {pivots.str_short()}.")
    if permutation_size < pivots.shape[-1]:
        raise ValueError(f"lax.linalg.lu_pivots_to_permutation: permutation_size "
                         f"({permutation_size}) must be at least the number of pivots "
                         f"({pivots.shape[-1]}).")
    return _like(pivots, pivots.shape[:-1] + (permutation_size,))


lu_pivots_to_permutation_p.abstract_eval = _lu_pivots_to_permutation_abstract_eval
ad.defjvp_zero(lu_pivots_to_permutation_p)
kernel_rules(lu_pivots_to_permutation_p, kernels.lu_pivots_to_permutation)
# Each swap is a pass over the permutations: natively compiled unless they are long.
small_matrix_lowering(lu_pivots_to_permutation_p, pivots_to_permutation_small,
                      lambda pivots, permutation_size: permutation_size <= 256)
