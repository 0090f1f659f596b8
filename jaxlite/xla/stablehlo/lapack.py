"""jaxlite's LAPACK-style custom calls (`jaxlite_lapack_<kernel>`, see
`jaxlite.lax.linalg_kernels`) printed as calls of the LAPACK targets that XLA's CPU
runtime registers (`lapack_spotrf_ffi`, ...), as JAX lowers its linear algebra.

XLA's targets follow LAPACK: column-major matrices (`operand_layouts`), an `info` result,
attributes as characters (`uplo = 76 : ui8` is 'L'). Our kernels follow numpy: what LAPACK
leaves in the other triangle is zeroed, and a failed factorization is NaN, so each rule
adds those few ops after the call. `lapack_reductions.py` has the rules of
the reduction kernels (eig, schur, hessenberg, tridiagonal, geqp3, ormqr) and
`lapack_rule`, which finds a kernel's rule in both tables.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves

# LAPACK's type letter of each element type.
_TYPE_LETTERS = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def char(letter: str) -> str:
    return f"{ord(letter)} : ui8"


def _layout(shape: Shape, batch: int) -> str:
    """Column-major for matrices (the last two dimensions), row-major otherwise."""
    rank = shape.rank
    if rank == 0:
        return "dense<> : tensor<0xindex>"
    order = list(range(rank - 1, -1, -1))
    if rank - batch >= 2:
        order = [rank - 2, rank - 1] + list(range(rank - 3, -1, -1))
    return f"dense<{T.dims_list(order)}> : tensor<{rank}xindex>"


def call_lapack(w: FunctionWriter, routine: str, dtype: np.dtype, operands: Sequence[str],
                results: Sequence[Shape], batch: int, config: dict[str, str],
                aliases: Sequence[tuple[int, int]] = ((0, 0),)) -> Leaves:
    """`stablehlo.custom_call @lapack_<letter><routine>_ffi`; each (result, operand) of
    `aliases` says that the result reuses the operand's buffer, as JAX declares."""
    if dtype.name not in _TYPE_LETTERS:
        raise NotImplementedError(f"StableHLO printer: LAPACK has no {dtype.name} {routine}")
    alias_texts = [f"#stablehlo.output_operand_alias<output_tuple_indices = "
                   f"{f'[{out}]' if len(results) > 1 else '[]'}, operand_index = {operand}, "
                   "operand_tuple_indices = []>" for out, operand in aliases]
    target = f"lapack_{_TYPE_LETTERS[dtype.name]}{routine}_ffi"
    return custom_call(w, target, operands, results, batch, config, alias_texts)


def custom_call(w: FunctionWriter, target: str, operands: Sequence[str],
                results: Sequence[Shape], batch: int, config: dict[str, str],
                alias_texts: Sequence[str]) -> Leaves:
    """`stablehlo.custom_call @target` of a LAPACK routine: attributes as `config`'s
    texts, aliases as `alias_texts` (`#stablehlo.output_operand_alias<...>`)."""
    operand_shapes = [shape_of(w, o) for o in operands]
    props = {
        "call_target_name": T.string(target),
        "api_version": "1 : i32", "backend_config": '""', "has_side_effect": "false",
        "operand_layouts": "[" + ", ".join(_layout(s, batch) for s in operand_shapes) + "]",
        "result_layouts": "[" + ", ".join(_layout(s, batch) for s in results) + "]",
        "output_operand_aliases": "[" + ", ".join(alias_texts) + "]",
    }
    attributes = {"mhlo.backend_config": "{" + ", ".join(
        f"{k} = {v}" for k, v in sorted(config.items())) + "}",
        "mhlo.frontend_attributes": f'{{num_batch_dims = "{batch}"}}'}
    return w.generic("stablehlo.custom_call", list(operands), list(results), props,
                     attributes=attributes)


def shape_of(w: FunctionWriter, value: str) -> Shape:
    return w.shapes[value]


# ----------------------------------------------------------------------------- helpers

def scalar(w: FunctionWriter, value: object, dtype: np.dtype) -> str:
    return w.constant(T.dense_literal(np.asarray(value, dtype)), Shape(dtype, ()))[0]


def broadcast(w: FunctionWriter, value: str, shape: Shape, dims: Sequence[int]) -> str:
    return w.generic("stablehlo.broadcast_in_dim", [value], [shape],
                     {"broadcast_dimensions": T.i64_array(dims)})[0]


