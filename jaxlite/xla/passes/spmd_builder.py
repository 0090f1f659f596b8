"""Building blocks of the SPMD partitioner: partitioned values, and an instruction builder
that knows the partition it runs on (partition-id, offset tables, masks) and numbers the
collectives it inserts (mirrors the SpmdBuilder and PartitionedHlo of XLA's partitioner).

A `PValue` is one value of the original program as the partitioned program holds it: the
instruction computing this partition's block, the value's global shape, and the grid (see
spmd_shardings) saying which block each partition holds. Blocks are padded to the tile
shape when a dimension does not divide evenly; what the padding holds is unspecified, so
operations that would let it leak (reductions, contractions over a cut dimension) mask it
first, as XLA does.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxlite.xla.ir import ComputationBuilder, HloComputation, HloInstruction, NameUniquer
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes import spmd_shardings as grids
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference import infer_shape

__all__ = ["PValue", "ModuleState", "SpmdBuilder"]

_O = Opcode
_S32 = np.dtype(np.int32)


@dataclass(frozen=True, eq=False)
class PValue:
    """One value of the original program in the partitioned one (arrays: `hlo` is this
    partition's block and `ids` the grid; tuples: `parts`, one PValue per element)."""

    hlo: HloInstruction
    shape: Shape  # the global shape
    ids: np.ndarray | None = None
    parts: tuple["PValue", ...] = ()
    # The whole value, when every partition cut its block from it locally: other
    # layouts are then cut from it too, without collectives (constants, iotas, ...).
    whole: "PValue | None" = None
    # For a slice along one dimension: (the sliced value, dimension, start, limit), so
    # that a concatenation of slices that rotates a value can be recognized.
    sliced_from: "tuple[PValue, int, int, int] | None" = None

    @property
    def is_tuple(self) -> bool:
        return self.shape.is_tuple


class ModuleState:
    """What the builders of one partitioned module share: names, the number of
    partitions, the next channel id, and the scalar computations collectives apply."""

    def __init__(self, num_partitions: int, names: NameUniquer) -> None:
        self.num_partitions = num_partitions
        self.names = names
        self.channels = itertools.count(1)
        self.adders: dict[np.dtype, HloComputation] = {}
        self.stripped: dict[int, HloComputation] = {}

    def strip(self, comp: HloComputation) -> HloComputation:
        """`comp` (a scalar computation: a reducer, a comparator) without shardings."""
        if id(comp) not in self.stripped:
            new: dict[int, HloInstruction] = {}
            for inst in comp.instructions:
                attrs = {k: v for k, v in inst.attrs.items() if k != "sharding"}
                new[id(inst)] = inst.replace(
                    name=self.names.reserve(inst.name), attrs=attrs,
                    operands=tuple(new[id(o)] for o in inst.operands),
                    called=tuple(self.strip(c) for c in inst.called))
            self.stripped[id(comp)] = HloComputation(
                self.names.reserve(comp.name), tuple(new.values()), new[id(comp.root)])
        return self.stripped[id(comp)]

    def adder(self, dtype: np.dtype) -> HloComputation:
        """A scalar `add` computation of `dtype` (or `or` for pred), for all-reduces."""
        dtype = np.dtype(dtype)
        if dtype not in self.adders:
            b = ComputationBuilder(f"add.{dtype.name}", self.names)
            scalar = Shape(dtype, ())
            x, y = b.parameter(scalar, "x"), b.parameter(scalar, "y")
            op = _O.OR if dtype == np.bool_ else _O.ADD
            self.adders[dtype] = b.build(b.add(op, scalar, (x, y)))
        return self.adders[dtype]


class SpmdBuilder:
    """Adds the instructions of one partitioned computation; shapes are inferred."""

    def __init__(self, name: str, state: ModuleState) -> None:
        self.state = state
        self.b = ComputationBuilder(name, state.names)
        self.n = state.num_partitions
        self._cache: dict[tuple, HloInstruction] = {}
        self.reshards: dict[tuple, PValue] = {}
        self.metadata = None

    # ---- plain instructions
    def add(self, opcode: Opcode, operands: Sequence[HloInstruction] = (),
            attrs: dict[str, Any] | None = None, called: Sequence[HloComputation] = (),
            shape: Shape | None = None, name: str | None = None) -> HloInstruction:
        """An instruction whose shape is inferred from its operands (or `shape`, for the
        opcodes whose result type is chosen)."""
        attrs = dict(attrs or {})
        inferred = infer_shape(opcode, [o.shape for o in operands], attrs, called, shape)
        self.b.metadata = self.metadata
        return self.b.add(opcode, inferred, operands, attrs, called, name)

    def parameter(self, shape: Shape, number: int, name: str,
                  attrs: dict[str, Any] | None = None) -> HloInstruction:
        inst = HloInstruction(self.state.names.reserve(name), _O.PARAMETER, shape,
                              attrs={"number": number, **(attrs or {})})
        self.b.instructions.append(inst)
        return inst

    def constant(self, value: Any, dtype: Any = None) -> HloInstruction:
        array = np.asarray(value, dtype=dtype)
        return self.add(_O.CONSTANT, attrs={"literal": array},
                        shape=Shape(array.dtype, array.shape))

    def full(self, scalar: HloInstruction, dims: Sequence[int]) -> HloInstruction:
        """`scalar` broadcast to `dims`."""
        return self.add(_O.BROADCAST, (scalar,), {"dimensions": ()},
                        shape=Shape(scalar.shape.dtype, tuple(dims)))

    def reshape(self, x: HloInstruction, dims: Sequence[int]) -> HloInstruction:
        if tuple(dims) == x.shape.dims:
            return x
        return self.add(_O.RESHAPE, (x,), shape=Shape(x.shape.dtype, tuple(dims)))

    def transpose(self, x: HloInstruction, perm: Sequence[int]) -> HloInstruction:
        if list(perm) == list(range(len(perm))):
            return x
        return self.add(_O.TRANSPOSE, (x,), {"dimensions": tuple(perm)})

    def slice(self, x: HloInstruction, limits: Sequence[int]) -> HloInstruction:
        """The leading `limits` corner of `x` (drops padding)."""
        if tuple(limits) == x.shape.dims:
            return x
        rank = len(limits)
        return self.add(_O.SLICE, (x,), {"starts": (0,) * rank, "limits": tuple(limits),
                                         "strides": (1,) * rank})

    def pad_to(self, x: HloInstruction, dims: Sequence[int]) -> HloInstruction:
        """`x` padded at the high end to `dims` (with zeros: padding is never read)."""
        if tuple(dims) == x.shape.dims:
            return x
        zero = self.constant(0, x.shape.dtype)
        config = tuple((0, int(d) - s, 0) for d, s in zip(dims, x.shape.dims))
        return self.add(_O.PAD, (x, zero), {"padding": config})

    # ---- where this partition is
    def partition_id(self) -> HloInstruction:
        if ("pid",) not in self._cache:
            self._cache[("pid",)] = self.add(_O.PARTITION_ID, shape=Shape(np.uint32, ()))
        return self._cache[("pid",)]

    def table_lookup(self, table: Sequence[int]) -> HloInstruction:
        """`table[partition-id]` as an s32 scalar (XLA's offset tables)."""
        key = ("table", tuple(int(t) for t in table))
        if key not in self._cache:
            if len(set(key[1])) == 1:
                self._cache[key] = self.constant(key[1][0], _S32)
            else:
                entries = self.constant(np.array(key[1], _S32))
                one = self.add(_O.DYNAMIC_SLICE, (entries, self.partition_id()),
                               {"sizes": (1,)})
                self._cache[key] = self.reshape(one, ())
        return self._cache[key]

    def offset(self, ids: np.ndarray, shape: Sequence[int], dim: int) -> HloInstruction:
        """Where this partition's tile starts along `dim`."""
        return self.table_lookup(grids.offsets(ids, shape, dim))

    def dynamic_slice(self, x: HloInstruction, starts: Sequence[HloInstruction],
                      sizes: Sequence[int]) -> HloInstruction:
        if tuple(sizes) == x.shape.dims:
            return x
        return self.add(_O.DYNAMIC_SLICE, (x, *starts), {"sizes": tuple(sizes)})

    def mask(self, x: HloInstruction, ids: np.ndarray, shape: Sequence[int],
             dims: Sequence[int], fill: HloInstruction) -> HloInstruction:
        """`x` (a block under grid `ids` of a value of `shape`) with the padding along
        `dims` replaced by the scalar `fill`: what a reduction over them may read."""
        uneven = [d for d in dims if ids.shape[d] > 1 and shape[d] % ids.shape[d]]
        if not uneven:
            return x
        block = x.shape.dims
        inside = None
        for d in uneven:
            iota = self.add(_O.IOTA, attrs={"iota_dimension": d}, shape=Shape(_S32, block))
            start = self.full(self.offset(ids, shape, d), block)
            where = self.add(_O.ADD, (iota, start))
            limit = self.full(self.constant(shape[d], _S32), block)
            ok = self.add(_O.COMPARE, (where, limit), {"direction": "LT"})
            inside = ok if inside is None else self.add(_O.AND, (inside, ok))
        return self.add(_O.SELECT, (inside, x, self.full(fill, block)))

    # ---- collectives
    def _collective_attrs(self, groups: Sequence[Sequence[int]]) -> dict[str, Any]:
        return {"channel_id": next(self.state.channels),
                "replica_groups": tuple(tuple(g) for g in groups),
                "use_global_device_ids": True}

    def all_reduce(self, x: HloInstruction, groups: Sequence[Sequence[int]],
                   combiner: HloComputation | None = None) -> HloInstruction:
        if len(groups[0]) == 1:
            return x
        combiner = combiner or self.state.adder(x.shape.dtype)
        return self.add(_O.ALL_REDUCE, (x,), self._collective_attrs(groups), (combiner,))

    def all_gather(self, x: HloInstruction, groups: Sequence[Sequence[int]],
                   dim: int) -> HloInstruction:
        if len(groups[0]) == 1:
            return x
        dims = list(x.shape.dims)
        dims[dim] *= len(groups[0])
        attrs = self._collective_attrs(groups)
        attrs["dimensions"] = (dim,)
        return self.add(_O.ALL_GATHER, (x,), attrs, shape=Shape(x.shape.dtype, tuple(dims)))

    def all_to_all(self, x: HloInstruction, groups: Sequence[Sequence[int]],
                   dim: int) -> HloInstruction:
        attrs = {k: v for k, v in self._collective_attrs(groups).items()
                 if k != "use_global_device_ids"}  # all-to-all has no such flag in XLA
        attrs["dimensions"] = (dim,)
        return self.add(_O.ALL_TO_ALL, (x,), attrs)

    def collective_permute(self, x: HloInstruction,
                           pairs: Sequence[tuple[int, int]]) -> HloInstruction:
        """Each (source, target) pair: target receives source's `x` (others get zeros)."""
        attrs = {"channel_id": next(self.state.channels),
                 "source_target_pairs": tuple((int(s), int(t)) for s, t in pairs)}
        return self.add(_O.COLLECTIVE_PERMUTE, (x,), attrs)

    def build(self, root: HloInstruction) -> HloComputation:
        return self.b.build(root)
