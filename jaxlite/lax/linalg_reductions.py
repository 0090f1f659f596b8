"""Orthogonal reductions and updates: the primitives hessenberg, tridiagonal, schur,
householder_product, ormqr, cholesky_update and symmetric_product (mirror those of
`jax.lax.linalg`), each with all its rules.

The numbers come from the kernels of `linalg_kernels_reductions` (LAPACK through scipy).
They map over leading batch dimensions (JAX batches all of them but cholesky_update; here
cholesky_update batches too). JAX defines no derivative for any of them, so their jvp
rules raise NotImplementedError with JAX's message.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.lax import linalg_kernels_reductions as kernels
from jaxlite.lax.linalg_util import kernel_rules

__all__ = ["geqrf_p", "geqp3_p", "hessenberg_p", "tridiagonal_p", "schur_p", "householder_product_p", "ormqr_p",
           "cholesky_update_p", "symmetric_product_p"]

FLOATING = tuple(np.dtype(d) for d in (np.float32, np.float64))
INEXACT = FLOATING + tuple(np.dtype(d) for d in (np.complex64, np.complex128))


def _aval(shape: Sequence[int], dtype: Any) -> ShapedArray:
    return ShapedArray(tuple(shape), np.dtype(dtype), False)


def check_operands(name: str, avals: Sequence[ShapedArray], ranks: Sequence[int],
                   accepted: Sequence[tuple[np.dtype, ...]]) -> tuple[int, ...]:
    """JAX's checks of a linalg primitive's operands: accepted dtypes (TypeError), one
    dtype for all, rank at least `ranks` (TypeError) and one batch shape; returns it."""
    for i, (aval, rank, kinds) in enumerate(zip(avals, ranks, accepted)):
        dtype = np.dtype(aval.dtype)
        if dtype not in kinds and dtypes.issubdtype(dtype, np.floating):
            # JAX accepts float16 and bfloat16, then finds no CPU kernel when it lowers
            raise NotImplementedError(f"Unsupported dtype {dtype.name}. "
                                      f"(lax.linalg.{name}: no CPU kernel takes it; convert "
                                      "to float32 first.)")
        if np.dtype(aval.dtype) not in kinds:
            names = "floating" if kinds == FLOATING else "floating, complexfloating"
            raise TypeError(f"{name} does not accept dtype {np.dtype(aval.dtype).name} at "
                            f"position {i}. Accepted dtypes at position {i} are subtypes of "
                            f"{names} (jaxlite: float32, float64"
                            f"{', complex64, complex128' if kinds != FLOATING else ''}).")
        if aval.ndim < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                            f"shape={aval.shape}")
    if len({np.dtype(a.dtype) for a in avals}) > 1:
        raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(np.dtype(a.dtype).name for a in avals)}.")
    batches = [a.shape[:a.ndim - rank] for a, rank in zip(avals, ranks)]
    if len(set(batches)) > 1:
        raise TypeError(f"All inputs to {name} must have the same batch dimensions, got "
                        f"shapes {[a.shape for a in avals]}.")
    return batches[0]


def no_derivative(primitive: Primitive) -> None:
    """A jvp rule that says, as JAX does, that the primitive has no derivative."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        raise NotImplementedError(
            f"Differentiation rule for '{primitive.name}' not implemented (JAX 0.10.2 defines "
            f"none either).")
    jvp.__name__ = f"{primitive.name}_jvp"
    primitive.jvp = jvp


def _declare(name: str, abstract_eval: Any, multiple_results: bool) -> Primitive:
    primitive = Primitive(name, multiple_results=multiple_results)
    primitive.abstract_eval = abstract_eval
    no_derivative(primitive)
    kernel_rules(primitive, getattr(kernels, name))
    return primitive


# ------------------------------------------------------------------ geqrf, geqp3

def _geqrf_abstract_eval(a: ShapedArray) -> list[ShapedArray]:
    batch = check_operands("geqrf", [a], [2], [INEXACT])
    return [_aval(a.shape, a.dtype), _aval(batch + (min(a.shape[-2:]),), a.dtype)]


def _geqp3_abstract_eval(a: ShapedArray) -> list[ShapedArray]:
    batch = check_operands("geqp3", [a], [2], [INEXACT])
    return [_aval(a.shape, a.dtype), _aval(batch + a.shape[-1:], np.int32),
            _aval(batch + (min(a.shape[-2:]),), a.dtype)]


# Householder QR in LAPACK's packed form (JAX's internal geqrf_p and geqp3_p; geqp3 here
# takes no initial pivots: every column is free).
geqrf_p = _declare("geqrf", _geqrf_abstract_eval, True)
geqp3_p = _declare("geqp3", _geqp3_abstract_eval, True)


# ------------------------------------------------------------------- hessenberg

