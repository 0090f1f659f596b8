"""numpy evaluation of reductions and contractions: reduce, reduce-window,
select-and-scatter, sort, dot and convolution.

Reductions fold with the `to_apply` computation pairwise over the reduced elements (a tree:
log2(n) vectorized steps, so any computation, variadic ones included, costs a few numpy calls
per level); a `to_apply` that is one binary opcode of its parameters skips the interpreter
and calls that opcode's kernel. The order of combination is unspecified in XLA; a tree is
also what keeps float sums accurate: a float sum of n terms is off by at most about
log2(n) eps sum(|x|), and a float16/bfloat16 sum or product is computed in float32 and
rounded once (jaxlite's lowering widens them already; this covers HLO from elsewhere). sort is a stable merge sort whose comparisons are
vectorized over all rows and elements (binary search of each element's rank in the other
run). dot and convolution accumulate integers in 64 bits (wrapping to the result type, as
XLA's integer arithmetic does) and float16/bfloat16 in float32.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.xla.evaluator_arrays import (
    FIRST,
    SECOND,
    Apply,
    binary_combiner,
    combine_at,
    pad_array,
)
from jaxlite.xla.evaluator_elementwise import binary_kernel, convert
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape_inference_base import RuleContext, Window, conv_dims_of, window_of

__all__ = ["HANDLERS", "blocked_matmul", "fold_last_axis"]

_O = Opcode
Combine = Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]]


def _combiner(comp: HloComputation, apply: Apply) -> Combine:
    kind = binary_combiner(comp)
    if kind == FIRST:
        return lambda acc, x: [np.broadcast_arrays(acc[0], x[0])[0]]
    if kind == SECOND:
        return lambda acc, x: [np.broadcast_arrays(x[0], acc[0])[0]]
    if kind is not None:
        kernel = binary_kernel(kind)
        return lambda acc, x: [np.asarray(kernel(acc[0], x[0]))]
    return lambda acc, x: apply(comp, acc + x)


def fold_last_axis(values: list[np.ndarray], inits: list[np.ndarray], comp: HloComputation,
                   apply: Apply, kernel: Callable[..., Any] | None = None
                   ) -> list[np.ndarray]:
    """Combine the elements along the last axis of each of `values` with `comp` (or with
    the binary `kernel` of the one value, when given), starting from `inits`: a pairwise
    tree, then the initial values."""
    combine = _combiner(comp, apply) if kernel is None else (
        lambda acc, x: [np.asarray(kernel(acc[0], x[0]))])
    n = values[0].shape[-1]
    shape = values[0].shape[:-1]
    while n > 1:
        half = n // 2
        paired = combine([v[..., 0:2 * half:2] for v in values],
                         [v[..., 1:2 * half:2] for v in values])
        if n % 2:
            paired = [np.concatenate([p, v[..., -1:]], axis=-1) for p, v in zip(paired, values)]
        values, n = paired, half + n % 2
    starts = [np.broadcast_to(i, shape) for i in inits]
    if n == 0:
        return [np.array(s) for s in starts]
    out = combine(starts, [v[..., 0] for v in values])
    return [np.broadcast_to(o, shape).astype(i.dtype) for o, i in zip(out, inits)]


def _single(values: list[np.ndarray]) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


def _reduce(inst: HloInstruction, ops: list[Any], apply: Apply) -> Any:
    n = len(ops) // 2
    dims = [int(d) for d in inst.attr("dimensions")]
    kept = [d for d in range(ops[0].ndim) if d not in dims]
    shape = tuple(ops[0].shape[d] for d in kept)
    size = int(np.prod([ops[0].shape[d] for d in dims], dtype=np.int64))
    moved = [np.transpose(x, kept + dims).reshape(shape + (size,)) for x in ops[:n]]
    dtype = ops[0].dtype
    if n == 1 and dtype in _NARROW and binary_combiner(inst.called[0]) in (_O.ADD,
                                                                          _O.MULTIPLY):
        kernel = binary_kernel(binary_combiner(inst.called[0]))
        wide = fold_last_axis([moved[0].astype(np.float32)], [ops[1].astype(np.float32)],
                              inst.called[0], apply, kernel)
        return wide[0].astype(dtype)
    return _single(fold_last_axis(moved, ops[n:], inst.called[0], apply))


_NARROW = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def _context(inst: HloInstruction) -> RuleContext:
    return RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape, inst.name)


def _windows(x: np.ndarray, fill: Any, window: Window) -> np.ndarray:
    """Every window position's elements: shape (positions..., elements of a window)."""
    config = [(lo, hi, d - 1) for lo, hi, d in
              zip(window.pad_low, window.pad_high, window.base_dilation)]
    padded = pad_array(x, fill, config)
    out = [window.output_size(d, n) for d, n in enumerate(x.shape)]
    size = int(np.prod(window.size, dtype=np.int64))
    if x.ndim == 0:
        return padded.reshape(1)
    if 0 in out or size == 0:
        return np.empty(out + [size], x.dtype)
    extent = [(s - 1) * d + 1 for s, d in zip(window.size, window.window_dilation)]
    view = np.lib.stride_tricks.sliding_window_view(padded, extent)
    view = view[tuple(slice(0, o * st, st) for o, st in zip(out, window.stride))
                + tuple(slice(None, None, d) for d in window.window_dilation)]
    return view.reshape(out + [size])


