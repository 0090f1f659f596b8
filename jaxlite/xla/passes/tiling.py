"""Tiling decisions, recorded as data on each fusion (the part of XLA's CPU tiling and GPU
launch-dimension choices that code generators follow; kept as data so a tuner can change it
without touching code generation).

Contract: `assign_tiling(module)` sets the `tiling` attribute of every fusion instruction
(outside fused computations) to a `Tiling` computed from the fusion's kind and shapes, and
changes nothing else: no numbers change. The module comes back unchanged (the same object)
when every fusion already carries the tiling it would get.

A `Tiling` describes the loop nest over the fusion's *iteration space*: the output shape of a
loop fusion, the operand shape of the reductions of an input fusion, the output shape of the
dot of an output fusion. Dimensions are numbered in that space.

- `loop_order`: dimensions from outermost to innermost (memory order: major to minor).
- `tile_shape`: the block each innermost loop step covers, per dimension.
- `vector_width`: SIMD lanes along the innermost dimension: 64-byte vectors (AVX-512), so 16
  for f32 and 8 for f64, lowered to the innermost extent when that is smaller.
- `parallel_dims`: dimensions split over threads (empty when the work is too small).
- `reduced_dims`: the dimensions an input fusion reduces.
- `row_kernel`: the fusion is computed one row at a time: for each index of the kept
  dimensions, each reduction makes one pass over the row in topological order, then the
  outputs are computed over the row; per-row values (reduction results and what follows
  from them) are computed once per row. Set for row reductions whose row fits in L1, and
  always for row fusions (a reduction broadcast back over its row), which need it.
- `k_tile`: the block of the contraction dimension of an output (dot) fusion, else 0.

Text form: `Tiling` is a read-only mapping, so the HLO printer writes it as the generic JSON
attribute `tiling={"iteration_shape": [8, 32], "loop_order": [0, 1], ...}` and the parser
reads back a plain mapping that compares equal to it; `tiling_of(inst)` and
`Tiling.from_mapping` turn that back into a `Tiling`. `to_text`/`from_text` give the same
JSON text alone.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from jaxlite.xla.cost_model import PARALLEL_MIN_ELEMENTS, fits_in_l1, vector_width
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion_decisions import INPUT, OUTPUT, broadcasts_reduction
from jaxlite.xla.passes.fusion_rows import row_structure
from jaxlite.xla.passes.rewriting import RewriteContext, rewrite_module

__all__ = ["Tiling", "assign_tiling", "tiling_for", "tiling_of"]

# Innermost tiles span this many vectors (unrolled), so that independent operations hide
# each other's latency.
_UNROLL_VECTORS = 4
# Register block of a GEMM micro-kernel (rows, vectors of columns) and its k block.
_GEMM_ROWS, _GEMM_VECTORS, _GEMM_K_TILE = 6, 2, 256


@dataclass(frozen=True, eq=False)
class Tiling(Mapping):
    """The loop nest of one fusion (see the module docstring for each field)."""

    iteration_shape: tuple[int, ...]
    loop_order: tuple[int, ...]
    tile_shape: tuple[int, ...]
    vector_width: int
    parallel_dims: tuple[int, ...] = ()
    reduced_dims: tuple[int, ...] = ()
    row_kernel: bool = False
    k_tile: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (list, tuple)):
                object.__setattr__(self, f.name, tuple(int(v) for v in value))
        rank = len(self.iteration_shape)
        if sorted(self.loop_order) != list(range(rank)) or len(self.tile_shape) != rank:
            raise ValueError(f"tiling of a rank-{rank} iteration space {self.iteration_shape} "
                             f"needs a loop_order permuting its dimensions and one tile size "
                             f"per dimension, got loop_order={self.loop_order}, "
                             f"tile_shape={self.tile_shape}")

    # A read-only mapping of field names to values: how the HLO text printer writes it.
    def __getitem__(self, key: str) -> Any:
        if key not in self._names():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __hash__(self) -> int:
        return hash(tuple(self.items()))

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def to_text(self) -> str:
        """The JSON text the HLO printer writes after `tiling=`."""
        return json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in self.items()})

    @classmethod
    def from_text(cls, text: str) -> Tiling:
        """The `Tiling` of `to_text`'s output."""
        return cls.from_mapping(json.loads(text))

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> Tiling:
        """A `Tiling` from a mapping of its fields (what the HLO parser gives back)."""
        if isinstance(mapping, Tiling):
            return mapping
        unknown = set(mapping) - set(cls._names())
        if unknown:
            raise ValueError(f"tiling has unknown fields {sorted(unknown)}; known fields: "
                             f"{', '.join(cls._names())}")
        return cls(**dict(mapping))


def tiling_of(inst: HloInstruction) -> Tiling | None:
    """The tiling recorded on a fusion (parsed text included), or None."""
    value = inst.attr("tiling")
    if value is None or (isinstance(value, tuple) and not value):
        return None
    return Tiling.from_mapping(value)


def assign_tiling(module: HloModule) -> HloModule:
    """Record a `Tiling` on every fusion of the module (see the module docstring)."""
    def rule(inst: HloInstruction, context: RewriteContext) -> HloInstruction | None:
        if inst.opcode is not Opcode.FUSION:
            return None
        tiling = tiling_for(inst)
        old = inst.attr("tiling")
        if isinstance(old, Mapping) and dict(old) == dict(tiling):
            return None
        return inst.replace(attrs={**inst.attrs, "tiling": tiling})
    return rewrite_module(module, rule)


