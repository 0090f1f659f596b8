"""Small-matrix lowerings of `lu`, `cholesky` and `triangular_solve`, written with lax.

For small matrices a custom-call into the numpy/LAPACK kernels costs a Python round trip
per call and a Python loop over the batch, far more than the arithmetic. So where every
matrix dimension is at most `SMALL_MATRIX_LIMIT` the three primitives lower to these
expansions instead (see `linalg_factorizations`): one `fori_loop` over the columns whose
every step updates all the matrices of the batch at once (a rank-1 update, masked to the
trailing block), which the compiler turns into native loops. The batch is moved to the
last axis first, (rows, columns, batch), so that each step's loops run over the batch in
vector lanes whatever the matrix size; the masks are comparisons of short index vectors,
broadcast. The eager `reference` stays the LAPACK kernel, as does the lowering of
larger matrices.

Conventions follow LAPACK's, as JAX's CPU kernels do:

- lu (getf2): the pivot of column k is the first row i >= k of largest |a_ik| (|re| + |im|
  for complex numbers); the multipliers are the column times the pivot's reciprocal (a
  division for pivots below the smallest normal number); a zero pivot leaves its column as
  it is and the factorization goes on. A NaN entry is never chosen as pivot (a column of
  NaNs keeps its row), which may differ from LAPACK's choice for matrices with NaNs.
- cholesky (potf2): reads the lower triangle and the real part of the diagonal; a matrix
  that is not positive definite (a pivot that is not > 0) gives NaN everywhere.
- triangular_solve (trsm): substitution with the triangle `lower` selects (not reading
  the diagonal if `unit_diagonal`); a zero on the diagonal gives infinities or NaNs.

The factors agree with LAPACK's to rounding (the order of the operations differs), the
pivots exactly unless rounding decides a near tie. Rows and columns are read with
dynamic slices, or with selections and an OR-reduction of bit patterns (exact, signed
zeros, infinities and NaNs included), never with products by masks, which would turn an infinite
entry into NaNs elsewhere.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.lax.arithmetic import complex as make_complex
from jaxlite.lax.arithmetic import add, conj, div, imag, mul, real, sub
from jaxlite.lax.broadcast import broadcast_in_dim, reshape, transpose
from jaxlite.lax.comparisons import eq, ge, gt, lt, ne
from jaxlite.lax.convert import bitcast_convert_type, convert_element_type
from jaxlite.lax.dynamic_slicing import dynamic_index_in_dim
from jaxlite.lax.linalg_util import adjoint, mT
from jaxlite.lax.loops import fori_loop
from jaxlite.lax.math_functions import abs as lax_abs
from jaxlite.lax.math_functions import sqrt
from jaxlite.lax.reductions import reduce_max, reduce_min, reduce_or
from jaxlite.lax.scan_functions import map as lax_map
from jaxlite.lax.selection import select
from jaxlite.lax.shape_ops import broadcasted_iota
from jaxlite.lax.slicing import concatenate, pad, slice_in_dim

__all__ = ["SMALL_MATRIX_LIMIT", "CACHE_BYTES", "is_small", "lu_small", "cholesky_small",
           "triangular_solve_small", "pivots_to_permutation_small"]

SMALL_MATRIX_LIMIT = 32
"""Matrices with at most this many rows and columns take the expansions."""


def is_small(*shapes: Sequence[int]) -> bool:
    """Whether every matrix dimension of `shapes` is within `SMALL_MATRIX_LIMIT`."""
    return all(max(s[-2:]) <= SMALL_MATRIX_LIMIT for s in shapes)


CACHE_BYTES = 1 << 16
"""A batch whose matrices take more than 16 times this many bytes is factored in chunks
of about this size, one after the other, so that each step's passes over a chunk stay in
the cache (every step touches every matrix of the batch); smaller batches go whole, as
the chunks' loop costs more than it saves there (measured)."""


