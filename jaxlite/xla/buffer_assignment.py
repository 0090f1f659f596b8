"""Buffer assignment: where every value of a scheduled module lives in memory (mirrors XLA's
BufferAssignment, HloAliasAnalysis, HloLiveRange and its best-fit heap simulator).

An analysis: `assign_buffers(module, donated_parameters)` reads the module and returns a
`BufferAssignment`; nothing is rewritten. The entry computation's instruction order is the
schedule (run `passes.scheduling.schedule` first). Definitions:

- Buffers. Each array value gets a buffer, except values that are views: a tuple is a view
  of its elements, a get-tuple-element of its operand's element, and an instruction that
  moves no data under its layouts (`layout_assignment.moves_no_data`: bitcast, reshape
  between row-major shapes, transpose laid out as a bitcast) shares its operand's buffer.
  Instructions returning tuples (multi-output fusions, while, calls) define one buffer per
  array element. Called computations are opaque: a fusion's or a loop's inner values are
  not buffers of the entry. A call, while or conditional reserves, during its own step, a
  scratch buffer as large as the temporaries of the computations it calls (analysed the
  same way, recursively); reduction combiners run on scalars in registers and need none.
- Liveness. Step t is the t-th instruction of the schedule. A buffer is live from the step
  that defines it to the last step that reads it (through any view), inclusive; a buffer
  of the entry's result is live to the end (step n, after the last instruction).
  Parameters are live from step 0. Two buffers may share memory only when their live
  ranges are disjoint.
- In place. An instruction may write its result over an operand's buffer when that buffer
  dies at it (no later reader, not a result, not an input) and the result reads the
  operand only at the offset it writes (`layout_assignment.preserves_memory_order`): an
  elementwise instruction whose operand has the result's dimensions, layout and element
  size, or a kLoop fusion in which the operand reaches the root only through such
  instructions. The two values then form one buffer with the union of their live ranges.
- Donation. Results are matched, in order, with donated parameters of the same element
  type and dimensions (each parameter once, as `donate_argnums` pairs them). A matched
  result lives in the parameter's buffer: written in place over it, or after the
  parameter's last read; when the parameter is read after the result is computed, the
  result is kept as a temporary and copied into the parameter's buffer at the end.
- Allocations. Each parameter (array element) has its own allocation, and so do each
  constant and each result; everything else is a temporary in one arena. Temporaries are
  placed best-fit, largest first, at offsets aligned to `alignment` bytes, reusing the
  space of buffers that are dead; they may also occupy a result's allocation before the
  result is defined, or a donated parameter's after its last read (XLA does the same).
  Several placement orders are tried and the smallest arena is kept.
- Sizes (as `jax.stages.Compiled.memory_analysis` reports them): `argument_size_in_bytes`
  sums the entry parameters, `output_size_in_bytes` the entry result's arrays,
  `alias_size_in_bytes` the results matched with donated parameters, and
  `temp_size_in_bytes` is the arena's size: the peak of temporary memory, parameters and
  results excluded. Differences from XLA: tuples are views, so XLA's small tuple index
  tables are not counted; a result that is a parameter or a constant is copied into a
  result allocation.
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.layout_assignment import moves_no_data, preserves_memory_order
from jaxlite.xla.shape import Shape

__all__ = ["ALIGNMENT", "BufferSlice", "LiveRange", "BufferAllocation", "BufferAssignment",
           "BufferModel", "Liveness", "assign_buffers", "buffer_model", "liveness",
           "peak_live_bytes"]

# Offsets in the arena are multiples of a cache line (also one AVX-512 vector), as XLA's
# CPU backend aligns its temporaries.
ALIGNMENT = 64
_LOOP = "kLoop"  # the fusion kind whose code is one loop over the result (ir.py)
_CALLS = (Opcode.CALL, Opcode.WHILE, Opcode.CONDITIONAL)

Refs = Any  # a buffer id for an array value, a tuple of Refs for a tuple value


def _flat(refs: Refs) -> list[int]:
    return [refs] if isinstance(refs, int) else [b for r in refs for b in _flat(r)]


def _leaf_shapes(shape: Shape) -> list[Shape]:
    return [shape] if not shape.is_tuple else [
        leaf for s in shape.tuple_shapes or () for leaf in _leaf_shapes(s)]


# ------------------------------------------------------------------------ the values

@dataclass(eq=False)
class BufferModel:
    """Which buffers each instruction of a computation defines and reads (independent of
    the order; shared with the scheduler)."""

    comp: HloComputation
    refs: dict[int, Refs] = field(default_factory=dict)       # id(inst) -> its buffers
    defines: dict[int, list[int]] = field(default_factory=dict)
    reads: dict[int, set[int]] = field(default_factory=dict)
    size: list[int] = field(default_factory=list)              # buffer id -> bytes
    definer: list[HloInstruction] = field(default_factory=list)
    input_kind: dict[int, str] = field(default_factory=dict)   # "parameter" / "constant"
    outputs: list[int] = field(default_factory=list)           # the root's, per leaf
    in_place: dict[int, list[int]] = field(default_factory=dict)  # id(inst) -> buffers

    def readers(self) -> dict[int, list[HloInstruction]]:
        """For each buffer, the instructions that read it, in the computation's order."""
        result: dict[int, list[HloInstruction]] = {b: [] for b in range(len(self.size))}
        for inst in self.comp.instructions:
            for b in self.reads[id(inst)]:
                result[b].append(inst)
        return result