def compare(w: FunctionWriter, lhs: str, rhs: str, direction: str, kind: str) -> str:
    shape = shape_of(w, lhs).with_dtype(np.bool_)
    props = {"comparison_direction": T.enum_attr("comparison_direction", direction),
             "compare_type": T.enum_attr("comparison_type", kind)}
    return w.generic("stablehlo.compare", [lhs, rhs], [shape], props)[0]


def select(w: FunctionWriter, pred: str, on_true: str, on_false: str) -> str:
    return w.generic("stablehlo.select", [pred, on_true, on_false],
                     [shape_of(w, on_true)])[0]


def nan_unless_ok(w: FunctionWriter, value: str, info: str, batch: int) -> str:
    """`value` where LAPACK's `info` is 0, NaN in the matrices where it is not."""
    shape = shape_of(w, value)
    ok = compare(w, info, _scalar_like(w, info, 0), "EQ", "SIGNED")
    ok = broadcast(w, ok, shape.with_dtype(np.bool_), range(batch))
    nan = complex(np.nan, np.nan) if shape.dtype.kind == "c" else np.nan
    filler = broadcast(w, scalar(w, nan, shape.dtype), shape, ())
    return select(w, ok, value, filler)


def binary(w: FunctionWriter, op: str, a: str, b: str) -> str:
    """`stablehlo.<op> a, b` of two values of one shape."""
    return w.same_type(f"stablehlo.{op}", [a, b], shape_of(w, a))[0]


def splat(w: FunctionWriter, value: object, shape: Shape) -> str:
    """A constant of `shape` with every element `value`."""
    return broadcast(w, scalar(w, value, shape.dtype), shape, ())


def _scalar_like(w: FunctionWriter, value: str, number: object) -> str:
    shape = shape_of(w, value)
    return broadcast(w, scalar(w, number, shape.dtype), shape, ())


def _triangle(w: FunctionWriter, value: str, lower: bool) -> str:
    """`value` with the other triangle of each matrix zeroed (the diagonal kept)."""
    shape = shape_of(w, value)
    index = Shape(np.int32, shape.dims)
    rows, cols = (w.generic("stablehlo.iota", [], [index],
                            {"iota_dimension": T.i64(shape.rank - k)})[0] for k in (2, 1))
    keep = compare(w, rows, cols, "GE" if lower else "LE", "SIGNED")
    return select(w, keep, value, _scalar_like(w, value, 0))


def _slice(w: FunctionWriter, value: str, limits: Sequence[int]) -> str:
    shape = shape_of(w, value)
    if tuple(limits) == shape.dims:
        return value
    return w.generic("stablehlo.slice", [value], [shape.with_dims(tuple(limits))],
                     {"start_indices": T.i64_array([0] * shape.rank),
                      "limit_indices": T.i64_array(limits),
                      "strides": T.i64_array([1] * shape.rank)})[0]


def _pad_columns(w: FunctionWriter, value: str, columns: int) -> str:
    shape = shape_of(w, value)
    extra = columns - shape.dims[-1]
    if extra <= 0:
        return _slice(w, value, shape.dims[:-1] + (columns,))
    zero = scalar(w, 0, shape.dtype)
    high = [0] * (shape.rank - 1) + [extra]
    return w.generic("stablehlo.pad", [value, zero],
                     [shape.with_dims(shape.dims[:-1] + (columns,))],
                     {"edge_padding_low": T.i64_array([0] * shape.rank),
                      "edge_padding_high": T.i64_array(high),
                      "interior_padding": T.i64_array([0] * shape.rank)})[0]


# ----------------------------------------------------------------------------- kernels

def _cholesky(w: FunctionWriter, inst: HloInstruction, operands: list[str],
              config: dict) -> Leaves:
    a = shape_of(w, operands[0])
    batch = a.rank - 2
    factor, info = call_lapack(w, "potrf", a.dtype, operands,
                               [a, Shape(np.int32, a.dims[:batch])], batch,
                               {"uplo": char("L")})
    return [nan_unless_ok(w, _triangle(w, factor, lower=True), info, batch)]