def _in_chunks(fn: Any, *operands: Any) -> Any:
    """fn(*operands) (all (..., m, n) with one batch shape; fn returns a list of arrays
    with that batch shape leading), done chunk by chunk over the batch when it is large."""
    shapes = [get_aval(x).shape for x in operands]
    batch = shapes[0][:-2]
    count = math.prod(batch)
    per_matrix = sum(math.prod(s[-2:]) * np.dtype(get_aval(x).dtype).itemsize
                     for s, x in zip(shapes, operands))
    if count * per_matrix <= 16 * CACHE_BYTES:
        return fn(*operands)
    chunk = max(1, CACHE_BYTES // per_matrix)
    chunks = -(-count // chunk)
    pieces = []
    for x, s in zip(operands, shapes):
        flat = reshape(x, (count,) + tuple(s[-2:]))
        if chunks * chunk != count:
            flat = pad(flat, np.zeros((), get_aval(x).dtype),
                       [(0, chunks * chunk - count, 0), (0, 0, 0), (0, 0, 0)])
        pieces.append(reshape(flat, (chunks, chunk) + tuple(s[-2:])))
    outs = lax_map(lambda xs: list(fn(*xs)), pieces)
    results = []
    for out in outs:
        rest = tuple(get_aval(out).shape[2:])
        flat = slice_in_dim(reshape(out, (chunks * chunk,) + rest), 0, count, 1, 0)
        results.append(reshape(flat, tuple(batch) + rest))
    return results


# ------------------------------------------------------------------ layout helpers

def _batch_last(x: Any) -> Any:
    """(..., m, n) -> (m, n, batch): the batch flattened onto the last axis."""
    shape = get_aval(x).shape
    flat = reshape(x, (math.prod(shape[:-2]),) + tuple(shape[-2:]))
    return transpose(flat, (1, 2, 0))


def _batch_first(x: Any, batch: Sequence[int]) -> Any:
    """The inverse of `_batch_last` for x (..., batch) with leading axes of any rank."""
    nd = len(get_aval(x).shape)
    moved = transpose(x, (nd - 1,) + tuple(range(nd - 1)))
    return reshape(moved, tuple(batch) + tuple(get_aval(moved).shape[1:]))


def _to(x: Any, shape: Sequence[int], axes: Sequence[int]) -> Any:
    """`x` broadcast to `shape`, its axes becoming `axes`."""
    return broadcast_in_dim(x, tuple(shape), tuple(axes))


def _indices(size: int) -> Any:
    return broadcasted_iota(np.int32, (size,), 0)


def _fill(like: Any, value: Any) -> Any:
    aval = get_aval(like)
    return broadcast_in_dim(np.array(value, aval.dtype), aval.shape, ())


def _is_complex(x: Any) -> bool:
    return dtypes.is_complex(get_aval(x).dtype)


# ----------------------------------------------------------------- reading entries

def _pick_real(x: Any, mask: Any, axis: int) -> Any:
    # An OR of bit patterns, all zero but the chosen one: exact, and the cpu backend
    # vectorizes integer reductions where its float max-reductions are scalar loops.
    dtype = np.dtype(get_aval(x).dtype)
    if dtype.kind in "iu":
        return reduce_or(select(mask, x, _fill(x, 0)), (axis,))
    bits = bitcast_convert_type(x, np.dtype(f"int{8 * dtype.itemsize}"))
    return bitcast_convert_type(reduce_or(select(mask, bits, _fill(bits, 0)), (axis,)), dtype)


def _pick(x: Any, mask: Any, axis: int) -> Any:
    """The entry of `x` along `axis` where `mask` (x's shape, one True per line) holds,
    exactly."""
    if _is_complex(x):
        return make_complex(_pick_real(real(x), mask, axis), _pick_real(imag(x), mask, axis))
    return _pick_real(x, mask, axis)


def _computed_once(x: Any) -> Any:
    """`x` unchanged, as the result of a reduction: the fusion pass does not copy a
    reduction into its consumers, so a vector the rank-1 update reads is computed once per
    step rather than once per entry of the matrix (a division and a square root there
    cost as much as the update)."""
    if _is_complex(x):
        return make_complex(_computed_once(real(x)), _computed_once(imag(x)))
    shape = get_aval(x).shape
    dtype = np.dtype(get_aval(x).dtype)
    bits = bitcast_convert_type(x, np.dtype(f"int{8 * dtype.itemsize}"))
    pair = broadcast_in_dim(bits, (2,) + tuple(shape), tuple(range(1, len(shape) + 1)))
    first = eq(broadcasted_iota(np.int32, get_aval(pair).shape, 0), np.int32(0))
    return bitcast_convert_type(reduce_or(select(first, pair, _fill(pair, 0)), (0,)), dtype)


def _magnitude(x: Any) -> Any:
    """LAPACK's pivot size: |x|, or |re| + |im| for complex numbers."""
    if _is_complex(x):
        return add(lax_abs(real(x)), lax_abs(imag(x)))
    return lax_abs(x)


def _first_largest(size: Any, candidate: Any) -> Any:
    """Per column of `size` (rows, batch; sizes >= 0 or NaN): the first row of largest
    size among the candidate rows (NaN sizes never win; the first candidate when none is
    a number). Compared as bit patterns, which order non-negative floats as their values
    do (integer reductions vectorize)."""
    shape = get_aval(size).shape
    dtype = np.dtype(get_aval(size).dtype)
    bits = bitcast_convert_type(size, np.dtype(f"int{8 * dtype.itemsize}"))
    usable = select(candidate, select(ne(size, size), _fill(bits, -1), bits), _fill(bits, -2))
    best = _to(reduce_max(usable, (0,)), shape, (1,))
    rows = broadcasted_iota(np.int32, shape, 0)
    return reduce_min(select(eq(usable, best), rows, _fill(rows, shape[0])), (0,))


# ------------------------------------------------------------------------------ lu

def lu_small(a: Any) -> list[Any]:
    """LU with partial pivoting of each matrix, as LAPACK's getf2: [packed factors, int32
    pivots, int32 permutation] (the outputs of `lu_p`)."""
    return _in_chunks(_lu, a)


def _lu(a: Any) -> list[Any]:
    shape = get_aval(a).shape
    batch, (m, n) = shape[:-2], shape[-2:]
    steps = min(m, n)
    if steps == 0:
        return [a, broadcast_in_dim(np.int32(0), batch + (0,), ()),
                broadcasted_iota(np.int32, batch + (m,), len(batch))]
    a = _batch_last(a)
    size = get_aval(a).shape[-1]
    row, col, pivot_index = _indices(m), _indices(n), _indices(steps)
    tiny = np.finfo(dtypes.real_dtype(get_aval(a).dtype)).tiny
    full, column_shape = (m, n, size), (m, size)

    def step(k: Any, state: list[Any]) -> list[Any]:
        a, pivots, perm = state
        k = convert_element_type(k, np.int32)
        column = dynamic_index_in_dim(a, k, 1, keepdims=False)  # (m, batch)
        p = _first_largest(_magnitude(column), _to(ge(row, k), column_shape, (0,)))
        at_p = eq(broadcasted_iota(np.int32, column_shape, 0), _to(p, column_shape, (1,)))
        at_k = _to(eq(row, k), column_shape, (0,))
        row_k = dynamic_index_in_dim(a, k, 0, keepdims=False)  # (n, batch)
        row_p = _pick(a, _to(at_p, full, (0, 2)), 0)
        a = select(_to(at_k, full, (0, 2)), _to(row_p, full, (1, 2)),
                   select(_to(at_p, full, (0, 2)), _to(row_k, full, (1, 2)), a))
        pivot = _pick(column, at_p, 0)  # (batch,)
        column_k = dynamic_index_in_dim(column, k, 0, keepdims=False)
        column = select(at_k, _to(pivot, column_shape, (1,)),
                        select(at_p, _to(column_k, column_shape, (1,)), column))
        multipliers = _computed_once(select(_to(gt(row, k), column_shape, (0,)),
                                            _scale(column, pivot, tiny), column))
        updated = sub(a, mul(_to(multipliers, full, (0, 2)), _to(row_p, full, (1, 2))))
        a = select(_to(gt(row, k), full, (0,)),
                   select(_to(gt(col, k), full, (1,)), updated,
                          select(_to(eq(col, k), full, (1,)), _to(multipliers, full, (0, 2)),
                                 a)), a)
        pivots = select(_to(eq(pivot_index, k), (steps, size), (0,)),
                        _to(p, (steps, size), (1,)), pivots)
        perm_k = dynamic_index_in_dim(perm, k, 0, keepdims=False)
        perm_p = _pick(perm, at_p, 0)
        perm = select(at_k, _to(perm_p, column_shape, (1,)),
                      select(at_p, _to(perm_k, column_shape, (1,)), perm))
        return [a, pivots, perm]

    init = [a, broadcast_in_dim(np.int32(0), (steps, size), ()),
            broadcasted_iota(np.int32, column_shape, 0)]
    a, pivots, perm = fori_loop(0, steps, step, init)
    return [_batch_first(a, batch), _batch_first(pivots, batch), _batch_first(perm, batch)]


def _scale(column: Any, pivot: Any, tiny: float) -> Any:
    """column / pivot as getf2 computes it: times the reciprocal where |pivot| is at least
    the smallest normal number, else a division; unchanged where the pivot is zero."""
    shape = get_aval(column).shape
    by_reciprocal = mul(column, _to(div(_fill(pivot, 1), pivot), shape, (1,)))
    by_division = div(column, _to(pivot, shape, (1,)))
    size = lax_abs(pivot)
    scaled = select(_to(ge(size, _fill(size, tiny)), shape, (1,)), by_reciprocal,
                    by_division)
    return select(_to(eq(pivot, _fill(pivot, 0)), shape, (1,)), column, scaled)


# ------------------------------------------------------------------------ cholesky

def cholesky_small(a: Any) -> Any:
    """The lower Cholesky factor of each matrix (potf2, its lower triangle read); NaN
    everywhere for a matrix that is not positive definite (the output of `cholesky_p`).

    Two columns per step (a rank-2 update, the two terms subtracted in column order as
    potf2 does), which halves the passes over the matrices; an odd size is padded with a
    unit diagonal entry, whose factor is itself."""
    return _in_chunks(lambda x: [_cholesky(x)], a)[0]


def _cholesky(a: Any) -> Any:
    shape = get_aval(a).shape
    batch, n = shape[:-2], shape[-1]
    if n == 0:
        return a
    a = _batch_last(a)
    dtype = get_aval(a).dtype
    size = get_aval(a).shape[-1]
    even = n + n % 2
    if even != n:
        zero = np.zeros((), dtype)
        a = _unit_corner(pad(a, zero, [(0, 1, 0), (0, 1, 0), (0, 0, 0)]), n)
    lower = select(_lower_mask((even, even, size)), a, _fill(a, 0))
    ok = broadcast_in_dim(np.bool_(True), (size,), ())
    blocks = []
    for start, stop in _segments(even, 2):
        # the columns before `start` are final: the segment factors the trailing block
        trailing = slice_in_dim(slice_in_dim(lower, start, even, 1, 0), start, even, 1, 1)
        trailing, ok = _cholesky_columns(trailing, ok, stop - start)
        done = slice_in_dim(trailing, 0, stop - start, 1, 1)
        blocks.append(pad(done, np.zeros((), dtype), [(start, 0, 0), (0, 0, 0), (0, 0, 0)]))
        if stop < even:
            lower = pad(slice_in_dim(slice_in_dim(trailing, stop - start, even - start, 1, 0),
                                     stop - start, even - start, 1, 1),
                        np.zeros((), dtype), [(stop, 0, 0), (stop, 0, 0), (0, 0, 0)])
    factor = blocks[0] if len(blocks) == 1 else concatenate(blocks, 1)
    full = (even, even, size)
    nan = complex(np.nan, np.nan) if _is_complex(factor) else np.nan
    factor = select(_to(ok, full, (2,)), factor, _fill(factor, nan))
    if even != n:
        factor = slice_in_dim(slice_in_dim(factor, 0, n, 1, 0), 0, n, 1, 1)
    return _batch_first(factor, batch)


def _lower_mask(shape: Sequence[int]) -> Any:
    """Where row >= column, broadcast to `shape` (rows, columns, batch)."""
    rows, columns = shape[0], shape[1]
    return _to(ge(broadcasted_iota(np.int32, (rows, columns), 0),
                  broadcasted_iota(np.int32, (rows, columns), 1)), shape, (0, 1))


SEGMENT = 8
"""Loop steps per segment (see `_segments`)."""


def _segments(steps: int, multiple: int) -> list[tuple[int, int]]:
    """The loop's steps cut into segments of `SEGMENT` (a multiple of `multiple`): each
    segment runs on the part of the matrices still active at its start, so later steps
    pass over smaller blocks (32x32: about half the work of full passes)."""
    if steps <= SEGMENT:
        return [(0, steps)]
    bounds = list(range(0, steps, SEGMENT)) + [steps]
    return list(zip(bounds[:-1], bounds[1:]))


def _cholesky_columns(a: Any, ok: Any, count: int) -> tuple[Any, Any]:
    """The first `count` (even) columns of the factor of `a` (r, r, batch; its lower
    triangle, r even) and the trailing block updated by them, two columns per step."""
    r, size = get_aval(a).shape[0], get_aval(a).shape[-1]
    dtype = get_aval(a).dtype
    full, column_shape = (r, r, size), (r, size)
    index = _indices(r)
    in_lower = _lower_mask(full)

    def factor_column(column: Any, k: Any, ok: Any) -> tuple[Any, Any]:
        """Column k of the factor from column k of the updated matrix; rows above k are
        zero."""
        diagonal = dynamic_index_in_dim(column, k, 0, keepdims=False)
        d = real(diagonal) if _is_complex(diagonal) else diagonal
        ok = select(gt(d, _fill(d, 0)), ok, _fill(ok, False))
        root = convert_element_type(sqrt(d), dtype)
        # potf2 scales by the reciprocal of the pivot's root
        scaled = mul(column, _to(div(_fill(root, 1), root), column_shape, (1,)))
        return select(_to(gt(index, k), column_shape, (0,)), scaled,
                      select(_to(eq(index, k), column_shape, (0,)),
                             _to(root, column_shape, (1,)), _fill(column, 0))), ok

    def outer(column: Any) -> Any:
        conjugate = conj(column) if _is_complex(column) else column
        return mul(_to(column, full, (0, 2)), _to(conjugate, full, (1, 2)))

    def step(i: Any, state: list[Any]) -> list[Any]:
        a, ok = state
        k = mul(convert_element_type(i, np.int32), np.int32(2))
        k1 = add(k, np.int32(1))
        first, ok = factor_column(dynamic_index_in_dim(a, k, 1, keepdims=False), k, ok)
        first = _computed_once(first)
        at_k1 = dynamic_index_in_dim(first, k1, 0, keepdims=False)
        conj_k1 = conj(at_k1) if _is_complex(at_k1) else at_k1
        second = sub(dynamic_index_in_dim(a, k1, 1, keepdims=False),
                     mul(first, _to(conj_k1, column_shape, (1,))))
        second, ok = factor_column(second, k1, ok)
        second = _computed_once(second)
        updated = sub(sub(a, outer(first)), outer(second))
        a = select(_to(gt(index, k1), full, (1,)), select(in_lower, updated, a),
                   select(_to(eq(index, k), full, (1,)), _to(first, full, (0, 2)),
                          select(_to(eq(index, k1), full, (1,)), _to(second, full, (0, 2)),
                                 a)))
        return [a, ok]

    return tuple(fori_loop(0, count // 2, step, [a, ok]))


def _unit_corner(a: Any, n: int) -> Any:
    """`a` (n + 1, n + 1, batch), zero in its last row and column, with 1 at (n, n)."""
    shape = get_aval(a).shape
    last = eq(_indices(n + 1), np.int32(n))
    last_row, last_column = _to(last, shape, (0,)), _to(last, shape, (1,))
    corner = select(last_row, last_column, _fill(last_row, False))
    return select(corner, _fill(a, 1), a)


# ---------------------------------------------------------------- triangular solve

def triangular_solve_small(a: Any, b: Any, *, left_side: bool, lower: bool,
                           transpose_a: bool, conjugate_a: bool,
                           unit_diagonal: bool) -> Any:
    """x with op(a) x = b (`left_side`) or x op(a) = b (the output of
    `triangular_solve_p`), by substitution over all matrices at once."""
    if transpose_a:
        a = adjoint(a) if conjugate_a else mT(a)
        lower = not lower
    elif conjugate_a and _is_complex(a):
        a = conj(a)
    if not left_side:  # x a = b  <=>  a^T x^T = b^T
        a, b, lower = mT(a), mT(b), not lower
    x = _in_chunks(lambda u, v: [_substitute(u, v, lower, unit_diagonal)], a, b)[0]
    return x if left_side else mT(x)


def _substitute(a: Any, b: Any, lower: bool, unit_diagonal: bool) -> Any:
    """x with a x = b, a lower (forward substitution) or upper (backward)."""
    shape = get_aval(b).shape
    batch, (n, columns) = shape[:-2], shape[-2:]
    if n == 0 or columns == 0 or math.prod(batch) == 0:
        return b
    a, b = _batch_last(a), _batch_last(b)
    size = get_aval(b).shape[-1]
    full = (n, columns, size)
    index = _indices(n)

    def step(i: Any, x: Any) -> Any:
        i = convert_element_type(i, np.int32)
        k = i if lower else sub(np.int32(n - 1), i)
        row = dynamic_index_in_dim(x, k, 0, keepdims=False)  # (columns, batch)
        column = dynamic_index_in_dim(a, k, 1, keepdims=False)  # (n, batch)
        if not unit_diagonal:
            diagonal = dynamic_index_in_dim(column, k, 0, keepdims=False)
            row = _computed_once(div(row, _to(diagonal, (columns, size), (1,))))
        later = gt(index, k) if lower else lt(index, k)
        updated = sub(x, mul(_to(column, full, (0, 2)), _to(row, full, (1, 2))))
        return select(_to(eq(index, k), full, (0,)), _to(row, full, (1, 2)),
                      select(_to(later, full, (0,)), updated, x))

    return _batch_first(fori_loop(0, n, step, b), batch)


# --------------------------------------------------------- lu_pivots_to_permutation

def pivots_to_permutation_small(pivots: Any, *, permutation_size: int) -> Any:
    """The permutation of 0..permutation_size-1 that the row swaps `pivots` make, applied
    in order (the output of `lu_pivots_to_permutation_p`)."""
    shape = get_aval(pivots).shape
    batch, steps = shape[:-1], shape[-1]
    size = math.prod(batch)
    perm = broadcasted_iota(np.int32, (permutation_size, size), 0)
    if steps == 0 or size == 0 or permutation_size == 0:
        return _batch_first(perm, batch)
    swaps = transpose(reshape(pivots, (size, steps)), (1, 0))  # (steps, batch)
    index = broadcasted_iota(np.int32, (permutation_size, size), 0)

    def step(j: Any, perm: Any) -> Any:
        j = convert_element_type(j, np.int32)
        target = dynamic_index_in_dim(swaps, j, 0, keepdims=False)
        at_p = eq(index, _to(target, (permutation_size, size), (1,)))
        at_j = eq(index, j)
        perm_j = dynamic_index_in_dim(perm, j, 0, keepdims=False)
        perm_p = _pick(perm, at_p, 0)
        return select(at_j, _to(perm_p, (permutation_size, size), (1,)),
                      select(at_p, _to(perm_j, (permutation_size, size), (1,)), perm))

    return _batch_first(fori_loop(0, steps, step, perm), batch)