def buffer_model(comp: HloComputation) -> BufferModel:
    """The buffers of `comp` (see the module docstring)."""
    model = BufferModel(comp)
    for inst in comp.instructions:
        model.refs[id(inst)] = refs = _refs_of(model, inst)
        model.reads[id(inst)] = {b for o in inst.operands for b in _flat(model.refs[id(o)])}
        model.in_place[id(inst)] = _in_place_candidates(model, inst) if isinstance(
            refs, int) and model.defines[id(inst)] else []
    model.outputs = _flat(model.refs[id(comp.root)])
    return model


def _refs_of(model: BufferModel, inst: HloInstruction) -> Refs:
    op = inst.opcode
    model.defines[id(inst)] = []
    if op is Opcode.TUPLE:
        return tuple(model.refs[id(o)] for o in inst.operands)
    if op is Opcode.GET_TUPLE_ELEMENT:
        return model.refs[id(inst.operands[0])][inst.attr("index")]
    if moves_no_data(inst):
        return model.refs[id(inst.operands[0])]

    def define(shape: Shape) -> Refs:
        if shape.is_tuple:
            return tuple(define(s) for s in shape.tuple_shapes or ())
        b = len(model.size)
        model.size.append(shape.nbytes)
        model.definer.append(inst)
        model.defines[id(inst)].append(b)
        if op in (Opcode.PARAMETER, Opcode.CONSTANT):
            model.input_kind[b] = op.text
        return b
    return define(inst.shape)


def _in_place_candidates(model: BufferModel, inst: HloInstruction) -> list[int]:
    """The operand buffers `inst` could write its result over, were they to die at it."""
    if not (inst.opcode.is_elementwise or (inst.opcode is Opcode.FUSION
                                           and inst.attr("kind") == _LOOP)):
        return []
    result: list[int] = []
    for k, operand in enumerate(inst.operands):
        b = model.refs[id(operand)]
        if not isinstance(b, int) or b in result or model.size[b] != inst.shape.nbytes:
            continue
        positions = [j for j, o in enumerate(inst.operands) if b in _flat(model.refs[id(o)])]
        if all(isinstance(model.refs[id(inst.operands[j])], int)
               and _reads_at_written_offset(inst, j) for j in positions):
            result.append(b)
    return result


