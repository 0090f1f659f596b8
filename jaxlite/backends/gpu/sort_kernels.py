"""Sort on the GPU: a generated bitonic sort per row in shared memory, or CuPy's sort.

`build_sort` (rows that fit in a block's shared memory: `SHARED_BYTES` for the row of
every operand and an int32 position each, rounded up to a power of two) makes one kernel:
each block takes rows in turn (grid-stride), loads a row of every operand into shared
memory with each element's original position, sorts it by a bitonic network (log2(P)
(log2(P) + 1) / 2 compare-and-swap stages, a barrier after each; in each stage a thread
owns disjoint pairs) and writes it back. The comparator is the sort's own computation,
compiled as kernel IR over the operands' values, so any comparator works (keys and values
as argsort and top_k make, several keys, NaN-last or total orders). Ties, where neither
element comes before the other, go by original position: the network's order is then a
total one, and the result is stable whether or not `is_stable` asks for it. Positions past
the row's end (the padding up to P) come after every element.

`xp_sort_rule` covers longer rows when the comparator is a plain ascending or descending
order of the first operand (`jnp.sort`'s NaN-last `<`, an integer `<` or `>`, floats in
total order): a stable `xp.argsort` (CuPy's, a thrust sort on the device) of the key —
floats in total order through their bits as integers, descending orders through the
bitwise complement — then every operand gathered by that permutation. Other comparators
on rows too long for shared memory run on the host.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import (BuildOptions, FusionKernels, kernel_name,
                                                 operand_buffers, output_buffers)
from jaxlite.backends.gpu.hlo_elemental import Elemental, UnsupportedFusion, compute_dtype
from jaxlite.backends.gpu.index_math import add, delinearize, linear_index, mul
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["SHARED_BYTES", "build_sort", "xp_sort_rule"]

SHARED_BYTES = 32 * 1024  # of the 48 KB every CUDA and HIP device gives a block
_THREAD, _BLOCK = ir.Builtin("thread"), ir.Builtin("block")


def _padded(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def build_sort(inst: HloInstruction, options: BuildOptions) -> FusionKernels:
    """The bitonic-sort kernel of sort `inst` (see the module docstring)."""
    shape = inst.operands[0].shape
    if shape.rank == 0 or shape.size == 0:
        raise UnsupportedFusion(f"sort %{inst.name} of an empty or scalar array")
    dim = int(inst.attr("dimension"))
    n = shape.dims[dim]
    padded = _padded(n)
    row_bytes = padded * (4 + sum(o.shape.dtype.itemsize for o in inst.operands))
    if row_bytes > SHARED_BYTES:
        raise UnsupportedFusion(f"sort %{inst.name}: a row of {n} elements takes "
                                f"{row_bytes} bytes of shared memory (more than "
                                f"{SHARED_BYTES})")
    inputs, outputs = operand_buffers(inst), output_buffers(inst)
    name = kernel_name(inst, options)
    shared = [ir.Buffer(f"{name}_row{k}", b.dtype, "shared", padded)
              for k, (b, _) in enumerate(inputs)]
    position = ir.Buffer(f"{name}_position", "int32", "shared", padded)
    block = min(options.block, max(options.warp_size, padded // 2))
    block -= block % options.warp_size
    rows_shape = Shape(shape.dtype, tuple(d for k, d in enumerate(shape.dims) if k != dim))
    rows = max(1, rows_shape.size)
    grid = max(1, min(rows, options.max_blocks))
    em = Elemental(name, {})
    row = ir.Var("row", "int32")

    def element(t: ir.Expr) -> ir.Expr:
        """Where element t of the current row lies in memory."""
        outer = list(delinearize(row, rows_shape)) if rows_shape.dims else []
        outer.insert(dim, t)
        return linear_index(tuple(outer), shape)

    with em.scope() as row_body:
        _load_row(em, inputs, shared, position, element, n, padded, block)
        em.emit(ir.Barrier())
        order = _comparator(em, inst.called[0], shared, position, n)
        for k, j in _stages(padded):
            _stage(em, shared, position, order, k, j, padded, block)
            em.emit(ir.Barrier())
        t = ir.Var("t", "int32")
        stores = tuple(ir.Store(out, element(t), ir.Load(row_k, t))
                       for (out, _), row_k in zip(outputs, shared))
        em.emit(ir.For(t, _THREAD, ir.index_const(n), ir.index_const(block), stores))
        em.emit(ir.Barrier())  # the next row's loads overwrite shared memory
    loop = ir.For(row, _BLOCK, ir.index_const(rows), ir.index_const(grid), tuple(row_body))
    kernel = ir.Kernel(name, tuple(b for b, _ in inputs + outputs), (loop,), grid, block,
                       options.warp_size, shared=tuple(shared) + (position,),
                       constants=tuple(em.constants),
                       notes=(f"sort: bitonic, a block per row of {n} (padded to {padded})",))
    return FusionKernels(name, (kernel,), inputs, outputs)


def _stages(padded: int) -> list[tuple[int, int]]:
    """The (k, j) of each stage of a bitonic network over `padded` elements."""
    result, k = [], 2
    while k <= padded:
        j = k // 2
        while j >= 1:
            result.append((k, j))
            j //= 2
        k *= 2
    return result


def _load_row(em: Elemental, inputs, shared, position, element, n: int, padded: int,
              block: int) -> None:
    t = ir.Var("t", "int32")
    real = ir.Binary("lt", t, ir.index_const(n))
    loads = tuple(ir.Store(row_k, t, ir.Select(real, ir.Load(b, element(t)),
                                                ir.Const(0, b.dtype)))
                  for (b, _), row_k in zip(inputs, shared))
    # (a padding position's load is never made: Select runs only the side it picks)
    em.emit(ir.For(t, _THREAD, ir.index_const(padded), ir.index_const(block),
                   loads + (ir.Store(position, t, t),)))


def _comparator(em: Elemental, comp: HloComputation, shared, position, n: int) -> Callable:
    """order(a, b): whether the element at shared position a goes before the one at b,
    and whether b goes before a — by the comparator, ties by original position, the
    padding last."""
    def compare(a: ir.Expr, b: ir.Expr) -> ir.Expr:
        with em.scope() as body:
            for k, row_k in enumerate(shared):
                typed = compute_dtype(row_k.dtype)
                for param, at in ((2 * k, a), (2 * k + 1, b)):
                    value = ir.Load(row_k, at)
                    value = value if typed == row_k.dtype else ir.Cast(value, typed)
                    em.seed(comp.parameters[param], (), em.let(value, "key"))
            result = em.value(comp.root, ())
        em.emit(*body)
        return result

    def first(before, after, pa, pb) -> ir.Expr:
        tie = ir.Binary("and", ir.Unary("not", after), ir.Binary("lt", pa, pb))
        real = ir.Binary("lt", pa, ir.index_const(n))
        pad = ir.Binary("ge", pb, ir.index_const(n))
        return ir.Binary("and", real, ir.Binary("or", pad, ir.Binary("or", before, tie)))

    def order(a: ir.Expr, b: ir.Expr) -> tuple[ir.Expr, ir.Expr]:
        pa, pb = em.let(ir.Load(position, a), "pos"), em.let(ir.Load(position, b), "pos")
        before, after = compare(a, b), compare(b, a)
        return first(before, after, pa, pb), first(after, before, pb, pa)
    return order


def _stage(em: Elemental, shared, position, order: Callable, k: int, j: int, padded: int,
           block: int) -> None:
    """One compare-and-swap stage: thread-owned pairs (i, i ^ j) with i < i ^ j, put in
    ascending order where i & k is 0, descending elsewhere."""
    t = ir.Var(f"s{k}_{j}", "int32")
    with em.scope() as body:
        # the pairs' lower members, in order: i = t + (t / j) * j for t < padded / 2
        low = em.let(add(t, mul(ir.Binary("div", t, ir.index_const(j)), j)), "i")
        high = em.let(add(low, j), "l")
        low_first, high_first = order(low, high)
        ascending = ir.Binary("eq", ir.Binary("and", low, ir.index_const(k)),
                              ir.index_const(0))
        swap = em.let(ir.Select(ascending, high_first, low_first), "swap")
        exchange = []
        for row_k in list(shared) + [position]:
            x, y = em.fresh("x", row_k.dtype), em.fresh("y", row_k.dtype)
            exchange += [ir.Let(x, ir.Load(row_k, low)), ir.Let(y, ir.Load(row_k, high)),
                         ir.Store(row_k, low, y), ir.Store(row_k, high, x)]
        em.emit(ir.If(swap, tuple(exchange)))
    em.emit(ir.For(t, _THREAD, ir.index_const(padded // 2), ir.index_const(block),
                   tuple(body)))


# ------------------------------------------------------------------ CuPy's sort

def xp_sort_rule(inst: HloInstruction) -> Callable[[Any, list], Any] | None:
    """`(xp, flat operands) -> results` sorting with `xp.argsort`, or None when the
    comparator is not a plain order of the first operand (see the module docstring)."""
    key_of = _plain_order(inst.called[0], inst.operands[0].shape.dtype)
    if key_of is None:
        return None
    shape = inst.operands[0].shape
    dim = int(inst.attr("dimension", 0))
    order = tuple(reversed(shape.layout))  # major to minor

    def run(xp: Any, flats: list) -> Any:
        logical = [_logical(xp, f, o.shape, order) for f, o in zip(flats, inst.operands)]
        key = xp.moveaxis(key_of(xp, logical[0]), dim, -1)
        permutation = xp.argsort(key, axis=-1, kind="stable")
        results = []
        for value, operand in zip(logical, inst.operands):
            moved = xp.take_along_axis(xp.moveaxis(value, dim, -1), permutation, axis=-1)
            physical = xp.transpose(xp.moveaxis(moved, -1, dim), order)
            results.append(xp.ascontiguousarray(physical).reshape(-1))
        return tuple(results) if inst.shape.is_tuple else results[0]
    return run


def _logical(xp: Any, flat: Any, shape: Shape, order: tuple) -> Any:
    physical = flat.reshape([shape.dims[d] for d in order])
    return xp.transpose(physical, tuple(int(d) for d in np.argsort(order)))


def _plain_order(comp: HloComputation, dtype: np.dtype) -> Callable | None:
    """A function making the sort key whose stable ascending order is the comparator's,
    or None."""
    params, root = comp.parameters, comp.root
    lhs, rhs = params[0], params[1]
    if _is_nan_last_less(root, lhs, rhs) and np.dtype(dtype).kind == "f":
        return lambda xp, x: x  # numpy's and CuPy's own order: NaN last, -0 == +0
    if root.opcode is not Opcode.COMPARE or root.attr("direction") not in ("LT", "GT"):
        return None
    a, b = root.operands
    if {id(a), id(b)} != {id(lhs), id(rhs)}:
        return None
    descending = (root.attr("direction") == "GT") == (a is lhs)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        return (lambda xp, x: ~x) if descending else (lambda xp, x: x)
    if kind == "f" and root.attr("type") == "TOTALORDER" and dtype.itemsize in (4, 8):
        bits = np.dtype(f"int{8 * dtype.itemsize}")
        flip = np.iinfo(bits).max

        def total_key(xp: Any, x: Any) -> Any:
            i = x.view(bits)
            key = xp.where(i < 0, i ^ bits.type(flip), i)
            return ~key if descending else key
        return total_key
    return None


def _is_nan_last_less(root: HloInstruction, lhs: HloInstruction,
                      rhs: HloInstruction) -> bool:
    """root == (lhs < rhs) | (!isnan(lhs) & isnan(rhs)), as jnp.sort writes it."""
    def compare(inst, a, b, direction) -> bool:
        return inst.opcode is Opcode.COMPARE and inst.attr("direction") == direction and \
            inst.operands[0] is a and inst.operands[1] is b and \
            inst.attr("type") != "TOTALORDER"
    if root.opcode is not Opcode.OR:
        return False
    less, other = root.operands
    if not compare(less, lhs, rhs, "LT") or other.opcode is not Opcode.AND:
        return False
    not_nan, nan = other.operands
    return not_nan.opcode is Opcode.NOT and compare(not_nan.operands[0], lhs, lhs, "NE") \
        and compare(nan, rhs, rhs, "NE")
