"""Fusion decisions as pure functions (mirrors the policy half of XLA's InstructionFusion,
CpuInstructionFusion and MultiOutputFusion): which producer may join which consumer group,
and what kind of fusion a group of instructions makes. `fusion.py` applies them.

Kinds (XLA's names):
  - kLoop: elementwise and data-movement instructions computed together in one loop nest;
  - kInput: a reduction fusion, its reductions reading a loop-fusible producer chain (and,
    as a *row fusion*, elementwise consumers of the reductions' results broadcast back over
    the rows, when a row fits in L1: softmax and layernorm become one fusion);
  - kOutput: a dot with an elementwise epilogue (bias add, activation, scaling) applied to
    its result before it is written.

The rules, in words:
  1. Loop-fusible producers (elementwise, broadcast, reshape, transpose, slice, iota,
     convert, reverse, pad, concatenate, copy, bitcast-convert, dynamic-slice, constants)
     may join any consumer group except as an operand of a dot (a GEMM reads its operands
     from memory).
  2. A producer with users outside the group joins only as a copy, under
     `cost_model.duplication_allowed` (cheap or data-expanding producers are copied; an
     expensive one into at most a bounded number of consumers; none that is written to
     memory anyway).
  3. A reduction or a dot joins only when nothing outside the group needs it or anything
     computed from it inside the group (never duplicated, never an extra output here:
     multi-output fusion is a later step).
  4. A group holds at most one dot, never a dot and a reduction; everything computed from
     the dot is elementwise at the dot's shape (kOutput).
  5. A reduction whose result reaches the group's output through a broadcast (each result
     read many times) is allowed only in a row fusion whose rows fit the row budget;
     otherwise reductions feed the output through non-replicating ops only (kInput).
"""
from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from jaxlite.xla.cost_model import duplication_allowed
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion_rows import RowStructure, row_structure
from jaxlite.xla.passes.layout_assignment import moves_no_data

__all__ = [
    "FUSION_KINDS",
    "INPUT",
    "LOOP",
    "LOOP_FUSIBLE_MOVEMENT",
    "OUTPUT",
    "Classification",
    "ProducerVerdict",
    "Verdict",
    "broadcasts_reduction",
    "classify_group",
    "is_fusible_consumer",
    "is_fusion_core",
    "is_loop_fusible",
    "is_materialized",
    "is_wrappable",
    "producer_verdict",
    "replicates",
]

LOOP, INPUT, OUTPUT = "kLoop", "kInput", "kOutput"
FUSION_KINDS = (LOOP, INPUT, OUTPUT)

# Data movement that a loop nest computes by index arithmetic alone.
LOOP_FUSIBLE_MOVEMENT = frozenset({
    Opcode.BROADCAST, Opcode.RESHAPE, Opcode.TRANSPOSE, Opcode.SLICE, Opcode.IOTA,
    Opcode.REVERSE, Opcode.PAD, Opcode.CONCATENATE, Opcode.COPY, Opcode.BITCAST_CONVERT,
    Opcode.DYNAMIC_SLICE})


def is_loop_fusible(inst: HloInstruction) -> bool:
    """Whether `inst` can be computed element by element inside a loop fusion."""
    if inst.shape.is_tuple:
        return False
    return (inst.opcode.is_elementwise or inst.opcode in LOOP_FUSIBLE_MOVEMENT
            or inst.opcode is Opcode.CONSTANT)


def is_fusion_core(inst: HloInstruction) -> bool:
    """A reduction or a dot: joins a group only whole and once (rule 3)."""
    return (inst.opcode is Opcode.DOT or inst.opcode is Opcode.REDUCE) and not inst.shape.is_tuple


def is_fusible_consumer(inst: HloInstruction) -> bool:
    """Whether a group rooted at `inst` may take in producers."""
    if inst.opcode is Opcode.REDUCE:
        return True
    return is_loop_fusible(inst) and inst.opcode is not Opcode.CONSTANT