def _reads_at_written_offset(inst: HloInstruction, k: int) -> bool:
    """Whether `inst` reads operand `k` only at the memory offset it writes."""
    if inst.opcode is not Opcode.FUSION:
        return preserves_memory_order(inst, k)
    fused = inst.called[0]
    if fused.root.shape.is_tuple:
        return False
    param = fused.parameters[k]
    if param.shape.nbytes != inst.operands[k].shape.nbytes:
        return False
    users = fused.users()
    stack, seen = [param], set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        for user in users[value]:
            if not all(preserves_memory_order(user, j)
                       for j, o in enumerate(user.operands) if o is value):
                return False
            stack.append(user)
    return True


# ------------------------------------------------------------------------- liveness

@dataclass(eq=False)
class Liveness:
    """Live ranges of the buffers of one order of a computation, in-place merges done.

    `group[b]` is the representative of the buffers sharing b's memory; `start`/`end` are
    indexed by representatives; `in_place` maps an instruction's name to the operand whose
    buffer it writes over.
    """

    model: BufferModel
    steps: int
    group: list[int]
    start: dict[int, int]
    end: dict[int, int]
    in_place: dict[str, str]
    donated_outputs: dict[int, int]  # output leaf -> parameter number, where matched

    def groups(self) -> dict[int, list[int]]:
        result: dict[int, list[int]] = {}
        for b, g in enumerate(self.group):
            result.setdefault(g, []).append(b)
        return result

    def kinds(self) -> dict[int, str]:
        """For each group: "parameter", "constant", "output" or "temp"."""
        result: dict[int, str] = {}
        outputs = set(self.model.outputs)
        for g, members in self.groups().items():
            inputs = [self.model.input_kind[b] for b in members if b in self.model.input_kind]
            result[g] = inputs[0] if inputs else (
                "output" if outputs.intersection(members) else "temp")
        return result


def liveness(comp: HloComputation, donated: Iterable[int] = (),
             model: BufferModel | None = None) -> Liveness:
    """Live ranges of `comp`'s buffers in its instruction order (see the module docstring).
    `donated`: parameter numbers whose buffers the computation may write."""
    model = model or buffer_model(comp)
    steps = len(comp.instructions)
    position = {id(inst): t for t, inst in enumerate(comp.instructions)}
    matched = _match_donations(comp, model, donated)
    matched_buffer = {model.outputs[leaf]: number for leaf, number in matched.items()}
    param_buffer = {p.attr("number"): _flat(model.refs[id(p)]) for p in comp.parameters}
    group = list(range(len(model.size)))
    start = {b: 0 if model.definer[b].opcode is Opcode.PARAMETER
             else position[id(model.definer[b])] for b in group}
    end = dict(start)
    for inst in comp.instructions:
        for b in model.reads[id(inst)]:
            end[b] = max(end[b], position[id(inst)])
    for b in model.outputs:
        end[b] = steps
    in_place: dict[str, str] = {}
    for t, inst in enumerate(comp.instructions):
        for b in model.in_place[id(inst)]:
            g = group[b]
            new = model.defines[id(inst)][0]
            kind = model.input_kind.get(g)
            donated_ok = (kind == "parameter" and g in param_buffer.get(
                matched_buffer.get(new, -1), ()))
            if end[g] == t and (kind is None or donated_ok) and g not in model.outputs:
                group[new] = g
                end[g] = max(end[g], end.pop(new))
                del start[new]
                in_place[inst.name] = model.definer[b].name
                break
    return Liveness(model, steps, group, start, end, in_place, matched)


def _match_donations(comp: HloComputation, model: BufferModel,
                     donated: Iterable[int]) -> dict[int, int]:
    params = {p.attr("number"): p for p in comp.parameters}
    free = [n for n in sorted(set(donated)) if n in params]
    leaves = _leaf_shapes(comp.root.shape)
    matched: dict[int, int] = {}
    for leaf, shape in enumerate(leaves):
        for n in free:
            if params[n].shape.same_array(shape):
                matched[leaf] = n
                free.remove(n)
                break
    return matched


