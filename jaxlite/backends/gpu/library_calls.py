"""Custom calls the gpu backend runs with its array module's libraries: linear algebra
through cuSOLVER / cuBLAS (`cupy.linalg`, `cupyx.scipy.linalg`) and FFT through cuFFT
(`cupy.fft`), on device memory, enqueued on the executable's stream (XLA's GPU backend
calls cuSOLVER and cuFFT from its thunks the same way).

`library_rule(inst, xp)` is a function `operands -> result` on the instruction's flat
device arrays, or None when the target has no device rule here (the program then runs
it on the host, `host_fallback`). Each rule computes what the custom-call target of
`jaxlite.lax.linalg_kernels` / `jaxlite.lax.fft` computes (same parameters, from the
JSON `backend_config`; same outputs and dtypes), so the cpu and gpu backends agree to
rounding. Under the interpreter launcher `xp` is numpy and the rules run numpy's and
scipy's LAPACK: the plumbing (layouts, batches, parameters, output order) is what the
tests check without a GPU.

Targets with a device rule: `jaxlite_lapack_cholesky`, `_triangular_solve`, `_lu`,
`_lu_pivots_to_permutation`, `_qr`, `_eigh`, `_svd` and `jaxlite_fft`. The others (eig,
which CuPy lacks, as JAX's GPU backend used to run it on the host too; the tridiagonal
solve; the Hessenberg/Schur/tridiagonal reductions; host callbacks) stay on the host.

Failures, as JAX: NaN factors, never an exception. numpy (and CuPy under
`cupyx.errstate(linalg="raise")`) raises `LinAlgError`: the rule then factors matrix by
matrix, NaN for those that fail. CuPy by default reports nothing (no read-back of
cuSOLVER's info, so no synchronization): a Cholesky factor whose diagonal is not
positive and finite is a failed one (potrf stops at the first non-positive pivot and
leaves it on the diagonal) and becomes NaN on the device. eigh and svd that do not
converge are not detected on CuPy (unverified without hardware).
"""
from __future__ import annotations

import importlib
import json
from typing import Any, Callable

import numpy as np

from jaxlite.backends.gpu.device_ops import to_logical, to_memory
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape

__all__ = ["DEVICE_TARGETS", "library_rule"]

_LAPACK_DTYPES = frozenset(np.dtype(d) for d in (np.float32, np.float64, np.complex64,
                                                  np.complex128))


def _scipy_linalg(xp: Any) -> Any:
    """scipy's linalg for numpy arrays, CuPy's `cupyx.scipy.linalg` for CuPy's."""
    name = "scipy.linalg" if xp is np else "cupyx.scipy.linalg"
    return importlib.import_module(name)


def _nan(dtype: Any) -> Any:
    return complex(np.nan, np.nan) if np.dtype(dtype).kind == "c" else np.nan


def _per_matrix(xp: Any, fn: Callable[[Any], tuple], a: Any) -> list[Any]:
    """`fn` (one matrix -> a tuple of arrays) over the leading dimensions of `a`, its
    results stacked; NaN results for a matrix where `fn` raises `LinAlgError`."""
    batch = a.shape[:-2]
    rows: list[tuple] = []
    failed: list[int] = []
    for k, index in enumerate(np.ndindex(batch)):
        try:
            rows.append(tuple(fn(a[index])))
        except np.linalg.LinAlgError:
            rows.append(())
            failed.append(k)
    like = next((r for r in rows if r), None)
    if like is None:  # every matrix failed: shapes from a zero matrix
        like = tuple(fn(xp.eye(*a.shape[-2:], dtype=a.dtype)))
    rows = [r or tuple(xp.full(x.shape, _nan(x.dtype), x.dtype) for x in like) for r in rows]
    return [xp.stack([r[i] for r in rows]).reshape(batch + like[i].shape)
            if batch else rows[0][i] for i in range(len(like))]


def _whole_or_per_matrix(xp: Any, fn: Callable[[Any], tuple], a: Any) -> list[Any]:
    """`fn` on the whole batch (CuPy's and numpy's batched solvers); matrix by matrix
    when it raises `LinAlgError`, NaN for the matrices that fail."""
    try:
        return list(fn(a))
    except np.linalg.LinAlgError:
        return _per_matrix(xp, fn, a)


