"""Buffer assignment: where every value of a scheduled module lives in memory (mirrors XLA's
BufferAssignment, HloAliasAnalysis, HloLiveRange and its best-fit heap simulator).

An analysis: `assign_buffers(module, donated_parameters)` returns a `BufferAssignment` and
rewrites nothing. The entry's instruction order is the schedule (see passes/scheduling.py).

- Buffers. Each array value gets one, except views: a tuple is a view of its elements, a
  get-tuple-element of its operand's element, and an instruction that moves no data under
  its layouts (`layout_assignment.moves_no_data`: bitcast, reshape between row-major
  shapes, transpose laid out as a bitcast) shares its operand's buffer. An instruction
  returning a tuple (multi-output fusion, while, call) defines a buffer per element.
  Called computations are opaque: a call, while or conditional reserves, during its own
  step, scratch space as large as the temporaries of its callees (assigned the same way);
  reduction combiners work on scalars in registers. A backend may also say how much
  working memory an instruction's kernel needs while it runs (a GEMM's packed panels:
  `scratch`); that space is reserved during the instruction's step in the same way, so
  it reuses memory no value holds then and counts in the temporaries.
- Liveness. Step t runs the t-th instruction. A buffer is live from the step that defines
  it (0 for parameters) to the last step that reads it through any view, inclusive; the
  result's buffers to step n, after the last instruction. Buffers share memory only when
  their live ranges are disjoint.
- In place. An instruction may write its result over an operand's buffer when that buffer
  dies there (no later reader; not a result; not an input, unless it is the donated
  parameter this result is returned in) and the result reads it only at the offset it
  writes (`layout_assignment.preserves_memory_order`): an elementwise instruction whose
  operand has the result's dimensions, layout and element size, or a kLoop or kInput
  fusion with an array root that the operand reaches only through such instructions (a
  reduction fusion may write over what it reads elementwise, never over what it reduces).
  Both values then are one buffer, live over the union of their ranges.
- Donation. Results are matched in order with donated parameters of the same element type
  and dimensions, each parameter once, as `donate_argnums` pairs them. A matched result
  lives in the parameter's buffer, written in place or after the parameter's last read;
  when the parameter is read later, the result is a temporary copied there at the end
  (step n + 1, after results that are parameters or constants are copied out, at step n).
- Allocations. Each parameter (array element), constant and result has its own; all other
  buffers are temporaries in one arena, placed best-fit, largest first, at offsets aligned
  to `alignment` bytes, in the space of dead buffers; a temporary may also use a result's
  allocation before the result is defined, or a donated parameter's after its last read,
  as XLA does. Several placement orders are tried; the smallest arena is kept.
- Sizes, as `jax.stages.Compiled.memory_analysis` reports them: `argument_size_in_bytes`
  (the entry parameters), `output_size_in_bytes` (the result's arrays),
  `alias_size_in_bytes` (results matched with donated parameters) and `temp_size_in_bytes`
  (the arena: peak temporary memory, parameters and results excluded). Differences from
  XLA: tuples are views, so XLA's tuple index tables (8 bytes per element) are not counted;
  a result that is a parameter or a constant is copied into a result allocation.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType as _frozen
from typing import Any, Callable, Iterable, Mapping, Sequence

from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.layout_assignment import moves_no_data, reads_only_at_written_offset
from jaxlite.xla.shape import Shape

__all__ = ["ALIGNMENT", "BufferSlice", "LiveRange", "BufferAllocation", "BufferAssignment",
           "BufferModel", "Liveness", "assign_buffers", "buffer_model", "liveness"]

# Arena offsets are multiples of a cache line (an AVX-512 vector), as in XLA's CPU backend.
ALIGNMENT = 64
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
    result: list[int] = []
    for operand in inst.operands:
        b = model.refs[id(operand)]
        if not isinstance(b, int) or b in result or model.size[b] != inst.shape.nbytes:
            continue
        positions = [j for j, o in enumerate(inst.operands) if b in _flat(model.refs[id(o)])]
        if all(isinstance(model.refs[id(inst.operands[j])], int)
               and reads_only_at_written_offset(inst, j) for j in positions):
            result.append(b)
    return result


# ------------------------------------------------------------------------- liveness

@dataclass(eq=False)
class Liveness:
    """Live ranges of the buffers of one order of a computation, in-place merges done.

    `group[b]` is the first buffer of b's in-place chain, which represents it; `start` and
    `end` are indexed by representatives; `in_place` maps an instruction's name to that of
    the instruction that defined the buffer it writes over.
    """

    model: BufferModel
    steps: int
    group: list[int]
    start: dict[int, int]
    end: dict[int, int]
    in_place: dict[str, str]
    donated_outputs: dict[int, int]  # output leaf -> parameter number, where matched

    def kinds(self) -> dict[int, str]:
        """For each group: "parameter", "constant", "output" or "temp"."""
        result = {g: "temp" for g in self.start}
        for b in self.model.outputs:
            result[self.group[b]] = "output"
        for b, kind in self.model.input_kind.items():
            result[self.group[b]] = kind
        return result


def liveness(comp: HloComputation, donated: Iterable[int] = (),
             model: BufferModel | None = None) -> Liveness:
    """Live ranges of `comp`'s buffers in its instruction order (see the module docstring).
    `donated`: parameter numbers whose buffers the computation may write."""
    model = model or buffer_model(comp)
    steps = len(comp.instructions)
    position = {id(inst): t for t, inst in enumerate(comp.instructions)}
    matched = _match_donations(comp, donated)
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
        if not model.in_place[id(inst)]:
            continue
        new = model.defines[id(inst)][0]
        own = param_buffer.get(matched_buffer.get(new, -1), ())
        # The donated parameter that holds this result first: then no copy is needed.
        for b in sorted(model.in_place[id(inst)], key=lambda b: group[b] not in own):
            g = group[b]
            kind = model.input_kind.get(g)
            if end[g] == t and (kind is None or g in own) and g not in model.outputs:
                group[new] = g
                end[g] = max(end[g], end.pop(new))
                del start[new]
                in_place[inst.name] = model.definer[b].name
                break
    return Liveness(model, steps, group, start, end, in_place, matched)


def _match_donations(comp: HloComputation, donated: Iterable[int]) -> dict[int, int]:
    """Result leaf -> the donated parameter it is returned in."""
    params = {p.attr("number"): p for p in comp.parameters}
    free = [n for n in sorted(set(donated)) if n in params]
    matched: dict[int, int] = {}
    for leaf, shape in enumerate(_leaf_shapes(comp.root.shape)):
        number = next((n for n in free if params[n].shape.same_array(shape)), None)
        if number is not None:
            matched[leaf] = number
            free.remove(number)
    return matched


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


@dataclass(frozen=True)
class BufferAssignment:
    """Where each value of a scheduled module lives, and the memory sizes it needs.

    `slices[name]` and `live_ranges[name]` have one entry per array of the instruction's
    shape (a tuple's elements in order); `in_place[name]` names the instruction that
    defined the buffer the instruction writes over; `donated_outputs` maps result elements
    to the donated parameters that hold them; `scratch[name]` is the temporary space a call,
    while or conditional reserves for its computations, or another instruction for its
    kernel (see `assign_buffers`). Sizes: see the module docstring.
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

    def to_text(self) -> str:
        """A summary: the sizes, then each allocation with the values it holds."""
        held: dict[int, list[tuple[int, int, str]]] = {a.index: [] for a in self.allocations}
        for name, slices in self.slices.items():
            for leaf, (s, r) in enumerate(zip(slices, self.live_ranges[name])):
                text = f"%{name}" + (f"{{{leaf}}}" if len(slices) > 1 else "") + (
                    f": {s.size} B at {s.offset}, live {r.start}..{r.end}")
                if name in self.in_place:
                    text += f", in place of %{self.in_place[name]}"
                held[s.allocation].append((s.offset, r.start, text))
        for name, s in self.scratch.items():
            held[s.allocation].append((s.offset, 0, f"scratch of %{name}: {s.size} B"))
        lines = [f"BufferAssignment of {self.module_name} ({len(self.schedule)} steps): temp "
                 f"{self.temp_size_in_bytes} B, arguments {self.argument_size_in_bytes} B, "
                 f"outputs {self.output_size_in_bytes} B, aliased {self.alias_size_in_bytes} B"]
        for a in self.allocations:
            lines.append(f"allocation {a.index}: {a.label}, {a.size} B")
            lines.extend("  " + text for _, _, text in sorted(set(held[a.index])))
        lines.extend(f"result {{{leaf}}} is returned in donated parameter {number}"
                     for leaf, number in sorted(self.donated_outputs.items()))
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
        if self.capacity is not None and self.capacity < size:
            return None  # no gap of the slot can hold it (spares the walk: _pack asks often)
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

ScratchSize = Callable[[HloInstruction], int]


def assign_buffers(module: HloModule, donated_parameters: Sequence[int] = (),
                   alignment: int = ALIGNMENT,
                   scratch: ScratchSize | None = None) -> BufferAssignment:
    """Assign buffers to the values of `module`'s entry, run in its instruction order.

    `donated_parameters`: entry parameter numbers whose buffers may hold results
    (`donate_argnums`); `alignment`: temporaries start at multiples of it; `scratch`: the
    bytes of working memory an entry instruction's kernel needs during its step (0: none),
    reserved in `BufferAssignment.scratch`. Differences from XLA: see the module docstring.
    """
    return _Assigner(module.entry, tuple(donated_parameters), alignment, {},
                     scratch).run(module.name)


def _callee_temp(inst: HloInstruction, alignment: int, cache: dict[int, int]) -> int:
    """The temporaries of the computations a call, while or conditional runs."""
    sizes = []
    for comp in inst.called:
        if id(comp) not in cache:
            cache[id(comp)] = _Assigner(comp, (), alignment, cache, None).run(
                comp.name).temp_size_in_bytes
        sizes.append(cache[id(comp)])
    return max(sizes, default=0)


class _Assigner:
    """Allocations of one computation: inputs and results first, then the temporaries."""

    def __init__(self, comp: HloComputation, donated: tuple[int, ...], alignment: int,
                 cache: dict[int, int], scratch: ScratchSize | None) -> None:
        self.comp, self.donated, self.alignment, self.cache = comp, donated, alignment, cache
        self.scratch = scratch
        self.model = buffer_model(comp)
        self.live = liveness(comp, donated, self.model)
        self.kinds = self.live.kinds()
        self.allocations: list[BufferAllocation] = []
        self.place: dict[int, tuple[int, int]] = {}   # group -> (allocation, offset)
        self.slots: dict[int, _Heap] = {}             # allocations temporaries may use
        self.param_alloc: dict[int, int] = {}         # donated parameter -> allocation
        # result leaf -> (allocation, offset, live range) where it is handed back
        self.returned: dict[int, tuple[int, int, LiveRange]] = {}

    def allocate(self, kind: str, size: int, label: str) -> int:
        self.allocations.append(BufferAllocation(len(self.allocations) + 1, kind, size, label))
        return len(self.allocations)

    def slot(self, allocation: int, start: int, end: int, size: int) -> None:
        self.slots.setdefault(allocation, _Heap(self.allocations[allocation - 1].size))
        self.slots[allocation].items.append((start, end, 0, size))

    def inputs(self) -> None:
        model, live = self.model, self.live
        for p in self.comp.parameters:
            number, leaves = p.attr("number"), _flat(model.refs[id(p)])
            for leaf, b in enumerate(leaves):
                label = f"parameter {number}" + (f" {{{leaf}}}" if len(leaves) > 1 else "")
                if number in self.donated:
                    label += " (donated)"
                self.place[b] = (self.allocate("parameter", model.size[b], label), 0)
                if number in self.donated and not p.shape.is_tuple:
                    self.param_alloc[number] = self.place[b][0]
                    self.slot(self.place[b][0], 0, live.end[b], model.size[b])
        for g, kind in self.kinds.items():
            if kind == "constant":
                label = f"constant %{model.definer[g].name}"
                self.place[g] = (self.allocate("constant", model.size[g], label), 0)

    def outputs(self) -> None:
        model, live, steps = self.model, self.live, self.live.steps
        for leaf, b in enumerate(model.outputs):
            g, number = live.group[b], live.donated_outputs.get(leaf)
            at_exit = LiveRange(steps, steps)
            if number in self.param_alloc and self.place.get(g, (0,))[0] == self.param_alloc[
                    number]:
                self.returned[leaf] = (*self.place[g], LiveRange(live.start[g], steps))
            elif self.kinds[g] != "output":   # a parameter or constant, copied out
                index = self.allocate("output", model.size[b], f"output {{{leaf}}}")
                self.returned[leaf] = (index, 0, at_exit)
            elif g in self.place:             # the same value returned twice
                continue
            elif number in self.param_alloc:
                index = self.param_alloc[number]
                if live.start[g] > self.slots[index].items[0][1]:  # after its last read
                    self.place[g] = (index, 0)
                    self.slot(index, live.start[g], steps, model.size[g])
                else:  # a temporary, copied into the parameter after the copies out
                    self.slot(index, steps + 1, steps + 1, model.size[g])
                    self.returned[leaf] = (index, 0, LiveRange(steps + 1, steps + 1))
            else:
                self.place[g] = (self.allocate("output", model.size[g], f"output {{{leaf}}}"),
                                 0)
                self.slot(self.place[g][0], live.start[g], steps, model.size[g])

    def temporaries(self) -> tuple[int, dict[str, BufferSlice]]:
        live = self.live
        items: list[_Item] = [(g, self.model.size[g], live.start[g], live.end[g])
                              for g in self.kinds if g not in self.place]
        for t, inst in enumerate(self.comp.instructions):
            if inst.opcode in _CALLS:
                size = _callee_temp(inst, self.alignment, self.cache)
            else:
                size = self.scratch(inst) if self.scratch is not None else 0
            if size:
                items.append((inst.name, size, t, t))
        temp_size, where = _pack(items, self.slots, self.alignment)
        arena = self.allocate("temp", temp_size, "temporaries (arena)")
        scratch: dict[str, BufferSlice] = {}
        for key, size, _, _ in items:
            index, offset = where[key]
            if isinstance(key, str):
                scratch[key] = BufferSlice(arena if index is None else index, offset, size)
            else:
                self.place[key] = (arena if index is None else index, offset)
        return temp_size, scratch

    def run(self, name: str) -> BufferAssignment:
        self.inputs()
        self.outputs()
        temp_size, scratch = self.temporaries()
        model, live, comp = self.model, self.live, self.comp
        slices: dict[str, tuple[BufferSlice, ...]] = {}
        ranges: dict[str, tuple[LiveRange, ...]] = {}
        for inst in comp.instructions:
            groups = [live.group[b] for b in _flat(model.refs[id(inst)])]
            slices[inst.name] = tuple(BufferSlice(*self.place[g], model.size[g])
                                      for g in groups)
            ranges[inst.name] = tuple(LiveRange(live.start[g], live.end[g]) for g in groups)
        root_slices, root_ranges = list(slices[comp.root.name]), list(ranges[comp.root.name])
        for leaf, (index, offset, returned) in self.returned.items():
            root_slices[leaf] = BufferSlice(index, offset, root_slices[leaf].size)
            root_ranges[leaf] = returned
        slices[comp.root.name], ranges[comp.root.name] = tuple(root_slices), tuple(root_ranges)
        leaves = _leaf_shapes(comp.root.shape)
        return BufferAssignment(
            name, tuple(i.name for i in comp.instructions), tuple(self.allocations),
            _frozen(slices), _frozen(ranges), _frozen(live.in_place),
            _frozen(live.donated_outputs), _frozen(scratch), temp_size,
            sum(p.shape.nbytes for p in comp.parameters), sum(s.nbytes for s in leaves),
            sum(leaves[leaf].nbytes for leaf in live.donated_outputs))