def peak_live_bytes(comp: HloComputation, model: BufferModel | None = None) -> int:
    """The most bytes of temporaries and results live at one step of `comp`'s order
    (parameters and constants excluded; no fragmentation)."""
    live = liveness(comp, (), model)
    usage = [0] * (live.steps + 1)
    for g, kind in live.kinds().items():
        if kind in ("temp", "output"):
            for t in range(live.start[g], live.end[g] + 1):
                usage[t] += live.model.size[g]
    return max(usage, default=0)

# ---------------------------------------------------------------------- the report

@dataclass(frozen=True)
class BufferSlice:
    """`size` bytes at `offset` in allocation number `allocation`."""

    allocation: int
    offset: int
    size: int


@dataclass(frozen=True)
class LiveRange:
    """Steps of the schedule, inclusive; `end` = the number of steps for results."""

    start: int
    end: int

    def overlaps(self, other: "LiveRange") -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class BufferAllocation:
    """One block of memory: the temporary arena, a parameter, a result or a constant."""

    index: int
    kind: str  # "temp", "parameter", "output" or "constant"
    size: int
    label: str


def _frozen(mapping: Mapping) -> Mapping:
    return types.MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class BufferAssignment:
    """Where each value of a scheduled module lives, and the memory sizes it needs.

    `slices[name]` and `live_ranges[name]` have one entry per array of the instruction's
    shape (a tuple's elements in order); `in_place[name]` names the operand whose buffer
    the instruction writes over; `donated_outputs` maps result elements to the donated
    parameters that hold them; `scratch[name]` is the temporary space a call, while or
    conditional reserves for the computations it runs. Sizes as in the module docstring.
    """

    module_name: str
    schedule: tuple[str, ...]
    allocations: tuple[BufferAllocation, ...]
    slices: Mapping[str, tuple[BufferSlice, ...]]
    live_ranges: Mapping[str, tuple[LiveRange, ...]]
    in_place: Mapping[str, str]
    donated_outputs: Mapping[int, int]
    scratch: Mapping[str, BufferSlice]
    temp_size_in_bytes: int
    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int

    def slice_of(self, name: str, leaf: int = 0) -> BufferSlice:
        """The slice of array `leaf` of instruction `name` (0 for an array value)."""
        return self.slices[name][leaf]

    def to_text(self) -> str:
        """A summary: the sizes, then each allocation with the values it holds."""
        lines = [f"BufferAssignment of {self.module_name} ({len(self.schedule)} steps): "
                 f"temp {self.temp_size_in_bytes} B, arguments "
                 f"{self.argument_size_in_bytes} B, outputs {self.output_size_in_bytes} B, "
                 f"aliased {self.alias_size_in_bytes} B"]
        held: dict[int, list[str]] = {a.index: [] for a in self.allocations}
        for name, slices in self.slices.items():
            for leaf, (s, r) in enumerate(zip(slices, self.live_ranges[name])):
                where = f"{{{leaf}}}" if len(slices) > 1 else ""
                note = f" in place of %{self.in_place[name]}" if name in self.in_place else ""
                held[s.allocation].append(f"    %{name}{where}: {s.size} B at {s.offset}, "
                                          f"live {r.start}..{r.end}{note}")
        for name, s in self.scratch.items():
            held[s.allocation].append(f"    scratch of %{name}: {s.size} B at {s.offset}")
        for a in self.allocations:
            lines.append(f"allocation {a.index}: {a.label}, {a.size} B")
            lines.extend(sorted(set(held[a.index]), key=lambda t: int(
                t.split(" at ")[1].split(",")[0])))
        for leaf, number in sorted(self.donated_outputs.items()):
            lines.append(f"result {{{leaf}}} lives in donated parameter {number}")
        return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------- placement

