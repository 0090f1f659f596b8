"""Fusion: groups instructions into `fusion` instructions (mirrors XLA's InstructionFusion,
CpuInstructionFusion and MultiOutputFusion passes).

Contract: `fuse(module)` returns a module computing the same values in which, in the entry
and in every while/conditional/call body, producers are fused into their consumers by the
rules of `fusion_decisions` (loop fusion, reduction (kInput) fusion with row fusion when a row
fits in L1, dot epilogue (kOutput) fusion), lone elementwise ops and reductions are wrapped
into one-instruction fusions, and sibling fusions reading a common input are merged into
multi-output fusions (`multi_output_fusion`). A fusion's `called` computation takes the
fusion's operands as its parameters, in order; its root is the fused result (a tuple for a
multi-output fusion, whose users read it through get-tuple-element); its `kind` attribute is
kLoop, kInput or kOutput. Reduction combiners, sort comparators and existing fusions are left
alone. The module comes back unchanged (the same object) when nothing fuses. Tiling is
recorded afterwards by `passes.tiling.assign_tiling`.

How: instructions are visited users first (reverse topological order). Each one still needed
by someone outside the groups formed so far starts a group, which takes in its producers,
nearest first, while `producer_verdict` and `classify_group` allow it. A producer may end up
copied into several groups (cheap ones); a reduction or dot joins at most one.
"""
from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from jaxlite.xla.analysis import has_side_effects
from jaxlite.xla.analysis import users as users_of
from jaxlite.xla.cost_model import L1_BYTES, MAX_EXPENSIVE_COPIES, is_data_expanding
from jaxlite.xla.ir import (
    HloComputation,
    HloInstruction,
    HloModule,
    NameUniquer,
    reachable_computations,
)
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion_decisions import (
    LOOP,
    Classification,
    Verdict,
    classify_group,
    is_fusible_consumer,
    is_fusion_core,
    is_loop_fusible,
    is_materialized,
    is_wrappable,
    producer_verdict,
)
from jaxlite.xla.passes.multi_output_fusion import merge_sibling_fusions
from jaxlite.xla.passes.rewriting import callees_first, module_names

__all__ = ["FusionOptions", "fuse", "fusions_of"]

# Computations called with scalars (combiners, comparators; collectives' reducers too: the
# cpu backend applies them elementwise) or already fused are not fused.
_NOT_FUSED_CALLERS = frozenset({
    Opcode.REDUCE, Opcode.REDUCE_WINDOW, Opcode.SCATTER, Opcode.SORT,
    Opcode.SELECT_AND_SCATTER, Opcode.FUSION, Opcode.CUSTOM_CALL, Opcode.ALL_REDUCE,
    Opcode.REDUCE_SCATTER})


@dataclass(frozen=True)
class FusionOptions:
    """Knobs of `fuse` (the defaults are the pipeline's).

    multi_output : merge sibling fusions that read a common input.
    row_fusion : fuse a reduction into consumers of its broadcast result when rows fit.
    row_bytes_limit : the largest row, in bytes, of a row fusion (the L1 cache).
    max_expensive_copies : at most this many fused copies of an expensive producer.
    max_instructions, max_operands : size limits of one fusion.
    wrap_single : wrap lone elementwise ops and reductions into one-instruction fusions.
    """

    multi_output: bool = True
    row_fusion: bool = True
    row_bytes_limit: int = L1_BYTES
    max_expensive_copies: int = MAX_EXPENSIVE_COPIES
    max_instructions: int = 256
    max_operands: int = 64
    wrap_single: bool = True

    @property
    def row_limit(self) -> int | None:
        return self.row_bytes_limit if self.row_fusion else None


def fusions_of(module: HloModule) -> list[HloInstruction]:
    """Every fusion instruction of the module (fused computations hold none)."""
    return [inst for comp in module.computations for inst in comp.instructions
            if inst.opcode is Opcode.FUSION]


