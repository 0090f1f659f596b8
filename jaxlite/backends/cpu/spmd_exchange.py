"""Collectives of an SPMD program whose partitions run in several MPI processes (the role
of XLA's cross-host collectives for a program partitioned over every process's devices).

Each process runs only its own partitions (`SpmdCpuExecutable.execute_partitions(args,
partitions=, owners=)`); the native collectives stay as they are (`codegen/collectives.py`:
publish operand addresses in slots, barrier, read the group's operands, barrier). What the
processes add is the rendezvous's hook (`runtime.RENDEZVOUS_WORDS`), which the last local
partition to reach a barrier calls before it releases the others:

- at the first barrier of a collective whose groups span processes, the process sends its
  partitions' operands to the others and receives theirs (one MPI Allgatherv of raw
  bytes), keeps them in buffers for the rest of the run and writes their addresses into
  the remote partitions' slots; the local partitions then compute their results from
  every member's operand as in one process. An all-reduce's members also publish their
  results: a remote member's result slot points at scratch memory.
- at the second barrier of an all-reduce reduced in chunks (each member folds one chunk
  and writes it into every member's result), the chunks that the other processes' members
  folded are missing here: one more Allgatherv of the local results brings them.

Collectives whose groups all lie within one process need no message. The hook runs
Python (the GIL is taken for the call), which the messages' cost dominates. If a process
fails inside the hook, its run ends with that error; the other processes then wait in MPI
for it, as any MPI program whose ranks part ways.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from jaxlite.backends import processes
from jaxlite.backends.cpu import runtime
from jaxlite.backends.cpu.codegen.collectives import HEADER_WORDS, SpmdLayout, all_reduce_chunk
from jaxlite.xla.collectives import DeviceLayout, device_groups, permute_pairs
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["ProcessExchange", "HOOK"]

_WORD = runtime.RENDEZVOUS_WORDS.index
HOOK = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@dataclass
class _Site:
    """What one collective exchanges: the bytes of each published operand and result,
    each partition's group, and (all-reduce) each operand's chunk length in elements for
    a group of each size (None: not reduced in chunks)."""

    spans: bool
    operand_bytes: list[int]
    result_bytes: list[int]
    groups: dict[int, tuple[int, ...]]
    chunks: dict[int, list[int | None]]
    itemsizes: list[int]

    @property
    def chunked(self) -> bool:
        return any(c is not None for by_size in self.chunks.values() for c in by_size)


def _site(inst: HloInstruction, count: int, owners: Sequence[int]) -> _Site:
    layout = DeviceLayout(1, count)
    if inst.opcode is Opcode.COLLECTIVE_PERMUTE:
        sends = permute_pairs(inst.attrs, layout)
        groups = {t: (s, t) for s, t in sends.items()}
    else:
        groups = {d: g for g in device_groups(inst.opcode.text, inst.attrs, layout)
                  for d in g}
    spans = any(len({owners[d] for d in g}) > 1 for g in groups.values())
    operands = [o.shape for o in inst.operands]
    results = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]
    chunks: dict[int, list[int | None]] = {}
    if inst.opcode is Opcode.ALL_REDUCE:
        chunks = {n: [all_reduce_chunk(o, r, n) for o, r in zip(operands, results)]
                  for n in {len(g) for g in groups.values()}}
    else:
        results = []
    return _Site(spans, [s.nbytes for s in operands], [s.nbytes for s in results],
                 groups, chunks, [np.dtype(s.dtype).itemsize for s in operands])


class ProcessExchange:
    """The hook of one run of an SPMD program over several processes.

    spmd : the program's rendezvous layout; sites : its collectives, by site number.
    partitions : the partitions this process runs; owners : each partition's process.
    """

    # MPI collectives all runs of this process have called (what tests check).
    calls_in_process = 0

    def __init__(self, spmd: SpmdLayout, sites: Sequence[HloInstruction],
                 partitions: Sequence[int], owners: Sequence[int]) -> None:
        self.spmd, self.instructions = spmd, list(sites)
        self.partitions, self.owners = list(partitions), list(owners)
        self.count = spmd.num_partitions
        self.processes = max(owners) + 1
        self.members = [[p for p in range(self.count) if owners[p] == q]
                        for q in range(self.processes)]
        self.sites: dict[int, _Site] = {}
        self.kept: dict[tuple[int, str], list[np.ndarray]] = {}
        self.messages = 0
        self.error: BaseException | None = None
        self.hook = HOOK(self._hook)

    @property
    def address(self) -> int:
        """The hook's address, for the rendezvous's hook word."""
        return ctypes.cast(self.hook, ctypes.c_void_p).value or 0

    def _hook(self, rendezvous: int) -> None:
        words = np.ctypeslib.as_array((ctypes.c_int64 * self.spmd.rendezvous_words)
                                      .from_address(rendezvous))
        try:
            number = int(words[HEADER_WORDS + self.partitions[0]])
            if number not in self.sites:
                self.sites[number] = _site(self.instructions[number], self.count,
                                           self.owners)
            site = self.sites[number]
            if not site.spans:
                return
            if words[_WORD("generation")] % 2 == 0:  # the first barrier of a collective
                self._operands(words, number, site)
            elif site.chunked:
                self._chunks(words, site)
        except BaseException as error:  # noqa: BLE001  (raised after the run)
            self.error = self.error or error
            words[_WORD("abort")] = 1

    def _slot(self, partition: int, k: int) -> int:
        return HEADER_WORDS + self.count + partition * self.spmd.slots + k

    def _allgather(self, pieces: Sequence[tuple[int, int]]
                   ) -> tuple[np.ndarray, list[int]]:
        """Every process's bytes, in process order: this process sends `pieces` (address,
        length) of each of its partitions, the same lengths everywhere; returns the bytes
        received and where each process's part starts."""
        per_partition = sum(n for _, n in pieces) // len(self.partitions)
        send = np.empty(per_partition * len(self.partitions), np.uint8)
        at = 0
        for address, length in pieces:
            ctypes.memmove(send.ctypes.data + at, address, length)
            at += length
        counts = [per_partition * len(m) for m in self.members]
        starts = list(np.cumsum([0] + counts[:-1]))
        received = np.empty(sum(counts), np.uint8)
        mpi = processes.mpi_module()
        processes.current().communicator.Allgatherv(
            send, [received, counts, starts, mpi.BYTE])
        self.messages += 1
        ProcessExchange.calls_in_process += 1
        return received, [int(s) for s in starts]

    def _operands(self, words: np.ndarray, number: int, site: _Site) -> None:
        """Every partition's operands in every process: remote slots point at copies."""
        sizes = site.operand_bytes
        pieces = [(int(words[self._slot(p, k)]), n) for p in self.partitions
                  for k, n in enumerate(sizes)]
        received, starts = self._allgather(pieces)
        scratch = [np.empty(max(n, 1), np.uint8) for n in site.result_bytes]
        self.kept[(number, "operands")] = [received] + scratch
        per_partition = sum(sizes)
        here = self.owners[self.partitions[0]]
        for p in range(self.count):
            if self.owners[p] == here:
                continue
            at = starts[self.owners[p]] + \
                self.members[self.owners[p]].index(p) * per_partition
            for k, n in enumerate(sizes):
                words[self._slot(p, k)] = received.ctypes.data + at
                at += n
            for k, buffer in enumerate(scratch):  # results a remote member writes here
                words[self._slot(p, len(sizes) + k)] = buffer.ctypes.data

    def _chunks(self, words: np.ndarray, site: _Site) -> None:
        """The chunks of an all-reduce's results that other processes' members folded
        (every member publishes its results; each process sends its members' whole)."""
        first, sizes = len(site.operand_bytes), site.result_bytes
        pieces = [(int(words[self._slot(p, first + k)]), n) for p in self.partitions
                  for k, n in enumerate(sizes)]
        received, starts = self._allgather(pieces)
        here = self.owners[self.partitions[0]]
        for p in self.partitions:
            group = site.groups[p]
            chunks = site.chunks[len(group)]
            for position, member in enumerate(group):
                owner = self.owners[member]
                if owner == here:
                    continue
                at = starts[owner] + self.members[owner].index(member) * sum(sizes)
                for k, (chunk, n) in enumerate(zip(chunks, sizes)):
                    if chunk is not None:
                        lo = position * chunk * site.itemsizes[k]
                        hi = min(lo + chunk * site.itemsizes[k], n)
                        target = int(words[self._slot(p, first + k)])
                        ctypes.memmove(target + lo, received.ctypes.data + at + lo, hi - lo)
                    at += n
