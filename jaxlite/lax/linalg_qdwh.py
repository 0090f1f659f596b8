"""The polar decomposition by QDWH, the QR-based dynamically weighted Halley iteration
(mirrors `jax.lax.linalg.qdwh`), written with lax.

Nakatsukasa, Bai and Gygi (SIAM J. Matrix Anal. Appl. 31(5), 2010): after scaling x so
that its singular values lie in [l, 1], each step maps U to
U (a I + b U^H U)(I + c U^H U)^{-1}, with weights (a, b, c) chosen from the current lower
bound l of the singular values so that they all move towards 1 as fast as possible; the
bound follows the same map, so the weights are known before the iteration starts (they are
computed here in Python floats, as JAX does). While c is large the step is computed
through a QR decomposition of [sqrt(c) U; I] (stable); afterwards through a Cholesky
factor of I + c U^H U (cheaper). When the bound has reached 1, plain Halley steps
(a, b, c) = (3, 1, 3) continue until successive iterates differ by less than
(5 eps)^(1/3) in Frobenius norm, then one Newton-Schulz step polishes U, and
H = sym(U^H x). The schedule and the convergence test are JAX's, so the iteration counts
agree with JAX's.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from jaxlite.core.avals import get_aval
from jaxlite.lax.arithmetic import add, mul, sub
from jaxlite.lax.broadcast import reduce_sum
from jaxlite.lax.comparisons import eq, gt, lt
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.bitwise import bitwise_and, bitwise_not
from jaxlite.lax.linalg_factorizations import cholesky_p, triangular_solve_p
from jaxlite.lax.linalg_spectral import qr_p
from jaxlite.lax.linalg_util import adjoint, eye_like, matmul
from jaxlite.lax.loops import while_loop
from jaxlite.lax.math_functions import abs as lax_abs
from jaxlite.lax.math_functions import rsqrt, sqrt
from jaxlite.lax.reductions import reduce_max
from jaxlite.lax.selection import select
from jaxlite.lax.slicing import concatenate, slice_in_dim

__all__ = ["qdwh"]

CHOLESKY_CUTOFF = 100  # weights c above this take the QR-based step


def halley_weights(eps: float, max_iterations: int) -> list[tuple[float, float, float]]:
    """The weights (a, b, c) of the dynamically weighted steps, one per step, until the
    lower bound l (starting at eps) is within 5 eps of 1 or `max_iterations` is reached."""
    tol_l = 5.0 * eps
    bound = eps
    weights = []
    while bound + tol_l < 1 and len(weights) < max_iterations:
        l2 = bound * bound
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** 0.5
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        bound = bound * (a + b * l2) / (1 + c * l2)
        weights.append((a, b, c))
    return weights


def _scalar(value: float, dtype: Any) -> np.ndarray:
    return np.asarray(value, dtype)


def _qr_step(u: Any, a: float, b: float, c: float) -> Any:
    """e U + (a - e) / sqrt(c) Q1 Q2^H, [Q1; Q2] the reduced Q of [sqrt(c) U; I], e = b/c."""
    dtype = get_aval(u).dtype
    m, n = get_aval(u).shape
    stacked = concatenate([mul(u, _scalar(math.sqrt(c), dtype)), eye_like((n, n), dtype)], 0)
    q, _ = qr_p.bind(stacked, full_matrices=False)
    product = matmul(slice_in_dim(q, 0, m, 1, 0), adjoint(slice_in_dim(q, m, m + n, 1, 0)))
    e = b / c
    return add(mul(u, _scalar(e, dtype)), mul(product, _scalar((a - e) / math.sqrt(c), dtype)))


def _cholesky_step(u: Any, a: float, b: float, c: float) -> Any:
    """e U + (a - e) U (I + c U^H U)^{-1}, e = b/c, through the Cholesky factor L of
    I + c U^H U: U (L L^H)^{-1} = (L^{-H} L^{-1} U^H)^H."""
    dtype = get_aval(u).dtype
    n = get_aval(u).shape[1]
    gram = add(mul(matmul(adjoint(u), u), _scalar(c, dtype)), eye_like((n, n), dtype))
    chol = cholesky_p.bind(gram)
    solve = dict(left_side=True, lower=True, unit_diagonal=False)
    w = triangular_solve_p.bind(chol, adjoint(u), transpose_a=False, conjugate_a=False,
                                **solve)
    v = triangular_solve_p.bind(chol, w, transpose_a=True, conjugate_a=True, **solve)
    e = b / c
    return add(mul(u, _scalar(e, dtype)), mul(adjoint(v), _scalar(a - e, dtype)))


def _frobenius(x: Any) -> Any:
    magnitude = lax_abs(x)
    return sqrt(reduce_sum(mul(magnitude, magnitude), (0, 1)))


def _norm_1_inf(x: Any) -> tuple[Any, Any]:
    """The largest absolute column sum and row sum of x."""
    magnitude = lax_abs(x)
    return (reduce_max(reduce_sum(magnitude, (0,)), (0,)),
            reduce_max(reduce_sum(magnitude, (1,)), (0,)))


def qdwh(x: Any, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None
         ) -> tuple[Any, Any, Any, Any]:
    """Polar decomposition x = U H of a full-rank m x n matrix, m >= n, by QDWH (mirrors
    `jax.lax.linalg.qdwh`).

    Returns
    -------
    (u, h, num_iters, is_converged): U with orthonormal columns, H Hermitian positive
    semi-definite, the number of steps taken (int32) and whether the iterates converged
    within `max_iterations` (default 10). `eps` (default: the dtype's machine epsilon) sets
    the target accuracy. `is_hermitian` is unused, as in JAX.

    Differences from JAX: `dynamic_shape` (padded inputs) is not supported.
    """
    del is_hermitian  # unused, as in JAX
    if dynamic_shape is not None:
        raise NotImplementedError("lax.linalg.qdwh: dynamic_shape is not supported by "
                                  "jaxlite; pass the unpadded matrix.")
    aval = get_aval(x)
    if aval.ndim != 2:
        raise ValueError(f"lax.linalg.qdwh: x must be a matrix, got shape {aval.shape}.")
    if aval.shape[0] < aval.shape[1]:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    dtype = aval.dtype
    real = np.finfo(dtype).dtype
    eps = float(np.finfo(real).eps) if eps is None else float(eps)

    one_norm, inf_norm = _norm_1_inf(x)
    scale = mul(rsqrt(one_norm), rsqrt(inf_norm))
    scale = select(eq(one_norm, _scalar(0, real)), _scalar(1, real), scale)
    u = mul(x, convert_element_type(scale, dtype))

    weights = halley_weights(eps, max_iterations)
    tol_norm = _scalar(np.cbrt(5.0 * eps), real)
    not_converged = np.bool_(True)
    for a, b, c in weights:
        if c > CHOLESKY_CUTOFF:
            u = _qr_step(u, a, b, c)
        else:
            previous, u = u, _cholesky_step(u, a, b, c)
            not_converged = gt(_frobenius(sub(u, previous)), tol_norm)

    def keep_going(state: tuple[Any, Any, Any]) -> Any:
        k, _, going = state
        return bitwise_and(going, lt(k, max_iterations))

    def halley(state: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        k, u, _ = state
        new = _cholesky_step(u, 3.0, 1.0, 3.0)
        return add(k, 1), new, gt(_frobenius(sub(new, u)), tol_norm)

    start = (len(weights), u, not_converged)  # a Python int: weak int32, as in JAX
    num_iters, u, not_converged = while_loop(keep_going, halley, start)
    u = sub(mul(u, _scalar(1.5, dtype)),
            mul(matmul(u, matmul(adjoint(u), u)), _scalar(0.5, dtype)))
    h = matmul(adjoint(u), x)
    h = mul(add(h, adjoint(h)), _scalar(0.5, dtype))
    return u, h, num_iters, bitwise_not(not_converged)
