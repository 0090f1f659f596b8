"""Reading XLA's LAPACK custom calls (`lapack_spotrf_ffi`, ...) as jaxlite's kernels
(`jaxlite_lapack_<kernel>`): the reverse of `lapack.py`, which documents the
correspondence.

JAX lowers its linear algebra to these calls followed by its own fix-ups (masking the
other triangle, NaN where `info` is nonzero). Our kernels already give numpy's answers
(zeros in the other triangle, NaN on failure), so each call becomes the kernel and the
results LAPACK has beyond it: `info` is zero (a failure is already NaN), getrf's pivots
count from 1, gesdd's overwritten input is the input.

Those instructions sit in a computation of their own, named after the target, that an HLO
`call` calls; the call keeps the LAPACK call's target and attributes (`lapack_call`, JSON)
so that the printer writes the very same LAPACK call back (`lapack.recorded_call`) instead
of printing the kernel with its own fix-ups after it: read and printed again, a module keeps
one set of fix-ups (printing is a fixed point after the first round).
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo.builder import FunctionBuilder, tuple_shape

_TARGET = re.compile(r"lapack_([sdcz])([a-z0-9]+)_ffi")
Values = list[HloInstruction]


def _kernel(fb: FunctionBuilder, kernel: str, operands: Values, shapes: Sequence[Shape],
            **params: Any) -> Values:
    """The values of custom call `jaxlite_lapack_<kernel>` with JSON `params`."""
    shape = shapes[0] if len(shapes) == 1 else tuple_shape(shapes)
    attrs = {"target": f"jaxlite_lapack_{kernel}", "backend_config": json.dumps(params),
             "custom_call_has_side_effect": False}
    return fb.split(fb.add(Opcode.CUSTOM_CALL, shape, operands, attrs), len(shapes))


def _zeros(fb: FunctionBuilder, shape: Shape) -> HloInstruction:
    literal = np.zeros(shape.dims, shape.dtype)
    return fb.add(Opcode.CONSTANT, shape, (), {"literal": literal})


def _char(config: dict, key: str) -> str:
    return chr(int(config[key]))


def _adjoint(fb: FunctionBuilder, x: HloInstruction) -> HloInstruction:
    """The conjugate transpose of each matrix of `x` (the last two dimensions)."""
    rank = x.shape.rank
    order = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    moved = fb.add(Opcode.TRANSPOSE, x.shape.with_dims(tuple(x.shape.dims[d] for d in order)),
                   [x], {"dimensions": order})
    if x.shape.dtype.kind != "c":
        return moved
    part = moved.shape.with_dtype(np.empty((), x.shape.dtype).real.dtype)
    imag = fb.add(Opcode.NEGATE, part, [fb.add(Opcode.IMAG, part, [moved])])
    return fb.add(Opcode.COMPLEX, moved.shape, [fb.add(Opcode.REAL, part, [moved]), imag])


def _potrf(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    """Lower: the kernel. Upper (a = U^H U, read from the upper triangle): the adjoint of
    the kernel's factor of the adjoint, with the input's strict lower triangle kept, as
    LAPACK leaves it."""
    if _char(config, "uplo") == "L":
        return _kernel(fb, "cholesky", operands, types[:1]) + [_zeros(fb, types[1])]
    (a,) = operands
    (lower,) = _kernel(fb, "cholesky", [_adjoint(fb, a)], types[:1])
    upper = _adjoint(fb, lower)
    index = Shape(np.int32, a.shape.dims)
    rows, cols = (fb.add(Opcode.IOTA, index, (), {"iota_dimension": a.shape.rank - k})
                  for k in (2, 1))
    below = fb.add(Opcode.COMPARE, index.with_dtype(np.bool_), [rows, cols],
                   {"direction": "GT"})
    return [fb.add(Opcode.SELECT, a.shape, [below, a, upper]), _zeros(fb, types[1])]


def _trsm(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
          config: dict) -> Values:
    trans = _char(config, "trans_x")
    return _kernel(fb, "triangular_solve", operands, types[:1],
                   left_side=_char(config, "side") == "L", lower=_char(config, "uplo") == "L",
                   transpose_a=trans != "N", conjugate_a=trans == "C",
                   unit_diagonal=_char(config, "diag") == "U")


def _getrf(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    a, pivots, info = types
    permutation = Shape(np.int32, a.dims[:-1])
    packed, zero_based, _ = _kernel(fb, "lu", operands, [a, pivots, permutation])
    one = fb.add(Opcode.CONSTANT, pivots, (), {"literal": np.ones(pivots.dims, np.int32)})
    one_based = fb.add(Opcode.ADD, pivots, [zero_based, one])
    return [packed, one_based, _zeros(fb, info)]


def _syevd(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    if _char(config, "mode") != "V":
        raise NotImplementedError("from_stablehlo: syevd without eigenvectors")
    vectors, values = _kernel(fb, "eigh", operands, types[:2],
                              lower=_char(config, "uplo") == "L", sort_eigenvalues=True)
    return [vectors, values, _zeros(fb, types[2])]


def _gesdd(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    mode = _char(config, "mode")
    _, s, u, vt, info = types
    if mode == "N":
        (values,) = _kernel(fb, "svd", operands, [s], full_matrices=False, compute_uv=False)
        return [operands[0], values, _zeros(fb, u), _zeros(fb, vt), _zeros(fb, info)]
    values, left, right = _kernel(fb, "svd", operands, [s, u, vt],
                                  full_matrices=mode == "A", compute_uv=True)
    return [operands[0], values, left, right, _zeros(fb, info)]


def _geqrf(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    return _kernel(fb, "geqrf", operands, types)


def _orgqr(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    return _kernel(fb, "householder_product", operands, types)


def _flag(config: dict, key: str) -> bool:
    """A boolean attribute (`left = true`) or a LAPACK character ('V' / 'N')."""
    value = config[key]
    return value if isinstance(value, bool) else chr(int(value)) in ("V", "L")


def _gehrd(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    if int(config.get("low", 1)) != 1 or int(config.get("high", types[0].dims[-1])) != \
            types[0].dims[-1]:
        raise NotImplementedError("from_stablehlo: gehrd of a part of the matrix")
    return _kernel(fb, "hessenberg", operands, types[:2]) + [_zeros(fb, types[2])]


def _sytrd(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    return _kernel(fb, "tridiagonal", operands, types[:4],
                   lower=_char(config, "uplo") == "L") + [_zeros(fb, types[4])]


def _eigenvalues(fb: FunctionBuilder, w: HloInstruction, types: Sequence[Shape]) -> Values:
    """geev's and gees's eigenvalues from complex `w`: w itself, or (wr, wi) when `types`
    has two (real) shapes."""
    if len(types) == 1:
        return [w]
    return [fb.add(Opcode.REAL, types[0], [w]), fb.add(Opcode.IMAG, types[1], [w])]


def _gees(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
          config: dict) -> Values:
    """Schur form, vectors, then eigenvalues (from our eig kernel: LAPACK computes both
    by the same QR iteration, so in the same order), sdim and info (zero)."""
    if _char(config, "sort") != "N":
        raise NotImplementedError("from_stablehlo: gees with sorted eigenvalues")
    vectors = _flag(config, "mode")
    count = len(types) - 4  # one complex or two real eigenvalue arrays
    outs = _kernel(fb, "schur", operands, types[:2] if vectors else types[:1],
                   compute_schur_vectors=vectors)
    if not vectors:
        outs.append(_zeros(fb, types[1]))
    complex_values = types[2].with_dtype(np.result_type(types[2].dtype, np.complex64))
    (w,) = _kernel(fb, "eig", operands, [complex_values], compute_left_eigenvectors=False,
                   compute_right_eigenvectors=False)
    return outs + _eigenvalues(fb, w, types[2:2 + count]) + [
        _zeros(fb, types[-2]), _zeros(fb, types[-1])]


def _geev(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
          config: dict) -> Values:
    *values, vl, vr, info = types
    left, right = _flag(config, "compute_left"), _flag(config, "compute_right")
    complex_values = values[0].with_dtype(vl.dtype)
    shapes = [complex_values] + ([vl] if left else []) + ([vr] if right else [])
    w, *vectors = _kernel(fb, "eig", operands, shapes, compute_left_eigenvectors=left,
                          compute_right_eigenvectors=right)
    left_out = vectors.pop(0) if left else _zeros(fb, vl)
    right_out = vectors.pop(0) if right else _zeros(fb, vr)
    return _eigenvalues(fb, w, values) + [left_out, right_out, _zeros(fb, info)]


def _geqp3(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    # JAX passes jpvt = 0 (every column free), which is what our kernel does.
    return _kernel(fb, "geqp3", operands[:1], types)


def _ormqr(fb: FunctionBuilder, operands: Values, types: Sequence[Shape],
           config: dict) -> Values:
    return _kernel(fb, "ormqr", operands, types, left=_flag(config, "left"),
                   transpose=_flag(config, "transpose"))


ROUTINES: dict[str, Callable[..., Values]] = {
    "potrf": _potrf, "trsm": _trsm, "getrf": _getrf, "syevd": _syevd, "heevd": _syevd,
    "gesdd": _gesdd, "geqrf": _geqrf, "orgqr": _orgqr, "ungqr": _orgqr,
    "gehrd": _gehrd, "sytrd": _sytrd, "hetrd": _sytrd, "gees": _gees, "geev": _geev,
    "geqp3": _geqp3, "ormqr": _ormqr, "unmqr": _ormqr,
}


def lapack_call(fb: FunctionBuilder, target: str, operands: Values, types: Sequence[Shape],
                attrs: dict) -> Values | None:
    """The values of XLA's LAPACK call `target` (with the op's attributes `attrs`) as a
    `call` of jaxlite kernels; None when `target` is not one (NotImplementedError for a
    LAPACK routine without a kernel here)."""
    match = _TARGET.fullmatch(target)
    if match is None:
        return None
    rule = ROUTINES.get(match.group(2))
    if rule is None:
        raise NotImplementedError(f"from_stablehlo: LAPACK call @{target} has no jaxlite "
                                  "kernel")
    config = attrs.get("mhlo.backend_config") or {}
    sub = fb.subcomputation(target)
    params = [sub.b.parameter(o.shape, "Arg") for o in operands]
    body = sub.finish(rule(sub, params, types, config), tuple_root=len(types) != 1)
    call = fb.add(Opcode.CALL, body.root.shape, operands,
                  {"lapack_call": json.dumps(_record(target, config, attrs, operands))}, [body])
    return fb.split(call, len(types))


def _record(target: str, config: dict, attrs: dict, operands: Values) -> dict:
    """What the printer needs to write the call again: target, attribute texts, batch
    dimensions and aliases."""
    frontend = attrs.get("mhlo.frontend_attributes") or {}
    batch = frontend.get("num_batch_dims", operands[0].shape.rank - 2 if operands else 0)
    aliases = attrs.get("output_operand_aliases") or ()
    return {"target": target, "config": {k: _attribute_text(v) for k, v in config.items()},
            "batch": int(batch), "aliases": [str(a) for a in aliases]}


def _attribute_text(value: Any) -> str:
    """MLIR's text of a parsed attribute value (`76 : ui8`, `true`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    element_type = getattr(value, "element_type", None)
    if element_type is not None:
        return f"{value!r} : {element_type}" if isinstance(value, float) \
            else f"{int(value)} : {element_type}"
    return str(value)