def fuse(module: HloModule, options: FusionOptions | None = None) -> HloModule:
    """Fuse the module's entry and control-flow bodies (see the module docstring)."""
    options = options or FusionOptions()
    skipped = _not_fused(module)
    calls = Counter(id(c) for comp in module.computations for inst in comp.instructions
                    for c in inst.called)
    shared_bodies = frozenset(key for key, count in calls.items() if count > 1)
    names = module_names(module)
    new_callee: dict[int, HloComputation] = {}
    for comp in callees_first(module):
        if id(comp) in skipped:
            continue
        new = _fuse_computation(comp, new_callee, names, options, shared_bodies)
        if new is not comp:
            new_callee[id(comp)] = new
    if not new_callee:
        return module
    return HloModule(module.name, new_callee.get(id(module.entry), module.entry),
                     num_partitions=module.num_partitions)


def _not_fused(module: HloModule) -> set[int]:
    skipped: set[int] = set()
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in _NOT_FUSED_CALLERS:
                for callee in inst.called:
                    skipped.update(id(c) for c in reachable_computations(callee))
    return skipped


def _fuse_computation(comp: HloComputation, new_callee: dict[int, HloComputation],
                      names: NameUniquer, options: FusionOptions,
                      shared_bodies: frozenset[int]) -> HloComputation:
    planner = _Planner(comp, options)
    planner.plan()
    new = _materialize(comp, planner, new_callee, names)
    if options.multi_output:
        new = merge_sibling_fusions(new, names, options.row_limit, options.max_instructions,
                                    options.max_operands, shared_bodies)
    return new


# ------------------------------------------------------------------------------ planning

@dataclass(eq=False)
class _Group:
    """A fusion being planned: its root and members (instructions of the computation)."""

    root: HloInstruction
    members: dict[int, HloInstruction] = field(default_factory=dict)
    classification: Classification = field(default_factory=lambda: Classification(None))
    # ids of the values the members read from outside the group (the fusion's operands),
    # kept up to date as members join so that a join costs O(its operands), not O(group).
    external: set[int] = field(default_factory=set)


