"""Small-matrix lowerings of `lu`, `cholesky` and `triangular_solve`, written with lax.

For small matrices a custom-call into the numpy/LAPACK kernels costs a Python round trip
per call and a Python loop over the batch, far more than the arithmetic. So where every
matrix dimension is at most `SMALL_MATRIX_LIMIT` the three primitives lower to these
expansions instead (see `linalg_factorizations`): `fori_loop`s over the columns whose
every step updates all the matrices of the batch at once (a rank-1 update, masked to the
trailing block; cholesky's steps take four columns), which the compiler turns into native
loops. The batch is held batch-last, (rows, columns, batch), for small matrices (the batch
in the vector lanes) and batch-first for larger ones and a batch of one (a row in the
lanes, no transposes): see `linalg_small_layout`. The steps are cut into segments, each a
loop over the rows (and, for cholesky, columns) still active at its start, so later steps
pass over smaller blocks. A step reads the rows and columns it broadcasts into buffers of
their own (`computed_once`), so that the update writes the matrices in place rather than
into a copy. The eager `reference` stays the LAPACK kernel, as does the lowering of larger
matrices (cholesky is in `linalg_small_triangular`, with triangular_solve).

Conventions follow LAPACK's, as JAX's CPU kernels do:

- lu (getf2): the pivot of column k is the first row i >= k of largest |a_ik| (|re| + |im|
  for complex numbers); the multipliers are the column times the pivot's reciprocal (a
  division for pivots below the smallest normal number); a zero pivot leaves its column as
  it is and the factorization goes on. A NaN entry is never chosen as pivot (a column of
  NaNs keeps its row), which may differ from LAPACK's choice for matrices with NaNs.
- cholesky (potf2): reads the lower triangle and the real part of the diagonal; a matrix
  that is not positive definite (a pivot <= 0) gives NaN everywhere; a NaN pivot does
  not stop the factorization (as OpenBLAS's potrf, which JAX calls), its NaNs spread.
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
from jaxlite.lax.arithmetic import add, div, mul, sub
from jaxlite.lax.broadcast import broadcast_in_dim, reshape
from jaxlite.lax.comparisons import eq, ge, gt
from jaxlite.lax.convert import convert_element_type
from jaxlite.lax.dynamic_slicing import dynamic_index_in_dim, dynamic_update_slice
from jaxlite.lax.linalg_small_layout import (CACHE_BYTES, Blocks, batch_first, computed_once,
                                             fill, first_largest, in_chunks, indices,
                                             magnitude, pick)
from jaxlite.lax.linalg_small_triangular import (cholesky_small, segments,
                                                 triangular_solve_small)
from jaxlite.lax.loops import fori_loop
from jaxlite.lax.math_functions import abs as lax_abs
from jaxlite.lax.selection import select
from jaxlite.lax.shape_ops import broadcasted_iota
from jaxlite.lax.slicing import slice_in_dim

__all__ = ["SMALL_MATRIX_LIMIT", "CACHE_BYTES", "is_small", "lu_small", "cholesky_small",
           "triangular_solve_small", "pivots_to_permutation_small"]

SMALL_MATRIX_LIMIT = 32
"""Matrices with at most this many rows and columns take the expansions."""


LU_SEGMENT = 16
"""Loop steps per segment of lu (see `linalg_small_triangular.segments`). 8 runs solve of
32x32 matrices, batch 64, about 10% faster but compiles half again as long (measured)."""


def is_small(*shapes: Sequence[int]) -> bool:
    """Whether every matrix dimension of `shapes` is within `SMALL_MATRIX_LIMIT`."""
    return all(max(s[-2:]) <= SMALL_MATRIX_LIMIT for s in shapes)


# ------------------------------------------------------------------------------ lu

def lu_small(a: Any) -> list[Any]:
    """LU with partial pivoting of each matrix, as LAPACK's getf2: [packed factors, int32
    pivots, int32 permutation] (the outputs of `lu_p`)."""
    return in_chunks(_lu, a)


def _lu(a: Any) -> list[Any]:
    shape = get_aval(a).shape
    batch, (m, n) = shape[:-2], shape[-2:]
    steps = min(m, n)
    if steps == 0:
        return [a, broadcast_in_dim(np.int32(0), batch + (0,), ()),
                broadcasted_iota(np.int32, batch + (m,), len(batch))]
    blocks = Blocks(batch_first(max(m, n), math.prod(batch)), math.prod(batch))
    a = blocks.enter(a)
    pivots = broadcast_in_dim(np.int32(0), blocks.vector(steps), ())
    perm = blocks.iota(blocks.vector(m), blocks.ENTRY)
    for start, stop in segments(steps, 1, LU_SEGMENT):
        # Rows before `start` are final (a step swaps and updates rows from its own on):
        # the segment works on the others, so later steps pass over smaller blocks.
        block = slice_in_dim(a, start, m, 1, blocks.ROW)
        block, pivots, perm = _lu_rows(blocks, block, pivots, perm, start, stop)
        where = [np.int32(0)] * 3
        where[blocks.ROW] = np.int32(start)
        a = block if start == 0 else dynamic_update_slice(a, block, where)
    return [blocks.leave(a, batch), blocks.leave(pivots, batch), blocks.leave(perm, batch)]


def _lu_rows(blocks: Blocks, a: Any, pivots: Any, perm: Any, start: int,
             stop: int) -> list[Any]:
    """Steps start..stop of getf2 on `a`, the rows from `start` on of the matrices;
    `pivots` and `perm` (all rows) are updated alongside."""
    r, n = get_aval(a).shape[blocks.ROW], get_aval(a).shape[blocks.COL]
    m, steps = get_aval(perm).shape[blocks.ENTRY], get_aval(pivots).shape[blocks.ENTRY]
    row, col, every_row = indices(r), indices(n), indices(m)
    tiny = np.finfo(dtypes.real_dtype(get_aval(a).dtype)).tiny
    full, column_shape = blocks.full(r, n), blocks.vector(r)
    perm_shape, pivot_shape = blocks.vector(m), blocks.vector(steps)
    entry = blocks.ENTRY

    def step(k: Any, state: list[Any]) -> list[Any]:
        a, pivots, perm = state
        k = convert_element_type(k, np.int32)
        local = sub(k, np.int32(start))  # step k's row in the block
        column = dynamic_index_in_dim(a, k, blocks.COL, keepdims=False)
        p = first_largest(magnitude(column), blocks.entries(ge(row, local), column_shape),
                          entry)
        at_p = eq(blocks.iota(column_shape, entry), blocks.per_matrix(p, column_shape))
        at_k = blocks.entries(eq(row, local), column_shape)
        # rows k and p read into buffers of their own, so that the matrices can be
        # updated in place (the update reads no other entry than the one it writes)
        row_k = computed_once(dynamic_index_in_dim(a, local, blocks.ROW, keepdims=False))
        row_p = pick(a, blocks.along_rows(at_p, full), blocks.ROW)
        a = select(blocks.rows(eq(row, local), full), blocks.along_columns(row_p, full),
                   select(blocks.along_rows(at_p, full), blocks.along_columns(row_k, full), a))
        pivot = pick(column, at_p, entry)  # (batch,)
        column_k = dynamic_index_in_dim(column, local, entry, keepdims=False)
        column = select(at_k, blocks.per_matrix(pivot, column_shape),
                        select(at_p, blocks.per_matrix(column_k, column_shape), column))
        multipliers = computed_once(select(blocks.entries(gt(row, local), column_shape),
                                           _scale(blocks, column, pivot, tiny), column))
        updated = sub(a, mul(blocks.along_rows(multipliers, full),
                             blocks.along_columns(row_p, full)))
        a = select(blocks.rows(gt(row, local), full),
                   select(blocks.columns(gt(col, k), full), updated,
                          select(blocks.columns(eq(col, k), full),
                                 blocks.along_rows(multipliers, full), a)), a)
        p = add(p, np.int32(start))  # in the whole matrix
        pivots = select(blocks.entries(eq(indices(steps), k), pivot_shape),
                        blocks.per_matrix(p, pivot_shape), pivots)
        at_p = eq(blocks.iota(perm_shape, entry), blocks.per_matrix(p, perm_shape))
        perm_k = computed_once(dynamic_index_in_dim(perm, k, entry, keepdims=False))
        perm_p = pick(perm, at_p, entry)
        perm = select(blocks.entries(eq(every_row, k), perm_shape),
                      blocks.per_matrix(perm_p, perm_shape),
                      select(at_p, blocks.per_matrix(perm_k, perm_shape), perm))
        return [a, pivots, perm]

    return fori_loop(start, stop, step, [a, pivots, perm])


def _scale(blocks: Blocks, column: Any, pivot: Any, tiny: float) -> Any:
    """column / pivot as getf2 computes it: times the reciprocal where |pivot| is at least
    the smallest normal number, else a division; unchanged where the pivot is zero."""
    shape = get_aval(column).shape
    by_reciprocal = mul(column, blocks.per_matrix(div(fill(pivot, 1), pivot), shape))
    by_division = div(column, blocks.per_matrix(pivot, shape))
    size = lax_abs(pivot)
    scaled = select(blocks.per_matrix(ge(size, fill(size, tiny)), shape), by_reciprocal,
                    by_division)
    return select(blocks.per_matrix(eq(pivot, fill(pivot, 0)), shape), column, scaled)


# --------------------------------------------------------- lu_pivots_to_permutation

def pivots_to_permutation_small(pivots: Any, *, permutation_size: int) -> Any:
    """The permutation of 0..permutation_size-1 that the row swaps `pivots` make, applied
    in order (the output of `lu_pivots_to_permutation_p`)."""
    shape = get_aval(pivots).shape
    batch, steps = shape[:-1], shape[-1]
    size = math.prod(batch)
    blocks = Blocks(True, size)
    vector = blocks.vector(permutation_size)
    index = blocks.iota(vector, 1)
    if steps == 0 or size == 0 or permutation_size == 0:
        return blocks.leave(index, batch)
    swaps = reshape(pivots, (size, steps))

    def step(j: Any, perm: Any) -> Any:
        j = convert_element_type(j, np.int32)
        target = dynamic_index_in_dim(swaps, j, 1, keepdims=False)
        at_p = eq(index, blocks.per_matrix(target, vector))
        at_j = eq(index, j)
        perm_j = dynamic_index_in_dim(perm, j, 1, keepdims=False)
        perm_p = pick(perm, at_p, 1)
        return select(at_j, blocks.per_matrix(perm_p, vector),
                      select(at_p, blocks.per_matrix(perm_j, vector), perm))

    return blocks.leave(fori_loop(0, steps, step, index), batch)