def is_wrappable(inst: HloInstruction) -> bool:
    """Whether a lone `inst` still becomes a (one-instruction) fusion, as XLA wraps lone
    elementwise ops and reductions, so that code generators only meet fusions and dots.
    A lone reshape or transpose that moves no data under its layouts stays bare: buffer
    assignment lets it alias its operand, while a fusion would copy."""
    return is_fusible_consumer(inst) and not moves_no_data(inst)


class Verdict(enum.Enum):
    MOVE = "move"            # the producer joins the group; nothing else needs it
    DUPLICATE = "duplicate"  # a copy joins the group; the producer stays for other users
    REFUSE = "refuse"


@dataclass(frozen=True)
class ProducerVerdict:
    verdict: Verdict
    reason: str


def producer_verdict(producer: HloInstruction, users: Sequence[HloInstruction],
                     users_in_group: Sequence[HloInstruction], is_computation_root: bool,
                     copies_so_far: int, downstream_owned: bool,
                     max_expensive_copies: int,
                     materialized: bool | None = None) -> ProducerVerdict:
    """May `producer` join a consumer group (rules 1-3)?

    Parameters
    ----------
    producer : the candidate.
    users : all distinct users of the producer in its computation.
    users_in_group : those of them that are in the group.
    is_computation_root : whether the producer is its computation's root (written anyway).
    copies_so_far : how many groups already hold the producer (a copy or itself).
    downstream_owned : whether every group member computed from the producer belongs to
        this group alone, with all its users in the group (the group's root aside); needed
        for a reduction or dot, which must not be recomputed for another group.
    max_expensive_copies : the bound of rule 2 on copies of expensive producers.
    materialized : whether the producer is written to memory anyway (the root, or read by
        a user that takes in no producers); computed from `users` when None. A planner
        asking about one producer for many groups passes it (the walk over the users
        would otherwise repeat per group: quadratic for a value with many users).
    """
    refuse = Verdict.REFUSE
    if producer.shape.is_tuple:
        return ProducerVerdict(refuse, "tuple-shaped values are not fused")
    if any(u.opcode is Opcode.DOT for u in users_in_group):
        return ProducerVerdict(refuse, "a dot reads its operands from memory")
    everyone_inside = len(users_in_group) == len(users) and not is_computation_root
    if is_fusion_core(producer):
        if not everyone_inside or copies_so_far > 0:
            return ProducerVerdict(refuse, f"a {producer.opcode.text} is never computed twice "
                                           "and has users outside the group")
        if not downstream_owned:
            return ProducerVerdict(refuse, f"values computed from the {producer.opcode.text} "
                                           "are needed outside the group")
        return ProducerVerdict(Verdict.MOVE, f"the {producer.opcode.text} has no other user")
    if not is_loop_fusible(producer):
        return ProducerVerdict(refuse, f"{producer.opcode.text} is not loop-fusible")
    if everyone_inside and copies_so_far == 0:
        return ProducerVerdict(Verdict.MOVE, "every user is in the group")
    if materialized is None:
        materialized = is_materialized(users, is_computation_root)
    answer = duplication_allowed(producer, len(users), copies_so_far, materialized,
                                 max_expensive_copies)
    return ProducerVerdict(Verdict.DUPLICATE if answer else refuse, answer.reason)


def is_materialized(users: Sequence[HloInstruction], is_computation_root: bool) -> bool:
    """Whether a value is written to memory whatever fusion decides: it is the root, or a
    user of it takes in no producers (so reads it from memory)."""
    return is_computation_root or any(not is_fusible_consumer(u) for u in users)


def replicates(inst: HloInstruction) -> bool:
    """Whether `inst` reads some operand element more than once (a growing broadcast)."""
    return (inst.opcode is Opcode.BROADCAST and not inst.shape.is_tuple
            and inst.shape.size > inst.operands[0].shape.size)


