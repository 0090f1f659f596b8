"""The HLO intermediate representation: modules, computations, instructions (mirrors XLA HLO).

A `HloModule` holds computations; one is the entry. A `HloComputation` is a topologically
ordered SSA list of `HloInstruction`s ending in a root. Instructions are immutable: a pass
builds new instructions instead of editing old ones. Each instruction has an opcode from the
opcode table, operand instructions, a `Shape`, opcode attributes in `attrs` and the
computations it calls (`called`: a reduce's `to_apply`, a while's condition and body, a
fusion's fused computation, ...).

Attribute names (Python values) by opcode:
  parameter: number            constant: literal (numpy array)
  compare: direction, type     broadcast/transpose/reverse/reduce/concatenate: dimensions
  slice: starts, limits, strides      dynamic-slice: sizes
  pad: padding ((low, high, interior) per dimension)   iota: iota_dimension
  dot: lhs_contracting, rhs_contracting, lhs_batch, rhs_batch
  get-tuple-element: index     fusion: kind, tiling     custom-call: target, backend_config
  sort: dimension, is_stable   reduce-window / select-and-scatter: window
  convolution: window, dim_labels, feature_group_count, batch_group_count
  gather / scatter: dimension numbers as in XLA's text (see text.py)
  all-reduce / all-gather / reduce-scatter / all-to-all: replica_groups (tuple of tuples of
    ids), channel_id, use_global_device_ids, dimensions (not all-reduce's; the tuple form of
    all-to-all has none)     collective-permute: source_target_pairs, channel_id
Any instruction may carry `sharding` (an `hlo_sharding.HloSharding`): how its value is laid
out over the partitions of a program still to be partitioned (text `sharding={...}`).
Values: dimension lists are tuples of ints; `window` is a `shape_inference_base.Window`;
fusion `kind` is XLA's name (kLoop, kInput, kOutput, kCustom) and `tiling` a mapping of
JSON-able values; custom-call `backend_config` is a string; compare `type` is optional
(XLA's TOTALORDER orders floats -nan < -inf < -0 < +0 < inf < nan). `called` order: while
(condition, body), select-and-scatter (select, scatter), conditional (branch 0, 1, ...; on a
pred: true, false). Any other attribute is a bool, int, float, str, tuple or mapping of
those, so that the text format (text.py) writes it and reads it back.

`metadata` (an `OpMetadata`, or None) says where an instruction came from: the name stack
of the equation it was lowered from (`jit(f)/layer/mul`) and the user's source line. It is
for people and tools (the text, the profiler, dumps), never for the compiler: passes carry it
along where they can, and the keys of compiled code leave it out.
"""
from __future__ import annotations

import itertools
import types
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape


def _frozen(attrs: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return types.MappingProxyType(dict(attrs or {}))


@dataclass(frozen=True)
class OpMetadata:
    """Where an instruction came from (mirrors XLA's OpMetadata, in its text spelling).

    op_name : the name stack and primitive, `jit(f)/jit(g)/scope/mul`.
    source_file, source_line : the user's line that traced the operation ("" and 0 if
        unknown).
    """

    op_name: str = ""
    source_file: str = ""
    source_line: int = 0


@dataclass(frozen=True, eq=False)
class HloInstruction:
    """One SSA value: `name = shape opcode(operands), attrs` (identity equality)."""

    name: str
    opcode: Opcode
    shape: Shape
    operands: tuple["HloInstruction", ...] = ()
    attrs: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))
    called: tuple["HloComputation", ...] = ()
    metadata: OpMetadata | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "operands", tuple(self.operands))
        object.__setattr__(self, "called", tuple(self.called))
        if not isinstance(self.attrs, types.MappingProxyType):
            object.__setattr__(self, "attrs", _frozen(self.attrs))

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def replace(self, **changes: Any) -> "HloInstruction":
        """A copy with some fields changed (same name and metadata unless given)."""
        values = dict(name=self.name, opcode=self.opcode, shape=self.shape,
                      operands=self.operands, attrs=self.attrs, called=self.called,
                      metadata=self.metadata)
        values.update(changes)
        return HloInstruction(**values)

    def __repr__(self) -> str:
        return f"<{self.name} = {self.shape} {self.opcode.text}>"


