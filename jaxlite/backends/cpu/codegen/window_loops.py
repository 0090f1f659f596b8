"""Windowed reductions and convolutions computed at one output index (mirrors XLA's
ElementalIrEmitter for kReduceWindow and kConvolution).

Both loop over the window's taps at each output index: tap t of output position o reads the
operand at `o * stride + t * window_dilation - pad_low` in the base-dilated, padded
coordinates; a position that falls in the padding or between dilated elements reads the
operand at a clamped index (so no read leaves the buffer) and is replaced by the initial
value (reduce-window, as the evaluator pads with it) or contributes nothing (convolution).
Lanes of the output index that differ (the vectorized output dimension) accumulate
separately. A convolution also loops over the input features of its group; feature groups
and batch groups follow the evaluator's group-major split.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from jaxlite.backends.cpu.codegen.elemental import Elemental, Value
from jaxlite.backends.cpu.codegen.indexing import Lin, Multi, Var
from jaxlite.backends.cpu.codegen.llvm_text import Val
from jaxlite.xla.evaluator_reductions import accumulation_dtype
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape_inference_base import RuleContext, Window, conv_dims_of, window_of

__all__ = ["reduce_window_at", "convolution_at", "window_position", "window_of_instruction",
           "all_of", "taps_loop"]

_O = Opcode
_PRED = np.dtype(np.bool_)


def window_of_instruction(inst: HloInstruction, rank: int) -> Window:
    ctx = RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape, inst.name)
    return window_of(ctx, rank)


def window_position(em: Elemental, out: Lin, tap: Lin, window: Window, dim: int, base: int
              ) -> tuple[Lin, list[Val]]:
    """The operand index of tap `tap` at output position `out` along `dim` (clamped into
    [0, base)), and the conditions under which it is a real element."""
    dilation = window.base_dilation[dim]
    q = out * window.stride[dim] + tap * window.window_dilation[dim] - window.pad_low[dim]
    last = (base - 1) * dilation
    conds: list[Val] = []
    low, high = q.bounds()
    if low is None or high is None or low < 0 or high > last:
        for pred, bound in (("sge", 0), ("sle", last)):
            ref, width = em.ix.compare(pred, q, bound)
            conds.append(Val(ref, "i1", width, _PRED))
        q = em.ix.clamp(q, 0, max(last, 0))
    if dilation > 1:
        q, remainder = em.ix.divmod(q, dilation)
        ref, width = em.ix.compare("eq", remainder, 0)
        conds.append(Val(ref, "i1", width, _PRED))
    return q, conds


def all_of(em: Elemental, conds: list[Val]) -> Val | None:
    result = None
    for c in conds:
        result = c if result is None else em.arith.binary(_O.AND, result, c)
    return result


def taps_loop(em: Elemental, extents: list[int], body: Callable[[list[Lin]], None],
          hint: str) -> None:
    """Scalar loops over `extents` (size-1 ones become the constant 0)."""
    taps: list[Lin] = [Lin()] * len(extents)

    def level(k: int) -> None:
        if k == len(extents):
            body(list(taps))
            return
        if extents[k] == 1:
            level(k + 1)
            return
        with em.fb.loop("0", str(extents[k]), 1, f"{hint}{k}_") as i:
            taps[k] = Lin.of(Var(i, "scalar", 0, extents[k]))
            em.push()
            level(k + 1)
            em.pop()
    level(0)


def reduce_window_at(em: Elemental, inst: HloInstruction, index: Multi,
                     slot: Callable[[np.dtype, int], object],
                     load: Callable[[object, np.dtype, int], Value],
                     store: Callable[[object, Value, int], None],
                     combine: Callable[[list[Value]], list[Value]]) -> list[Value]:
    """The reduce-window `inst` at `index` (the accumulator helpers come from the caller)."""
    n = len(inst.operands) // 2
    operands, inits = inst.operands[:n], inst.operands[n:]
    shape = operands[0].shape
    window = window_of_instruction(inst, shape.rank)
    width = 1 if all(em.ix.lane_kind(p) == "uniform" for p in index.parts) else em.width
    init_values = [em.value(i, Multi(())) for i in inits]
    dtypes = [o.shape.dtype for o in operands]
    slots = [slot(d, width) for d in dtypes]
    for s, v in zip(slots, init_values):
        store(s, v, width)

    def body(taps: list[Lin]) -> None:
        parts, conds = [], []
        for d in range(shape.rank):
            part, c = window_position(em, index.parts[d], taps[d], window, d, shape.dims[d])
            parts.append(part)
            conds += c
        valid = all_of(em, conds)
        values = [em.value(o, Multi(tuple(parts))) for o in operands]
        if valid is not None:
            values = [em.select(valid, v, i) for v, i in zip(values, init_values)]
        accs = [load(s, d, width) for s, d in zip(slots, dtypes)]
        for s, v in zip(slots, combine(accs + values)):
            store(s, v, width)
    taps_loop(em, list(window.size), body, "w")
    return [load(s, d, width) for s, d in zip(slots, dtypes)]


def convolution_at(em: Elemental, inst: HloInstruction, index: Multi,
                   slot: Callable[[np.dtype, int], object],
                   load: Callable[[object, np.dtype, int], Value],
                   store: Callable[[object, Value, int], None],
                   multiply_add: Callable[[Value, Value, Value], Value],
                   zero: Callable[[np.dtype, int], Value]) -> Value:
    """The convolution `inst` at `index`."""
    lhs, rhs = inst.operands
    ctx = RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape, inst.name)
    cd = conv_dims_of(ctx, lhs.shape.rank, rhs.shape.rank)
    window = window_of(ctx, len(cd.lhs_spatial))
    groups = int(inst.attr("feature_group_count", 1))
    batch_groups = int(inst.attr("batch_group_count", 1))
    acc_dtype = accumulation_dtype(lhs.shape.dtype, rhs.shape.dtype, inst.shape.dtype)
    out = index.parts
    batch, feature = out[cd.out_batch], out[cd.out_feature]
    outputs = rhs.shape.dims[cd.rhs_output]
    inputs_per_group = rhs.shape.dims[cd.rhs_input]
    lhs_batch = batch
    if batch_groups > 1:
        group, _ = em.ix.divmod(feature, outputs // batch_groups)
        lhs_batch = batch + group * (lhs.shape.dims[cd.lhs_batch] // batch_groups)
    feature_base = Lin()
    if groups > 1:
        group, _ = em.ix.divmod(feature, outputs // groups)
        feature_base = group * inputs_per_group
    width = 1 if all(em.ix.lane_kind(p) == "uniform" for p in out) else em.width
    acc = slot(acc_dtype, width)
    store(acc, zero(acc_dtype, width), width)
    sizes = [inputs_per_group] + list(window.size)

    def body(taps: list[Lin]) -> None:
        channel, spatial = taps[0], taps[1:]
        l_parts: list[Lin] = [Lin()] * lhs.shape.rank
        r_parts: list[Lin] = [Lin()] * rhs.shape.rank
        l_parts[cd.lhs_batch] = lhs_batch
        l_parts[cd.lhs_feature] = feature_base + channel
        r_parts[cd.rhs_output] = feature
        r_parts[cd.rhs_input] = channel
        conds: list[Val] = []
        for i, (ld, rd, od) in enumerate(zip(cd.lhs_spatial, cd.rhs_spatial, cd.out_spatial)):
            part, c = window_position(em, out[od], spatial[i], window, i, lhs.shape.dims[ld])
            l_parts[ld] = part
            conds += c
            size = window.size[i]
            r_parts[rd] = Lin.of(size - 1) - spatial[i] if window.reversal[i] else spatial[i]
        a = em.value(lhs, Multi(tuple(l_parts)))
        b = em.value(rhs, Multi(tuple(r_parts)))
        valid = all_of(em, conds)
        total = load(acc, acc_dtype, width)
        new = multiply_add(a, b, total)
        if valid is not None:
            new = em.select(valid, new, total)
        store(acc, new, width)
    taps_loop(em, sizes, body, "c")
    return load(acc, acc_dtype, width)