class _Planner:
    """Decides the groups of one computation (see the module docstring)."""

    def __init__(self, comp: HloComputation, options: FusionOptions) -> None:
        self.comp = comp
        self.options = options
        self.position = {id(inst): n for n, inst in enumerate(comp.instructions)}
        self.users = users_of(comp)
        self.holders: dict[int, list[_Group]] = {}
        self.groups: dict[int, _Group] = {}  # id of a standalone instruction -> its group
        self.cuts = clean_cuts(comp, self.users, max(1, options.max_instructions // 2))
        self.materialized: dict[int, bool] = {}  # by id: see fusion_decisions.is_materialized

    def plan(self) -> None:
        for inst in reversed(self.comp.instructions):
            if not self._needed(inst):
                continue
            group = _Group(inst, {id(inst): inst}, external={id(o) for o in inst.operands})
            self._hold(inst, group)
            self.groups[id(inst)] = group
            if is_fusible_consumer(inst):
                group.classification = classify_group([inst], [inst], self.options.row_limit)
                self._grow(group)

    def _hold(self, inst: HloInstruction, group: _Group) -> None:
        self.holders.setdefault(id(inst), []).append(group)

    def _needed(self, inst: HloInstruction) -> bool:
        """Whether `inst` must exist on its own: the root, a parameter, a side effect, an
        unused value (dead code is DCE's business), or read by a group lacking it."""
        users = self.users[inst]
        if (inst is self.comp.root or inst.opcode is Opcode.PARAMETER or not users
                or has_side_effects(inst)):
            return True
        return any(id(inst) not in group.members
                   for user in users for group in self.holders.get(id(user), ()))

    def _grow(self, group: _Group) -> None:
        heap: list[tuple[int, int]] = []
        by_position = self.comp.instructions
        seen: set[int] = set()

        def push_operands(inst: HloInstruction) -> None:
            for operand in inst.operands:
                if id(operand) not in seen and id(operand) not in group.members:
                    seen.add(id(operand))
                    heapq.heappush(heap, (-self.position[id(operand)], id(operand)))
        push_operands(group.root)
        while heap:
            producer = by_position[-heapq.heappop(heap)[0]]
            if self._try_add(group, producer):
                push_operands(producer)

    def _try_add(self, group: _Group, producer: HloInstruction) -> bool:
        if id(producer) in self.cuts:
            return False
        users = self.users[producer]
        inside = [u for u in users if id(u) in group.members]
        if not inside:
            return False
        owned = not is_fusion_core(producer) or self._downstream_owned(producer, group)
        is_root = producer is self.comp.root
        materialized = self.materialized.get(id(producer))
        if materialized is None:
            materialized = self.materialized[id(producer)] = is_materialized(users, is_root)
        verdict = producer_verdict(producer, users, inside, is_root,
                                   len(self.holders.get(id(producer), ())), owned,
                                   self.options.max_expensive_copies, materialized)
        if verdict.verdict is Verdict.REFUSE:
            return False
        if len(group.members) >= self.options.max_instructions:
            return False
        external = (group.external - {id(producer)}) | {
            id(o) for o in producer.operands if id(o) not in group.members}
        if len(external) > self.options.max_operands:
            return False
        group.members[id(producer)] = producer
        classification = group.classification
        # A loop group stays a loop group when a loop-fusible producer joins (what
        # classify_group would say), so only groups with a reduction or dot are reclassified.
        if classification.kind != LOOP or not is_loop_fusible(producer):
            classification = classify_group([group.root], self.ordered_members(group),
                                             self.options.row_limit)
            if not classification:
                del group.members[id(producer)]
                return False
        group.classification = classification
        group.external = external
        self._hold(producer, group)
        return True

    def _downstream_owned(self, producer: HloInstruction, group: _Group) -> bool:
        """Whether every member computed from `producer` is held by `group` alone and, the
        group's root aside, used only inside the group (rule 3 of fusion_decisions)."""
        stack = [u for u in self.users[producer] if id(u) in group.members]
        seen: set[int] = set()
        while stack:
            inst = stack.pop()
            if id(inst) in seen:
                continue
            seen.add(id(inst))
            if len(self.holders.get(id(inst), ())) != 1:
                return False
            escapes = inst is self.comp.root or any(
                id(u) not in group.members for u in self.users[inst])
            if inst is not group.root and escapes:
                return False
            stack.extend(u for u in self.users[inst] if id(u) in group.members)
        return True

    def ordered_members(self, group: _Group) -> list[HloInstruction]:
        return sorted(group.members.values(), key=lambda i: self.position[id(i)])


def clean_cuts(comp: HloComputation, users: dict, every: int) -> set[int]:
    """Ids of the values where a long run of fusible work is cut into fusions of about
    `every` instructions: each one is, at its place in the order, the only value computed
    since the previous cut that later work reads (parameters, constants, broadcasts and
    values written to memory anyway aside), so the fusions on either side share no work.

    Without cuts a group grows to the size limit and stops at an arbitrary frontier whose
    values then start groups that copy each other's producers, which fragments a deep chain
    into thousands of tiny fusions. A multiply is never a cut: its add or subtract user
    may contract with it into one multiply-add, and a cut would change that rounding."""
    instructions = comp.instructions
    if len(instructions) <= every:
        return set()
    position = {id(inst): n for n, inst in enumerate(instructions)}
    starts_ends = [0] * (len(instructions) + 1)
    counted = [False] * len(instructions)
    for n, inst in enumerate(instructions):
        if is_loop_fusible(inst) and not is_data_expanding(inst) and users[inst]:
            counted[n] = True
            starts_ends[n] += 1
            starts_ends[max(position[id(u)] for u in users[inst])] -= 1
    cuts: set[int] = set()
    live = since = 0
    for n, inst in enumerate(instructions):
        live += starts_ends[n]
        if not counted[n]:
            continue
        since += 1
        if since >= every and live == 1 and inst.opcode is not Opcode.MULTIPLY \
                and inst is not comp.root:
            cuts.add(id(inst))
            since = 0
    return cuts


def _external_operands(members: Sequence[HloInstruction]) -> list[HloInstruction]:
    """The operands of a group that come from outside it, in order of first use."""
    inside = {id(m) for m in members}
    seen: dict[int, HloInstruction] = {}
    for m in members:
        for operand in m.operands:
            if id(operand) not in inside and id(operand) not in seen:
                seen[id(operand)] = operand
    return list(seen.values())


# ------------------------------------------------------------------------- materializing

def _base_name(name: str) -> str:
    return re.sub(r"\.\d+$", "", name) or "fused"


def _becomes_fusion(group: _Group, options: FusionOptions) -> bool:
    return len(group.members) > 1 or (options.wrap_single and is_wrappable(group.root))


def _materialize(comp: HloComputation, planner: _Planner,
                 new_callee: dict[int, HloComputation], names: NameUniquer) -> HloComputation:
    """The computation with each planned group replaced by a fusion instruction."""
    options = planner.options
    fused = {key for key, group in planner.groups.items() if _becomes_fusion(group, options)}
    # A fused copy may keep its original's name when the original leaves the computation.
    free_names = {inst.name for inst in comp.instructions
                  if id(inst) not in planner.groups or id(inst) in fused}
    new_of: dict[int, HloInstruction] = {}
    out: list[HloInstruction] = []
    changed = False
    for inst in comp.instructions:
        group = planner.groups.get(id(inst))
        if group is None:
            changed = True
            continue
        if id(inst) in fused:
            new = _build_fusion(planner.ordered_members(group), group, new_of, new_callee,
                                names, free_names)
        else:
            operands = tuple(new_of[id(o)] for o in inst.operands)
            called = tuple(new_callee.get(id(c), c) for c in inst.called)
            new = inst
            if any(a is not b for a, b in zip(operands + called, inst.operands + inst.called)):
                new = inst.replace(operands=operands, called=called)
        changed = changed or new is not inst
        out.append(new)
        new_of[id(inst)] = new
    if not changed:
        return comp
    return HloComputation(comp.name, tuple(out), new_of[id(comp.root)])


def _build_fusion(members: list[HloInstruction], group: _Group,
                  new_of: dict[int, HloInstruction], new_callee: dict[int, HloComputation],
                  names: NameUniquer, free_names: set[str]) -> HloInstruction:
    """The fusion instruction of a group, with its fused computation."""
    params: list[HloInstruction] = []
    param_of: dict[int, HloInstruction] = {}
    clone_of: dict[int, HloInstruction] = {}
    clones: list[HloInstruction] = []
    for operand in _external_operands(members):
        number = len(params)
        param = HloInstruction(names(f"param_{number}"), Opcode.PARAMETER, operand.shape,
                               attrs={"number": number})
        params.append(param)
        param_of[id(operand)] = param
    for m in members:
        operands = tuple(clone_of[id(o)] if id(o) in clone_of else param_of[id(o)]
                         for o in m.operands)
        if m.name in free_names:
            free_names.discard(m.name)
            name = m.name
        else:
            name = names(_base_name(m.name))
        called = tuple(new_callee.get(id(c), c) for c in m.called)
        clone = m.replace(name=name, operands=operands, called=called)
        clone_of[id(m)] = clone
        clones.append(clone)
    root = clone_of[id(group.root)]
    body = HloComputation(names("fused_computation"), tuple(params + clones), root)
    label = group.root.opcode.text.replace("-", "_")
    operands = tuple(new_of[id(o)] for o in _external_operands(members))
    kind = group.classification.kind
    assert kind is not None, f"group of %{group.root.name} was planned without a kind"
    return HloInstruction(names(f"{label}_fusion"), Opcode.FUSION, group.root.shape, operands,
                          {"kind": kind}, (body,), group.root.metadata)