def _triangular_solve(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                      config: dict) -> Leaves:
    a = shape_of(w, operands[0])
    if config["conjugate_a"] and not config["transpose_a"] and a.dtype.kind == "c":
        raise NotImplementedError("StableHLO printer: triangular_solve with conjugate_a "
                                  "and not transpose_a has no LAPACK call")
    trans = ("C" if config["conjugate_a"] else "T") if config["transpose_a"] else "N"
    attrs = {"side": char("L" if config["left_side"] else "R"),
             "uplo": char("L" if config["lower"] else "U"), "trans_x": char(trans),
             "diag": char("U" if config["unit_diagonal"] else "N")}
    b = shape_of(w, operands[1])
    return call_lapack(w, "trsm", a.dtype, operands, [b], a.rank - 2, attrs, aliases=[(0, 1)])


def _eigh(w: FunctionWriter, inst: HloInstruction, operands: list[str],
          config: dict) -> Leaves:
    a = shape_of(w, operands[0])
    batch = a.rank - 2
    real = np.empty((), a.dtype).real.dtype
    routine = "heevd" if a.dtype.kind == "c" else "syevd"
    vectors, values, info = call_lapack(
        w, routine, a.dtype, operands,
        [a, Shape(real, a.dims[:-1]), Shape(np.int32, a.dims[:batch])], batch,
        {"mode": char("V"), "uplo": char("L" if config["lower"] else "U")})
    return [nan_unless_ok(w, vectors, info, batch), nan_unless_ok(w, values, info, batch)]


def _svd(w: FunctionWriter, inst: HloInstruction, operands: list[str],
         config: dict) -> Leaves:
    a = shape_of(w, operands[0])
    batch, (m, n) = a.rank - 2, a.dims[-2:]
    k = min(m, n)
    full = config["full_matrices"] and config["compute_uv"]
    mode = ("A" if full else "S") if config["compute_uv"] else "N"
    lead = a.dims[:batch]
    real = np.empty((), a.dtype).real.dtype
    u_cols, vt_rows = (m, n) if full else (k, k)
    _, s, u, vt, info = call_lapack(
        w, "gesdd", a.dtype, operands,
        [a, Shape(real, lead + (k,)), Shape(a.dtype, lead + (m, u_cols)),
         Shape(a.dtype, lead + (vt_rows, n)), Shape(np.int32, lead)], batch,
        {"mode": char(mode)})
    outs = [s, u, vt] if config["compute_uv"] else [s]
    return [nan_unless_ok(w, out, info, batch) for out in outs]


def _qr(w: FunctionWriter, inst: HloInstruction, operands: list[str],
        config: dict) -> Leaves:
    a = shape_of(w, operands[0])
    batch, (m, n) = a.rank - 2, a.dims[-2:]
    k = min(m, n)
    packed, taus = _geqrf(w, a, operands, batch)
    columns = m if config["full_matrices"] else k
    q = _householder(w, _pad_columns(w, packed, columns), taus, batch)
    r = _triangle(w, _slice(w, packed, a.dims[:batch] + (columns, n)), lower=False)
    return [q, r]


def _geqrf(w: FunctionWriter, a: Shape, operands: list[str], batch: int) -> Leaves:
    k = min(a.dims[-2:])
    return call_lapack(w, "geqrf", a.dtype, operands[:1],
                       [a, Shape(a.dtype, a.dims[:batch] + (k,))], batch, {})


def _householder(w: FunctionWriter, packed: str, taus: str, batch: int) -> str:
    shape = shape_of(w, packed)
    routine = "ungqr" if shape.dtype.kind == "c" else "orgqr"
    return call_lapack(w, routine, shape.dtype, [packed, taus], [shape], batch, {})[0]


def _geqrf_rule(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                config: dict) -> Leaves:
    a = shape_of(w, operands[0])
    return _geqrf(w, a, operands, a.rank - 2)


def _householder_rule(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                      config: dict) -> Leaves:
    a = shape_of(w, operands[0])
    return [_householder(w, operands[0], operands[1], a.rank - 2)]


def _lu(w: FunctionWriter, inst: HloInstruction, operands: list[str],
        config: dict) -> Leaves:
    a = shape_of(w, operands[0])
    batch, (m, n) = a.rank - 2, a.dims[-2:]
    lead = a.dims[:batch]
    pivots = Shape(np.int32, lead + (min(m, n),))
    packed, one_based, _ = call_lapack(w, "getrf", a.dtype, operands,
                                       [a, pivots, Shape(np.int32, lead)], batch, {})
    # LAPACK counts rows from 1; a singular matrix (info > 0) is no failure here.
    pivots0 = w.same_type("stablehlo.subtract", [one_based, _scalar_like(w, one_based, 1)],
                          pivots)[0]
    return [packed, pivots0, _permutation(w, pivots0, m)]


