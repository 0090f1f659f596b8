"""How one HLO value is laid out over the partitions of an SPMD program (mirrors XLA's
HloSharding, in its text spelling).

A program partitioned `num_partitions` ways runs once per partition; partition `p` holds a
block of each value, chosen by the value's sharding:

- replicated: every partition holds the whole value. Text `{replicated}`.
- maximal: one partition (`device`) holds the whole value. Text `{maximal device=1}`.
- manual: the program handles the layout itself (shard_map bodies). Text `{manual}`.
- tiled: the value is cut into a grid of tiles, `tile_assignment[i0, i1, ...]` naming the
  partition that holds tile (i0, i1, ...). Tiles are `ceil(dim / tiles)` elements along each
  dimension; the last tiles may reach past the value's end (XLA pads them). With
  `replicate_on_last_tile_dim`, the assignment has one more dimension than the value, and
  the partitions along it hold copies of the same tile. Text
  `{devices=[2,1,2]<=[4] last_tile_dim_replicate}` (the assignment in XLA's iota form: the
  numbers 0..n-1 laid out as `[4]`, optionally transposed, `<=[2,2]T(1,0)`) or with the ids
  listed, `{devices=[2,2]0,2,1,3}`. A tiled sharding may end in several *subgroup*
  dimensions instead, each `manual` or `replicated` (a shard_map over some of a mesh's
  axes: the partitions along a manual dimension run the program's own code on their
  tile). Text `{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}`.
- tuple: one sharding per leaf of a tuple-shaped value. Text `{{replicated}, {maximal
  device=0}}`.

Partitions are logical: numbers 0..n-1 into the executable's device assignment (for a jit
over a mesh, the mesh's devices in order), as in XLA.
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["HloSharding", "from_mesh_spec", "parse_sharding"]


def _frozen_ids(ids: np.ndarray) -> np.ndarray:
    ids = np.array(ids, dtype=np.int64)
    ids.setflags(write=False)
    return ids


@dataclass(frozen=True, eq=False)
class HloSharding:
    """One value's layout over partitions; build with the class methods, not the fields."""

    kind: str  # "replicated", "maximal", "manual", "tiled" or "tuple"
    tile_assignment: np.ndarray | None = None
    replicate_on_last_tile_dim: bool = False
    device: int = 0
    elements: tuple["HloSharding", ...] = field(default=())
    # The kinds ("manual", "replicated") of the trailing subgroup dimensions of the tile
    # assignment, when one is manual; () otherwise (see `subgrouped`).
    subgroups: tuple[str, ...] = ()

    # ---- construction
    @classmethod
    def replicate(cls) -> "HloSharding":
        return cls("replicated")

    @classmethod
    def maximal(cls, device: int) -> "HloSharding":
        return cls("maximal", device=int(device))

    @classmethod
    def manual(cls) -> "HloSharding":
        return cls("manual")

    @classmethod
    def tiled(cls, tile_assignment: np.ndarray | Sequence,
              replicate_on_last_tile_dim: bool = False) -> "HloSharding":
        """Tiles laid out as `tile_assignment` (an int array of partition ids). A grid of
        one tile is `replicate()`; one whose only non-1 dimension is the replication
        dimension too."""
        ids = _frozen_ids(tile_assignment)
        tiles = ids.shape[:-1] if replicate_on_last_tile_dim else ids.shape
        if ids.size == 1 or math.prod(tiles) == 1:
            return cls.replicate()
        if replicate_on_last_tile_dim and ids.shape[-1] == 1:
            ids, replicate_on_last_tile_dim = _frozen_ids(ids[..., 0]), False
        return cls("tiled", ids, bool(replicate_on_last_tile_dim))

    @classmethod
    def subgrouped(cls, tile_assignment: np.ndarray | Sequence,
                   subgroups: Sequence[str]) -> "HloSharding":
        """Tiles whose assignment ends in one dimension per entry of `subgroups`
        ("manual" or "replicated"), XLA's `last_tile_dims={...}`. Subgroup dimensions of
        size 1 are dropped; without a manual one left, this is `tiled(...)`."""
        ids = _frozen_ids(tile_assignment)
        data = ids.ndim - len(subgroups)
        keep = [i for i, size in enumerate(ids.shape[data:]) if size > 1]
        kinds = tuple(subgroups[i] for i in keep)
        ids = ids.reshape(ids.shape[:data] + tuple(ids.shape[data + i] for i in keep))
        if "manual" not in kinds:
            return cls.tiled(ids.reshape(ids.shape[:data] + (-1,)),
                             replicate_on_last_tile_dim=True)
        return cls("tiled", _frozen_ids(ids), subgroups=kinds)

    @classmethod
    def iota_tiled(cls, dims: Sequence[int], reshape: Sequence[int] | None = None,
                   perm: Sequence[int] | None = None,
                   replicate_on_last_tile_dim: bool = False) -> "HloSharding":
        """XLA's iota tile assignment `[dims]<=[reshape]T(perm)`: 0..n-1 laid out as
        `reshape` (default `[n]`), transposed by `perm`, then read as `dims`."""
        return cls.tiled(_iota_ids(dims, reshape, perm), replicate_on_last_tile_dim)

    @classmethod
    def tuple_of(cls, elements: Sequence["HloSharding"]) -> "HloSharding":
        return cls("tuple", elements=tuple(elements))

    # ---- questions
    @property
    def is_replicated(self) -> bool:
        return self.kind == "replicated"

    @property
    def is_tiled(self) -> bool:
        return self.kind == "tiled"

    @property
    def is_manual(self) -> bool:
        return self.kind == "manual"

    @property
    def is_maximal(self) -> bool:
        return self.kind == "maximal"

    @property
    def is_tuple(self) -> bool:
        return self.kind == "tuple"

    @property
    def has_manual_subgroup(self) -> bool:
        """Whether some partitions of this tiled sharding run their own code (shard_map
        over part of a mesh)."""
        return "manual" in self.subgroups

    @property
    def tiles_per_dim(self) -> tuple[int, ...]:
        """How many tiles each dimension of the value is cut into (tiled shardings)."""
        shape = self.tile_assignment.shape
        return tuple(shape[:self._data_rank()])

    @property
    def replication(self) -> int:
        """How many partitions hold each tile (1 unless replicated on the last dim); with
        subgroups, how many partitions the replicated and manual ones hold each tile in."""
        return int(math.prod(self.tile_assignment.shape[self._data_rank():]))

    def _data_rank(self) -> int:
        extra = len(self.subgroups) or int(self.replicate_on_last_tile_dim)
        return self.tile_assignment.ndim - extra

    def tile_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The block each partition holds of a value of `shape` (with padding, as XLA)."""
        if not self.is_tiled:
            return tuple(shape)
        return tuple(-(-int(d) // t) for d, t in zip(shape, self.tiles_per_dim))

    def tile_index(self, partition: int) -> tuple[int, ...]:
        """The grid position of the tile `partition` holds (tiled shardings)."""
        where = np.argwhere(self.tile_assignment == partition)
        if len(where) != 1:
            raise ValueError(f"partition {partition} appears {len(where)} times in "
                             f"{self.text()}")
        index = tuple(int(i) for i in where[0])
        return index[:self._data_rank()]

    def tile_offset(self, shape: Sequence[int], partition: int) -> tuple[int, ...]:
        """Where the block of `partition` starts in a value of `shape`."""
        if not self.is_tiled:
            return (0,) * len(shape)
        block = self.tile_shape(shape)
        return tuple(i * b for i, b in zip(self.tile_index(partition), block))

    def block_slices(self, shape: Sequence[int], partition: int) -> tuple[slice, ...]:
        """numpy slices of the (unpadded) part of a value of `shape` that `partition`
        holds; empty where its tile lies wholly in the padding."""
        if self.is_maximal and partition != self.device:
            return tuple(slice(0, 0) for _ in shape)
        starts = self.tile_offset(shape, partition)
        block = self.tile_shape(shape)
        return tuple(slice(min(s, d), min(s + b, d)) for s, b, d in zip(starts, block, shape))

    def num_partitions(self) -> int:
        """The partitions the assignment names (1 for the kinds without one)."""
        if self.is_tiled:
            return int(self.tile_assignment.size)
        if self.is_tuple:
            return max((e.num_partitions() for e in self.elements), default=1)
        return 1

    # ---- identity and text
    def _key(self) -> tuple:
        ids = None if self.tile_assignment is None else (
            self.tile_assignment.shape, self.tile_assignment.tobytes())
        return (self.kind, ids, self.replicate_on_last_tile_dim, self.device,
                tuple(e._key() for e in self.elements), self.subgroups)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HloSharding) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def text(self) -> str:
        """XLA's text of this sharding, braces included."""
        if self.kind == "tuple":
            return "{" + ", ".join(e.text() for e in self.elements) + "}"
        if self.kind == "maximal":
            return f"{{maximal device={self.device}}}"
        if self.kind in ("replicated", "manual"):
            return f"{{{self.kind}}}"
        dims = ",".join(str(d) for d in self.tile_assignment.shape)
        suffix = " last_tile_dim_replicate" if self.replicate_on_last_tile_dim else ""
        if self.subgroups:
            suffix = f" last_tile_dims={{{', '.join(self.subgroups)}}}"
        return f"{{devices=[{dims}]{_assignment_text(self.tile_assignment)}{suffix}}}"

    def __repr__(self) -> str:
        return f"HloSharding({self.text()})"


