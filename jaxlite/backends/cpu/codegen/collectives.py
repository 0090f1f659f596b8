"""Collectives as native code between the partitions of an SPMD program (mirrors XLA's CPU
runtime's in-process collectives: a rendezvous of the participants, then each computes its
own result from the others' buffers).

An SPMD module (`num_partitions = N`) is compiled once and run by N threads, one per
partition (`spmd_executable`), each with its own arguments, arena and `extra` area. Each
partition's `extra` area holds, at `SpmdLayout.header_offset`, its header: the address of
the run's rendezvous (shared by the partitions) and its own device number. The rendezvous
is a table of int64 words: `runtime.RENDEZVOUS_WORDS` (padded to `HEADER_WORDS`), then each
partition's last collective site (for the report of a run whose partitions diverged), then
`slots` operand addresses per partition.

A collective (all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute) is:
publish the addresses of this partition's operands in its slots; wait at the barrier
(`jl_spmd_barrier`) until every partition has; read the members of its group (tables
compiled in, indexed by the device number) and compute its result straight from their
operands' memory; wait at the barrier again, so that no operand is written over while
another partition still reads it. Every partition takes part in every barrier (each is in
exactly one group), and every partition runs the same schedule, so the n-th collective of
one partition meets the n-th of the others, inside while loops and conditionals too.

The computing is a loop fusion built for the collective (`collective_fusions`) and compiled
by the loop-fusion kernel emitter (vectorized, split over the partition's threads when
large): all-reduce folds the members' operands with `to_apply` applied elementwise, in group
order (so its results are `evaluate_spmd`'s, bit for bit; for large operands each member
folds one chunk and writes it into every member's result, which the members publish too,
so the group reads each operand once); all-gather
concatenates them; reduce-scatter takes this member's block of the fold (a dynamic slice
at its position); all-to-all concatenates, from each member, the block at this member's
position. collective-permute and the tuple form of all-to-all copy one peer's operand.
partition-id and replica-id read the device number. Nothing of it runs Python.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from jaxlite.backends.cpu import runtime
from jaxlite.backends.cpu.codegen.collective_fusions import FusionBuilder
from jaxlite.backends.cpu.codegen.control_flow import control_computations
from jaxlite.backends.cpu.codegen.loop_kernel import emit_loop_fusion
from jaxlite.xla.collectives import DeviceLayout, device_groups, permute_pairs
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.shape import Shape

__all__ = ["SpmdLayout", "spmd_layout", "emit_collective", "poll_abort", "HEADER_WORDS",
           "all_reduce_chunk",
           "PARTITION_HEADER_BYTES", "collective_sites"]

_O = Opcode
HEADER_WORDS = 8
assert len(runtime.RENDEZVOUS_WORDS) <= HEADER_WORDS
_ABORT = runtime.RENDEZVOUS_WORDS.index("abort")
# A partition's header in its `extra` area: the rendezvous's address, its device number.
PARTITION_HEADER_BYTES = 64
_ALIGNMENT = 64
_IDS = (_O.PARTITION_ID, _O.REPLICA_ID)
_DECLARATIONS = ("declare void @jl_spmd_barrier(ptr)",
                 "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")


@dataclass(frozen=True)
class SpmdLayout:
    """Where an SPMD module's code finds the run's rendezvous.

    num_partitions : partitions (threads) that run the module.
    slots : operand addresses each partition publishes at a collective (the most operands
        of one collective).
    header_offset : where the partition's header lies in its `extra` area.
    sites : the collectives, by site number (what the diagnosis of a timeout names).
    """

    num_partitions: int
    slots: int
    header_offset: int
    sites: tuple[str, ...]

    @property
    def rendezvous_words(self) -> int:
        """Words of the rendezvous a run allocates."""
        return HEADER_WORDS + self.num_partitions * (1 + self.slots)

    def site_word(self, device: int) -> int:
        return HEADER_WORDS + device


def collective_sites(module: HloModule) -> list[HloInstruction]:
    """The collectives that meet at a barrier, in a fixed order (site numbers)."""
    return [inst for comp in control_computations(module) for inst in comp.instructions
            if inst.opcode.kind is Kind.COLLECTIVE and inst.opcode not in _IDS]


def _published(inst: HloInstruction) -> list[int]:
    """What a collective publishes, by slot: its operands (by number), then (all-reduce,
    whose members write into each other's results) its result leaves (-1, -2, ...)."""
    operands = list(range(len(inst.operands)))
    if inst.opcode is _O.ALL_REDUCE:
        operands += [-1 - k for k in range(len(inst.operands))]
    return operands


def spmd_layout(module: HloModule, extra_start: int) -> SpmdLayout | None:
    """The layout of a module with `num_partitions > 1` whose `extra` area's header may
    start at `extra_start` or later; None for a module run on one partition."""
    if module.num_partitions <= 1:
        return None
    sites = collective_sites(module)
    slots = max([len(_published(inst)) for inst in sites], default=1)
    offset = -(-extra_start // _ALIGNMENT) * _ALIGNMENT
    return SpmdLayout(module.num_partitions, max(1, slots), offset,
                      tuple(inst.name for inst in sites))


def poll_abort(spmd: SpmdLayout, fb: Any, stop: str, go: str) -> None:
    """Branch to `stop` when the run was abandoned (a partition timed out at a barrier),
    else to `go`: while loops test it at each iteration, so that partitions whose programs
    diverged leave their loops (their collectives return at once, computing nothing)."""
    header = fb.op(f"getelementptr inbounds i8, ptr %extra, i64 {spmd.header_offset}",
                   "spmd")
    rendezvous = fb.op(f"load ptr, ptr {header}, align 8", "rv")
    word = fb.op(f"getelementptr inbounds i64, ptr {rendezvous}, i64 {_ABORT}", "abort")
    abort = fb.op(f"load atomic i64, ptr {word} seq_cst, align 8", "abort")
    fb.cond_br(fb.op(f"icmp ne i64 {abort}, 0", "abort"), stop, go)


# --------------------------------------------------------------------------- emission
class _Site:
    """One collective being emitted into a program function (`state`)."""

    def __init__(self, builder: Any, state: Any, inst: HloInstruction) -> None:
        self.builder, self.state, self.fb, self.inst = builder, state, state.fb, inst
        self.spmd: SpmdLayout | None = builder.spmd
        count = 1 if self.spmd is None else self.spmd.num_partitions
        self.layout = DeviceLayout(1, count)
        self.operands = [state.ptr(s) for o in inst.operands for s in state.slices(o)]
        self.outputs = [state.ptr(s) for s in state.slices(inst)]
        self.rendezvous, self.device = "null", "0"
        if self.spmd is not None:
            fb = self.fb
            header = fb.op(f"getelementptr inbounds i8, ptr %extra, i64 "
                           f"{self.spmd.header_offset}", "spmd")
            self.rendezvous = fb.op(f"load ptr, ptr {header}, align 8", "rv")
            number = fb.op(f"getelementptr inbounds i64, ptr {header}, i64 1", "dev")
            self.device = fb.op(f"load i64, ptr {number}, align 8", "dev")

    def word(self, index: str) -> str:
        return self.fb.op(f"getelementptr inbounds i64, ptr {self.rendezvous}, i64 {index}",
                          "w")

    def table(self, values: list[int]) -> str:
        """A compiled-in table of int64 values (its global's name)."""
        return self.builder.ctx.constants.global_for(np.asarray(values, np.int64),
                                                     np.dtype(np.int64), None)

    def lookup(self, table: str, index: str) -> str:
        where = self.fb.op(f"getelementptr inbounds i64, ptr {table}, i64 {index}", "tab")
        return self.fb.op(f"load i64, ptr {where}, align 8", "tab")

    def at(self, table: str, row_length: int, column: int) -> str:
        """Entry `column` of this device's row of a table with rows of `row_length`."""
        row = self.fb.op(f"mul i64 {self.device}, {row_length}", "row")
        return self.lookup(table, self.fb.op(f"add i64 {row}, {column}", "col"))

    def slot(self, device: str, operand: int | str) -> str:
        """The address of `device`'s slot for its operand number `operand`."""
        assert self.spmd is not None
        first = HEADER_WORDS + self.spmd.num_partitions
        base = self.fb.op(f"mul i64 {device}, {self.spmd.slots}", "slot")
        index = self.fb.op(f"add i64 {base}, {operand}", "slot")
        return self.word(self.fb.op(f"add i64 {index}, {first}", "slot"))

    def peer(self, device: str, operand: int | str) -> str:
        """What `device` published as its operand number `operand`."""
        if self.spmd is None:  # one partition: the only device is this one
            return self.operands[int(operand)] if isinstance(operand, int) else \
                self._own_operand(operand)
        return self.fb.op(f"load ptr, ptr {self.slot(device, operand)}, align 8", "peer")

    def _own_operand(self, operand: str) -> str:
        table = self.fb.alloca(f"[{len(self.operands)} x ptr]", 8, "own")
        for k, p in enumerate(self.operands):
            where = self.fb.op(f"getelementptr inbounds ptr, ptr {table}, i64 {k}", "own")
            self.fb.do(f"store ptr {p}, ptr {where}, align 8")
        where = self.fb.op(f"getelementptr inbounds ptr, ptr {table}, i64 {operand}", "own")
        return self.fb.op(f"load ptr, ptr {where}, align 8", "own")

    def meet(self, publish: bool) -> None:
        """(Publish this partition's operands and site, then) wait for every partition;
        after a timeout the program returns at once."""
        if self.spmd is None:
            return
        fb = self.fb
        if publish:
            for k, which in enumerate(_published(self.inst)):
                pointer = self.operands[which] if which >= 0 else self.outputs[-1 - which]
                fb.do(f"store ptr {pointer}, ptr {self.slot(self.device, k)}, align 8")
            site = self.spmd.sites.index(self.inst.name)
            where = self.word(fb.op(f"add i64 {self.device}, {HEADER_WORDS}", "site"))
            fb.do(f"store i64 {site}, ptr {where}, align 8")
        fb.do(f"call void @jl_spmd_barrier(ptr {self.rendezvous})")
        stop, go = fb.label("diverged"), fb.label("met")
        poll_abort(self.spmd, fb, stop, go)
        fb.start(stop)
        fb.ret_void()
        fb.start(go)

    def groups(self) -> list[tuple[int, ...]]:
        return device_groups(self.inst.opcode.text, self.inst.attrs, self.layout)

    def members(self, rows: list[tuple[int, ...]]) -> tuple[list[str], str]:
        """This device's group, given each device's (`rows[d]`): each member's device
        number in group order, and this device's position in it."""
        size = len(rows[0])
        table = self.table([d for row in rows for d in row])
        positions = self.table([row.index(d) if d in row else 0 for d, row in enumerate(rows)])
        devices = [self.at(table, size, j) for j in range(size)]
        return devices, self.lookup(positions, self.device)

    def group_rows(self) -> list[tuple[int, ...]]:
        """Each device's group (all of one size)."""
        group_of = {d: g for g in self.groups() for d in g}
        return [group_of[d] for d in range(self.layout.num_devices)]

    def call(self, fusion: HloInstruction, inputs: list[str], output: str | list[str]
             ) -> None:
        kernel = emit_loop_fusion(self.builder.ctx, fusion, True)
        outputs = [output] if isinstance(output, str) else output
        self.state.call_kernel(kernel, inputs + outputs, None, (self.inst, "collective"))

    def copy(self, dest: str, src: str, dest_shape: Shape, src_shape: Shape) -> None:
        if dest_shape.layout == src_shape.layout:
            self.state.copy(dest, src, dest_shape.nbytes, check=False)
            return
        build = FusionBuilder(f"{self.inst.name}.copy")
        value = build.param(src_shape)
        self.call(build.fusion(build.add(_O.COPY, dest_shape, [value])), [src], dest)

    def start_index(self, position: str, block: int) -> str:
        """A stack slot holding `position * block` as an s32 (a dynamic slice's start)."""
        slot = self.fb.alloca("i32", 4, "start")
        value = self.fb.op(f"mul i64 {position}, {block}", "start")
        self.fb.do(f"store i32 {self.fb.op(f'trunc i64 {value} to i32', 'start')}, "
                   f"ptr {slot}, align 4")
        return slot


def emit_collective(builder: Any, state: Any, inst: HloInstruction) -> None:
    """Emit collective `inst` into the program function `state` is emitting."""
    for line in _DECLARATIONS:
        builder.declarations.setdefault(line, None)
    site = _Site(builder, state, inst)
    if inst.opcode in _IDS:
        _identity(site)
        return
    if all(state.slices(inst)[k].size == 0 for k in range(len(state.slices(inst)))):
        return  # every partition skips it alike: its shapes are the same everywhere
    site.meet(publish=True)
    _EMITTERS[inst.opcode](site)
    site.meet(publish=False)


def _identity(site: _Site) -> None:
    count = site.layout.num_partitions
    fb = site.fb
    op = "urem" if site.inst.opcode is _O.PARTITION_ID else "udiv"
    value = fb.op(f"{op} i64 {site.device}, {count}", "id")
    bits = site.inst.shape.dtype.itemsize * 8
    narrow = value if bits == 64 else fb.op(f"trunc i64 {value} to i{bits}", "id")
    fb.do(f"store i{bits} {narrow}, ptr {site.outputs[0]}, align {bits // 8}")


def _leaf_shapes(shape: Shape) -> list[Shape]:
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


def _all_reduce(site: _Site) -> None:
    groups = site.groups()
    sizes = sorted({len(g) for g in groups})
    if len(sizes) == 1:
        _reduce_group(site, groups)
        return
    # Groups of several sizes (all-reduce allows them): the code for each size, chosen by
    # this device's group.
    size_of = {d: len(g) for g in groups for d in g}
    table = site.table([size_of[d] for d in range(site.layout.num_devices)])
    mine = site.lookup(table, site.device)
    for size in sizes:
        with site.fb.if_then(site.fb.op(f"icmp eq i64 {mine}, {size}", "size"), "group"):
            _reduce_group(site, [g for g in groups if len(g) == size])


def _reduce_group(site: _Site, groups: list[tuple[int, ...]]) -> None:
    """all-reduce for devices in groups of one size (`groups` lists only those)."""
    full = {d: g for g in groups for d in g}
    devices, position = site.members([full.get(d, groups[0])
                                      for d in range(site.layout.num_devices)])
    operands, results = site.inst.operands, _leaf_shapes(site.inst.shape)
    chunks = [None if site.spmd is None else _chunk(o.shape, r, len(devices))
              for o, r in zip(operands, results)]
    for k, chunk in enumerate(chunks):
        if chunk is not None:
            _reduce_in_chunks(site, k, devices, position, chunk)
    _each_operand(site, devices, lambda build, params, operand, result:
                  build.fold(site.inst.called[0], params, result),
                  only=[k for k, chunk in enumerate(chunks) if chunk is None])


# All-reduce operands of this many elements or more are reduced in chunks: each member folds
# one chunk of the group's operands and writes it into every member's result, so that the
# group reads each operand once (a member folding all of them reads each once per member).
_CHUNKED_ELEMENTS = 1 << 14
_CHUNK_ALIGNMENT = 16  # elements: chunks start on whole vectors


def _chunk(operand: Shape, result: Shape, size: int) -> int | None:
    """Elements of each member's chunk of an all-reduce in groups of `size` (the last
    member's may be shorter), or None where every member folds the whole operand."""
    if size < 2 or operand.size < _CHUNKED_ELEMENTS or operand.layout != result.layout \
            or operand.dtype != result.dtype:
        return None
    chunk = -(-operand.size // size)
    chunk = -(-chunk // _CHUNK_ALIGNMENT) * _CHUNK_ALIGNMENT
    return chunk if chunk * (size - 1) < operand.size else None


# (public for `spmd_exchange`, which completes chunks folded in other processes)
all_reduce_chunk = _chunk


def _reduce_in_chunks(site: _Site, k: int, devices: list[str], position: str,
                      chunk: int) -> None:
    """Operand k of an all-reduce: this member folds chunk `position` of the members'
    operands (flat, in memory order) and writes it into every member's result k."""
    fb, operand = site.fb, site.inst.operands[k].shape
    size, results = len(devices), len(site.inst.operands) + k
    start = fb.op(f"mul i64 {position}, {chunk * operand.dtype.itemsize}", "chunk")

    def at(pointer: str) -> str:
        return fb.op(f"getelementptr inbounds i8, ptr {pointer}, i64 {start}", "chunk")
    inputs = [at(site.peer(d, k)) for d in devices]
    outputs = [at(site.peer(d, results)) for d in devices]
    last, whole, done = fb.label("chunk.last"), fb.label("chunk.whole"), fb.label("chunked")
    fb.cond_br(fb.op(f"icmp eq i64 {position}, {size - 1}", "last"), last, whole)
    for block, length in ((last, operand.size - chunk * (size - 1)), (whole, chunk)):
        fb.start(block)
        flat = Shape(operand.dtype, (length,))
        build = FusionBuilder(f"{site.inst.name}.{k}.chunk")
        value = build.fold(site.inst.called[0], [build.param(flat) for _ in devices], flat)
        copies = build.add(_O.TUPLE, Shape.tuple([flat] * size), [value] * size)
        site.call(build.fusion(copies), inputs, outputs)
        fb.br(done)
    fb.start(done)


def _all_gather(site: _Site) -> None:
    devices, _ = site.members(site.group_rows())
    dim = _dimension(site.inst)
    _each_operand(site, devices, lambda build, params, operand, result:
                  build.add(_O.CONCATENATE, result, params, dimensions=(dim,)))


def _reduce_scatter(site: _Site) -> None:
    devices, position = site.members(site.group_rows())
    dim = _dimension(site.inst)

    def block_of_total(build: FusionBuilder, params: list[HloInstruction], operand: Shape,
                       result: Shape) -> HloInstruction:
        total = build.fold(site.inst.called[0], params, operand.with_dtype(result.dtype))
        return build.block(total, dim, build.param(Shape(np.dtype(np.int32))), result)

    _each_operand(site, devices, block_of_total,
                  lambda result: [site.start_index(position, result.dims[dim])])


def _each_operand(site: _Site, devices: list[str], root: Callable[..., HloInstruction],
                  more_inputs: Callable[[Shape], list[str]] = lambda result: [],
                  only: list[int] | None = None) -> None:
    """For each operand k (of those in `only`, default all), the fusion
    `root(build, params, operand, result)` of the members' operands k (then
    `more_inputs(result)`) computes result k."""
    inst = site.inst
    for k, (operand, result) in enumerate(zip(inst.operands, _leaf_shapes(inst.shape))):
        if only is not None and k not in only:
            continue
        build = FusionBuilder(f"{inst.name}.{k}")
        params = [build.param(operand.shape) for _ in devices]
        fusion = build.fusion(root(build, params, operand.shape, result))
        inputs = [site.peer(d, k) for d in devices] + more_inputs(result)
        site.call(fusion, inputs, site.outputs[k])


def _all_to_all(site: _Site) -> None:
    inst = site.inst
    devices, position = site.members(site.group_rows())
    results = _leaf_shapes(inst.shape)
    if inst.attr("dimensions") is None:  # tuple form: output j is member j's operand `me`
        for j, device in enumerate(devices):
            site.copy(site.outputs[j], site.peer(device, position), results[j],
                      inst.operands[j].shape)
        return
    dim, operand = _dimension(inst), inst.operands[0].shape
    block = operand.dims[dim] // len(devices)
    build = FusionBuilder(inst.name)
    params = [build.param(operand) for _ in devices]
    start = build.param(Shape(np.dtype(np.int32)))
    piece = Shape(operand.dtype, tuple(block if d == dim else n
                                       for d, n in enumerate(operand.dims)), operand.layout)
    blocks = [build.block(p, dim, start, piece) for p in params]
    root = build.add(_O.CONCATENATE, results[0], blocks, dimensions=(dim,))
    inputs = [site.peer(d, 0) for d in devices] + [site.start_index(position, block)]
    site.call(build.fusion(root), inputs, site.outputs[0])


def _permute(site: _Site) -> None:
    inst, fb = site.inst, site.fb
    sends = permute_pairs(inst.attrs, site.layout)
    source_of = {t: s for s, t in sends.items()}
    table = site.table([source_of.get(d, -1) for d in range(site.layout.num_devices)])
    source = site.lookup(table, site.device)
    receives, nothing, done = fb.label("receive"), fb.label("zeros"), fb.label("permuted")
    fb.cond_br(fb.op(f"icmp sge i64 {source}, 0", "sends"), receives, nothing)
    fb.start(receives)
    site.copy(site.outputs[0], site.peer(source, 0), inst.shape, inst.operands[0].shape)
    fb.br(done)
    fb.start(nothing)  # XLA: a partition nobody sends to receives zeros
    fb.do(f"call void @llvm.memset.p0.i64(ptr {site.outputs[0]}, i8 0, "
          f"i64 {inst.shape.nbytes}, i1 false)")
    fb.br(done)
    fb.start(done)


_EMITTERS = {_O.ALL_REDUCE: _all_reduce, _O.ALL_GATHER: _all_gather,
             _O.REDUCE_SCATTER: _reduce_scatter, _O.ALL_TO_ALL: _all_to_all,
             _O.COLLECTIVE_PERMUTE: _permute}


def _dimension(inst: HloInstruction) -> int:
    dims = inst.attr("dimensions")
    return int(dims[0]) if isinstance(dims, (tuple, list)) else int(dims)