def _pivots_to_permutation_rule(w: FunctionWriter, inst: HloInstruction,
                                operands: list[str], config: dict) -> Leaves:
    return [_permutation(w, operands[0], config["permutation_size"])]


def _permutation(w: FunctionWriter, pivots: str, size: int) -> str:
    """The permutation of 0..size-1 that swapping row j with row pivots[j], for each j in
    order, makes: a `stablehlo.while` over j whose state is (j, permutation)."""
    shape = shape_of(w, pivots)
    perm_shape = shape.with_dims(shape.dims[:-1] + (size,))
    last = shape.rank - 1
    start = w.generic("stablehlo.iota", [], [perm_shape], {"iota_dimension": T.i64(last)})[0]
    index = Shape(np.int32, ())

    def condition(state: Leaves) -> Leaves:
        count = scalar(w, shape.dims[-1], np.int32)
        return [compare(w, state[0], count, "LT", "SIGNED")]

    def body(state: Leaves) -> Leaves:
        j, perm = state
        zero = scalar(w, 0, np.int32)
        column = w.generic("stablehlo.dynamic_slice", [pivots] + [zero] * last + [j],
                           [shape.with_dims(shape.dims[:-1] + (1,))],
                           {"slice_sizes": T.i64_array(shape.dims[:-1] + (1,))})[0]
        positions = w.generic("stablehlo.iota", [], [perm_shape],
                              {"iota_dimension": T.i64(last)})[0]
        at_j = compare(w, positions, broadcast(w, j, perm_shape, ()), "EQ", "SIGNED")
        at_pivot = compare(w, positions, broadcast(w, column, perm_shape, range(last + 1)),
                            "EQ", "SIGNED")
        row_j, row_pivot = (broadcast(w, _pick(w, perm, mask), perm_shape, range(last))
                            for mask in (at_j, at_pivot))
        swapped = select(w, at_j, row_pivot, select(w, at_pivot, row_j, perm))
        next_j = w.same_type("stablehlo.add", [j, scalar(w, 1, np.int32)], index)[0]
        return [next_j, swapped]

    first = scalar(w, 0, np.int32)
    return w.generic("stablehlo.while", [first, start], [index, perm_shape], None,
                     [w.block([index, perm_shape], condition),
                      w.block([index, perm_shape], body)])[1]


def _pick(w: FunctionWriter, values: str, mask: str) -> str:
    """The one element of each row of `values` where `mask` is true (a masked sum)."""
    shape = shape_of(w, values)
    masked = select(w, mask, values, _scalar_like(w, values, 0))
    element = Shape(shape.dtype, ())

    def add(args: Leaves) -> Leaves:
        return w.same_type("stablehlo.add", args, element)
    return w.generic("stablehlo.reduce", [masked, scalar(w, 0, shape.dtype)],
                     [shape.with_dims(shape.dims[:-1])],
                     {"dimensions": T.i64_array([shape.rank - 1])},
                     [w.block([element, element], add)])[0]


def _tridiagonal_solve(w: FunctionWriter, inst: HloInstruction, operands: list[str],
                       config: dict) -> Leaves | None:
    if config.get("perturb_singular"):
        return None  # LAPACK's gtsv has no perturbed pivots: only jaxlite's kernel
    b = shape_of(w, operands[3])
    batch = b.rank - 2
    shapes = [shape_of(w, o) for o in operands] + [Shape(np.int32, b.dims[:batch])]
    *_, x, info = call_lapack(w, "gtsv", b.dtype, operands, shapes, batch, {},
                              aliases=[(i, i) for i in range(4)])
    return [nan_unless_ok(w, x, info, batch)]


KernelRule = Callable[[FunctionWriter, HloInstruction, list, dict], "Leaves | None"]

KERNELS: dict[str, KernelRule] = {
    "cholesky": _cholesky, "triangular_solve": _triangular_solve, "eigh": _eigh,
    "svd": _svd, "qr": _qr, "geqrf": _geqrf_rule, "householder_product": _householder_rule,
    "lu": _lu, "lu_pivots_to_permutation": _pivots_to_permutation_rule,
    "tridiagonal_solve": _tridiagonal_solve,
}
