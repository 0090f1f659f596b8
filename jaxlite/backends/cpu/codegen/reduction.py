"""Reductions with vector accumulators, and the inner loops that compute a reduce or a dot at
one output index (mirrors XLA's CPU reduction emitters, with the vectorization spelled out).

`reduce_pass` makes one pass over the reduced dimensions of one or more reductions that share
them, for one index of the kept dimensions: the innermost reduced dimension is vectorized
with `unroll` independent vector accumulators (plus a scalar one for the tail), started at
the combiner's identity, folded together and across lanes at the end, and combined with the
initial value once. A combiner without a known identity (a variadic argmax, a custom
computation) is applied sequentially from the initial value, which is always exact.

Float sums and products are blocked (`blocked_nest`): the loops over the reduced dimensions
are cut into chunks, and at the end of each chunk the accumulators inside it are combined
(pairwise) into the chunk's own accumulator and reset, one level per chunk size (XLA's CPU
backend splits long reductions into a tree for the same reason). A lane's hot accumulator
takes at most `_HOT_FAN_IN` terms between folds and each chunk accumulator `_FAN_IN` = 2
partial results, so above the hot level the reduction is a pairwise tree: with
L = ceil(log2(n)) a float sum of n terms is off by at most about (24 + L) eps sum(|x|)
(eps of the accumulation type: float32 for float16/bfloat16, which the lowering widens), and
by about sqrt of that for rounding errors of random sign, instead of n eps for one sequential
accumulator (which stalls at 2**24 per lane in float32). Equal partial sums add exactly in a
pairwise tree, so a sum of equal terms (`jnp.full(n, 0.1)`) is off only by about the error
of one hot chunk's 16 additions (1.2 eps): 1e6 x 0.1 gives 100000.016, 2 ulp (JAX: 100000.0;
with chunks of 256 sequential additions and 16 sequential chunks it was 100000.27, 34 ulp).
Chunks of 8 terms were closer still on equal terms (0.5 eps) but folding that often cost
5-13 % on a bfloat16 sum of 4M elements; chunks of 4 (exact on 0.1) slowed a (1024, 4096)
column sum about 2x.

When the kept index itself runs across vector lanes (a column reduction: the reduced
dimensions are not the minor ones), each lane accumulates its own column, one element per
step of scalar loops over the reduced dimensions.

`install_inner_loops` lets an `Elemental` compute a reduce or dot that no kernel bound, in
place, at whatever index it is asked for: the fallback that makes every fusion computable.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.backends.cpu.codegen.blocked_loops import blocked_nest, chunk_steps
from jaxlite.backends.cpu.codegen.complex_values import Cx, is_complex, part_dtype
from jaxlite.backends.cpu.codegen.elemental import Elemental, Value
from jaxlite.backends.cpu.codegen.indexing import Lin, Multi, Var, memory_order
from jaxlite.backends.cpu.codegen.kernel import KERNEL_VECTOR_BYTES, MAX_LANES
from jaxlite.backends.cpu.codegen.llvm_text import Val, is_float, llvm_elem, vec_type
from jaxlite.backends.cpu.codegen.loops import Emitters, loop_nest
from jaxlite.backends.cpu.codegen.window_loops import convolution_at, reduce_window_at
from jaxlite.xla.evaluator_reductions import accumulation_dtype
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["apply_computation", "combiner_identity", "install_inner_loops", "reduce_pass"]

_O = Opcode
_PRED = np.dtype(np.bool_)
_UNROLL = 4
_HOT_FAN_IN = 16  # terms per lane into a hot accumulator between folds
_FAN_IN = 2  # partial results per lane into an outer (chunk) accumulator: a pairwise tree


def apply_computation(em: Elemental, comp: HloComputation, args: Sequence[Val]) -> list[Val]:
    """Values of a scalar computation (a reduction combiner) applied to `args`."""
    values: dict[int, Any] = {}
    for inst in comp.instructions:
        op = inst.opcode
        if op is _O.PARAMETER:
            value: Any = args[inst.attr("number")]
        elif op is _O.CONSTANT:
            value = em.arith.const(np.asarray(inst.attr("literal")).reshape(-1)[0],
                                   inst.shape.dtype)
        elif op is _O.TUPLE:
            value = [values[id(o)] for o in inst.operands]
        elif op is _O.GET_TUPLE_ELEMENT:
            value = values[id(inst.operands[0])][inst.attr("index")]
        elif op.is_elementwise:
            value = em.apply_elementwise(inst, [values[id(o)] for o in inst.operands])
        elif op in (_O.BROADCAST, _O.RESHAPE, _O.BITCAST, _O.COPY) and inst.shape.rank == 0:
            value = values[id(inst.operands[0])]
        else:
            raise NotImplementedError(f"the cpu backend cannot apply {op.text} ({inst.name}) "
                                      f"in the computation {comp.name} yet")
        values[id(inst)] = value
    root = values[id(comp.root)]
    return list(root) if isinstance(root, list) else [root]


def combiner_identity(comp: HloComputation, dtype: np.dtype) -> Any:
    """The identity of a combiner that is one commutative binary opcode on its two
    parameters (add, multiply, maximum, minimum, and, or, xor), else None."""
    root = comp.root
    params = comp.parameters
    if len(params) != 2 or root.opcode.arity != 2 or set(map(id, root.operands)) != set(
            map(id, params)):
        return None
    dtype = np.dtype(dtype)
    op = root.opcode
    if is_complex(dtype):
        return complex(-0.0, -0.0) if op is _O.ADD else None
    if dtype == _PRED:
        return {_O.AND: True, _O.MINIMUM: True, _O.MULTIPLY: True, _O.OR: False,
                _O.MAXIMUM: False, _O.XOR: False, _O.ADD: False}.get(op)
    if is_float(dtype):
        return {_O.ADD: -0.0, _O.MULTIPLY: 1.0, _O.MAXIMUM: -np.inf,
                _O.MINIMUM: np.inf}.get(op)
    info = np.iinfo(dtype)
    return {_O.ADD: 0, _O.MULTIPLY: 1, _O.MAXIMUM: info.min, _O.MINIMUM: info.max,
            _O.AND: -1 if info.min < 0 else info.max, _O.OR: 0, _O.XOR: 0}.get(op)


# An accumulator lives in stack slots, one per real part (two for a complex value), which
# LLVM promotes to registers.
Slot = tuple[str, ...]


def _slot(em: Elemental, dtype: np.dtype, width: int) -> Slot:
    parts = [part_dtype(dtype)] * 2 if is_complex(dtype) else [np.dtype(dtype)]
    return tuple(em.fb.alloca(vec_type(llvm_elem(p), width), 64, "acc") for p in parts)


def _store(em: Elemental, slot: Slot, v: Value, width: int) -> None:
    for ref, part in zip(slot, (v.re, v.im) if isinstance(v, Cx) else (v,)):
        part = em.arith.splat(part, width)
        em.fb.do(f"store {part.typed}, ptr {ref}, align {64 if width > 1 else 8}")


def _load(em: Elemental, slot: Slot, dtype: np.dtype, width: int) -> Value:
    dtype = np.dtype(dtype)
    parts = []
    for ref in slot:
        p = part_dtype(dtype) if is_complex(dtype) else dtype
        ty = vec_type(llvm_elem(p), width)
        parts.append(Val(em.fb.op(f"load {ty}, ptr {ref}, align {64 if width > 1 else 8}",
                                  "a"), llvm_elem(p), width, p))
    return Cx(parts[0], parts[1], dtype) if is_complex(dtype) else parts[0]


def _const(em: Elemental, value: Any, dtype: np.dtype, width: int = 1) -> Value:
    if is_complex(dtype):
        return em.complex.const(value, dtype, width)
    return em.arith.const(value, dtype, width)


def _shuffle(em: Elemental, v: Value, lanes: list[int]) -> Value:
    if isinstance(v, Cx):
        return Cx(_shuffle(em, v.re, lanes), _shuffle(em, v.im, lanes), v.dtype)  # type: ignore
    fb = em.fb
    if len(lanes) == 1:
        return Val(fb.op(f"extractelement {v.typed}, i64 {lanes[0]}", "h"), v.elem, 1, v.dtype)
    mask = ", ".join(f"i32 {k}" for k in lanes)
    return Val(fb.op(f"shufflevector {v.typed}, {v.ty} poison, <{len(lanes)} x i32> <{mask}>",
                     "h"), v.elem, len(lanes), v.dtype)


def _halve(em: Elemental, comp: HloComputation, v: Value) -> Value:
    """Fold a vector to a scalar with the combiner, halving its width each step."""
    while v.width > 1:
        half = v.width // 2
        low = _shuffle(em, v, list(range(half)))
        high = _shuffle(em, v, list(range(half, v.width)))
        v = apply_computation(em, comp, [low, high])[0]
    return v


def reduce_pass(em: Elemental, reduces: Sequence[HloInstruction], kept: dict[int, Lin],
                order: Sequence[int], width: int, unroll: int = _UNROLL) -> list[list[Val]]:
    """Compute `reduces` (sharing operand dimensions and reduced dimensions `order`, in
    memory order) at the kept index `kept`; per reduce, its result values (see the module
    docstring). Lanes of `em` that differ in `kept` make it a column reduction."""
    column = em.width > 1 and any(em.ix.lane_kind(p) != "uniform" for p in kept.values())
    if column:
        return _column_pass(em, reduces, kept, order)
    shape = reduces[0].operands[0].shape
    plans = []
    for r in reduces:
        n = len(r.operands) // 2
        dtypes = [o.shape.dtype for o in r.operands[:n]]
        identity = combiner_identity(r.called[0], dtypes[0]) if n == 1 else None
        inits = [em.value(i, Multi(())) for i in r.operands[n:]]
        plans.append((r, n, dtypes, identity, inits))
    if any(p[3] is None for p in plans) or not order or shape.dims[order[-1]] < 2:
        width = 1
    base = em.with_width(width) if width > 1 else em.with_width(1)
    ems = Emitters(base)
    one = ems.at(1)
    vector_slots: list[list[list[Slot]]] = []
    scalar_slots: list[list[Slot]] = []
    for r, n, dtypes, identity, inits in plans:
        starts = inits if identity is None else [_const(one, identity, dtypes[0])]
        scalar_slots.append([_slot(one, d, 1) for d in dtypes])
        for slot, v in zip(scalar_slots[-1], starts):
            _store(one, slot, v, 1)
        copies = []
        for _ in range(unroll if width > 1 else 0):
            slots = [_slot(one, d, width) for d in dtypes]
            for slot, v in zip(slots, starts):
                _store(one, slot, v, width)
            copies.append(slots)
        vector_slots.append(copies)

    def body(e: Elemental, parts: dict[int, Lin], copy: int) -> None:
        merged = {**kept, **parts}
        index = Multi(tuple(merged[d] for d in range(shape.rank)))
        for k, (r, n, dtypes, _, _) in enumerate(plans):
            values = [e.value(o, index) for o in r.operands[:n]]
            slots = vector_slots[k][copy] if e.width > 1 else scalar_slots[k]
            accs = [_load(e, s, d, e.width) for s, d in zip(slots, dtypes)]
            new = apply_computation(e, r.called[0], accs + values)
            for slot, v in zip(slots, new):
                _store(e, slot, v, e.width)

    extents = shape.dims
    hot = [[(width, copies), (1, [scalar])] if copies else [(1, [scalar])]
           for copies, scalar in zip(vector_slots, scalar_slots)]
    steps = _blocking(plans, [extents[d] for d in order], width, unroll)
    if steps is None:
        loop_nest(em.fb, ems, list(order), extents, width, unroll, body)
    else:
        chunk = _chunk_levels(one, plans, hot, steps)
        blocked_nest(ems, order, extents, steps, width, unroll, body,
                     lambda level: _fold_level(one, plans, hot, chunk, level))
        _fold_all(one, plans, hot, chunk)
    results = []
    for k, (r, n, dtypes, identity, inits) in enumerate(plans):
        comp = r.called[0]
        accs = [_load(one, s, d, 1) for s, d in zip(scalar_slots[k], dtypes)]
        if vector_slots[k]:
            total = _pairwise(one, comp, [_load(one, slots[0], dtypes[0], width)
                                          for slots in vector_slots[k]])
            accs = apply_computation(one, comp, [_halve(one, comp, total)] + accs)
        if identity is not None:
            accs = apply_computation(one, comp, list(inits) + accs)
        results.append(accs)
    return results


def _column_pass(em: Elemental, reduces: Sequence[HloInstruction], kept: dict[int, Lin],
                 order: Sequence[int]) -> list[list[Val]]:
    """Each lane reduces its own column: scalar loops over the reduced dimensions (cut into
    chunks for float sums, see the module docstring)."""
    width = em.width
    shape = reduces[0].operands[0].shape
    plans = []
    for r in reduces:
        n = len(r.operands) // 2
        dtypes = [o.shape.dtype for o in r.operands[:n]]
        identity = combiner_identity(r.called[0], dtypes[0]) if n == 1 else None
        inits = [em.value(i, Multi(())) for i in r.operands[n:]]
        slots = [_slot(em, d, width) for d in dtypes]
        for slot, v in zip(slots, inits):
            _store(em, slot, v, width)
        plans.append((r, n, dtypes, identity, slots))

    def body(e: Elemental, parts: dict[int, Lin], copy: int) -> None:
        merged = {**kept, **parts}
        index = Multi(tuple(merged[d] for d in range(shape.rank)))
        for r, n, dtypes, _, slots in plans:
            values = [e.value(o, index) for o in r.operands[:n]]
            accs = [_load(e, s, d, width) for s, d in zip(slots, dtypes)]
            for slot, v in zip(slots, apply_computation(e, r.called[0], accs + values)):
                _store(e, slot, v, width)

    ems = Emitters(em)
    extents = shape.dims
    steps = _blocking(plans, [extents[d] for d in order], 1, 1)
    hot = [[(width, [p[4]])] for p in plans]
    chunk = _chunk_levels(em, plans, hot, steps or [])
    blocked_nest(ems, order, extents, steps or [[] for _ in order], 1, 1, body,
                 lambda level: _fold_level(em, plans, hot, chunk, level), vector_inner=False,
                 body_width=width)
    _fold_all(em, plans, hot, chunk)
    return [[_load(em, s, d, width) for s, d in zip(slots, dtypes)]
            for _, _, dtypes, _, slots in plans]


# --------------------------------------------------------------- blocked float sums

# Per reduce, its accumulators: groups of (lane count, copies), a copy being one slot per
# operand. The hot level has the loop's copies; each chunk level one copy per group.
Groups = list[tuple[int, list[list[Slot]]]]


def _blocking(plans: Sequence[tuple], loop_extents: Sequence[int], width: int,
              unroll: int) -> list[list[int]] | None:
    """The chunk steps of the reduced loops when some reduce is a float sum or product
    (None when no reduce needs them or one has no identity to restart an accumulator
    from). Other combiners are exact in any order (min, max, integers)."""
    blocked = [p for p in plans if p[3] is not None
               and p[0].called[0].root.opcode in (_O.ADD, _O.MULTIPLY)
               and (is_float(p[2][0]) or is_complex(p[2][0]))]
    if not blocked or any(p[3] is None for p in plans):
        return None
    steps = chunk_steps(loop_extents, width, unroll, _HOT_FAN_IN, _FAN_IN)
    return steps if any(steps) else None


def _chunk_levels(em: Elemental, plans: Sequence[tuple], hot: Sequence[Groups],
                  steps: Sequence[Sequence[int]]) -> list[list[Groups]]:
    """Per cut (innermost first), per reduce, accumulators shaped like the hot ones (one
    copy per group), started at the identity."""
    levels = []
    for _ in range(sum(len(s) for s in steps)):
        level = []
        for (r, n, dtypes, identity, *_), groups in zip(plans, hot):
            made: Groups = []
            for lanes, _copies in groups:
                slots = [_slot(em, d, lanes) for d in dtypes]
                for slot in slots:
                    _store(em, slot, _const(em, identity, dtypes[0]), lanes)
                made.append((lanes, [slots]))
            level.append(made)
        levels.append(level)
    return levels


def _fold_level(em: Elemental, plans: Sequence[tuple], hot: Sequence[Groups],
                chunk: list[list[Groups]], level: int) -> None:
    """Add the accumulators of the level inside cut `level` (the hot ones inside the first
    cut) into the cut's own, restarting them."""
    inner = chunk[level - 1] if level > 0 else hot
    for k, (r, n, dtypes, identity, *_) in enumerate(plans):
        _fold_into(em, r.called[0], dtypes[0], identity, inner[k], chunk[level][k])