def _reduce_window(inst: HloInstruction, ops: list[Any], apply: Apply) -> Any:
    """Each output folds the initial values, then its window's elements in index order:
    XLA's order, which the cpu backend follows (a running sum's rounding depends on it)."""
    n = len(ops) // 2
    window = window_of(_context(inst), ops[0].ndim)
    views = [_windows(x, init, window) for x, init in zip(ops[:n], ops[n:])]
    combine = _combiner(inst.called[0], apply)
    acc = [np.broadcast_to(init, views[0].shape[:-1]) for init in ops[n:]]
    for k in range(views[0].shape[-1]):
        acc = combine(acc, [v[..., k] for v in views])
    return _single([np.array(a, dtype=init.dtype) for a, init in zip(acc, ops[n:])])


def _select_and_scatter(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    x, source, init = ops
    window = window_of(_context(inst), x.ndim)
    # Padding positions (index -1) take part in no selection.
    positions = _windows(np.arange(x.size).reshape(x.shape), -1, window)
    values = _windows(x, np.zeros((), x.dtype), window)
    select, scatter = inst.called
    chosen, value = positions[..., 0], values[..., 0]
    found = chosen >= 0
    for k in range(1, positions.shape[-1]):
        candidate, valid = values[..., k], positions[..., k] >= 0
        keep = apply(select, [value, candidate])[0]
        take = valid & (~found | ~keep)
        chosen = np.where(take, positions[..., k], chosen)
        value = np.where(take, candidate, value)
        found = found | valid
    out = np.full(x.shape, init, x.dtype)
    source = np.broadcast_to(source, found.shape)
    combine_at([out], chosen[found], [source[found]], scatter, apply)
    return out


# ------------------------------------------------------------------------------------ sort

def _merge_sort(keys: list[np.ndarray], comp: HloComputation, apply: Apply) -> np.ndarray:
    """A stable sort permutation of each row of the (rows, n) `keys` under `comp`.

    Bottom-up merge sort: at each width, an element's new place in its merged pair of runs
    is its place in its own run plus the number of elements of the other run that go before
    it, found by a binary search whose comparisons run for all elements at once.
    """
    rows, n = keys[0].shape
    perm = np.broadcast_to(np.arange(n), (rows, n)).copy()
    row = np.arange(rows)[:, None]
    position = np.arange(n)[None, :]
    width = 1
    while width < n:
        base = position // (2 * width) * (2 * width)
        in_first = position - base < width
        other = np.where(in_first, base + width, base)
        other_len = np.where(in_first, np.clip(n - base - width, 0, width),
                             np.minimum(width, n - base))
        mine = [k[row, perm] for k in keys]
        low, high = np.zeros((rows, n), np.int64), np.broadcast_to(other_len, (rows, n))
        while np.any(low < high):
            mid = (low + high) // 2
            theirs = [k[row, perm[row, np.minimum(other + mid, n - 1)]] for k in keys]
            # First-run elements count the second run's strictly smaller ones; second-run
            # elements count the first run's not-larger ones: equal keys keep their order.
            lhs = [np.where(in_first, t, m) for t, m in zip(theirs, mine)]
            rhs = [np.where(in_first, m, t) for t, m in zip(theirs, mine)]
            less = apply(comp, [a for pair in zip(lhs, rhs) for a in pair])[0]
            before = np.where(in_first, less, ~less)
            active = low < high
            low = np.where(active & before, mid + 1, low)
            high = np.where(active & ~before, mid, high)
        offset = position - np.where(in_first, base, base + width)
        new_perm = np.empty_like(perm)
        new_perm[row, base + offset + low] = perm
        perm, width = new_perm, width * 2
    return perm


def _sort(inst: HloInstruction, ops: list[Any], apply: Apply) -> Any:
    dim = int(inst.attr("dimension"))
    if ops[0].ndim == 0 or ops[0].size == 0:  # nothing to reorder
        return _single([o.copy() for o in ops])
    moved = [np.moveaxis(o, dim, -1) for o in ops]
    shape = moved[0].shape
    rows = [m.reshape(-1, shape[-1]) for m in moved]
    perm = _merge_sort(rows, inst.called[0], apply)
    order = np.arange(len(perm))[:, None]
    return _single([np.moveaxis(r[order, perm].reshape(shape), -1, dim) for r in rows])


# ---------------------------------------------------------------------- dot, convolution

def accumulation_dtype(lhs: np.dtype, rhs: np.dtype, out: np.dtype) -> np.dtype:
    """The type products and sums are computed in before rounding to `out`."""
    if out == np.bool_ or (dtypes.is_integer(out) and not (
            dtypes.is_inexact(lhs) or dtypes.is_inexact(rhs))):
        # Integer sums wrap modulo 2**bits: a 64-bit sum cast down gives XLA's result.
        return np.dtype(np.uint64 if dtypes.is_unsigned(out) else np.int64)
    if dtypes.is_complex(lhs) or dtypes.is_complex(rhs):
        return np.dtype(out if dtypes.is_complex(out) else np.complex128)
    if not dtypes.is_inexact(out) or dtypes.itemsize_bits(out) <= 16:
        return np.dtype(np.float32 if dtypes.is_inexact(out) else np.float64)
    return np.dtype(out)


_K_CHUNK = 256  # contraction length of one partial product
_PARTIALS = 2**22  # at most this many partial-product elements are held at once


def blocked_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`np.matmul` of stacks (batch, m, k) @ (batch, k, n) whose float contraction is cut into
    chunks of about 256 (fewer, longer ones when the partial products would be large), each
    a matmul, then added in a pairwise tree.

    numpy's float dot over a long contraction accumulates almost sequentially (3000 eps off
    for 2**24 positive terms); here the error is about (chunk + log2(k / chunk)) eps
    sum(|a b|) in the worst case, that of XLA's blocked CPU dots. Integers are exact anyway.
    """
    batch, m, k = a.shape
    n = b.shape[2]
    chunks = min(-(-k // _K_CHUNK), max(1, _PARTIALS // max(1, batch * m * n)))
    if chunks <= 1 or not dtypes.is_inexact(a.dtype):
        return np.matmul(a, b)
    size = -(-k // chunks)
    pad = size * chunks - k
    if pad:  # zeros on both sides only ever meet each other
        a = np.pad(a, ((0, 0), (0, 0), (0, pad)))
        b = np.pad(b, ((0, 0), (0, pad), (0, 0)))
    partial = np.matmul(a.reshape(batch, m, chunks, size).transpose(0, 2, 1, 3),
                        b.reshape(batch, chunks, size, n))
    while partial.shape[1] > 1:
        half = partial.shape[1] // 2
        summed = partial[:, :half] + partial[:, half:2 * half]
        partial = np.concatenate([summed, partial[:, 2 * half:]], axis=1) \
            if partial.shape[1] % 2 else summed
    return partial[:, 0]


def _finish(product: np.ndarray, out: np.dtype) -> np.ndarray:
    if dtypes.is_complex(product.dtype) and not dtypes.is_complex(out):
        product = product.real
    if dtypes.is_integer(out) and dtypes.is_inexact(product.dtype):
        return convert(product, out)
    return product != 0 if out == np.bool_ else product.astype(out)


def _dot(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    lhs, rhs = ops
    lc, rc = list(inst.attr("lhs_contracting", ())), list(inst.attr("rhs_contracting", ()))
    lb, rb = list(inst.attr("lhs_batch", ())), list(inst.attr("rhs_batch", ()))
    lf = [d for d in range(lhs.ndim) if d not in lc + lb]
    rf = [d for d in range(rhs.ndim) if d not in rc + rb]
    acc = accumulation_dtype(lhs.dtype, rhs.dtype, inst.shape.dtype)

    def size(x: np.ndarray, dims: list[int]) -> int:
        return int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    a = np.transpose(lhs, lb + lf + lc).reshape(size(lhs, lb), size(lhs, lf), size(lhs, lc))
    b = np.transpose(rhs, rb + rc + rf).reshape(size(rhs, rb), size(rhs, rc), size(rhs, rf))
    product = blocked_matmul(a.astype(acc), b.astype(acc)).reshape(inst.shape.dims)
    return _finish(product, inst.shape.dtype)


def _convolution(inst: HloInstruction, ops: list[Any], apply: Apply) -> np.ndarray:
    lhs, rhs = ops
    ctx = _context(inst)
    cd = conv_dims_of(ctx, lhs.ndim, rhs.ndim)
    window = window_of(ctx, len(cd.lhs_spatial))
    groups = int(inst.attr("feature_group_count", 1))
    batch_groups = int(inst.attr("batch_group_count", 1))
    acc = accumulation_dtype(lhs.dtype, rhs.dtype, inst.shape.dtype)
    # Work in the layouts (batch, feature, spatial...) and (out, in, spatial...).
    x = np.transpose(lhs, (cd.lhs_batch, cd.lhs_feature) + cd.lhs_spatial).astype(acc)
    k = np.transpose(rhs, (cd.rhs_output, cd.rhs_input) + cd.rhs_spatial).astype(acc)
    flips = tuple(2 + i for i, r in enumerate(window.reversal) if r)
    k = np.flip(k, flips) if flips else k
    x = pad_array(x, np.zeros((), acc), [(0, 0, 0)] * 2 + [
        (lo, hi, d - 1) for lo, hi, d in zip(window.pad_low, window.pad_high,
                                             window.base_dilation)])
    out_spatial = [window.output_size(i, lhs.shape[d]) for i, d in enumerate(cd.lhs_spatial)]
    n, c = x.shape[:2]
    o = k.shape[0]
    result = np.zeros((n // batch_groups, o, *out_spatial), acc)
    for offsets in np.ndindex(*k.shape[2:]):
        taps = tuple(slice(t * d, t * d + s * (m - 1) + 1, s) for t, d, s, m in zip(
            offsets, window.window_dilation, window.stride, out_spatial))
        xs = x[(slice(None), slice(None)) + taps]
        ks = k[(slice(None), slice(None)) + offsets]
        if batch_groups > 1:  # lhs batch split group-major; each group has its outputs
            xs = xs.reshape(batch_groups, n // batch_groups, c, *out_spatial)
            ks = ks.reshape(batch_groups, o // batch_groups, c)
            part = np.einsum("bnc...,boc->nbo...", xs, ks)
        else:  # features split group-major into `groups` independent convolutions
            xs = xs.reshape(n, groups, c // groups, *out_spatial)
            ks = ks.reshape(groups, o // groups, c // groups)
            part = np.einsum("ngc...,goc->ngo...", xs, ks)
        result += part.reshape(result.shape)
    layout = (cd.out_batch, cd.out_feature) + cd.out_spatial
    return _finish(np.transpose(result, np.argsort(layout)), inst.shape.dtype)


HANDLERS: dict[Opcode, Callable[[HloInstruction, list[Any], Apply], Any]] = {
    _O.REDUCE: _reduce, _O.REDUCE_WINDOW: _reduce_window,
    _O.SELECT_AND_SCATTER: _select_and_scatter, _O.SORT: _sort, _O.DOT: _dot,
    _O.CONVOLUTION: _convolution,
}
