"""jaxlite's reduction kernels (`jaxlite.lax.linalg_kernels_reductions` and `eig`) printed
as the LAPACK calls XLA's CPU runtime registers, as JAX lowers the same functions:

    kernel        LAPACK call (XLA target)          attributes
    hessenberg    gehrd   -> packed, taus, info     low = 1, high = n
    tridiagonal   sytrd / hetrd -> packed, d, e, taus, info   uplo
    schur         gees    -> T, Z, (wr, wi | w), sdim, info   mode, sort = 'N'
    eig           geev    -> (wr, wi | w), vl, vr, info       compute_left, compute_right
    geqp3         geqp3 (a, jpvt = 0: every column free) -> packed, jpvt, taus
    ormqr         ormqr / unmqr (a, taus, c) -> c            left, transpose (booleans)

Where LAPACK reports `info`, our kernels give NaN for a failed matrix, so the rule selects
NaN there (`lapack.nan_unless_ok`); eig's real case joins geev's (wr, wi) into complex
eigenvalues. `lapack_rule` finds a kernel's rule here or in `lapack.py`.
"""
from __future__ import annotations

import json

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves

__all__ = ["REDUCTION_KERNELS", "lapack_rule"]


def _real(dtype: np.dtype) -> np.dtype:
    return np.empty((), dtype).real.dtype


def _complex(dtype: np.dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _info(a: Shape, batch: int) -> Shape:
    return Shape(np.int32, a.dims[:batch])


def _checked(w: FunctionWriter, values: Leaves, info: str, batch: int) -> Leaves:
    return [L.nan_unless_ok(w, value, info, batch) for value in values]


def _hessenberg(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                config: dict) -> Leaves:
    a = L.shape_of(w, operands[0])
    batch, n = a.rank - 2, a.dims[-1]
    packed, taus, info = L.call_lapack(
        w, "gehrd", a.dtype, operands, [a, a.with_dims(a.dims[:batch] + (n - 1,)),
                                        _info(a, batch)], batch,
        {"low": "1 : i32", "high": f"{n} : i32"})
    return _checked(w, [packed, taus], info, batch)


def _tridiagonal(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                 config: dict) -> Leaves:
    a = L.shape_of(w, operands[0])
    batch, n = a.rank - 2, a.dims[-1]
    lead, real = a.dims[:batch], _real(a.dtype)
    routine = "hetrd" if a.dtype.kind == "c" else "sytrd"
    *values, info = L.call_lapack(
        w, routine, a.dtype, operands,
        [a, Shape(real, lead + (n,)), Shape(real, lead + (n - 1,)),
         Shape(a.dtype, lead + (n - 1,)), _info(a, batch)], batch,
        {"uplo": L.char("L" if config["lower"] else "U")})
    return _checked(w, values, info, batch)


def _schur(w: FunctionWriter, inst: HloInstruction, operands: list[str],
           config: dict) -> Leaves:
    a = L.shape_of(w, operands[0])
    batch = a.rank - 2
    values = Shape(a.dtype, a.dims[:-1])
    eigenvalues = [values] if a.dtype.kind == "c" else [values, values]
    vectors = bool(config["compute_schur_vectors"])
    form, schur_vectors, *_, info = L.call_lapack(
        w, "gees", a.dtype, operands,
        [a, a, *eigenvalues, _info(a, batch), _info(a, batch)], batch,
        {"mode": L.char("V" if vectors else "N"), "sort": L.char("N")})
    return _checked(w, [form, schur_vectors] if vectors else [form], info, batch)


def _eig(w: FunctionWriter, inst: HloInstruction, operands: list[str],
         config: dict) -> Leaves:
    a = L.shape_of(w, operands[0])
    batch = a.rank - 2
    complex_matrix = a.with_dtype(_complex(a.dtype))
    values = Shape(a.dtype, a.dims[:-1])
    eigenvalues = [values] if a.dtype.kind == "c" else [values, values]
    left, right = config["compute_left_eigenvectors"], config["compute_right_eigenvectors"]
    *w_parts, vl, vr, info = L.call_lapack(
        w, "geev", a.dtype, operands,
        [*eigenvalues, complex_matrix, complex_matrix, _info(a, batch)], batch,
        {"compute_left": L.char("V" if left else "N"),
         "compute_right": L.char("V" if right else "N")}, aliases=())
    if len(w_parts) == 2:  # real matrix: wr + i wi
        w_parts = w.generic("stablehlo.complex", w_parts,
                            [values.with_dtype(_complex(a.dtype))])
    outs = w_parts + ([vl] if left else []) + ([vr] if right else [])
    return _checked(w, outs, info, batch)


def _geqp3(w: FunctionWriter, inst: HloInstruction, operands: list[str],
           config: dict) -> Leaves:
    a = L.shape_of(w, operands[0])
    batch, (m, n) = a.rank - 2, a.dims[-2:]
    lead = a.dims[:batch]
    free = Shape(np.int32, lead + (n,))  # jpvt = 0: every column may move
    zeros = w.constant(T.dense_literal(np.zeros(free.dims, np.int32)), free)
    return L.call_lapack(w, "geqp3", a.dtype, [operands[0], *zeros],
                         [a, free, Shape(a.dtype, lead + (min(m, n),))], batch, {},
                         aliases=[(0, 0), (1, 1)])


def _ormqr(w: FunctionWriter, inst: HloInstruction, operands: list[str],
           config: dict) -> Leaves:
    a, c = L.shape_of(w, operands[0]), L.shape_of(w, operands[2])
    routine = "unmqr" if a.dtype.kind == "c" else "ormqr"
    return L.call_lapack(w, routine, a.dtype, operands, [c], c.rank - 2,
                         {"left": T.boolean(config["left"]),
                          "transpose": T.boolean(config["transpose"])}, aliases=[(0, 2)])


REDUCTION_KERNELS: dict[str, L.KernelRule] = {
    "hessenberg": _hessenberg, "tridiagonal": _tridiagonal, "schur": _schur, "eig": _eig,
    "geqp3": _geqp3, "ormqr": _ormqr,
}

TARGET_PREFIX = "jaxlite_lapack_"


def lapack_rule(target: str) -> L.KernelRule | None:
    """The rule that prints custom call `target` as XLA's LAPACK call, if there is one. The
    rule returns None, having printed nothing, for parameters LAPACK has no call for."""
    if not target.startswith(TARGET_PREFIX):
        return None
    kernel = target[len(TARGET_PREFIX):]
    rule = L.KERNELS.get(kernel) or REDUCTION_KERNELS.get(kernel)
    if rule is None:
        return None

    def print_call(w: FunctionWriter, inst: HloInstruction, operands: list) -> Leaves | None:
        return rule(w, inst, operands, json.loads(inst.attr("backend_config") or "{}"))
    return print_call
