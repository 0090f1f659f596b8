"""Matrix functions and equations: expm, expm_frechet, sqrtm, funm and solve_sylvester
(mirror the same names of `jax.scipy.linalg`).

expm is the scaling-and-squaring method with Pade approximants of Higham (SIAM J. Matrix
Anal. Appl. 26(4), 2005), with JAX's choices: the 1-norm picks the degree (3, 5, 7, 9 or
13 in double precision, 3, 5 or 7 in single) from Higham's thresholds theta_m, and the
number of squarings s = max(0, floor(log2(|A|_1 / theta_max))); more than `max_squarings`
squarings give NaNs. Its derivative is the derivative of that computation, so
expm_frechet is the jvp of expm. sqrtm and funm go through the complex Schur form
(Schur-Parlett: Golub and Van Loan, Algorithm 11.1.1); solve_sylvester through the Schur
forms of A and B^H and a triangular back substitution (Bartels-Stewart).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.core import dtypes
from jaxlite.lax import linalg as lax_linalg
from jaxlite.scipy.linalg._decompositions import rsf2csf, schur
from jaxlite.scipy.linalg._solve import solve, solve_triangular
from jaxlite.scipy.linalg._util import adjoint, as_arrays, as_inexact, hdot
from jaxlite.transforms.autodiff import jvp

__all__ = ["expm", "expm_frechet", "sqrtm", "funm", "solve_sylvester"]


def pade_coefficients(degree: int) -> tuple[float, ...]:
    """b_0..b_m of the [m/m] Pade approximant of exp, p(x) = sum b_j x^j, scaled so that
    b_m = 1: b_j proportional to (2m - j)! / (j! (m - j)!)."""
    exact = [Fraction(math.factorial(2 * degree - j),
                      math.factorial(j) * math.factorial(degree - j))
             for j in range(degree + 1)]
    return tuple(float(c / exact[-1]) for c in exact)


# Higham's theta_m: the largest 1-norms for which degree m is accurate to unit roundoff.
THETAS = {np.dtype(np.float64): (1.495585217958292e-002, 2.539398330063230e-001,
                                 9.504178996162932e-001, 2.097847961257068e+000),
          np.dtype(np.float32): (4.258730016922831e-001, 1.880152677804762e+000)}
MAX_NORM = {np.dtype(np.float64): 5.371920351148152, np.dtype(np.float32): 3.925724783138660}


def _pade(degree: int) -> Callable[[Any], tuple[Any, Any]]:
    """(U, V): the odd and even parts of the degree-m numerator at A, p(A) = U + V and
    q(A) = V - U."""
    b = pade_coefficients(degree)

    def odd_even(a: Any) -> tuple[Any, Any]:
        eye = jnp.eye(*a.shape, dtype=a.dtype)
        powers = [eye, hdot(a, a)]  # A^0, A^2, A^4, ...
        if degree == 13:
            a4 = hdot(powers[1], powers[1])
            a6 = hdot(a4, powers[1])
            u = hdot(a, hdot(a6, b[13] * a6 + b[11] * a4 + b[9] * powers[1])
                     + b[7] * a6 + b[5] * a4 + b[3] * powers[1] + b[1] * eye)
            v = (hdot(a6, b[12] * a6 + b[10] * a4 + b[8] * powers[1]) + b[6] * a6
                 + b[4] * a4 + b[2] * powers[1] + b[0] * eye)
            return u, v
        while len(powers) < degree // 2 + 1:
            powers.append(hdot(powers[-1], powers[1]))
        odd = sum(b[2 * i + 1] * powers[i] for i in reversed(range(len(powers))))
        even = sum(b[2 * i] * powers[i] for i in reversed(range(len(powers))))
        return hdot(a, odd), even
    return odd_even


def _numerator_denominator(a: Any) -> tuple[Any, Any, Any]:
    """p(A / 2^s), q(A / 2^s) and s (a float of A's real dtype)."""
    real = np.dtype(np.finfo(a.dtype).dtype)
    if real not in THETAS:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    norm = jnp.linalg.norm(a, 1)
    squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm / MAX_NORM[real])))
    a = a / (2 ** squarings.astype(a.dtype))
    degrees = (3, 5, 7, 9, 13) if real == np.float64 else (3, 5, 7)
    index = jnp.digitize(norm, jnp.array(THETAS[real], dtype=norm.dtype))
    u, v = lax.switch(index, [_pade(d) for d in degrees], a)
    return u + v, v - u, squarings


