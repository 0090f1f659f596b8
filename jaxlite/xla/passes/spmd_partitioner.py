"""The SPMD partitioner: one global program with shardings becomes the program each
partition runs (mirrors XLA's SpmdPartitioner).

Input: a module whose instructions carry `sharding` attributes (after sharding propagation;
an instruction without one is replicated). Output: the per-partition module
(`num_partitions = N`): every value has its block's shape, entry parameters take and the
root gives each partition's block, and collectives make the partitions compute together
what the input computes alone.

The partitioner walks each computation in order. For each instruction it asks a handler
(spmd_ops, spmd_dot, or the control-flow handlers here) for the partitioned result, from
the operands as they are laid out, and then reshards that result to the instruction's own
sharding (spmd_reshard). Handlers reshard operands to what they need: an elementwise
operation needs its operands in its own layout, a dot one of three plans, and an operation
without a handler all of its operands whole (always correct, seldom fast). Loops,
conditionals and calls partition their computations with the layouts of the values passed
in and out (the loop state's sharding for both of a while's computations).

Uneven tiles are padded to the tile shape; see spmd_builder for how padding is kept from
leaking into results.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.xla.hlo_sharding import HloSharding
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule, NameUniquer, post_order
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes import spmd_shardings as grids
from jaxlite.xla.passes.dce import eliminate_dead_code
from jaxlite.xla.passes.rewriting import rewrite_module
from jaxlite.xla.passes.spmd_builder import ModuleState, PValue, SpmdBuilder
from jaxlite.xla.passes.spmd_dot import partition_convolution, partition_dot
from jaxlite.xla.passes.spmd_gather import partition_gather
from jaxlite.xla.passes.spmd_ops import HANDLERS, elementwise, fallback, tuple_value
from jaxlite.xla.passes.spmd_reshard import replicate, reshard
from jaxlite.xla.shape import Shape

__all__ = ["partition_module"]

_O = Opcode
# Custom calls that only annotate their operand's layout: the reshard is the whole job.
_ANNOTATIONS = {"Sharding"}
# The edges of a manually partitioned region (shard_map): inside it, values have their
# per-partition shapes already and the program's own collectives combine them.
_MANUAL_EDGES = {"SPMDFullToShardShape", "SPMDShardToFullShape"}


def partition_module(module: HloModule, num_partitions: int) -> HloModule:
    """The per-partition program of `module` over `num_partitions` partitions (mirrors
    XLA's SpmdPartitioner pass, run by jit for a mesh)."""
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    partitioner = _Partitioner(ModuleState(num_partitions, NameUniquer()))
    entry = partitioner.computation(module.entry, None, None, entry=True)
    # Handlers may build a plan and then prefer another; what no one reads goes.
    partitioned = eliminate_dead_code(
        HloModule(module.name, entry, num_partitions=num_partitions))
    return _finished(partitioned, module.entry.root.attr("sharding"))


def _finished(module: HloModule, root_sharding: HloSharding | None) -> HloModule:
    """Channels numbered 1, 2, ... in program order (dead plans left gaps), and the root
    marked with the result's sharding as XLA marks it."""
    channels = iter(range(1, 1 << 30))
    entry_root = module.entry.root

    def rule(inst: HloInstruction, ctx: Any) -> HloInstruction | None:
        attrs = dict(inst.attrs)
        if attrs.get("channel_id") is not None:
            attrs["channel_id"] = next(channels)
        if ctx.computation is module.entry and inst.name == entry_root.name and (
                root_sharding is not None and inst.opcode is not _O.PARAMETER):
            attrs["sharding"] = root_sharding
        return inst.replace(attrs=attrs) if attrs != dict(inst.attrs) else None
    return rewrite_module(module, rule)


def local_shape(shape: Shape, target: Any) -> Shape:
    """The shape of one partition's block of a value of `shape` laid out by `target`."""
    if shape.is_tuple:
        return Shape.tuple([local_shape(s, t) for s, t in zip(shape.tuple_shapes, target)])
    return Shape(shape.dtype, grids.tile_shape(target, shape.dims))


class _Partitioner:
    def __init__(self, state: ModuleState) -> None:
        self.state = state
        self.n = state.num_partitions

    def target(self, sharding: HloSharding | None, shape: Shape) -> Any:
        """The grid (nested lists of grids for tuples) of `sharding` on `shape`. XLA lists
        a tuple's shardings leaf by leaf, flattened."""
        leaves = iter(sharding.elements) if sharding is not None and sharding.is_tuple \
            else None

        def walk(s: Shape) -> Any:
            if s.is_tuple:
                return [walk(e) for e in s.tuple_shapes]
            leaf = next(leaves, None) if leaves is not None else sharding
            return grids.grid(leaf, s.rank, self.n)
        return walk(shape)

    def computation(self, comp: HloComputation, param_targets: list | None,
                    root_target: Any, entry: bool = False) -> HloComputation:
        """`comp` partitioned; its parameters laid out by `param_targets` (default: their
        own shardings) and its result resharded to `root_target` (default: its own)."""
        b = SpmdBuilder(comp.name + ("_spmd" if entry else ""), self.state)
        values: dict[int, PValue] = {}
        for number, param in enumerate(comp.parameters):
            own = self.target(param.attr("sharding"), param.shape)
            given = own if param_targets is None else param_targets[number]
            attrs = {"sharding": param.attr("sharding")} if entry and param.attr(
                "sharding") is not None else {}
            hlo = b.parameter(local_shape(param.shape, given), number, param.name, attrs)
            values[id(param)] = reshard(b, _wrap(b, hlo, param.shape, given), own)
        for inst in post_order([comp.root]):
            if inst.opcode is _O.PARAMETER:
                continue
            b.metadata = inst.metadata
            target = self.target(inst.attr("sharding"), inst.shape)
            ops = [values[id(o)] for o in inst.operands]
            values[id(inst)] = reshard(b, self.handle(b, inst, target, ops), target)
        b.metadata = None
        if root_target is None:
            root_target = self.target(comp.root.attr("sharding"), comp.root.shape)
        return b.build(reshard(b, values[id(comp.root)], root_target).hlo)

    def handle(self, b: SpmdBuilder, inst: HloInstruction, target: Any,
               ops: list[PValue]) -> PValue:
        op = inst.opcode
        if op.is_elementwise:
            return elementwise(b, inst, target, ops)
        if op in HANDLERS:
            return HANDLERS[op](b, inst, target, ops)
        if op is _O.DOT:
            return partition_dot(b, inst, target, ops[0], ops[1])
        if op is _O.CONVOLUTION:
            value = partition_convolution(b, inst, target, ops[0], ops[1])
            return value if value is not None else fallback(b, inst, target, ops)
        if op is _O.GATHER:
            value = partition_gather(b, inst, target, ops[0], ops[1])
            return value if value is not None else fallback(b, inst, target, ops)
        if op is _O.CONSTANT:
            hlo = b.add(_O.CONSTANT, attrs={"literal": inst.attr("literal")}, shape=inst.shape)
            return _wrap(b, hlo, inst.shape, self.target(None, inst.shape))
        if op is _O.TUPLE:
            parts = [reshard(b, v, t) for v, t in zip(ops, target)]
            hlo = b.add(_O.TUPLE, [p.hlo for p in parts])
            return PValue(hlo, inst.shape, None, tuple(parts))
        if op is _O.GET_TUPLE_ELEMENT:
            return ops[0].parts[int(inst.attr("index"))]
        if op is _O.CUSTOM_CALL and inst.attr("target") in _ANNOTATIONS:
            return ops[0]
        if op is _O.CUSTOM_CALL and inst.attr("target") in _MANUAL_EDGES:
            return _manual_edge(inst, target, ops[0])
        if op is _O.WHILE:
            return self.while_loop(b, inst, target, ops[0])
        if op in (_O.CONDITIONAL, _O.CALL):
            return self.calls(b, inst, target, ops)
        return fallback(b, inst, target, ops)

    def while_loop(self, b: SpmdBuilder, inst: HloInstruction, target: Any,
                   state: PValue) -> PValue:
        """The loop state is laid out by the while's sharding, in and out of both
        computations."""
        state = reshard(b, state, target)
        condition, body = inst.called
        scalar = grids.grid(None, 0, self.n)
        new_condition = self.computation(condition, [target], scalar)
        new_body = self.computation(body, [target], target)
        hlo = b.add(_O.WHILE, (state.hlo,), _plain_attrs(inst), (new_condition, new_body),
                    shape=local_shape(inst.shape, target))
        return _wrap(b, hlo, inst.shape, target)

    def calls(self, b: SpmdBuilder, inst: HloInstruction, target: Any,
              ops: list[PValue]) -> PValue:
        """Each called computation takes its operands as its parameters' shardings say
        and gives its result in the caller's layout (a conditional's branch index whole)."""
        first = 1 if inst.opcode is _O.CONDITIONAL else 0
        operands = [replicate(b, ops[0])] if first else []
        computations = []
        for k, comp in enumerate(inst.called):
            params = comp.parameters
            passed = ops[first + k: first + k + 1] if first else ops
            wanted = [self.target(p.attr("sharding"), p.shape) for p in params]
            operands += [reshard(b, v, t) for v, t in zip(passed, wanted)]
            computations.append(self.computation(comp, wanted, target))
        hlo = b.add(inst.opcode, [v.hlo for v in operands], _plain_attrs(inst),
                    computations, shape=local_shape(inst.shape, target))
        return _wrap(b, hlo, inst.shape, target)


def _manual_edge(inst: HloInstruction, target: Any, operand: PValue) -> PValue:
    """Into a manual region, each partition's block is the value the region sees; out of
    it, the region's values are the blocks of a value laid out by the call's sharding."""
    if inst.attr("target") == "SPMDFullToShardShape":
        ids = grids.grid(None, inst.shape.rank, len(operand.ids.reshape(-1)))
        block, hlo_shape = inst.shape.dims, operand.hlo.shape.dims
    else:
        ids, hlo_shape = np.asarray(target), operand.hlo.shape.dims
        block = grids.tile_shape(ids, inst.shape.dims)
    if tuple(block) != tuple(hlo_shape):
        raise NotImplementedError(
            f"%{inst.name}: {inst.attr('target')} of a {hlo_shape} block into a "
            f"{inst.shape} value laid out as {target}: the blocks do not match")
    return PValue(operand.hlo, inst.shape, ids)


def _plain_attrs(inst: HloInstruction) -> dict:
    return {k: v for k, v in inst.attrs.items() if k != "sharding"}


def _wrap(b: SpmdBuilder, hlo: HloInstruction, shape: Shape, target: Any) -> PValue:
    if shape.is_tuple:
        return tuple_value(b, hlo, shape, target)
    return PValue(hlo, shape, np.asarray(target))