def _assignment_text(ids: np.ndarray) -> str:
    """`<=[n]` or `<=[a,b]T(1,0)` when the ids are an iota, else the ids listed."""
    flat = ids.reshape(-1)
    n = flat.size
    if np.array_equal(flat, np.arange(n)):
        return f"<=[{n}]"
    for reshape, perm in _iota_candidates(ids.shape):
        candidate = np.arange(n).reshape(reshape).transpose(perm).reshape(-1)
        if np.array_equal(flat, candidate):
            return (f"<=[{','.join(map(str, reshape))}]"
                    f"T({','.join(map(str, perm))})")
    return ",".join(str(int(i)) for i in flat)


def _iota_candidates(dims: Sequence[int]):
    """(reshape, perm) pairs in XLA's canonical form (no two dimensions that stay
    neighbours after the transpose), fewest dimensions first: the transposed iotas that
    meshes make."""
    n = math.prod(dims)
    for count in range(2, 5):
        for reshape in _factorizations(n, count):
            for perm in itertools.permutations(range(count)):
                if all(b != a + 1 for a, b in zip(perm, perm[1:])):
                    yield reshape, perm


def _factorizations(n: int, count: int) -> list[tuple[int, ...]]:
    """Ordered ways to write `n` as a product of `count` factors, each at least 2."""
    if count == 1:
        return [(n,)] if n >= 2 else []
    return [(a,) + rest for a in range(2, n) if n % a == 0
            for rest in _factorizations(n // a, count - 1)]


_TILED = re.compile(r"devices=\[([\d,]+)\]\s*(?:<=\[([\d,]+)\](?:T\(([\d,]+)\))?|([\d,\s]+))"
                    r"(\s+last_tile_dim_replicate|\s+last_tile_dims=\{([a-z,\s]+)\})?")


def parse_sharding(text: str) -> HloSharding:
    """An `HloSharding` from XLA's text (`{replicated}`, `{devices=[2,1]<=[2]}`, ...)."""
    body = re.sub(r"\s*metadata=\{[^{}]*\}", "", text).strip()  # XLA's provenance notes
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError(f"a sharding is written in braces, got {text!r}")
    body = body[1:-1].strip()
    if body.startswith("{"):
        return HloSharding.tuple_of([parse_sharding(part) for part in _split_tuple(body)])
    if body in ("replicated", "manual"):
        return HloSharding(body)
    if body.startswith("maximal"):
        match = re.fullmatch(r"maximal\s+device=(\d+)", body)
        if match is None:
            raise ValueError(f"cannot read the sharding {text!r}")
        return HloSharding.maximal(int(match.group(1)))
    match = _TILED.fullmatch(body)
    if match is None:
        raise ValueError(f"cannot read the sharding {text!r}: expected {{replicated}}, "
                         "{maximal device=N}, {manual} or {devices=[...]...}")
    dims = [int(d) for d in match.group(1).split(",")]
    if match.group(4) is not None:
        ids = np.array([int(i) for i in match.group(4).replace(" ", "").split(",")])
        ids = ids.reshape(dims)
    else:
        reshape = [int(d) for d in match.group(2).split(",")]
        perm = [int(p) for p in match.group(3).split(",")] if match.group(3) else None
        ids = _iota_ids(dims, reshape, perm)
    if match.group(6) is not None:
        kinds = [k.strip() for k in match.group(6).split(",")]
        if any(k not in ("manual", "replicated") for k in kinds):
            raise ValueError(f"cannot read the sharding {text!r}: subgroups are manual or "
                             "replicated")
        return HloSharding.subgrouped(ids, kinds)
    return HloSharding.tiled(ids, bool(match.group(5)))


def _iota_ids(dims: Sequence[int], reshape: Sequence[int] | None,
              perm: Sequence[int] | None) -> np.ndarray:
    """0..n-1 laid out as `reshape`, transposed by `perm`, read as `dims`."""
    n = math.prod(dims)
    ids = np.arange(n).reshape(tuple(reshape) if reshape else (n,))
    if perm is not None:
        ids = ids.transpose(tuple(perm))
    return ids.reshape(tuple(dims))


def _split_tuple(body: str) -> list[str]:
    """The `{...}` parts of a tuple sharding's body, split at top-level commas."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(body):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    parts.append(body[start:].strip())
    return [p for p in parts if p]


def from_mesh_spec(axis_sizes: Sequence[int], axis_names: Sequence[str],
                   spec: Sequence, ndim: int) -> HloSharding:
    """The sharding of a NamedSharding's layout: mesh axes `axis_names` of `axis_sizes`
    (partition ids are mesh positions, row-major), `spec` one entry per leading dimension
    (None, a name or a tuple of names, major first). Mesh axes the spec does not use
    become the replication dimension, as JAX lowers a NamedSharding."""
    mesh_ids = np.arange(math.prod(axis_sizes)).reshape(tuple(axis_sizes))
    position = {name: i for i, name in enumerate(axis_names)}
    entries = list(spec) + [None] * (ndim - len(spec))
    used: list[int] = []
    tiles: list[int] = []
    for entry in entries[:ndim]:
        names = () if entry is None else (entry if isinstance(entry, tuple) else (entry,))
        axes = [position[name] for name in names]
        used.extend(axes)
        tiles.append(math.prod(axis_sizes[a] for a in axes))
    unused = [a for a in range(len(axis_sizes)) if a not in used]
    ids = mesh_ids.transpose(used + unused)
    replicas = math.prod(axis_sizes[a] for a in unused)
    if replicas == 1:
        return HloSharding.tiled(ids.reshape(tiles))
    return HloSharding.tiled(ids.reshape(tiles + [replicas]), replicate_on_last_tile_dim=True)