def _memory_order(layout: tuple[int, ...] | None, rank: int) -> tuple[int, ...]:
    """Dimensions from major to minor."""
    if layout is None or len(layout) != rank:
        return tuple(range(rank))
    return tuple(reversed(layout))


def _lanes(dtype: Any, inner_extent: int) -> int:
    """The SIMD width, lowered (in powers of two) to the innermost extent."""
    width = vector_width(dtype)
    while width > 1 and width > inner_extent:
        width //= 2
    return width


def _parallel(order: tuple[int, ...], dims: tuple[int, ...], exclude: tuple[int, ...],
              total: int) -> tuple[int, ...]:
    """The outermost dimension (outside `exclude`) worth splitting over threads."""
    if total < PARALLEL_MIN_ELEMENTS:
        return ()
    for d in order:
        if d not in exclude and dims[d] > 1:
            return (d,)
    return ()


def _loop_tiling(dims: tuple[int, ...], layout: tuple[int, ...] | None,
                 dtype: Any) -> Tiling:
    order = _memory_order(layout, len(dims))
    inner = order[-1] if order else None
    lanes = _lanes(dtype, dims[inner] if inner is not None else 1)
    tile = tuple(min(dims[d], lanes * _UNROLL_VECTORS) if d == inner else 1
                 for d in range(len(dims)))
    total = int(np.prod(dims, dtype=np.int64))
    return Tiling(dims, order, tile, lanes, _parallel(order, dims, (), total))


def _input_tiling(fusion: HloInstruction) -> Tiling:
    body = fusion.called[0]
    members = [i for i in body.instructions if i.opcode is not Opcode.PARAMETER]
    reduces = [i for i in members if i.opcode is Opcode.REDUCE]
    operand = reduces[0].operands[0].shape
    dims, reduced = operand.dims, tuple(sorted(reduces[0].attr("dimensions", ())))
    outputs = list(body.root.operands) if body.root.opcode is Opcode.TUPLE else [body.root]
    row = row_structure(outputs, members)
    order = _memory_order(operand.layout, len(dims))
    total = int(np.prod(dims, dtype=np.int64))
    kept = tuple(d for d in order if d not in reduced)
    parallel = _parallel(kept, dims, reduced, total) if kept else ()
    if row is not None:
        broadcast_back = broadcasts_reduction(members)
        if broadcast_back or fits_in_l1(row.row_elements, row.dtype):
            lanes = _lanes(row.dtype, dims[order[-1]] if order else 1)
            tile = tuple(dims[d] if d in reduced else 1 for d in range(len(dims)))
            return Tiling(dims, order, tile, lanes, parallel, reduced, True)
    base = _loop_tiling(dims, operand.layout, operand.dtype)
    return Tiling(dims, order, base.tile_shape, base.vector_width, parallel, reduced, False)


def _output_tiling(fusion: HloInstruction) -> Tiling:
    body = fusion.called[0]
    dot = next(i for i in body.instructions if i.opcode is Opcode.DOT)
    dims, shape = dot.shape.dims, dot.shape
    order = _memory_order(shape.layout, len(dims))
    lhs = dot.operands[0].shape
    contraction = int(np.prod([lhs.dims[d] for d in dot.attr("lhs_contracting", ())],
                              dtype=np.int64))
    inner = order[-1] if order else None
    lanes = _lanes(shape.dtype, dims[inner] if inner is not None else 1)
    rows = order[-2] if len(order) >= 2 else None
    tile = tuple(min(dims[d], lanes * _GEMM_VECTORS) if d == inner
                 else min(dims[d], _GEMM_ROWS) if d == rows else 1 for d in range(len(dims)))
    total = int(np.prod(dims, dtype=np.int64)) * max(1, contraction)
    return Tiling(dims, order, tile, lanes, _parallel(order, dims, (), total), (), False,
                  min(contraction, _GEMM_K_TILE))


def tiling_for(fusion: HloInstruction) -> Tiling:
    """The tiling `assign_tiling` records on `fusion` (a pure function of its shapes)."""
    kind = fusion.attr("kind")
    body = fusion.called[0]
    if kind == OUTPUT and any(i.opcode is Opcode.DOT for i in body.instructions):
        return _output_tiling(fusion)
    reduces = [i for i in body.instructions
               if i.opcode is Opcode.REDUCE and not i.shape.is_tuple]
    if kind == INPUT and reduces:
        return _input_tiling(fusion)
    outputs = list(body.root.operands) if body.root.opcode is Opcode.TUPLE else [body.root]
    largest = max(outputs, key=lambda o: 0 if o.shape.is_tuple else o.shape.size)
    if largest.shape.is_tuple:
        tuple_reduce = next((i for i in body.instructions if i.opcode is Opcode.REDUCE), None)
        source = tuple_reduce.operands[0].shape if tuple_reduce is not None else None
        if source is None:
            return Tiling((), (), (), 1)
        return _loop_tiling(source.dims, source.layout, source.dtype)
    return _loop_tiling(largest.shape.dims, largest.shape.layout, largest.shape.dtype)
