"""Replica groups: which devices take part together in a collective (mirrors XLA's
collective_ops_utils and its IotaReplicaGroupList).

A program runs on `num_replicas x num_partitions` devices; device `d` is replica
`d // num_partitions`, partition `d % num_partitions` (JAX's shard_map and jit programs have
one replica and a partition per device; pmap's have a replica per device). A collective's
`replica_groups` list ids, and what an id means depends on its attributes, as in XLA:

- no `channel_id`: cross-replica. Ids are replicas; each group is formed once per partition.
- `channel_id` and `use_global_device_ids=true`: flattened. Ids are devices.
- `channel_id` and `use_global_device_ids=false` (all-reduce, all-gather, reduce-scatter):
  cross-replica-and-partition. Ids are replicas; a group holds every partition of them.
- `channel_id` on all-to-all or collective-permute (no such flag): cross-partition. Ids are
  partitions; each group is formed once per replica.

No groups (`replica_groups={}`) means one group of every id. XLA may print groups in iota
form, `[2,2]<=[4]` or `[2,2]<=[2,2]T(1,0)`; the parser reads that into explicit groups.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DeviceLayout", "device_groups", "group_mode", "iota_replica_groups",
           "permute_pairs"]

_IOTA_GROUPS = re.compile(r"\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?")


def iota_replica_groups(text: str) -> tuple[tuple[int, ...], ...]:
    """The explicit groups of XLA's iota form `[G,S]<=[dims]T(perm)`: the numbers
    0..prod(dims)-1 laid out as `dims`, transposed by `perm`, read as G groups of S."""
    match = _IOTA_GROUPS.fullmatch(text.replace(" ", ""))
    if match is None:
        raise ValueError(f"replica_groups {text!r} is neither a list of groups ({{{{0,1}},"
                         f"{{2,3}}}}) nor XLA's iota form ([2,2]<=[4])")
    num_groups, size = int(match.group(1)), int(match.group(2))
    dims = [int(d) for d in match.group(3).split(",")]
    ids = np.arange(int(np.prod(dims))).reshape(dims)
    if match.group(4):
        ids = ids.transpose([int(p) for p in match.group(4).split(",")])
    if ids.size != num_groups * size:
        raise ValueError(f"replica_groups {text!r}: {num_groups} groups of {size} need "
                         f"{num_groups * size} ids, the iota has {ids.size}")
    return tuple(tuple(int(i) for i in row) for row in ids.reshape(num_groups, size))


def written_groups(attrs: Mapping[str, Any]) -> tuple[tuple[int, ...], ...]:
    """The `replica_groups` attribute as a tuple of tuples of ints (empty when absent)."""
    value = attrs.get("replica_groups", ())
    if isinstance(value, str):
        return iota_replica_groups(value)
    return tuple(tuple(int(i) for i in group) for group in value)


def check_written_groups(groups: Sequence[Sequence[int]], uniform: bool = True) -> str | None:
    """Why `groups` cannot be replica groups (an id twice, an empty group, groups of
    different sizes where `uniform`: all but all-reduce need that), or None when they can."""
    seen: set[int] = set()
    for group in groups:
        if not group:
            return "a replica group is empty"
        if uniform and len(group) != len(groups[0]):
            return f"replica groups must have one size, got {[len(g) for g in groups]}"
        for i in group:
            if i < 0 or i in seen:
                return f"id {i} appears {'twice' if i in seen else 'and is negative'}"
            seen.add(i)
    return None


@dataclass(frozen=True)
class DeviceLayout:
    """How many replicas and partitions a program runs on (devices = their product)."""

    num_replicas: int
    num_partitions: int

    @property
    def num_devices(self) -> int:
        return self.num_replicas * self.num_partitions

    def device(self, replica: int, partition: int) -> int:
        return replica * self.num_partitions + partition


def group_mode(opcode_text: str, attrs: Mapping[str, Any]) -> str:
    """cross-replica, cross-partition, flattened or cross-replica-and-partition (see above)."""
    if attrs.get("channel_id") is None:
        return "cross-replica"
    if opcode_text in ("all-to-all", "collective-permute"):
        return "cross-partition"
    return "flattened" if attrs.get("use_global_device_ids") else "cross-replica-and-partition"


def device_groups(opcode_text: str, attrs: Mapping[str, Any],
                  layout: DeviceLayout) -> list[tuple[int, ...]]:
    """The groups of devices that meet in this collective: each device is in exactly one
    (raises ValueError when the written groups name ids the layout does not have, or leave
    some device out)."""
    mode = group_mode(opcode_text, attrs)
    count = {"cross-replica": layout.num_replicas, "cross-partition": layout.num_partitions,
             "flattened": layout.num_devices,
             "cross-replica-and-partition": layout.num_replicas}[mode]
    groups = written_groups(attrs) or (tuple(range(count)),)
    problem = check_written_groups(groups, uniform=opcode_text != "all-reduce")
    if problem is None and any(i >= count for g in groups for i in g):
        problem = f"ids must be below {count} in {mode} mode"
    if problem is None and sum(len(g) for g in groups) != count:
        problem = f"the groups must hold every id below {count} in {mode} mode"
    if problem is not None:
        raise ValueError(f"{opcode_text}: replica_groups={_text(groups)}: {problem} "
                         f"({layout.num_replicas} replica(s) x {layout.num_partitions} "
                         f"partition(s))")
    R, P = range(layout.num_replicas), range(layout.num_partitions)
    if mode == "flattened":
        return [tuple(g) for g in groups]
    if mode == "cross-replica":
        return [tuple(layout.device(r, p) for r in g) for p in P for g in groups]
    if mode == "cross-partition":
        return [tuple(layout.device(r, p) for p in g) for r in R for g in groups]
    return [tuple(layout.device(r, p) for r in g for p in P) for g in groups]


def permute_pairs(attrs: Mapping[str, Any], layout: DeviceLayout) -> dict[int, int]:
    """collective-permute's `source_target_pairs` as device -> the device it sends to
    (ids are replicas without `channel_id`, partitions with it, as XLA reads them)."""
    pairs = [(int(s), int(t)) for s, t in attrs.get("source_target_pairs", ())]
    cross_partition = attrs.get("channel_id") is not None
    count = layout.num_partitions if cross_partition else layout.num_replicas
    for what, ids in (("source", [s for s, _ in pairs]), ("target", [t for _, t in pairs])):
        if len(set(ids)) != len(ids) or any(not 0 <= i < count for i in ids):
            raise ValueError(f"collective-permute: source_target_pairs={_text(pairs)}: each "
                             f"{what} must appear once and be below {count}")
    sends = {}
    others = range(layout.num_replicas if cross_partition else layout.num_partitions)
    for other in others:
        for s, t in pairs:
            if cross_partition:
                sends[layout.device(other, s)] = layout.device(other, t)
            else:
                sends[layout.device(s, other)] = layout.device(t, other)
    return sends


def _text(groups: Sequence[Sequence[int]]) -> str:
    return "{" + ",".join("{" + ",".join(str(i) for i in g) + "}" for g in groups) + "}"
