"""Where the batch goes in the small-matrix expansions (`linalg_small`), and the exact
entry reads they share.

A batch of matrices is held as one block, either batch-last, (rows, columns, batch), or
batch-first, (batch, rows, columns). The cpu backend vectorizes the innermost axis: batch-
last puts the batch in the vector lanes whatever the matrix size (the choice for small
matrices), but costs two transposes, in and out, which move every entry with a stride of
a whole matrix; batch-first is a reshape, and its lanes run along a row (the choice for
larger matrices and for a batch of one, see `linalg_small.batch_first`).

Per-matrix vectors (a column, a row, a permutation) are held as (length, batch) batch-last
and (batch, length) batch-first, which is what a dynamic index of a row or a column of the
block gives in each layout. `Blocks` turns 1-d index masks, per-matrix vectors and
per-matrix scalars into blocks and vectors of either layout.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.lax.arithmetic import complex as make_complex
from jaxlite.lax.arithmetic import add, imag, real
from jaxlite.lax.broadcast import broadcast_in_dim, reshape, transpose
from jaxlite.lax.comparisons import eq, ne
from jaxlite.lax.convert import bitcast_convert_type
from jaxlite.lax.math_functions import abs as lax_abs
from jaxlite.lax.reductions import reduce_max, reduce_min, reduce_or
from jaxlite.lax.scan_functions import map as lax_map
from jaxlite.lax.selection import select
from jaxlite.lax.shape_ops import broadcasted_iota
from jaxlite.lax.slicing import pad, slice_in_dim

__all__ = ["Blocks", "BATCH_FIRST_FROM", "batch_first", "CACHE_BYTES", "in_chunks",
           "indices", "fill", "is_complex", "pick", "computed_once", "magnitude",
           "first_largest"]

BATCH_FIRST_FROM = 16
"""Matrices with at least this many rows or columns are held batch-first (measured: the
transposes of batch-last cost more than its lanes save from here on); so is a batch of
one, whose batch-last lanes would hold one entry."""


ONE_FIRST = True
"""Whether a batch of one is held batch-first whatever its size (its lanes then run along
a row rather than holding one entry)."""


def batch_first(n: int, size: int) -> bool:
    """Whether a batch of `size` matrices of largest dimension `n` is held batch-first."""
    return (size == 1 and ONE_FIRST) or n >= BATCH_FIRST_FROM


CACHE_BYTES = 1 << 16
"""A batch whose matrices take more than 16 times this many bytes is factored in chunks
of about this size, one after the other, so that each step's passes over a chunk stay in
the cache (every step touches every matrix of the batch); smaller batches go whole, as
the chunks' loop costs more than it saves there (measured)."""


def in_chunks(fn: Any, *operands: Any, whole: bool = False) -> Any:
    """fn(*operands) (all (..., m, n) with one batch shape; fn returns a list of arrays
    with that batch shape leading), done chunk by chunk over the batch when it is large
    (and not `whole`)."""
    shapes = [get_aval(x).shape for x in operands]
    batch = shapes[0][:-2]
    count = math.prod(batch)
    per_matrix = sum(math.prod(s[-2:]) * np.dtype(get_aval(x).dtype).itemsize
                     for s, x in zip(shapes, operands))
    if whole or count * per_matrix <= 16 * CACHE_BYTES:
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


class Blocks:
    """One layout of a batch of `size` matrices (see the module docstring)."""

    def __init__(self, batch_first: bool, size: int):
        self.first, self.size = batch_first, size
        self.ROW, self.COL = (1, 2) if batch_first else (0, 1)
        # in a per-matrix vector: the axis of its entries and of the batch
        self.ENTRY, self.BATCH = (1, 0) if batch_first else (0, 1)

    def enter(self, x: Any) -> Any:
        """(..., m, n) -> the block."""
        shape = get_aval(x).shape
        flat = reshape(x, (math.prod(shape[:-2]),) + tuple(shape[-2:]))
        return flat if self.first else transpose(flat, (1, 2, 0))

    def leave(self, x: Any, batch: Sequence[int]) -> Any:
        """A block or per-matrix vector -> (..., entries) with the batch shape `batch`."""
        if not self.first:
            nd = len(get_aval(x).shape)
            x = transpose(x, (nd - 1,) + tuple(range(nd - 1)))
        return reshape(x, tuple(batch) + tuple(get_aval(x).shape[1:]))

    def full(self, rows: int, columns: int) -> tuple[int, ...]:
        return ((self.size, rows, columns) if self.first else (rows, columns, self.size))

    def vector(self, length: int) -> tuple[int, ...]:
        return (self.size, length) if self.first else (length, self.size)

    def along_rows(self, v: Any, full: Sequence[int]) -> Any:
        """Per-matrix vector v indexed by row, the same in every column of `full`."""
        return broadcast_in_dim(v, tuple(full), (0, 1) if self.first else (0, 2))

    def along_columns(self, v: Any, full: Sequence[int]) -> Any:
        """Per-matrix vector v indexed by column, the same in every row of `full`."""
        return broadcast_in_dim(v, tuple(full), (0, 2) if self.first else (1, 2))

    def rows(self, mask: Any, full: Sequence[int]) -> Any:
        """A 1-d mask over rows, broadcast to `full`."""
        return broadcast_in_dim(mask, tuple(full), (self.ROW,))

    def columns(self, mask: Any, full: Sequence[int]) -> Any:
        return broadcast_in_dim(mask, tuple(full), (self.COL,))

    def entries(self, mask: Any, vector: Sequence[int]) -> Any:
        """A 1-d mask over a vector's entries, broadcast to the per-matrix `vector`."""
        return broadcast_in_dim(mask, tuple(vector), (self.ENTRY,))

    def per_matrix(self, s: Any, shape: Sequence[int]) -> Any:
        """A per-matrix scalar (batch,) broadcast to a vector or a block."""
        return broadcast_in_dim(s, tuple(shape), (0,) if self.first else (len(shape) - 1,))

    def iota(self, shape: Sequence[int], axis: int) -> Any:
        return broadcasted_iota(np.int32, tuple(shape), axis)