def _align(offset: int, alignment: int) -> int:
    return -(-offset // alignment) * alignment


class _Heap:
    """The buffers placed in one allocation: (start, end, offset, size) each."""

    def __init__(self, capacity: int | None) -> None:
        self.capacity = capacity
        self.items: list[tuple[int, int, int, int]] = []

    def best_fit(self, start: int, end: int, size: int, alignment: int,
                 limit: int) -> tuple[float, int] | None:
        """(gap size, offset) of the smallest free gap that holds the buffer during
        [start, end] below the capacity (or `limit`, for the arena), or None."""
        busy = sorted((o, o + s) for a, b, o, s in self.items if a <= end and start <= b)
        top = self.capacity if self.capacity is not None else limit
        best: tuple[float, int] | None = None
        low = 0
        for begin, finish in busy + [(top, top)]:
            offset = _align(low, alignment)
            if begin - offset >= size and (best is None or begin - low < best[0]):
                best = (begin - low, offset)
            low = max(low, finish)
        return best

    def top(self, start: int, end: int, alignment: int) -> int:
        return _align(max((o + s for a, b, o, s in self.items if a <= end and start <= b),
                          default=0), alignment)


_Item = tuple[Any, int, int, int]  # (key, size, start, end)
_ORDERS = (lambda i: (-i[1], i[2]), lambda i: (i[2], -i[1]), lambda i: (i[2] - i[3], -i[1]))


def _pack(items: list[_Item], slots: dict[int, _Heap],
          alignment: int) -> tuple[int, dict[Any, tuple[int | None, int]]]:
    """Place `items` in the slots (allocation index -> heap) or the arena (None), trying
    each order of `_ORDERS`; the smallest arena and its placement."""
    best: tuple[int, dict[Any, tuple[int | None, int]]] | None = None
    for order in _ORDERS:
        heaps: dict[int | None, _Heap] = {}
        for index, slot in slots.items():
            heaps[index] = _Heap(slot.capacity)
            heaps[index].items = list(slot.items)
        arena = heaps[None] = _Heap(None)
        size, where = 0, {}
        for key, nbytes, start, end in sorted(items, key=order):
            fits = [(fit, index) for index, heap in heaps.items()
                    if (fit := heap.best_fit(start, end, nbytes, alignment, size))]
            if fits:
                (_, offset), index = min(fits, key=lambda f: f[0][0])
            else:
                index, offset = None, arena.top(start, end, alignment)
            heaps[index].items.append((start, end, offset, nbytes))
            where[key] = (index, offset)
            if index is None:
                size = max(size, offset + nbytes)
        if best is None or size < best[0]:
            best = (size, where)
    assert best is not None
    return best


# ------------------------------------------------------------------------ assignment

def assign_buffers(module: HloModule, donated_parameters: Sequence[int] = (),
                   alignment: int = ALIGNMENT) -> BufferAssignment:
    """Assign buffers to the values of `module`'s entry in its instruction order.

    Parameters
    ----------
    module : a scheduled module (its entry's instruction order is the execution order).
    donated_parameters : numbers of entry parameters whose buffers the program may reuse
        for results (`donate_argnums`).
    alignment : offsets of temporaries are multiples of this many bytes.

    Differences from XLA: see the module docstring.
    """
    return _assign(module.entry, module.name, tuple(donated_parameters), alignment, {})


def _callee_temp(inst: HloInstruction, alignment: int, cache: dict[int, int]) -> int:
    """The temporaries of the computations a call, while or conditional runs."""
    sizes = []
    for comp in inst.called:
        if id(comp) not in cache:
            cache[id(comp)] = _assign(comp, comp.name, (), alignment,
                                      cache).temp_size_in_bytes
        sizes.append(cache[id(comp)])
    return max(sizes, default=0)


def _assign(comp: HloComputation, name: str, donated: tuple[int, ...], alignment: int,
            cache: dict[int, int]) -> BufferAssignment:
    model = buffer_model(comp)
    live = liveness(comp, donated, model)
    kinds, group = live.kinds(), live.group
    allocations: list[BufferAllocation] = []
    place: dict[int, tuple[int | None, int]] = {}   # group -> (allocation, offset)
    slots: dict[int, _Heap] = {}

    def allocate(kind: str, size: int, label: str) -> int:
        allocations.append(BufferAllocation(len(allocations) + 1, kind, size, label))
        return len(allocations)
    param_alloc: dict[int, int] = {}
    for p in comp.parameters:
        leaves = _flat(model.refs[id(p)])
        for leaf, b in enumerate(leaves):
            where = f" {{{leaf}}}" if len(leaves) > 1 else ""
            number = p.attr("number")
            label = f"parameter {number}{where}" + (" (donated)" if number in donated else "")
            place[b] = (allocate("parameter", model.size[b], label), 0)
            if number in donated and len(leaves) == 1:
                param_alloc[number] = place[b][0]
                slots[place[b][0]] = _Heap(model.size[b])
                slots[place[b][0]].items.append((0, live.end[b], 0, model.size[b]))
    for g, kind in kinds.items():
        if kind == "constant":
            place[g] = (allocate("constant", model.size[g],
                                 f"constant %{model.definer[g].name}"), 0)
    output_place: dict[int, tuple[int, int]] = {}
    for leaf, b in enumerate(model.outputs):
        g, number = group[b], live.donated_outputs.get(leaf)
        if number is not None and kinds[g] == "parameter":
            if place[g][0] == param_alloc.get(number):
                output_place[leaf] = place[g]  # written in place over the donated input
                continue
        elif number in param_alloc and g not in place and live.start[g] > slots[
                param_alloc[number]].items[0][1]:
            place[g] = (param_alloc[number], 0)
            slots[place[g][0]].items.append((live.start[g], live.end[g], 0, model.size[g]))
        if kinds[g] in ("parameter", "constant"):
            output_place[leaf] = (allocate("output", model.size[b], f"output {{{leaf}}} "
                                           "(a copy)"), 0)
        elif number is None and g not in place:
            place[g] = (allocate("output", model.size[g], f"output {{{leaf}}}"), 0)
            slots[place[g][0]] = _Heap(model.size[g])
            slots[place[g][0]].items.append((live.start[g], live.end[g], 0, model.size[g]))
    items: list[_Item] = [(g, model.size[g], live.start[g], live.end[g])
                          for g, kind in kinds.items() if g not in place]
    scratch_steps = {}
    for t, inst in enumerate(comp.instructions):
        if inst.opcode in _CALLS and (size := _callee_temp(inst, alignment, cache)):
            items.append((inst.name, size, t, t))
            scratch_steps[inst.name] = size
    temp_size, where = _pack(items, slots, alignment)
    arena = allocate("temp", temp_size, "temporaries (arena)")
    for key, (index, offset) in where.items():
        if not isinstance(key, str):
            place[key] = (arena if index is None else index, offset)
    slices: dict[str, tuple[BufferSlice, ...]] = {}
    ranges: dict[str, tuple[LiveRange, ...]] = {}
    for inst in comp.instructions:
        leaves = _flat(model.refs[id(inst)])
        slices[inst.name] = tuple(BufferSlice(*place[group[b]], model.size[b]) for b in leaves)
        ranges[inst.name] = tuple(LiveRange(live.start[group[b]], live.end[group[b]])
                                  for b in leaves)
    root_slices = list(slices[comp.root.name])
    for leaf, (index, offset) in output_place.items():
        root_slices[leaf] = BufferSlice(index, offset, root_slices[leaf].size)
    slices[comp.root.name] = tuple(root_slices)
    scratch = {key: BufferSlice(arena if index is None else index, offset, scratch_steps[key])
               for key, (index, offset) in where.items() if isinstance(key, str)}
    leaves = _leaf_shapes(comp.root.shape)
    return BufferAssignment(
        name, tuple(i.name for i in comp.instructions), tuple(allocations), _frozen(slices),
        _frozen(ranges), _frozen(live.in_place), _frozen(live.donated_outputs),
        _frozen(scratch), temp_size, sum(p.shape.nbytes for p in comp.parameters),
        sum(s.nbytes for s in leaves),
        sum(leaves[leaf].nbytes for leaf in live.donated_outputs))
