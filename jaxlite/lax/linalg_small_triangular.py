"""Small-matrix lowerings of `cholesky` and `triangular_solve` (see `linalg_small` for
the scheme and the conventions, `linalg_small_layout` for the two layouts of the batch).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.lax.arithmetic import add, conj, div, mul, real, sub
from jaxlite.lax.broadcast import broadcast_in_dim, reshape
from jaxlite.lax.comparisons import eq, ge, gt, le, lt
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.dynamic_slicing import dynamic_index_in_dim, dynamic_update_slice
from jaxlite.lax.linalg_small_layout import (Blocks, batch_first, computed_once, fill,
                                             in_chunks, indices, is_complex)
from jaxlite.lax.linalg_util import adjoint, mT
from jaxlite.lax.loops import fori_loop
from jaxlite.lax.math_functions import sqrt
from jaxlite.lax.reductions import reduce_sum
from jaxlite.lax.selection import select
from jaxlite.lax.slicing import pad, slice_in_dim

__all__ = ["cholesky_small", "triangular_solve_small", "segments"]


def _pad_front(x: Any, axes: Sequence[int], count: int) -> Any:
    """`x` with `count` zeros in front along each of `axes`."""
    config = [(count if d in axes else 0, 0, 0) for d in range(len(get_aval(x).shape))]
    return pad(x, np.zeros((), get_aval(x).dtype), config)


def _crop(x: Any, axes: Sequence[int], start: int, stop: int) -> Any:
    for axis in axes:
        x = slice_in_dim(x, start, stop, 1, axis)
    return x


# ------------------------------------------------------------------------ cholesky

def cholesky_small(a: Any) -> Any:
    """The lower Cholesky factor of each matrix (potf2, its lower triangle read); NaN
    everywhere for a matrix that is not positive definite (the output of `cholesky_p`).

    `COLUMNS_PER_STEP` columns per step (a rank-4 update, the terms subtracted in column
    order as potf2 does), which cuts the passes over the matrices; an odd size is padded
    with a unit diagonal entry, whose factor is itself."""
    # Batch-first real matrices go whole: their factorization starts with a transposed
    # read (see `_cholesky`), which fuses with the caller's symmetrization only there
    # (32x32, 1024 matrices: 3.3 ms whole against 4.4 ms in chunks, measured).
    shape, dtype = get_aval(a).shape, get_aval(a).dtype
    whole = (len(shape) > 2 and batch_first(shape[-1], math.prod(shape[:-2]))
             and not dtypes.is_complex(dtype))
    return in_chunks(lambda x: [_cholesky(x)], a, whole=whole)[0]


def _cholesky(a: Any) -> Any:
    shape = get_aval(a).shape
    batch, n = shape[:-2], shape[-1]
    if n == 0:
        return a
    size = math.prod(batch)
    blocks = Blocks(batch_first(n, size), size)
    square = (blocks.ROW, blocks.COL)
    a = blocks.enter(a)
    dtype = get_aval(a).dtype
    even = n + n % 2
    if even != n:
        config = [(0, 1 if d in square else 0, 0) for d in range(3)]
        a = _unit_corner(blocks, pad(a, np.zeros((), dtype), config), n)
    in_lower = _lower_mask(blocks, blocks.full(even, even), 0)
    # Batch-first, the columns the steps read are strided (gathers); real matrices are
    # made symmetric instead (their lower triangle mirrored, exactly) and kept so by
    # updating both triangles, so that a step reads the column as the row it mirrors.
    symmetric = blocks.first and not is_complex(a)
    block = select(in_lower, a, mT(a) if symmetric else fill(a, 0))
    lanes = max(1, 64 // np.dtype(dtype).itemsize) if blocks.first else 1
    ok = broadcast_in_dim(np.bool_(True), (size,), ())
    # the factor's finished columns are written into `factor` in place (a concatenation
    # of the segments' pieces would be assembled lane by lane)
    factor = fill(a, 0)
    row0 = col0 = 0  # the block holds rows row0.., columns col0.. of the matrices
    for start, stop in segments(even, 2):
        # Columns before `start` are final; the segment factors rows from `start` on.
        # The columns kept from `first` on make whole vectors (a partial vector is
        # computed an entry at a time); those before `start` are left as they are.
        first = max(0, even - -(-(even - start) // lanes) * lanes)
        block = _crop(_crop(block, (blocks.ROW,), start - row0, even - row0),
                      (blocks.COL,), first - col0, even - col0)
        row0, col0 = start, first
        block, ok = _cholesky_columns(blocks, block, ok, stop - start, start - first,
                                      symmetric)
        where = [np.int32(0)] * 3
        where[blocks.ROW], where[blocks.COL] = np.int32(start), np.int32(start)
        factor = dynamic_update_slice(
            factor, slice_in_dim(block, start - first, stop - first, 1, blocks.COL), where)
    full = blocks.full(even, even)
    nan = complex(np.nan, np.nan) if is_complex(factor) else np.nan
    factor = select(blocks.per_matrix(ok, full), factor, fill(factor, nan))
    if even != n:
        factor = _crop(factor, square, 0, n)
    return blocks.leave(factor, batch)


def _lower_mask(blocks: Blocks, full: Sequence[int], offset: int) -> Any:
    """Where row + offset >= column, broadcast to the block shape `full`."""
    return ge(add(blocks.iota(full, blocks.ROW), np.int32(offset)),
              blocks.iota(full, blocks.COL))


COLUMNS_PER_STEP = 4
"""Columns of the factor per loop step (a rank-4 update: a quarter of the passes over
the matrices of one column per step); 2 where a segment's count is not a multiple."""
SEGMENT = 16
"""Loop steps per segment of cholesky and triangular_solve (see `segments`); each segment
is a loop of its own in the compiled program, so more of them cost compile time (16:
a third less than 8 for 32x32, with the same run time, measured)."""


