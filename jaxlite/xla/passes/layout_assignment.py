"""Layout assignment: a memory layout (minor-to-major) for every value (mirrors XLA's
LayoutAssignment and CpuLayoutAssignment, much simplified).

Contract: `assign_layouts(module)` returns a module with the same instructions and values in
which every array value of the entry and of every control-flow body (while, call,
conditional) has the layout chosen by the rules below; only `Shape.layout` changes. Our
evaluator works on logical arrays, so layouts never change a value: they are metadata for
the code generators (how a value is stored) and for buffer assignment (which instructions
move no data). The only instruction whose meaning depends on layouts is `bitcast` (it
reinterprets memory), so a bitcast and its operand keep the layouts they had. The module
comes back unchanged (the same object) when every value already has its layout.

The rules:
  1. Row-major (`{rank-1,...,0}`) everywhere by default. Parameters and roots of the entry
     and of control-flow bodies are always row-major: the runtime hands over and takes back
     row-major numpy buffers, and a body's interface must match its caller's operands.
  2. A dot read only by transposes (directly, or through a fusion parameter read only by
     transposes), all asking for the same layout, writes its result in the layout that
     makes those transposes bitcasts: a GEMM writes its result transposed at no cost (it
     computes Bt.At instead of A.B), and the transpose then moves no data. (A fusion reading
     the dot through the transpose walks both in the same memory order, so it may even
     write its result over the dot's: see `reads_only_at_written_offset`. Autodiff makes this
     pattern in every weight gradient, `transpose(dot(dy, x))`.)
  3. A transpose whose users are all dots (or dot fusions reading it only as a dot operand)
     takes the layout that makes it a bitcast of its operand: a GEMM packs its operands into
     tiles whatever their strides, so the copy is saved at no cost. A transpose read only
     by reductions does the same when the reduced dimensions come out minor in that layout:
     the reduction then reads the operand's memory contiguously, row by row.
Inside a fusion, parameters take the layouts of the fusion's operands (the fused code reads
operands as they are stored) and the other values, which are never stored, are row-major
like everything else: their layouts only name the order in which the fused loop nest
visits them. Reduction combiners and sort comparators (scalars) are untouched.

Best run after simplification and before fusion, as XLA's CPU pipeline does, so that fusion
and tiling see the layouts; after fusion it makes the same choices, and tiling must follow.
"""
from __future__ import annotations

import weakref
from typing import Sequence

from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule, NameUniquer
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.rewriting import callees_first, module_names
from jaxlite.xla.shape import Shape

__all__ = ["assign_layouts", "row_major", "is_row_major", "bitcast_layout_of_transpose",
           "moves_no_data", "preserves_memory_order", "reads_only_at_written_offset"]

Layout = tuple[int, ...]

_CONTROL = frozenset({Opcode.WHILE, Opcode.CALL, Opcode.CONDITIONAL})
# Fusion kinds (ir.py) whose code reads an operand element right before writing the result
# elements computed from it. Not kOutput: a GEMM may accumulate partial sums in its result's
# memory before its epilogue reads the other operands.
_ONE_PASS_FUSIONS = ("kLoop", "kInput")


# ----------------------------------------------------------------------- layout facts

def row_major(shape: Shape) -> Shape:
    """`shape` with the default row-major layout (tuple elements too)."""
    if shape.is_tuple:
        return Shape.tuple([row_major(s) for s in shape.tuple_shapes or ()])
    return Shape(shape.dtype, shape.dims)


def is_row_major(shape: Shape) -> bool:
    return not shape.is_tuple and shape.layout == tuple(range(shape.rank - 1, -1, -1))


def bitcast_layout_of_transpose(inst: HloInstruction, operand_layout: Layout) -> Layout:
    """The result layout under which transpose `inst` is a bitcast of an operand stored in
    `operand_layout`: result dimension k is operand dimension `dimensions[k]`, so the
    result's memory order must name, minor to major, the same operand dimensions."""
    perm = tuple(inst.attr("dimensions"))
    result_dim_of = {operand_dim: k for k, operand_dim in enumerate(perm)}
    return tuple(result_dim_of[d] for d in operand_layout)


def _operand_layout_for(transpose: HloInstruction, result_layout: Layout) -> Layout:
    """The operand layout under which `transpose`, stored in `result_layout`, is a bitcast."""
    perm = tuple(transpose.attr("dimensions"))
    return tuple(perm[d] for d in result_layout)


