"""Sibling multi-output fusion: fusions that read a common input become one fusion with a
tuple of results (mirrors XLA's CpuMultiOutputFusion / sibling fusion).

Two fusions merge when (1) they share an operand that is an array with more than one element,
(2) neither depends on the other (so the merged fusion creates no cycle), (3) both are kLoop
or kInput fusions whose loop nests agree: loops over the same shape, reductions of the same
operand shape over the same dimensions, or a loop over exactly the shape a row reduction
runs over (then the merged fusion has a row structure and is computed row by row), and
(4) the merged group still passes `classify_group` and the size limits. The merged fusion's
root is a tuple of both fusions' results; their users read them with get-tuple-element.
The common input is then read once instead of twice.
"""
from __future__ import annotations

from collections.abc import Hashable

from jaxlite.xla.analysis import instruction_key
from jaxlite.xla.analysis import users as users_of
from jaxlite.xla.ir import HloComputation, HloInstruction, NameUniquer
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion_decisions import INPUT, LOOP, classify_group
from jaxlite.xla.passes.fusion_rows import row_structure
from jaxlite.xla.passes.rewriting import emit_with_operands
from jaxlite.xla.shape import Shape

__all__ = ["fusion_outputs", "loop_space", "merge_sibling_fusions", "siblings_compatible"]


def fusion_outputs(fusion: HloInstruction) -> list[HloInstruction]:
    """The results of a fusion's computation: its root, or the elements of a tuple root."""
    root = fusion.called[0].root
    return list(root.operands) if root.opcode is Opcode.TUPLE else [root]


def _body(fusion: HloInstruction) -> list[HloInstruction]:
    return [i for i in fusion.called[0].instructions if i.opcode is not Opcode.PARAMETER
            and not (i.opcode is Opcode.TUPLE and i is fusion.called[0].root)]


def loop_space(fusion: HloInstruction) -> tuple | None:
    """The loop nest a fusion runs: ("loop", dims), ("input", operand dims, reduced dims),
    or None when its outputs or reductions disagree."""
    body = _body(fusion)
    reduces = [i for i in body if i.opcode is Opcode.REDUCE]
    if not reduces:
        dims = {o.shape.dims for o in fusion_outputs(fusion) if not o.shape.is_tuple}
        if len(dims) != 1 or any(o.shape.is_tuple for o in fusion_outputs(fusion)):
            return None
        return ("loop", dims.pop())
    spaces = {(r.operands[0].shape.dims, tuple(sorted(r.attr("dimensions", ()))))
              for r in reduces if not r.shape.is_tuple}
    if len(spaces) != 1 or any(r.shape.is_tuple for r in reduces):
        return None
    dims, reduced = spaces.pop()
    return ("input", dims, reduced)


def _mergeable(fusion: HloInstruction, users: dict, root: HloInstruction,
               shared_bodies: frozenset[int]) -> bool:
    if (fusion.opcode is not Opcode.FUSION or fusion.attr("kind") not in (LOOP, INPUT)
            or id(fusion.called[0]) in shared_bodies):
        return False
    fused_root = fusion.called[0].root
    if fused_root.opcode is Opcode.TUPLE:
        return fusion is not root and all(
            u.opcode is Opcode.GET_TUPLE_ELEMENT for u in users[fusion])
    return not fusion.shape.is_tuple


def siblings_compatible(a: HloInstruction, b: HloInstruction, row_limit: int | None,
                        max_instructions: int, max_operands: int) -> bool:
    """Whether fusions `a` and `b` may become one multi-output fusion (rules 3 and 4 of the
    module docstring; sharing and independence are the caller's to check)."""
    operands = {id(o) for o in a.operands + b.operands}
    if len(operands) > max_operands or (
            len(a.called[0].instructions) - len(a.operands)
            + len(b.called[0].instructions) - len(b.operands) > max_instructions + 2):
        return False
    space_a, space_b = loop_space(a), loop_space(b)
    if space_a is None or space_b is None:
        return False
    members = _body(a) + _body(b)
    outputs = fusion_outputs(a) + fusion_outputs(b)
    if len(members) > max_instructions:
        return False
    kinds = {space_a[0], space_b[0]}
    if kinds == {"loop"} or kinds == {"input"}:
        if space_a != space_b:
            return False
    else:
        loop, reduction = (space_a, space_b) if space_a[0] == "loop" else (space_b, space_a)
        if loop[1] != reduction[1] or row_structure(outputs, members) is None:
            return False
    classification = classify_group(outputs, members, row_limit)
    return classification.kind in (LOOP, INPUT)


def _ancestors(comp: HloComputation) -> dict[int, int]:
    """For each instruction (by id), the bit set of the positions of its ancestors."""
    position = {id(i): n for n, i in enumerate(comp.instructions)}
    bits: dict[int, int] = {}
    for inst in comp.instructions:
        value = 0
        for o in inst.operands:
            value |= bits[id(o)] | (1 << position[id(o)])
        bits[id(inst)] = value
    return bits