def _hessenberg_abstract_eval(a: ShapedArray) -> list[ShapedArray]:
    batch = check_operands("hessenberg", [a], [2], [INEXACT])
    n = a.shape[-1]
    if a.shape[-2] != n:
        raise ValueError(f"Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {a.shape}")
    if n == 0:
        raise ValueError("Argument to Hessenberg reduction must have n >= 1 (JAX fails to "
                         f"compile n = 0), got shape {a.shape}")
    return [_aval(a.shape, a.dtype), _aval(batch + (n - 1,), a.dtype)]


hessenberg_p = _declare("hessenberg", _hessenberg_abstract_eval, True)


# ------------------------------------------------------------------ tridiagonal

def _tridiagonal_abstract_eval(a: ShapedArray, *, lower: bool) -> list[ShapedArray]:
    batch = check_operands("tridiagonal", [a], [2], [INEXACT])
    n = a.shape[-1]
    if a.shape[-2] != n or n == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                         f"{a.shape[-2:]}.")
    real = dtypes.real_dtype(a.dtype)
    return [_aval(a.shape, a.dtype), _aval(batch + (n,), real), _aval(batch + (n - 1,), real),
            _aval(batch + (n - 1,), a.dtype)]


tridiagonal_p = _declare("tridiagonal", _tridiagonal_abstract_eval, True)


# ------------------------------------------------------------------------ schur

def _schur_abstract_eval(a: ShapedArray, *,
                         compute_schur_vectors: bool) -> list[ShapedArray]:
    check_operands("schur", [a], [2], [INEXACT])
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape "
                         f"{a.shape[-2:]}.")
    return [_aval(a.shape, a.dtype)] * (2 if compute_schur_vectors else 1)


schur_p = _declare("schur", _schur_abstract_eval, True)


# ---------------------------------------------------------- householder product

def _householder_product_abstract_eval(a: ShapedArray, taus: ShapedArray) -> ShapedArray:
    check_operands("householder_product", [a, taus], [2, 1], [INEXACT, INEXACT])
    m, n = a.shape[-2:]
    if m < n:
        raise ValueError(f"The first argument to householder_product must have at least as "
                         f"many rows as columns, got shape {a.shape[-2:]}")
    if taus.shape[-1] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more rows "
                         "than the minimum of the first argument's rows and columns.")
    return _aval(a.shape, a.dtype)


householder_product_p = _declare("householder_product", _householder_product_abstract_eval,
                                 False)


# ------------------------------------------------------------------------ ormqr

def _ormqr_abstract_eval(a: ShapedArray, taus: ShapedArray, c: ShapedArray, *, left: bool,
                         transpose: bool) -> ShapedArray:
    check_operands("ormqr", [a, taus, c], [2, 1, 2], [INEXACT] * 3)
    m = a.shape[-2]
    if left and c.shape[-2] != m:
        raise ValueError(f"ormqr with left=True expects c to have the same number of rows as "
                         f"the Householder matrix a. Got a shape {a.shape[-2:]} and c shape "
                         f"{c.shape[-2:]}.")
    if not left and c.shape[-1] != m:
        raise ValueError(f"ormqr with left=False expects c to have the same number of columns "
                         f"as the Householder matrix a has rows. Got a shape {a.shape[-2:]} "
                         f"and c shape {c.shape[-2:]}.")
    if taus.shape[-1] > min(a.shape[-2:]):
        raise ValueError(f"ormqr: taus may hold at most min(m, n) = {min(a.shape[-2:])} "
                         f"scalar factors, got {taus.shape[-1]}.")
    return _aval(c.shape, c.dtype)


ormqr_p = _declare("ormqr", _ormqr_abstract_eval, False)


# -------------------------------------------------------------- cholesky update

def _cholesky_update_abstract_eval(r: ShapedArray, w: ShapedArray) -> ShapedArray:
    check_operands("cholesky_update", [r, w], [2, 1], [FLOATING, FLOATING])
    n = r.shape[-1]
    if r.shape[-2] != n or w.shape[-1] != n:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a "
                         f"vector of the same size as input. Got shapes {r.shape[-2:]} and "
                         f"{w.shape[-1:]} instead")
    return _aval(r.shape, r.dtype)


cholesky_update_p = _declare("cholesky_update", _cholesky_update_abstract_eval, False)


# ------------------------------------------------------------ symmetric product

def _symmetric_product_abstract_eval(a: ShapedArray, c: ShapedArray, *, alpha: float,
                                     beta: float) -> ShapedArray:
    check_operands("symmetric_product", [a, c], [2, 2], [FLOATING, FLOATING])
    if a.shape[-2] != c.shape[-1] or c.shape[-2] != c.shape[-1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (n, n). Got shapes {a.shape[-2:]} and "
                         f"{c.shape[-2:]}.")
    return _aval(c.shape, c.dtype)


symmetric_product_p = _declare("symmetric_product", _symmetric_product_abstract_eval, False)
