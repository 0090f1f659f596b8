"""Rules of the StableHLO printer for the collectives: all_reduce, all_gather,
reduce_scatter, all_to_all, collective_permute, partition_id, replica_id, as JAX writes
them (`channel_handle` of type 1, device to device).

HLO's tuple form of all-to-all (one operand per group member, no `dimensions`) has no
StableHLO spelling and raises NotImplementedError.
"""
from __future__ import annotations

from typing import Sequence

from jaxlite.xla.collectives import written_groups
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.ops import Rule, single_values
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves

_O = Opcode

COLLECTIVE_OPS: dict[Opcode, str] = {
    _O.ALL_REDUCE: "stablehlo.all_reduce", _O.ALL_GATHER: "stablehlo.all_gather",
    _O.REDUCE_SCATTER: "stablehlo.reduce_scatter", _O.ALL_TO_ALL: "stablehlo.all_to_all",
    _O.COLLECTIVE_PERMUTE: "stablehlo.collective_permute",
    _O.PARTITION_ID: "stablehlo.partition_id", _O.REPLICA_ID: "stablehlo.replica_id",
}


def _id_table(rows: Sequence[Sequence[int]]) -> str:
    """`dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`: replica groups or source-target pairs."""
    if not rows:
        return "dense<> : tensor<0x0xi64>"
    text = ", ".join("[" + ", ".join(str(int(i)) for i in row) + "]" for row in rows)
    return f"dense<[{text}]> : tensor<{len(rows)}x{len(rows[0])}xi64>"


def _properties(inst: HloInstruction, **extra: str) -> dict[str, str]:
    props = dict(extra)
    channel = inst.attr("channel_id")
    if channel is not None:
        props["channel_handle"] = f"#stablehlo.channel_handle<handle = {int(channel)}, type = 1>"
    if inst.opcode is _O.COLLECTIVE_PERMUTE:
        props["source_target_pairs"] = _id_table(inst.attr("source_target_pairs", ()))
    else:
        props["replica_groups"] = _id_table(written_groups(inst.attrs))
    if inst.attr("use_global_device_ids"):
        props["use_global_device_ids"] = "unit"  # MLIR's spelling of a unit attribute
    return props


def _dimension(inst: HloInstruction) -> int:
    dims = inst.attr("dimensions")
    if dims is None:
        raise NotImplementedError(f"%{inst.name}: the tuple form of all-to-all has no "
                                  f"StableHLO spelling")
    return int(dims[0]) if isinstance(dims, (tuple, list)) else int(dims)


def _collective(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    op, results = inst.opcode, T.leaf_shapes(inst.shape)
    extra: dict[str, str] = {}
    if op is _O.ALL_GATHER:
        extra["all_gather_dim"] = T.i64(_dimension(inst))
    elif op is _O.REDUCE_SCATTER:
        extra["scatter_dimension"] = T.i64(_dimension(inst))
    elif op is _O.ALL_TO_ALL:
        dim, groups = _dimension(inst), written_groups(inst.attrs)
        count = len(groups[0]) if groups else None
        if count is None:
            raise NotImplementedError(f"%{inst.name}: all-to-all without replica groups "
                                      f"has no split_count to print")
        extra.update(concat_dimension=T.i64(dim), split_count=T.i64(count),
                     split_dimension=T.i64(dim))
    regions = [w.region(inst.called[0])] if inst.called else []
    return w.generic(COLLECTIVE_OPS[op], single_values(operands), results,
                     _properties(inst, **extra), regions)


def _device_id(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    return w.generic(COLLECTIVE_OPS[inst.opcode], [], [inst.shape])


RULES: dict[Opcode, Rule] = {
    **{op: _collective for op in COLLECTIVE_OPS},
    _O.PARTITION_ID: _device_id, _O.REPLICA_ID: _device_id,
}