def moves_no_data(inst: HloInstruction) -> bool:
    """Whether `inst`'s result is its operand's memory, unchanged, under the recorded
    layouts: a bitcast, a reshape between row-major shapes, or a transpose whose layouts
    make it a bitcast. Buffer assignment lets such instructions alias their operand."""
    if inst.opcode is Opcode.BITCAST:
        return True
    if inst.shape.is_tuple or not inst.operands or inst.operands[0].shape.is_tuple:
        return False
    operand = inst.operands[0].shape
    if inst.opcode is Opcode.RESHAPE:
        return is_row_major(operand) and is_row_major(inst.shape)
    if inst.opcode is Opcode.TRANSPOSE:
        return _operand_layout_for(inst, inst.shape.layout or ()) == operand.layout
    return False


def preserves_memory_order(inst: HloInstruction, operand_index: int) -> bool:
    """Whether the element `inst` stores at memory offset o depends on operand
    `operand_index` only through that operand's element at the same offset o.

    True for elementwise instructions whose operand has the result's dimensions, layout and
    element size, and for instructions that move no data. Buffer assignment uses it to
    decide when a result may be written over an operand (in place).
    """
    operand = inst.operands[operand_index].shape
    result = inst.shape
    if operand.is_tuple or result.is_tuple:
        return False
    if operand.dtype.itemsize != result.dtype.itemsize:
        return False
    if inst.opcode.is_elementwise:
        return operand.dims == result.dims and operand.layout == result.layout
    return moves_no_data(inst)


# Per fused computation (immutable), the answer for every value: buffer assignment asks
# once per operand of every fusion, and a fusion may have dozens of operands.
_ORDER_PRESERVING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _order_preserving_values(comp: HloComputation) -> dict[int, bool]:
    """For each value of `comp` (by id), whether everything computed from it, directly or
    not, reads it only through instructions that preserve memory order."""
    answer = _ORDER_PRESERVING.get(comp)
    if answer is None:
        users = comp.users()
        answer = {}
        for inst in reversed(comp.instructions):  # users before the values they read
            answer[id(inst)] = all(
                answer[id(user)] and all(preserves_memory_order(user, j)
                                         for j, o in enumerate(user.operands) if o is inst)
                for user in users[inst])
        _ORDER_PRESERVING[comp] = answer
    return answer


def reads_only_at_written_offset(inst: HloInstruction, operand_index: int) -> bool:
    """Whether `inst` reads operand `operand_index` only at the memory offset where it then
    writes the result element computed from it, so that it may write over that operand.

    True for an instruction that `preserves_memory_order`; for the array a
    dynamic-update-slice or a scatter updates (its result is that array with some elements
    replaced, so it may be updated where it lies, as XLA does: a scan then writes one slice
    of its stacked outputs per iteration instead of copying them all); and for a kLoop or
    kInput fusion with an array root whose parameter (stored as the operand is) reaches
    the root only through such instructions; a reduction fusion may so write over an
    operand it reads elementwise, never over the one it reduces.
    """
    if _updates_in_place(inst, operand_index):
        return True
    if inst.opcode is not Opcode.FUSION:
        return inst.opcode.is_elementwise and preserves_memory_order(inst, operand_index)
    fused = inst.called[0]
    if inst.attr("kind") not in _ONE_PASS_FUSIONS or fused.root.shape.is_tuple:
        return False
    param = fused.parameters[operand_index]
    if param.shape != inst.operands[operand_index].shape:
        return False  # the fused code would read the operand in another layout
    return _order_preserving_values(fused)[id(param)]


def _updates_in_place(inst: HloInstruction, operand_index: int) -> bool:
    """Whether operand `operand_index` is an array `inst` updates: operand 0 of a
    dynamic-update-slice, one of the first n of an n-array scatter, stored in the result's
    layout. Their kernels copy it into the result first, a copy skipped when both are the
    same memory, and then read the result (not the operand) where they write it."""
    if inst.opcode is Opcode.DYNAMIC_UPDATE_SLICE:
        updated = operand_index == 0
    elif inst.opcode is Opcode.SCATTER:
        updated = operand_index < (len(inst.operands) - 1) // 2
    else:
        return False
    operand, result = inst.operands[operand_index].shape, inst.shape
    if result.is_tuple:
        result = (result.tuple_shapes or ())[operand_index]
    return updated and not operand.is_tuple and operand == result


# ---------------------------------------------------------------------------- the pass

