"""Collectives of an SPMD program whose partitions run in several MPI processes (the role
of XLA's cross-host collectives for a program partitioned over every process's devices).

Each process runs only its own partitions (`SpmdCpuExecutable.execute_partitions(args,
partitions=, owners=)`); the native collectives stay as they are (`codegen/collectives.py`:
publish operand addresses in slots, barrier, read the group's operands, barrier). What the
processes add is the rendezvous's hook (`runtime.RENDEZVOUS_WORDS`), which the last local
partition to reach a barrier calls before it releases the others:

- at the first barrier of a collective whose groups span processes, each process sends
  every other the bytes of its partitions' operands that the other's partitions read (one
  MPI Alltoallv of raw bytes), keeps what it receives in buffers for the rest of the run
  and writes their addresses into the remote partitions' slots; the local partitions then
  compute their results as in one process. An all-reduce's members also publish their
  results: a remote member's result slot points at scratch memory.
- an all-reduce of a large operand is reduced in chunks (each member folds one chunk and
  writes it into every member's result): a process then receives only the chunks its
  members fold, and at the second barrier a second Alltoallv brings the chunks that other
  processes' members folded. For two processes that is what a ring all-reduce moves.

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


_Piece = tuple  # (source partition, destination partition, slot, first byte, end byte)


@dataclass
class _Site:
    """What one collective exchanges between processes.

    operands, chunks : per pair of processes (sender, receiver), the pieces the receiver
        needs at the first barrier (operands: the destination is the remote partition's
        copy) and at the second (an all-reduce's chunks: the destination is the
        receiver's first member of the group, whose result the others copy).
    result_bytes : the published results' sizes (all-reduce), for scratch memory.
    """

    operand_bytes: list[int]
    result_bytes: list[int]
    groups: dict[int, tuple[int, ...]]
    operands: dict[tuple[int, int], list[_Piece]]
    chunks: dict[tuple[int, int], list[_Piece]]


def _site(inst: HloInstruction, count: int, owners: Sequence[int]) -> _Site:
    layout = DeviceLayout(1, count)
    if inst.opcode is Opcode.COLLECTIVE_PERMUTE:  # a target reads its source only
        groups = {t: (s,) for s, t in permute_pairs(inst.attrs, layout).items()}
    else:
        groups = {d: g for g in device_groups(inst.opcode.text, inst.attrs, layout)
                  for d in g}
    operands = [o.shape for o in inst.operands]
    results = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]
    if inst.opcode is not Opcode.ALL_REDUCE:
        results = []

    def folded(group: tuple[int, ...], position: int) -> list[tuple[int, int, int]]:
        """(operand, first byte, end byte) of what member `position` of `group` folds."""
        ranges = []
        for k, shape in enumerate(operands):
            chunk = all_reduce_chunk(shape, results[k], len(group)) if results else None
            if chunk is None:
                ranges.append((k, 0, shape.nbytes))
            else:
                size = chunk * np.dtype(shape.dtype).itemsize
                ranges.append((k, position * size, min((position + 1) * size, shape.nbytes)))
        return ranges

    needed: dict[tuple[int, int], set] = {}
    for d, group in groups.items():
        position = group.index(d) if d in group else 0
        for m in group:
            if owners[m] != owners[d]:
                needed.setdefault((owners[m], owners[d]), set()).update(
                    (m, m, k, lo, hi) for k, lo, hi in folded(group, position))
    chunked: dict[tuple[int, int], set] = {}
    first = len(operands)
    for group in set(groups.values()) if results else ():
        for position, m in enumerate(group):
            for d in group:
                if owners[d] == owners[m]:
                    continue
                mine = min(x for x in group if owners[x] == owners[d])
                for k, lo, hi in folded(group, position):
                    if (lo, hi) != (0, operands[k].nbytes):
                        chunked.setdefault((owners[m], owners[d]), set()).add(
                            (m, mine, first + k, lo, hi))
    return _Site([s.nbytes for s in operands], [s.nbytes for s in results], groups,
                 {key: sorted(v) for key, v in needed.items()},
                 {key: sorted(v) for key, v in chunked.items()})


class ProcessExchange:
    """The hook of one run of an SPMD program over several processes.

    spmd : the program's rendezvous layout; sites : its collectives, by site number.
    partitions : the partitions this process runs; owners : each partition's process.
    plans : where the sites' plans are kept between runs (for these owners).
    """

    # MPI collectives all runs of this process have called (what tests check).
    calls_in_process = 0

    def __init__(self, spmd: SpmdLayout, sites: Sequence[HloInstruction],
                 partitions: Sequence[int], owners: Sequence[int],
                 plans: dict[int, _Site] | None = None) -> None:
        self.spmd, self.instructions = spmd, list(sites)
        self.partitions, self.owners = list(partitions), list(owners)
        self.count = spmd.num_partitions
        self.here = self.owners[self.partitions[0]]
        self.processes = max(owners) + 1
        self.sites: dict[int, _Site] = {} if plans is None else plans
        self.kept: dict[int, list[np.ndarray]] = {}
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
            if words[_WORD("generation")] % 2 == 0:  # the first barrier of a collective
                if site.operands:
                    self._operands(words, number, site)
            elif site.chunks:
                self._chunks(words, site)
        except BaseException as error:  # noqa: BLE001  (raised after the run)
            self.error = self.error or error
            words[_WORD("abort")] = 1

    def _slot(self, partition: int, k: int) -> int:
        return HEADER_WORDS + self.count + partition * self.spmd.slots + k

    def _alltoall(self, messages: dict[tuple[int, int], list[_Piece]], source: Any,
                  destination: Any) -> list[_Piece]:
        """Send each process the pieces it needs of ours (read at `source(piece)`), receive
        ours (written at `destination(piece)`): one MPI Alltoallv. Returns the pieces
        received."""
        def sizes(pieces: list[_Piece]) -> int:
            return sum(hi - lo for *_, lo, hi in pieces)
        outgoing = [messages.get((self.here, r), []) for r in range(self.processes)]
        incoming = [messages.get((q, self.here), []) for q in range(self.processes)]
        send_counts = [sizes(p) for p in outgoing]
        receive_counts = [sizes(p) for p in incoming]
        send = np.empty(max(sum(send_counts), 1), np.uint8)
        at = 0
        for piece in (p for pieces in outgoing for p in pieces):
            length = piece[4] - piece[3]
            ctypes.memmove(send.ctypes.data + at, source(piece) + piece[3], length)
            at += length
        received = np.empty(max(sum(receive_counts), 1), np.uint8)
        mpi = processes.mpi_module()
        processes.current().communicator.Alltoallv(
            [send, send_counts, _starts(send_counts), mpi.BYTE],
            [received, receive_counts, _starts(receive_counts), mpi.BYTE])
        self.messages += 1
        ProcessExchange.calls_in_process += 1
        at = 0
        for piece in (p for pieces in incoming for p in pieces):
            length = piece[4] - piece[3]
            ctypes.memmove(destination(piece) + piece[3], received.ctypes.data + at, length)
            at += length
        return [p for pieces in incoming for p in pieces]

    def _operands(self, words: np.ndarray, number: int, site: _Site) -> None:
        """The operand bytes our partitions read of other processes' partitions, into
        buffers whose addresses go into those partitions' slots."""
        remote = [p for p in range(self.count) if self.owners[p] != self.here]
        copies = {p: [np.empty(max(n, 1), np.uint8) for n in site.operand_bytes]
                  for p in remote}
        scratch = [np.empty(max(n, 1), np.uint8) for n in site.result_bytes]
        self.kept[number] = [b for bs in copies.values() for b in bs] + scratch
        self._alltoall(site.operands, lambda piece: int(words[self._slot(piece[0], piece[2])]),
                       lambda piece: copies[piece[1]][piece[2]].ctypes.data)
        for p in remote:
            for k, buffer in enumerate(copies[p]):
                words[self._slot(p, k)] = buffer.ctypes.data
            for k, buffer in enumerate(scratch):  # results a remote member writes here
                words[self._slot(p, len(site.operand_bytes) + k)] = buffer.ctypes.data

    def _chunks(self, words: np.ndarray, site: _Site) -> None:
        """The chunks of an all-reduce's results that other processes' members folded,
        into our first member of each group, then copied to our other members."""
        def address(partition: int, slot: int) -> int:
            return int(words[self._slot(partition, slot)])
        received = self._alltoall(site.chunks, lambda piece: address(piece[0], piece[2]),
                                  lambda piece: address(piece[1], piece[2]))
        for _, first, slot, lo, hi in received:
            for other in site.groups[first]:
                if other != first and self.owners[other] == self.here:
                    ctypes.memmove(address(other, slot) + lo, address(first, slot) + lo,
                                   hi - lo)


def _starts(counts: list[int]) -> list[int]:
    return [int(s) for s in np.cumsum([0] + counts[:-1])]