def segments(steps: int, multiple: int, size: int | None = None) -> list[tuple[int, int]]:
    """The loop's steps cut into segments of `size` (default `SEGMENT`; a multiple of
    `multiple`): each segment runs on the part of the matrices still active at its start,
    so later steps pass over smaller blocks (32x32: about half the work of full passes)."""
    size = SEGMENT if size is None else size
    if steps <= size:
        return [(0, steps)]
    bounds = list(range(0, steps, size)) + [steps]
    return list(zip(bounds[:-1], bounds[1:]))


def _cholesky_columns(blocks: Blocks, a: Any, ok: Any, count: int, offset: int,
                      symmetric: bool) -> tuple[Any, Any]:
    """The first `count` (even) columns of the factor of the trailing matrices in `a` and
    the block updated by them, two columns per step. `a` holds r rows of the matrices and
    their columns from `offset` before the first row's diagonal entry: their lower
    triangles, or (`symmetric`) whole symmetric matrices, whose columns are then read as
    rows."""
    r, c = get_aval(a).shape[blocks.ROW], get_aval(a).shape[blocks.COL]
    dtype = get_aval(a).dtype
    # The factor's columns are computed as vectors indexed like the block's columns
    # (entry j of a column of the factor at j - offset), which the update broadcasts
    # across a row directly; a pad inside the update would read them lane by lane.
    full, vector = blocks.full(r, c), blocks.vector(c)
    index = indices(c)
    in_lower = None if symmetric else _lower_mask(blocks, full, offset)

    def column(a: Any, k: Any) -> Any:
        """Column k + offset of the matrices, entries at rows i + offset (those above
        row k are not used)."""
        if symmetric:
            return dynamic_index_in_dim(a, k, blocks.ROW, keepdims=False)
        entries = dynamic_index_in_dim(a, add(k, np.int32(offset)), blocks.COL,
                                       keepdims=False)
        config = [(offset if d == blocks.ENTRY else 0, 0, 0) for d in range(2)]
        return pad(entries, np.zeros((), dtype), config) if offset else entries

    def factor_column(column: Any, k: Any, ok: Any) -> tuple[Any, Any]:
        """Column k of the factor from column k of the updated matrix (rows above k
        zero), computed once, and `ok` cleared where its pivot is not > 0."""
        diagonal = dynamic_index_in_dim(column, k, blocks.ENTRY, keepdims=False)
        d = real(diagonal) if is_complex(diagonal) else diagonal
        root = convert_element_type(sqrt(d), dtype)
        # potf2 scales by the reciprocal of the pivot's root
        scaled = mul(column, blocks.per_matrix(div(fill(root, 1), root), vector))
        # potf2 fails at a pivot <= 0, not at a NaN one (which spreads NaNs on its
        # own): the diagonal entry is -1 there (the failed factor is all NaN anyway),
        # which the check below reads from the computed column, not from the matrix,
        # so that the matrix can be updated in place
        diagonal = select(le(d, fill(d, 0)), fill(root, -1), root)
        factor = computed_once(select(blocks.entries(gt(index, k), vector), scaled,
                                      select(blocks.entries(eq(index, k), vector),
                                             blocks.per_matrix(diagonal, vector),
                                             fill(column, 0))))
        at_k = dynamic_index_in_dim(factor, k, blocks.ENTRY, keepdims=False)
        at_k = real(at_k) if is_complex(at_k) else at_k
        return factor, select(lt(at_k, fill(at_k, 0)), fill(ok, False), ok)

    def down(v: Any) -> Any:
        """A column of the factor broadcast down the block's rows."""
        return blocks.along_rows(slice_in_dim(v, offset, c, 1, blocks.ENTRY), full)

    def outer(v: Any) -> Any:
        return mul(down(v), blocks.along_columns(conj(v) if is_complex(v) else v, full))

    width = COLUMNS_PER_STEP if count % COLUMNS_PER_STEP == 0 else 2

    def step(i: Any, state: list[Any]) -> list[Any]:
        a, ok = state
        k = mul(convert_element_type(i, np.int32), np.int32(width))
        factors: list[Any] = []
        for w in range(width):
            # column k + w less the terms of the step's earlier columns, in column order
            kw = add(k, np.int32(w))
            kwc = add(kw, np.int32(offset))
            v = column(a, kw)
            for f in factors:
                at_kw = dynamic_index_in_dim(f, kwc, blocks.ENTRY, keepdims=False)
                at_kw = conj(at_kw) if is_complex(at_kw) else at_kw
                v = sub(v, mul(f, blocks.per_matrix(at_kw, vector)))
            v, ok = factor_column(v, kwc, ok)
            factors.append(v)
        updated = a
        for f in factors:
            updated = sub(updated, outer(f))
        kept = a
        for w, f in reversed(list(enumerate(factors))):
            at_w = blocks.columns(eq(index, add(k, np.int32(offset + w))), full)
            kept = select(at_w, down(f), kept)
        later = blocks.columns(gt(index, add(k, np.int32(offset + width - 1))), full)
        a = select(later, updated if symmetric else select(in_lower, updated, a), kept)
        return [a, ok]

    return tuple(fori_loop(0, count // width, step, [a, ok]))


def _unit_corner(blocks: Blocks, a: Any, n: int) -> Any:
    """`a` (a block of (n + 1) x (n + 1) matrices, zero in their last row and column) with
    1 at (n, n)."""
    shape = get_aval(a).shape
    corner = eq(blocks.iota(shape, blocks.ROW), np.int32(n))
    corner = select(corner, eq(blocks.iota(shape, blocks.COL), np.int32(n)), corner)
    return select(corner, fill(a, 1), a)


# ---------------------------------------------------------------- triangular solve

def triangular_solve_small(a: Any, b: Any, *, left_side: bool, lower: bool,
                           transpose_a: bool, conjugate_a: bool,
                           unit_diagonal: bool) -> Any:
    """x with op(a) x = b (`left_side`) or x op(a) = b (the output of
    `triangular_solve_p`), by substitution over all matrices at once."""
    if transpose_a:
        a = adjoint(a) if conjugate_a else mT(a)
        lower = not lower
    elif conjugate_a and is_complex(a):
        a = conj(a)
    if not left_side:  # x a = b  <=>  a^T x^T = b^T
        a, b, lower = mT(a), mT(b), not lower
    x = in_chunks(lambda u, v: [_substitute(u, v, lower, unit_diagonal)], a, b)[0]
    return x if left_side else mT(x)


def _substitute(a: Any, b: Any, lower: bool, unit_diagonal: bool) -> Any:
    """x with a x = b, a lower (forward substitution) or upper (backward)."""
    shape = get_aval(b).shape
    batch, (n, columns) = shape[:-2], shape[-2:]
    size = math.prod(batch)
    if n == 0 or columns == 0 or size == 0:
        return b
    blocks = Blocks(batch_first(n, size), size)
    a, b = blocks.enter(a), blocks.enter(b)
    if blocks.first and columns == 1:
        x = _substitute_vector(blocks, a, reshape(b, (size, n)), lower, unit_diagonal)
        return blocks.leave(reshape(x, (size, n, 1)), batch)
    x = b
    for start, stop in segments(n, 1):
        # The rows solved before `start` (after, for upper) are final: the segment works
        # on the others, so later steps pass over smaller blocks.
        lo, hi = (start, n) if lower else (0, n - start)
        block = _substitute_rows(blocks, _crop(a, (blocks.ROW,), lo, hi),
                                 _crop(x, (blocks.ROW,), lo, hi), lower, unit_diagonal,
                                 start, stop, lo)
        where = [np.int32(0)] * 3
        where[blocks.ROW] = np.int32(lo)
        x = block if hi - lo == n else dynamic_update_slice(x, block, where)
    return blocks.leave(x, batch)


def _substitute_rows(blocks: Blocks, a: Any, x: Any, lower: bool, unit_diagonal: bool,
                     start: int, stop: int, lo: int) -> Any:
    """Steps start..stop of the substitution (counted from the first row for lower, from
    the last for upper) on rows lo.. of the matrices: `a` and `x` hold those rows."""
    r, columns = get_aval(x).shape[blocks.ROW], get_aval(x).shape[blocks.COL]
    n = get_aval(a).shape[blocks.COL]
    full = blocks.full(r, columns)
    index = indices(r)
    row_shape = blocks.vector(columns)

    def step(i: Any, x: Any) -> Any:
        i = convert_element_type(i, np.int32)
        k = i if lower else sub(np.int32(n - 1), i)  # the column of a
        local = sub(k, np.int32(lo))  # its row in the block
        row = dynamic_index_in_dim(x, local, blocks.ROW, keepdims=False)
        column = dynamic_index_in_dim(a, k, blocks.COL, keepdims=False)
        if not unit_diagonal:
            diagonal = dynamic_index_in_dim(column, local, blocks.ENTRY, keepdims=False)
            row = div(row, blocks.per_matrix(diagonal, row_shape))
        # a buffer of its own: x is then updated in place
        row = computed_once(row)
        later = gt(index, local) if lower else lt(index, local)
        updated = sub(x, mul(blocks.along_rows(column, full),
                             blocks.along_columns(row, full)))
        return select(blocks.rows(eq(index, local), full), blocks.along_columns(row, full),
                      select(blocks.rows(later, full), updated, x))

    return fori_loop(start, stop, step, x)


def _substitute_vector(blocks: Blocks, a: Any, b: Any, lower: bool,
                       unit_diagonal: bool) -> Any:
    """x (batch, n) with a x = b for one right-hand side, batch-first: each step reads
    row k of the matrices and sums its products with the solved entries along the row
    (in the lanes), where the column form would run along a 1-wide last axis."""
    n = get_aval(b).shape[1]
    index = indices(n)
    vector = blocks.vector(n)

    def step(i: Any, x: Any) -> Any:
        i = convert_element_type(i, np.int32)
        k = i if lower else sub(np.int32(n - 1), i)
        row = dynamic_index_in_dim(a, k, 1, keepdims=False)  # (batch, n)
        solved = blocks.entries(lt(index, k) if lower else gt(index, k), vector)
        products = select(solved, mul(row, x), fill(x, 0))
        value = sub(dynamic_index_in_dim(x, k, 1, keepdims=False), reduce_sum(products, (1,)))
        if not unit_diagonal:
            value = div(value, dynamic_index_in_dim(row, k, 1, keepdims=False))
        return select(blocks.entries(eq(index, k), vector),
                      blocks.per_matrix(computed_once(value), vector), x)

    return fori_loop(0, n, step, b)