def _expm_matrix(a: Any, upper_triangular: bool, max_squarings: int) -> Any:
    p, q, squarings = _numerator_denominator(a)

    def compute(_: Any) -> Any:
        r = solve_triangular(q, p) if upper_triangular else jnp.linalg.solve(q, p)

        def square(i: Any, r: Any) -> Any:
            return lax.cond(i < squarings, lambda x: hdot(x, x), lambda x: x, r)
        return lax.fori_loop(0, max_squarings, square, r)
    return lax.cond(squarings > max_squarings, lambda a: jnp.full_like(a, np.nan), compute, a)


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential (mirrors `jax.scipy.linalg.expm`); `upper_triangular`
    solves the Pade system with a triangular solve. More than `max_squarings` squarings
    needed (a huge norm) gives NaNs."""
    (a,) = as_inexact(*as_arrays("expm", A))  # no lists, as in JAX
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape}.")
    return jnp.vectorize(lambda x: _expm_matrix(x, upper_triangular, max_squarings),
                         signature="(n,n)->(n,n)")(a)


def expm_frechet(A: Any, E: Any, *, method: str | None = None,
                 compute_expm: bool = True) -> Any:
    """The Frechet derivative of expm at A in the direction E (mirrors
    `jax.scipy.linalg.expm_frechet`): (expm(A), L(A, E)), or L(A, E) alone without
    `compute_expm`. `method` is unused, as in JAX."""
    del method
    a, e = as_arrays("expm_frechet", A, E)
    if a.ndim < 2 or a.shape[-2] != a.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={a.shape} "
                         f"E.shape={e.shape}")
    value, derivative = jvp(lambda x: expm(x), (a,), (e,))
    return (value, derivative) if compute_expm else derivative


# --------------------------------------------------------------------------- sqrtm

def _sqrt_upper_triangular(t: Any) -> Any:
    """The upper triangular square root U of upper triangular T (U^2 = T), column by
    column from the diagonal up: U_ij = (T_ij - sum_{i<k<j} U_ik U_kj) / (U_ii + U_jj),
    0 where the numerator is exactly 0."""
    diag = jnp.sqrt(jnp.diag(t))
    n = diag.size
    index = jnp.arange(n)

    def column(j: Any, u: Any) -> Any:
        def entry(step: Any, u: Any) -> Any:
            i = j - 1 - step
            between = (index > i) & (index < j)
            s = jnp.sum(jnp.where(between, u[i, :] * u[:, j], 0))
            value = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (diag[i] + diag[j]))
            return u.at[i, j].set(value)
        return lax.fori_loop(0, j, entry, u)
    return lax.fori_loop(0, n, column, jnp.diag(diag))


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal matrix square root (mirrors `jax.scipy.linalg.sqrtm`), through the
    complex Schur form; the result is complex."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    t, z = schur(A, output="complex")
    root = _sqrt_upper_triangular(t)
    return hdot(hdot(z, root), jnp.conj(z.T))


# ---------------------------------------------------------------------------- funm

def _parlett(f: Any, t: Any) -> tuple[Any, Any]:
    """The strictly upper part of f(T) from its diagonal by the Parlett recurrence
    (superdiagonal by superdiagonal), and the smallest |T_jj - T_ii| met."""
    n = t.shape[0]
    index = jnp.arange(n)

    def diagonal(p: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
        def entry(i: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
            f, smallest = state
            j = i + p
            between = (index >= i) & (index < j - 1)
            s = t[i - 1, j - 1] * (f[j - 1, j - 1] - f[i - 1, i - 1])
            s = s + (jnp.where(between, t[i - 1], 0) @ jnp.where(between, f[:, j - 1], 0)
                     - jnp.where(between, f[i - 1], 0) @ jnp.where(between, t[:, j - 1], 0))
            gap = t[j - 1, j - 1] - t[i - 1, i - 1]
            s = jnp.where(gap != 0, s / gap, s)
            return f.at[i - 1, j - 1].set(s), jnp.minimum(smallest, jnp.abs(gap))
        return lax.fori_loop(1, n - p + 1, entry, state)
    return lax.fori_loop(1, n, diagonal, (f, jnp.abs(t[0, 0])))


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """f(A) for a scalar function f applied to the eigenvalues (mirrors
    `jax.scipy.linalg.funm`), by the Schur-Parlett method: complex result; with
    disp=False, (f(A), an estimate of the relative error)."""
    (a,) = as_arrays("funm", A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(a)
    t, z = rsf2csf(t, z)
    f = jnp.diag(func(jnp.diag(t))).astype(t.dtype)
    f, smallest = _parlett(f, t)
    f = z @ f @ jnp.conj(z.T)
    if disp:
        return f
    tol = float(np.finfo(np.float32 if f.dtype.char.lower() == "f" else np.float64).eps)
    smallest = jnp.where(smallest == 0.0, tol, smallest)
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf,
                    jnp.minimum(1, jnp.maximum(tol, (tol / smallest)
                                               * jnp.linalg.norm(jnp.triu(t, 1), 1))))
    return f, err


# ---------------------------------------------------------------- solve_sylvester

def _triangular_sylvester(r: Any, s: Any, f: Any) -> Any:
    """Y with R Y + Y S = F, R upper and S lower triangular: column j (last first) solves
    (R + S_jj I) y_j = f_j - sum_{k>j} y_k S_kj."""
    m, n = f.shape
    index = jnp.arange(n)
    eye = jnp.eye(m, dtype=f.dtype)

    def column(step: Any, y: Any) -> Any:
        j = n - 1 - step
        later = jnp.where(index > j, s[:, j], 0)
        rhs = f[:, j] - y @ later
        y_j = lax_linalg.triangular_solve(r + s[j, j] * eye, rhs[:, None], left_side=True,
                                          lower=False)
        return lax.dynamic_update_slice_in_dim(y, y_j, j, axis=1)
    return lax.fori_loop(0, n, column, jnp.zeros_like(f))


def _sylvester_matrix(a: Any, b: Any, c: Any, method: str, tol: float) -> Any:
    m, n = c.shape
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(adjoint(b), output="complex")
        f = adjoint(u) @ c.astype(r.dtype) @ v
        x = u @ _triangular_sylvester(r, adjoint(s), f) @ adjoint(v)
    elif method == "eigen":
        ra, ua = jnp.linalg.eig(a)
        rb, ub = jnp.linalg.eig(b)
        f = solve(ua, c.astype(ra.dtype) @ ub)
        y = f / (ra[:, None] + rb[None, :])
        x = ua[:m, :m] @ y[:m, :n] @ jnp.linalg.inv(ub)[:n, :n]
    else:
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         f'"schur" or "eigen".')
    if not dtypes.is_complex(c.dtype):
        x = x.real
    near_singular = jnp.any(jnp.abs(jnp.linalg.eigvals(a)[:, None]
                                    + jnp.linalg.eigvals(b)[None, :]) < tol)
    return jnp.where(near_singular, jnp.full_like(x, np.nan), x)


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur",
                    tol: float = 1e-8) -> Any:
    """X with A X + X B = C (mirrors `jax.scipy.linalg.solve_sylvester`), by the Schur
    forms (method 'schur') or eigendecompositions ('eigen'); NaNs when some eigenvalues of
    A and B add up to less than `tol` in magnitude (no unique solution)."""
    a, b, c = as_inexact(A, B, C)
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    return jnp.vectorize(lambda a, b, c: _sylvester_matrix(a, b, c, method, tol),
                         signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