def _fold_all(em: Elemental, plans: Sequence[tuple], hot: Sequence[Groups],
              chunk: list[list[Groups]]) -> None:
    """Add every cut level's accumulators into the hot ones, after the loops."""
    for level in chunk:
        for k, (r, n, dtypes, identity, *_) in enumerate(plans):
            _fold_into(em, r.called[0], dtypes[0], identity, level[k], hot[k])


def _fold_into(em: Elemental, comp: HloComputation, dtype: np.dtype, identity: Any,
               source: Groups, target: Groups) -> None:
    """target's first copy += the pairwise total of source's copies (group by group, same
    lane counts); source restarts at the identity."""
    for (lanes, copies), (_, (into, *_)) in zip(source, target):
        partial = _pairwise(em, comp, [_load(em, copy[0], dtype, lanes) for copy in copies])
        for copy in copies:
            _store(em, copy[0], _const(em, identity, dtype), lanes)
        total = apply_computation(em, comp, [_load(em, into[0], dtype, lanes), partial])[0]
        _store(em, into[0], total, lanes)


def _pairwise(em: Elemental, comp: HloComputation, values: list[Value]) -> Value:
    """The combiner applied over `values` as a balanced tree (equal partial sums stay
    exact: x + x = 2x)."""
    while len(values) > 1:
        pairs = [apply_computation(em, comp, values[i:i + 2])[0]
                 for i in range(0, len(values) - 1, 2)]
        values = pairs + values[len(values) - len(values) % 2:]
    return values[0]