@dataclass(frozen=True, eq=False)
class HloComputation:
    """A function of parameters to a root value, in SSA form."""

    name: str
    instructions: tuple[HloInstruction, ...]
    root: HloInstruction

    def __post_init__(self) -> None:
        object.__setattr__(self, "instructions", tuple(self.instructions))

    @property
    def parameters(self) -> list[HloInstruction]:
        params = [i for i in self.instructions if i.opcode is Opcode.PARAMETER]
        return sorted(params, key=lambda p: p.attr("number"))

    @property
    def parameter_shapes(self) -> list[Shape]:
        return [p.shape for p in self.parameters]

    def users(self) -> dict[HloInstruction, list[HloInstruction]]:
        """For each instruction, the instructions that use it (an analysis, not stored)."""
        result: dict[HloInstruction, list[HloInstruction]] = {i: [] for i in self.instructions}
        for inst in self.instructions:
            for operand in inst.operands:
                result[operand].append(inst)
        return result

    def __repr__(self) -> str:
        return f"<HloComputation {self.name}: {len(self.instructions)} instructions>"


@dataclass(frozen=True, eq=False)
class HloModule:
    """A program: an entry computation and every computation it calls, callees first."""

    name: str
    entry: HloComputation
    computations: tuple[HloComputation, ...] = ()
    # An SPMD program runs once per partition (XLA's HloModuleConfig::num_partitions); its
    # values have per-partition shapes and its collectives meet across the partitions.
    num_partitions: int = 1

    def __post_init__(self) -> None:
        if not self.computations:
            object.__setattr__(self, "computations", tuple(reachable_computations(self.entry)))

    def with_entry(self, entry: HloComputation) -> "HloModule":
        return HloModule(self.name, entry, num_partitions=self.num_partitions)

    def __repr__(self) -> str:
        return f"<HloModule {self.name}: {len(self.computations)} computations>"


def reachable_computations(*roots: HloComputation) -> list[HloComputation]:
    """`roots` and every computation they call (transitively), callees before callers."""
    order: list[HloComputation] = []
    seen: set[int] = set()

    def visit(comp: HloComputation) -> None:
        if id(comp) in seen:
            return
        seen.add(id(comp))
        for inst in comp.instructions:
            for callee in inst.called:
                visit(callee)
        order.append(comp)
    for root in roots:
        visit(root)
    return order


def post_order(roots: Iterable[HloInstruction]) -> list[HloInstruction]:
    """Instructions reachable from `roots`, operands before users."""
    order: list[HloInstruction] = []
    seen: set[int] = set()
    for root in roots:
        stack: list[tuple[HloInstruction, Iterator[HloInstruction]]] = []
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack.append((root, iter(root.operands)))
        while stack:
            node, operands = stack[-1]
            child = next(operands, None)
            if child is None:
                stack.pop()
                order.append(node)
            elif id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(child.operands)))
    return order


class NameUniquer:
    """Hands out names like `add.3`, unique within one module, as XLA names values."""

    def __init__(self) -> None:
        self._counter = itertools.count()
        self._used: set[str] = set()

    def __call__(self, prefix: str) -> str:
        prefix = prefix.replace("%", "")
        name = f"{prefix}.{next(self._counter)}"
        while name in self._used:
            name = f"{prefix}.{next(self._counter)}"
        self._used.add(name)
        return name

    def reserve(self, name: str) -> str:
        """Use `name` itself if it is free, else a numbered variant."""
        if name not in self._used:
            self._used.add(name)
            return name
        return self(name)


class ComputationBuilder:
    """Builds one computation instruction by instruction (mirrors XlaBuilder, simplified).

    Shapes are given by the caller (lowering rules know them from the jaxpr's avals); the
    verifier checks them against the operands. Instructions added while `metadata` is set
    carry it (lowering sets it to each equation's in turn).
    """

    def __init__(self, name: str, names: NameUniquer) -> None:
        self.name = names.reserve(name)
        self.names = names
        self.instructions: list[HloInstruction] = []
        self._num_params = 0
        self.metadata: OpMetadata | None = None

    def parameter(self, shape: Shape, name: str = "param") -> HloInstruction:
        inst = HloInstruction(self.names(name), Opcode.PARAMETER, shape,
                              attrs={"number": self._num_params})
        self._num_params += 1
        self.instructions.append(inst)
        return inst

    def add(self, opcode: Opcode, shape: Shape, operands: Sequence[HloInstruction] = (),
            attrs: Mapping[str, Any] | None = None, called: Sequence[HloComputation] = (),
            name: str | None = None) -> HloInstruction:
        inst = HloInstruction(self.names(name or opcode.text), opcode, shape, tuple(operands),
                              _frozen(attrs), tuple(called), self.metadata)
        self.instructions.append(inst)
        return inst

    def build(self, root: HloInstruction) -> HloComputation:
        """The computation of everything added so far, with `root` as its result."""
        return HloComputation(self.name, tuple(self.instructions), root)