def broadcasts_reduction(members: Sequence[HloInstruction]) -> bool:
    """Whether some reduction's result is broadcast (read many times) inside the group,
    `members` given in topological order."""
    carries: set[int] = set()
    for m in members:
        if m.opcode is Opcode.REDUCE or any(id(o) in carries for o in m.operands):
            if replicates(m):
                return True
            carries.add(id(m))
    return False


@dataclass(frozen=True)
class Classification:
    """What a group of instructions makes: `kind` (None when the group is not allowed),
    `row` (its row structure when it is a row fusion) and the `reason` in words."""

    kind: str | None
    row: RowStructure | None = None
    reason: str = ""

    def __bool__(self) -> bool:
        return self.kind is not None


def _refused(reason: str) -> Classification:
    return Classification(None, None, reason)


def _classify_output(dot: HloInstruction, outputs: Sequence[HloInstruction],
                     members: Sequence[HloInstruction]) -> Classification:
    member_ids = {id(m) for m in members}
    if any(id(o) in member_ids for o in dot.operands):
        return _refused("the dot's operands must come from memory, not from the fusion")
    if len(outputs) != 1:
        return _refused("an output fusion has one result")
    after_dot = {id(dot)}
    for m in members:
        if m is dot or not any(id(o) in after_dot for o in m.operands):
            continue
        if not m.opcode.is_elementwise or m.shape.dims != dot.shape.dims:
            return _refused(f"%{m.name} ({m.opcode.text}) uses the dot's result but is not "
                            "elementwise at the dot's shape")
        after_dot.add(id(m))
    if id(outputs[0]) not in after_dot:
        return _refused("the fusion's result is not computed from the dot")
    return Classification(OUTPUT, None, "dot with an elementwise epilogue")


def classify_group(outputs: Sequence[HloInstruction], members: Sequence[HloInstruction],
                   row_bytes_limit: int | None) -> Classification:
    """The fusion kind a group makes (rules 4 and 5), or a refusal.

    Parameters
    ----------
    outputs : the group's results (its root, or several for a multi-output fusion).
    members : the group's instructions in topological order, outputs included.
    row_bytes_limit : the largest row (in bytes) a row fusion may have; None forbids row
        fusions.
    """
    dots = [m for m in members if m.opcode is Opcode.DOT]
    reduces = [m for m in members if m.opcode is Opcode.REDUCE]
    others = [m for m in members if m.opcode not in (Opcode.DOT, Opcode.REDUCE)
              and not is_loop_fusible(m)]
    if others:
        return _refused(f"%{others[0].name} ({others[0].opcode.text}) cannot be fused")
    if len(dots) > 1:
        return _refused("a fusion holds at most one dot")
    if dots and reduces:
        return _refused("a fusion holds a dot or reductions, not both")
    if dots:
        return _classify_output(dots[0], outputs, members)
    if not reduces:
        return Classification(LOOP, None, "elementwise and data movement")
    if any(r.shape.is_tuple for r in reduces):
        if len(reduces) > 1 or len(outputs) != 1 or outputs[0] is not reduces[0]:
            return _refused("a variadic reduction is fused only as the sole result")
        return Classification(INPUT, None, "variadic reduction with its producers")
    if not broadcasts_reduction(members):
        return Classification(INPUT, None, "reductions with their producers and epilogue")
    if row_bytes_limit is None:
        return _refused("a reduction's result is broadcast inside the group and row fusion "
                        "is off")
    row = row_structure(outputs, members)
    if row is None:
        return _refused("a reduction's result is broadcast inside the group, which has no "
                        "row structure")
    if row.row_bytes > row_bytes_limit:
        return _refused(f"a row of {row.row_bytes} bytes exceeds the row budget of "
                        f"{row_bytes_limit} bytes")
    return Classification(INPUT, row, "row fusion: the whole row computation in one loop")