# ------------------------------------------------------------------- inner loops

def install_inner_loops(em: Elemental) -> None:
    """Let `em` compute reduces and dots that no kernel bound (see the module docstring)."""
    em.inner_loops = _inner_loops


def _inner_loops(em: Elemental, inst: HloInstruction, index: Multi) -> list[Value]:
    if inst.opcode is _O.DOT:
        return [_inner_dot(em, inst, index)]
    if inst.opcode is _O.REDUCE_WINDOW:
        return reduce_window_at(
            em, inst, index, lambda d, w: _slot(em, d, w),
            lambda s, d, w: _load(em, s, d, w),  # type: ignore[arg-type]
            lambda s, v, w: _store(em, s, v, w),  # type: ignore[arg-type]
            lambda args: apply_computation(em, inst.called[0], args))
    if inst.opcode is _O.CONVOLUTION:
        acc_dtype = accumulation_dtype(inst.operands[0].shape.dtype,
                                       inst.operands[1].shape.dtype, inst.shape.dtype)
        total = convolution_at(
            em, inst, index, lambda d, w: _slot(em, d, w),
            lambda s, d, w: _load(em, s, d, w),  # type: ignore[arg-type]
            lambda s, v, w: _store(em, s, v, w),  # type: ignore[arg-type]
            lambda a, b, acc: _multiply_add(em, a, b, acc, acc_dtype),
            lambda d, w: _const(em, 0, d, w))
        return [_finish(em, total, inst.shape.dtype)]
    shape = inst.operands[0].shape
    reduced = sorted(inst.attr("dimensions"))
    kept_dims = [d for d in range(shape.rank) if d not in reduced]
    kept = {d: index.parts[k] for k, d in enumerate(kept_dims)}
    order = [d for d in memory_order(shape.dims, shape.layout) if d in reduced]
    inner = shape.dims[order[-1]] if order else 1
    width = 1
    lanes = KERNEL_VECTOR_BYTES // shape.dtype.itemsize
    while width < MAX_LANES and width * 2 <= min(inner, lanes):
        width *= 2
    return reduce_pass(em, [inst], kept, order, width)[0]