class _PairFinder:
    """Finds mergeable sibling pairs, remembering the pairs it refused: a merge replaces only
    the two fusions it merges, so a refusal stays true for fusions that remain."""

    def __init__(self, row_limit: int | None, max_instructions: int, max_operands: int,
                 shared_bodies: frozenset[int]) -> None:
        self.limits = (row_limit, max_instructions, max_operands)
        self.shared_bodies = shared_bodies
        self.refused: set[tuple[int, int]] = set()
        # Keeps the fusions of `refused` alive, so that their ids are not reused.
        self.seen: dict[int, HloInstruction] = {}

    def compatible(self, a: HloInstruction, b: HloInstruction) -> bool:
        key = (id(a), id(b))
        if key in self.refused:
            return False
        if not siblings_compatible(a, b, *self.limits):
            self.refused.add(key)
            self.seen[id(a)], self.seen[id(b)] = a, b
            return False
        return True

    def find(self, comp: HloComputation, users: dict) -> tuple[HloInstruction,
                                                               HloInstruction] | None:
        position = {id(i): n for n, i in enumerate(comp.instructions)}
        ancestors = _ancestors(comp)
        for shared in comp.instructions:
            if shared.shape.is_tuple or shared.shape.size <= 1:
                continue
            candidates = [u for u in users[shared] if _mergeable(u, users, comp.root,
                                                               self.shared_bodies)]
            for i, a in enumerate(candidates):
                for b in candidates[i + 1:]:
                    if (ancestors[id(b)] >> position[id(a)]) & 1 or (
                            ancestors[id(a)] >> position[id(b)]) & 1:
                        continue
                    if self.compatible(a, b):
                        return a, b
        return None


def merge_sibling_fusions(comp: HloComputation, names: NameUniquer, row_limit: int | None,
                          max_instructions: int, max_operands: int,
                          shared_bodies: frozenset[int] = frozenset()) -> HloComputation:
    """`comp` with sibling fusions merged until no pair qualifies (see the module
    docstring); `comp` itself when none does. Fusions whose computation is in
    `shared_bodies` (ids of computations that several instructions call) are left alone."""
    finder = _PairFinder(row_limit, max_instructions, max_operands, shared_bodies)
    while True:
        users = users_of(comp)  # one analysis per merge, shared by the search and the merge
        pair = finder.find(comp, users)
        if pair is None:
            return comp
        comp = _merge(comp, pair[0], pair[1], names, users)


def _clone_body(fusion: HloInstruction, param_of_operand: dict[int, HloInstruction],
                known: dict[Hashable, HloInstruction],
                out: list[HloInstruction]) -> dict[int, HloInstruction]:
    """Copies of the fusion's instructions reading the merged parameters (names kept: the
    old fused computation goes away). A copy equal to one already made (`known`, by
    `instruction_key`: the siblings often hold copies of the same cheap producer) is not
    made twice."""
    body = fusion.called[0]
    clone_of: dict[int, HloInstruction] = {}
    for param, operand in zip(body.parameters, fusion.operands):
        clone_of[id(param)] = param_of_operand[id(operand)]
    for inst in _body(fusion):
        clone = inst.replace(operands=tuple(clone_of[id(o)] for o in inst.operands))
        key = instruction_key(clone)
        if key not in known:
            known[key] = clone
            out.append(clone)
        clone_of[id(inst)] = known[key]
    return clone_of


def _merged_fusion(a: HloInstruction, b: HloInstruction,
                   names: NameUniquer) -> HloInstruction:
    operands: dict[int, HloInstruction] = {}
    for operand in a.operands + b.operands:
        operands.setdefault(id(operand), operand)
    params: list[HloInstruction] = []
    param_of_operand: dict[int, HloInstruction] = {}
    for number, operand in enumerate(operands.values()):
        param = HloInstruction(names(f"param_{number}"), Opcode.PARAMETER, operand.shape,
                               attrs={"number": number})
        params.append(param)
        param_of_operand[id(operand)] = param
    clones: list[HloInstruction] = []
    results: list[HloInstruction] = []
    known: dict[Hashable, HloInstruction] = {}
    for fusion in (a, b):
        clone_of = _clone_body(fusion, param_of_operand, known, clones)
        results.extend(clone_of[id(o)] for o in fusion_outputs(fusion))
    shape = Shape.tuple([r.shape for r in results])
    root = HloInstruction(names("tuple"), Opcode.TUPLE, shape, tuple(results))
    body = HloComputation(names("fused_computation"), tuple(params + clones + [root]), root)
    reduces = any(i.opcode is Opcode.REDUCE for i in clones)
    return HloInstruction(names("multi_output_fusion"), Opcode.FUSION, shape,
                          tuple(operands.values()), {"kind": INPUT if reduces else LOOP},
                          (body,), a.metadata)


def _merge(comp: HloComputation, a: HloInstruction, b: HloInstruction,
           names: NameUniquer, users: dict) -> HloComputation:
    merged = _merged_fusion(a, b, names)
    new_of: dict[int, HloInstruction] = {}
    offset = 0
    for fusion in (a, b):
        count = len(fusion_outputs(fusion))
        if fusion.called[0].root.opcode is Opcode.TUPLE:
            for user in users[fusion]:
                new_of[id(user)] = user.replace(
                    operands=(merged,), attrs={"index": offset + user.attr("index")})
        else:
            new_of[id(fusion)] = HloInstruction(names("get-tuple-element"),
                                                Opcode.GET_TUPLE_ELEMENT, fusion.shape,
                                                (merged,), {"index": offset})
        offset += count
    out: list[HloInstruction] = []
    emitted: set[int] = set()
    for inst in comp.instructions:
        if inst is a or inst is b:
            emit_with_operands(merged, emitted, out)
            continue
        if id(inst) not in new_of:
            operands = tuple(new_of.get(id(o), o) for o in inst.operands)
            if any(x is not y for x, y in zip(operands, inst.operands)):
                new_of[id(inst)] = inst.replace(operands=operands)
        emit_with_operands(new_of.get(id(inst), inst), emitted, out)
    root = new_of.get(id(comp.root), comp.root)
    emit_with_operands(root, emitted, out)  # a get-tuple-element of the merged fusion may be the root
    return HloComputation(comp.name, tuple(out), root)