# ------------------------------------------------------------------ linear algebra

def _cholesky(xp: Any, a: Any) -> Any:
    [factor] = _whole_or_per_matrix(xp, lambda m: (xp.linalg.cholesky(m),), a)
    diagonal = xp.diagonal(factor, axis1=-2, axis2=-1).real
    failed = ~xp.all(xp.isfinite(diagonal) & (diagonal > 0), axis=-1)
    return xp.where(failed[..., None, None], xp.asarray(_nan(a.dtype), a.dtype), factor)


def _triangular_solve(xp: Any, a: Any, b: Any, *, left_side: bool, lower: bool,
                      transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> Any:
    if b.size == 0:
        return xp.zeros(b.shape, b.dtype)
    if conjugate_a and not transpose_a:  # trsm conjugates only with the transpose
        a, conjugate_a = xp.conj(a), False
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    if not left_side:  # x op(a) = b  <=>  op(a)^T x^T = b^T
        b = xp.swapaxes(b, -1, -2)
        if trans == 2:
            a, trans = xp.conj(a), 0
        else:
            trans = 1 - trans
    solve = _scipy_linalg(xp).solve_triangular
    x = xp.empty(b.shape, b.dtype)
    for index in np.ndindex(a.shape[:-2]):  # cuBLAS's trsm, one matrix at a time
        x[index] = solve(a[index], b[index], trans=trans, lower=lower,
                         unit_diagonal=unit_diagonal)
    return x if left_side else xp.swapaxes(x, -1, -2)


def _permutation(xp: Any, pivots: Any, *, permutation_size: int) -> Any:
    """The permutation of 0..permutation_size-1 that the row swaps `pivots` make, the
    swaps applied in order (one gather and two scatters per pivot, on the device)."""
    batch = pivots.shape[:-1]
    perm = xp.broadcast_to(xp.arange(permutation_size, dtype=pivots.dtype),
                           batch + (permutation_size,)).copy()
    flat_perm = perm.reshape(-1, permutation_size)
    flat_piv = pivots.reshape(-1, pivots.shape[-1])
    rows = xp.arange(flat_perm.shape[0])
    for j in range(pivots.shape[-1]):
        target = flat_piv[:, j]
        row_j = flat_perm[:, j].copy()
        flat_perm[:, j] = flat_perm[rows, target]
        flat_perm[rows, target] = row_j
    return flat_perm.reshape(perm.shape)


def _lu(xp: Any, a: Any) -> tuple[Any, Any, Any]:
    m, n = a.shape[-2:]
    if min(m, n) == 0:
        pivots = xp.zeros(a.shape[:-2] + (0,), np.int32)
        return xp.array(a), pivots, _permutation(xp, pivots, permutation_size=m)
    factor = _scipy_linalg(xp).lu_factor
    packed, pivots = _per_matrix(xp, lambda x: factor(x), a)
    pivots = pivots.astype(np.int32)
    return packed, pivots, _permutation(xp, pivots, permutation_size=m)


def _qr(xp: Any, a: Any, *, full_matrices: bool) -> tuple[Any, Any]:
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    if a.size == 0:
        eye = xp.broadcast_to(xp.eye(m, k, dtype=a.dtype), a.shape[:-2] + (m, k))
        return eye.copy(), xp.zeros(a.shape[:-2] + (k, n), a.dtype)
    mode = "complete" if full_matrices else "reduced"
    # matrix by matrix: CuPy's qr takes stacks of matrices only from version 13 on
    q, r = _per_matrix(xp, lambda x: xp.linalg.qr(x, mode=mode), a)
    return q, r


def _eigh(xp: Any, a: Any, *, lower: bool, sort_eigenvalues: bool) -> tuple[Any, Any]:
    # cuSOLVER's syevd (syevj for stacks) returns ascending eigenvalues, so sorted either way
    w, v = _whole_or_per_matrix(xp, lambda x: xp.linalg.eigh(x, UPLO="L" if lower else "U"),
                                a)
    return v, w


def _svd(xp: Any, a: Any, *, full_matrices: bool, compute_uv: bool) -> Any:
    m, n = a.shape[-2:]
    batch, k = a.shape[:-2], min(m, n)
    real = np.empty((), a.dtype).real.dtype
    if not compute_uv:
        if a.size == 0:
            return xp.zeros(batch + (k,), real)
        return _whole_or_per_matrix(xp, lambda x: (xp.linalg.svd(x, compute_uv=False),),
                                    a)[0]
    cols, rows = (m, n) if full_matrices else (k, k)
    if a.size == 0:
        return (xp.zeros(batch + (k,), real),
                xp.broadcast_to(xp.eye(m, cols, dtype=a.dtype), batch + (m, cols)).copy(),
                xp.broadcast_to(xp.eye(rows, n, dtype=a.dtype), batch + (rows, n)).copy())
    u, s, vh = _whole_or_per_matrix(
        xp, lambda x: xp.linalg.svd(x, full_matrices=full_matrices), a)
    return s, u, vh


# --------------------------------------------------------------------------- FFT

_TRANSFORMS = {"FFT": "fftn", "IFFT": "ifftn", "RFFT": "rfftn", "IRFFT": "irfftn"}


def _fft(xp: Any, x: Any, *, fft_type: str, fft_length: list[int], out: Shape) -> Any:
    lengths = tuple(int(n) for n in fft_length)
    if out.size == 0 or int(np.prod(lengths)) == 0:  # cuFFT and pocketfft refuse these
        return xp.zeros(out.dims, out.dtype)
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    transform = getattr(xp.fft, _TRANSFORMS[fft_type])
    return transform(x, s=lengths, axes=axes)


# ------------------------------------------------------------------- the table

_LINALG = {"jaxlite_lapack_cholesky": _cholesky,
           "jaxlite_lapack_triangular_solve": _triangular_solve,
           "jaxlite_lapack_lu": _lu,
           "jaxlite_lapack_lu_pivots_to_permutation": _permutation,
           "jaxlite_lapack_qr": _qr,
           "jaxlite_lapack_eigh": _eigh,
           "jaxlite_lapack_svd": _svd}
DEVICE_TARGETS = frozenset(_LINALG) | {"jaxlite_fft"}


def _leaves(shape: Shape) -> list[Shape]:
    return list(shape.tuple_shapes or ()) if shape.is_tuple else [shape]


def _stored_natively(inst: HloInstruction, storage_dtype: Callable[[Any], Any]) -> bool:
    shapes = [o.shape for o in inst.operands] + _leaves(inst.shape)
    return all(not s.is_tuple and np.dtype(storage_dtype(s.dtype)) == np.dtype(s.dtype)
               for s in shapes)


def library_rule(inst: HloInstruction, xp: Any,
                 storage_dtype: Callable[[Any], Any]) -> Callable[[list[Any]], Any] | None:
    """`operands -> result` (flat device arrays in memory order) running the custom
    call `inst` with `xp`'s libraries; None when its target has no device rule or its
    types are not stored natively by `xp` (see the module docstring)."""
    target = inst.attr("target")
    if target not in DEVICE_TARGETS or not _stored_natively(inst, storage_dtype):
        return None
    floats = [np.dtype(o.shape.dtype) for o in inst.operands if o.shape.dtype.kind in "fc"]
    if target != "jaxlite_lapack_lu_pivots_to_permutation" and \
            not all(d in _LAPACK_DTYPES for d in floats):
        return None  # float16 and bfloat16: no cuSOLVER / cuFFT routine of theirs here
    params = json.loads(inst.attr("backend_config") or "{}")
    results = _leaves(inst.shape)
    if target == "jaxlite_fft":
        params["out"] = results[0]
        rule: Callable[..., Any] = _fft
    else:
        rule = _LINALG[target]

    def run(operands: list[Any]) -> Any:
        logical = [to_logical(xp, v, o.shape) for v, o in zip(operands, inst.operands)]
        out = rule(xp, *logical, **params)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        flat = [to_memory(xp, xp.asarray(v).astype(s.dtype, copy=False), s)
                for v, s in zip(outs, results)]
        return tuple(flat) if inst.shape.is_tuple else flat[0]
    return run