def _inner_dot(em: Elemental, inst: HloInstruction, index: Multi) -> Val:
    lhs, rhs = inst.operands
    lc, rc = list(inst.attr("lhs_contracting", ())), list(inst.attr("rhs_contracting", ()))
    lb, rb = list(inst.attr("lhs_batch", ())), list(inst.attr("rhs_batch", ()))
    lf = [d for d in range(lhs.shape.rank) if d not in lc + lb]
    rf = [d for d in range(rhs.shape.rank) if d not in rc + rb]
    acc_dtype = accumulation_dtype(lhs.shape.dtype, rhs.shape.dtype, inst.shape.dtype)
    out = list(index.parts)
    l_parts: dict[int, Lin] = {}
    r_parts: dict[int, Lin] = {}
    for i, (a, b) in enumerate(zip(lb, rb)):
        l_parts[a] = r_parts[b] = out[i]
    for j, d in enumerate(lf):
        l_parts[d] = out[len(lb) + j]
    for j, d in enumerate(rf):
        r_parts[d] = out[len(lb) + len(lf) + j]
    uniform = all(em.ix.lane_kind(p) == "uniform" for p in out)
    width = 1 if uniform else em.width
    e = em if width == em.width else em.with_width(1)
    fb = em.fb
    slot = _slot(e, acc_dtype, width)
    _store(e, slot, _const(e, 0, acc_dtype), width)
    # Contracted dimensions, the lhs's most minor last.
    pairs = sorted(zip(lc, rc), key=lambda p: memory_order(lhs.shape.dims,
                                                            lhs.shape.layout).index(p[0]))

    def level(position: int) -> None:
        if position == len(pairs):
            l_index = Multi(tuple(l_parts[d] for d in range(lhs.shape.rank)))
            r_index = Multi(tuple(r_parts[d] for d in range(rhs.shape.rank)))
            acc = _load(e, slot, acc_dtype, width)
            new = _multiply_add(e, e.value(lhs, l_index), e.value(rhs, r_index), acc,
                                acc_dtype)
            _store(e, slot, new, width)
            return
        a_dim, b_dim = pairs[position]
        # A float sum is one chain of dependent multiply-adds (its order is fixed): unrolled
        # copies wait on each other as the loop does, so unrolling buys nothing and made
        # these kernels 2-3x slower to compile (attention's batched products, ~60 ms each).
        with fb.loop("0", str(lhs.shape.dims[a_dim]), 1, f"k{a_dim}_",
                     unroll=not is_float(acc_dtype)) as k:
            var = Lin.of(Var(k, "scalar", 0, lhs.shape.dims[a_dim]))
            l_parts[a_dim], r_parts[b_dim] = var, var
            e.push()
            level(position + 1)
            e.pop()
    level(0)
    return _finish(e, _load(e, slot, acc_dtype, width), inst.shape.dtype)


def _multiply_add(e: Elemental, a: Value, b: Value, acc: Value, acc_dtype: np.dtype) -> Value:
    """acc + a * b in the accumulation type."""
    if is_complex(acc_dtype):
        product = e.complex.mul(e.complex.lift(a, acc_dtype), e.complex.lift(b, acc_dtype))
        return e.complex.binary(_O.ADD, acc, product)  # type: ignore[arg-type]
    a = e.arith.convert(a, acc_dtype)  # type: ignore[arg-type]
    b = e.arith.convert(b, acc_dtype)  # type: ignore[arg-type]
    a, b, acc = e.arith.match(a, b, acc)  # type: ignore[arg-type]
    if is_float(acc_dtype):
        return e.arith.call("fmuladd", [a, b, acc])
    return e.arith.binary(_O.ADD, acc, e.arith.binary(_O.MULTIPLY, a, b))


def _finish(e: Elemental, total: Value, dtype: np.dtype) -> Value:
    """An accumulated value in the result type."""
    if is_complex(total.dtype):
        if is_complex(dtype):
            return e.complex.lift(total, dtype)
        return e.arith.convert(total.re, dtype)  # type: ignore[union-attr]
    return e.arith.convert(total, dtype)  # type: ignore[arg-type]
