"""Shape rules of the collectives (mirrors the collective cases of xla::ShapeInference and
the HLO verifier's checks of replica groups).

A group's size is the number of ids in each of its `replica_groups`. Without groups the
size is the whole device count, which the program does not state, and in
cross-replica-and-partition mode (see collectives.py) a group holds every partition of its
replicas, a number the program does not state either: all-gather and reduce-scatter then
read the size off the declared result shape.
"""
from __future__ import annotations

from jaxlite.xla.collectives import check_written_groups, group_mode, written_groups
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference_base import (RuleContext, check_combiner, scalar,
                                              tuple_or_single)

__all__ = ["RULES"]


def _group_size(ctx: RuleContext) -> int | None:
    """The number of devices in each group, or None when the text does not say (all-reduce's
    groups may differ in size: then the first one's)."""
    try:
        groups = written_groups(ctx.attrs)
    except (TypeError, ValueError) as err:
        ctx.fail(f"replica_groups {ctx.attrs.get('replica_groups')!r} are not a list of "
                 f"groups of ids: {err}")
    problem = check_written_groups(groups, uniform=ctx.opcode is not Opcode.ALL_REDUCE)
    if problem is not None:
        ctx.fail(f"replica_groups: {problem}")
    if not groups or group_mode(ctx.opcode.text, ctx.attrs) == "cross-replica-and-partition":
        return None
    return len(groups[0])


def _dimension(ctx: RuleContext, rank: int) -> int:
    dims = ctx.ints("dimensions")
    if len(dims) != 1:
        ctx.fail(f"dimensions must name one dimension, got {dims}")
    ctx.check_dims(dims, rank, "dimensions")
    return dims[0]


def _size_from_declared(ctx: RuleContext, index: int, dim: int, grows: bool) -> int:
    """The group size implied by the declared result (no replica groups written)."""
    declared = ctx.need_declared()
    out = declared.tuple_shapes[index] if declared.is_tuple else declared
    small, big = (ctx.operands[index], out) if grows else (out, ctx.operands[index])
    if out.is_tuple or out.rank != small.rank or small.dims[dim] == 0 or (
            big.dims[dim] % small.dims[dim]):
        ctx.fail(f"the declared result {declared} does not fit operand "
                 f"{ctx.operands[index]} along dimension {dim}")
    return big.dims[dim] // small.dims[dim]


def _reducer(ctx: RuleContext) -> None:
    dtypes = {s.dtype for s in ctx.operands}
    if len(dtypes) != 1:
        ctx.fail(f"all operands must share one element type, got {sorted(map(str, dtypes))}")
    check_combiner(ctx, ctx.computation(0, "to_apply"), "to_apply", [ctx.operands[0].dtype])


def all_reduce_rule(ctx: RuleContext) -> Shape:
    ctx.count(1)
    _group_size(ctx)
    _reducer(ctx)
    return tuple_or_single([Shape(s.dtype, s.dims) for s in ctx.operands])


def all_gather_rule(ctx: RuleContext) -> Shape:
    """Each operand's blocks from the group, concatenated along `dimensions` in group order."""
    ctx.count(1)
    size = _group_size(ctx)
    outs = []
    for i, operand in enumerate(ctx.operands):
        dim = _dimension(ctx, operand.rank)
        n = size if size is not None else _size_from_declared(ctx, i, dim, grows=True)
        dims = list(operand.dims)
        dims[dim] *= n
        outs.append(Shape(operand.dtype, tuple(dims)))
    return tuple_or_single(outs)


def reduce_scatter_rule(ctx: RuleContext) -> Shape:
    """The group's sum (by `to_apply`), split along `dimensions` into one block per member."""
    ctx.count(1)
    size = _group_size(ctx)
    _reducer(ctx)
    outs = []
    for i, operand in enumerate(ctx.operands):
        dim = _dimension(ctx, operand.rank)
        n = size if size is not None else _size_from_declared(ctx, i, dim, grows=False)
        if operand.dims[dim] % n:
            ctx.fail(f"dimension {dim} of operand {operand} must be divisible by the group "
                     f"size {n}")
        dims = list(operand.dims)
        dims[dim] //= n
        outs.append(Shape(operand.dtype, tuple(dims)))
    return tuple_or_single(outs)


def all_to_all_rule(ctx: RuleContext) -> Shape:
    """Array form (`dimensions={d}`): one operand, split along d, same shape back. Tuple
    form: one operand per group member, a tuple of as many arrays back."""
    ctx.count(1)
    size = _group_size(ctx)
    if "dimensions" in ctx.attrs:
        ctx.count(1, 1)
        operand = ctx.operands[0]
        dim = _dimension(ctx, operand.rank)
        if size is not None and operand.dims[dim] % size:
            ctx.fail(f"the split dimension {dim} of operand {operand} must be divisible by "
                     f"the group size {size}")
        return Shape(operand.dtype, operand.dims)
    if size is not None and len(ctx.operands) != size:
        ctx.fail(f"the tuple form takes one operand per group member: {size}, got "
                 f"{len(ctx.operands)}")
    if len({(s.dtype, s.dims) for s in ctx.operands}) != 1:
        ctx.fail("the operands of the tuple form must share one shape")
    return Shape.tuple([Shape(s.dtype, s.dims) for s in ctx.operands])


def collective_permute_rule(ctx: RuleContext) -> Shape:
    operand = ctx.operands[0]
    pairs = ctx.attr("source_target_pairs", ())
    try:
        pairs = [(int(s), int(t)) for s, t in pairs]
    except (TypeError, ValueError):
        ctx.fail(f"source_target_pairs must be pairs of ids, got {pairs!r}")
    for what, ids in (("source", [s for s, _ in pairs]), ("target", [t for _, t in pairs])):
        if len(set(ids)) != len(ids) or min(ids, default=0) < 0:
            ctx.fail(f"source_target_pairs: each {what} may appear once, got {ids}")
    return Shape(operand.dtype, operand.dims)


def device_id_rule(ctx: RuleContext) -> Shape:
    """partition-id and replica-id: the running device's index, a u32 scalar."""
    return scalar("uint32")


RULES = {
    Opcode.ALL_REDUCE: all_reduce_rule, Opcode.ALL_GATHER: all_gather_rule,
    Opcode.REDUCE_SCATTER: reduce_scatter_rule, Opcode.ALL_TO_ALL: all_to_all_rule,
    Opcode.COLLECTIVE_PERMUTE: collective_permute_rule,
    Opcode.PARTITION_ID: device_id_rule, Opcode.REPLICA_ID: device_id_rule,
}