def indices(size: int) -> Any:
    return broadcasted_iota(np.int32, (size,), 0)


def fill(like: Any, value: Any) -> Any:
    aval = get_aval(like)
    return broadcast_in_dim(np.array(value, aval.dtype), aval.shape, ())


def is_complex(x: Any) -> bool:
    return dtypes.is_complex(get_aval(x).dtype)


def _pick_real(x: Any, mask: Any, axis: int) -> Any:
    # An OR of bit patterns, all zero but the chosen one: exact, and the cpu backend
    # vectorizes integer reductions where its float max-reductions are scalar loops.
    dtype = np.dtype(get_aval(x).dtype)
    if dtype.kind in "iu":
        return reduce_or(select(mask, x, fill(x, 0)), (axis,))
    bits = bitcast_convert_type(x, np.dtype(f"int{8 * dtype.itemsize}"))
    return bitcast_convert_type(reduce_or(select(mask, bits, fill(bits, 0)), (axis,)), dtype)


def pick(x: Any, mask: Any, axis: int) -> Any:
    """The entry of `x` along `axis` where `mask` (x's shape, one True per line) holds,
    exactly (signed zeros, infinities and NaNs included)."""
    if is_complex(x):
        return make_complex(_pick_real(real(x), mask, axis), _pick_real(imag(x), mask, axis))
    return _pick_real(x, mask, axis)


def computed_once(x: Any) -> Any:
    """`x` unchanged, as the result of a reduction: the fusion pass does not copy a
    reduction into its consumers, so a vector the rank-1 update reads is computed once per
    step rather than once per entry of the matrix (a division and a square root there
    cost as much as the update)."""
    if is_complex(x):
        return make_complex(computed_once(real(x)), computed_once(imag(x)))
    shape = get_aval(x).shape
    dtype = np.dtype(get_aval(x).dtype)
    bits = bitcast_convert_type(x, np.dtype(f"int{8 * dtype.itemsize}"))
    pair = broadcast_in_dim(bits, (2,) + tuple(shape), tuple(range(1, len(shape) + 1)))
    first = eq(broadcasted_iota(np.int32, get_aval(pair).shape, 0), np.int32(0))
    return bitcast_convert_type(reduce_or(select(first, pair, fill(pair, 0)), (0,)), dtype)


def magnitude(x: Any) -> Any:
    """LAPACK's pivot size: |x|, or |re| + |im| for complex numbers."""
    if is_complex(x):
        return add(lax_abs(real(x)), lax_abs(imag(x)))
    return lax_abs(x)


def first_largest(size: Any, candidate: Any, axis: int) -> Any:
    """Per line along `axis` of `size` (a per-matrix vector of sizes >= 0 or NaN): the
    first entry of largest size among the candidates (NaN sizes never win; the first
    candidate when none is a number), as int32 (batch,). Compared as bit patterns, which
    order non-negative floats as their values do (integer reductions vectorize)."""
    shape = get_aval(size).shape
    dtype = np.dtype(get_aval(size).dtype)
    bits = bitcast_convert_type(size, np.dtype(f"int{8 * dtype.itemsize}"))
    usable = select(candidate, select(ne(size, size), fill(bits, -1), bits), fill(bits, -2))
    best = broadcast_in_dim(reduce_max(usable, (axis,)), shape, (1 - axis,))
    index = broadcasted_iota(np.int32, shape, axis)
    return reduce_min(select(eq(usable, best), index, fill(index, shape[axis])), (axis,))