def assign_layouts(module: HloModule) -> HloModule:
    """Choose every value's layout by the rules of the module docstring."""
    assigned = _laid_out_computations(module)
    names = module_names(module)
    new_callee: dict[int, HloComputation] = {}
    fused_variants: dict[tuple, HloComputation] = {}
    for comp in callees_first(module):
        if id(comp) not in assigned:
            continue
        new = _Relayout(comp, new_callee, fused_variants, names).run()
        if new is not comp:
            new_callee[id(comp)] = new
    entry = new_callee.get(id(module.entry), module.entry)
    if entry is module.entry:
        return module
    return HloModule(module.name, entry, num_partitions=module.num_partitions)


def _laid_out_computations(module: HloModule) -> set[int]:
    """Ids of the entry and the control-flow bodies it reaches through non-fused code."""
    result: set[int] = set()
    stack = [module.entry]
    while stack:
        comp = stack.pop()
        if id(comp) in result:
            continue
        result.add(id(comp))
        for inst in comp.instructions:
            if inst.opcode in _CONTROL:
                stack.extend(inst.called)
    return result


class _Relayout:
    """Chooses the layouts of one computation and rebuilds it with them."""

    def __init__(self, comp: HloComputation, new_callee: dict[int, HloComputation],
                 fused_variants: dict[tuple, HloComputation], names: NameUniquer) -> None:
        self.comp = comp
        self.new_callee = new_callee
        self.fused_variants = fused_variants
        self.names = names
        self.users = comp.users()
        self.pinned = _pinned(comp)
        self.layout: dict[int, Layout] = {}

    def run(self) -> HloComputation:
        for inst in self.comp.instructions:
            if inst.opcode is Opcode.DOT and self._free(inst):
                wanted = self._wanted_by_users(inst)
                if wanted is not None:
                    self.layout[id(inst)] = wanted
        for inst in self.comp.instructions:
            if inst.opcode is Opcode.TRANSPOSE and self._free(inst):
                chosen = self._transpose_for_consumers(inst)
                if chosen is not None:
                    self.layout[id(inst)] = chosen
        return self._rebuild()

    # -------------------------------------------------------------------- decisions
    def _free(self, inst: HloInstruction) -> bool:
        """Whether rules 2 and 3 may choose this instruction's layout."""
        return (id(inst) not in self.pinned and inst is not self.comp.root
                and not inst.shape.is_tuple and inst.shape.rank > 1)

    def _wanted_by_users(self, inst: HloInstruction) -> Layout | None:
        """Rule 2: the one layout every user (a transpose) wants dot `inst` in, if any."""
        wanted: set[Layout] = set()
        for user in self.users[inst]:
            if user.opcode is Opcode.TRANSPOSE and id(user) not in self.pinned:
                result = Shape(user.shape.dtype, user.shape.dims)  # row-major, rule 1
                wanted.add(_operand_layout_for(user, result.layout or ()))
            elif user.opcode is Opcode.FUSION:
                for param in _fused_parameters_of(user, inst):
                    inner_users = user.called[0].users()[param]
                    if not inner_users or any(u.opcode is not Opcode.TRANSPOSE
                                              for u in inner_users):
                        return None
                    # Inner values become row-major (see `_fused_variant`).
                    wanted.update(_operand_layout_for(u, row_major(u.shape).layout or ())
                                  for u in inner_users)
            else:
                return None
        if len(wanted) != 1:
            return None
        layout = wanted.pop()
        return None if layout == Shape(inst.shape.dtype, inst.shape.dims).layout else layout

    def _transpose_for_consumers(self, inst: HloInstruction) -> Layout | None:
        """Rule 3: a bitcast layout for a transpose read only by dots or reductions."""
        operand = inst.operands[0]
        operand_layout = self._shape_of(operand).layout or ()
        free_layout = bitcast_layout_of_transpose(inst, operand_layout)
        users = self.users[inst]
        if not users:
            return None
        if all(_reads_as_dot_operand(u, inst) for u in users):
            return free_layout
        if all(u.opcode is Opcode.REDUCE for u in users):
            reduced = {frozenset(u.attr("dimensions", ())) for u in users}
            if len(reduced) == 1:
                dims = reduced.pop()
                if set(free_layout[:len(dims)]) == dims:
                    return free_layout
        return None

    # -------------------------------------------------------------------- rebuilding
    def _shape_of(self, inst: HloInstruction) -> Shape:
        """The layout decided for `inst` before the rebuild (array values only)."""
        if id(inst) in self.pinned or inst.shape.is_tuple:
            return inst.shape
        layout = self.layout.get(id(inst))
        return Shape(inst.shape.dtype, inst.shape.dims, layout)

    def _new_shape(self, inst: HloInstruction, operands: Sequence[HloInstruction],
                   called: Sequence[HloComputation]) -> Shape:
        op = inst.opcode
        if id(inst) in self.pinned:
            return inst.shape
        if op is Opcode.TUPLE:
            return Shape.tuple([o.shape for o in operands])
        if op is Opcode.GET_TUPLE_ELEMENT:
            return (operands[0].shape.tuple_shapes or ())[inst.attr("index")]
        if op is Opcode.FUSION:
            return called[0].root.shape
        if op in (Opcode.WHILE, Opcode.CALL, Opcode.CONDITIONAL):
            return called[-1].root.shape
        if inst.shape.is_tuple:
            return row_major(inst.shape)
        return self._shape_of(inst)

    def _rebuild(self) -> HloComputation:
        new_of: dict[int, HloInstruction] = {}
        out: list[HloInstruction] = []
        changed = False
        for inst in self.comp.instructions:
            operands = tuple(new_of[id(o)] for o in inst.operands)
            if inst.opcode is Opcode.FUSION:
                called = (self._fused_variant(inst.called[0], operands),)
            else:
                called = tuple(self.new_callee.get(id(c), c) for c in inst.called)
            shape = self._new_shape(inst, operands, called)
            new = inst
            if (shape != inst.shape or any(a is not b for a, b in zip(operands, inst.operands))
                    or any(a is not b for a, b in zip(called, inst.called))):
                new = inst.replace(shape=shape, operands=operands, called=called)
                changed = True
            new_of[id(inst)] = new
            out.append(new)
        if not changed:
            return self.comp
        return HloComputation(self.comp.name, tuple(out), new_of[id(self.comp.root)])

    def _fused_variant(self, fused: HloComputation,
                       operands: Sequence[HloInstruction]) -> HloComputation:
        """`fused` with parameters laid out like `operands` and inner values row-major (a
        renamed copy when another fusion needs the same computation laid out otherwise)."""
        fused = self.new_callee.get(id(fused), fused)
        pinned = _pinned(fused)
        shape_of = {id(p): p.shape if id(p) in pinned else o.shape
                    for p, o in zip(fused.parameters, operands)}
        for inst in fused.instructions:
            if inst.opcode is Opcode.TUPLE:
                shape_of[id(inst)] = Shape.tuple([shape_of[id(o)] for o in inst.operands])
            elif inst.opcode is Opcode.GET_TUPLE_ELEMENT:
                shape_of[id(inst)] = (shape_of[id(inst.operands[0])].tuple_shapes
                                      or ())[inst.attr("index")]
            elif id(inst) not in shape_of:
                shape_of[id(inst)] = inst.shape if id(inst) in pinned else row_major(inst.shape)
        key = (id(fused), tuple(shape_of[id(i)] for i in fused.instructions))
        if key[1] == tuple(i.shape for i in fused.instructions):
            return fused
        if key not in self.fused_variants:
            rename = any(k[0] == id(fused) for k in self.fused_variants)  # names stay unique
            new_of: dict[int, HloInstruction] = {}
            for inst in fused.instructions:
                new_of[id(inst)] = inst.replace(
                    shape=shape_of[id(inst)], operands=tuple(new_of[id(o)] for o in inst.operands),
                    name=self.names(inst.name.rsplit(".", 1)[0]) if rename else inst.name)
            name = self.names(fused.name.rsplit(".", 1)[0]) if rename else fused.name
            self.fused_variants[key] = HloComputation(
                name, tuple(new_of[id(i)] for i in fused.instructions), new_of[id(fused.root)])
        return self.fused_variants[key]


def _pinned(comp: HloComputation) -> set[int]:
    """Ids of the instructions whose layouts carry meaning: bitcasts and their operands."""
    bitcasts = [i for i in comp.instructions if i.opcode is Opcode.BITCAST]
    return {id(i) for i in bitcasts} | {id(i.operands[0]) for i in bitcasts}


def _fused_parameters_of(fusion: HloInstruction,
                         operand: HloInstruction) -> list[HloInstruction]:
    """The fused computation's parameters that receive `operand`."""
    params = fusion.called[0].parameters
    return [params[k] for k, o in enumerate(fusion.operands) if o is operand]


def _reads_as_dot_operand(user: HloInstruction, value: HloInstruction) -> bool:
    """Whether `user` reads `value` only as an operand of a dot (plain or fused)."""
    if user.opcode is Opcode.DOT:
        return True
    if user.opcode is not Opcode.FUSION:
        return False
    inner_users = user.called[0].users()
    return all(inner_users[p] and all(u.opcode is Opcode.DOT for u in inner_users[p])
               for p in _fused_parameters_of(user, value))
