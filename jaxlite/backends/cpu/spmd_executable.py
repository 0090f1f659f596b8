"""The cpu backend's executable of an SPMD program: one compiled module run once per
partition, each partition in a thread of its own (mirrors PJRT's CPU client running a
program compiled with `num_partitions` on that many local devices).

`execute_partitions(args)` takes each partition's arguments (`args[p]`, partition p's
blocks) and returns each partition's results. Every partition gets its own frame, arena
and `extra` area (`CpuExecutable.prepared_run`); the partitions share the run's rendezvous,
a table of words whose address, with the partition's number, is written into the
partition's header (`codegen/collectives.py`). Then one foreign call (`runtime.invoke_all`,
which releases the GIL) runs partition 0 on the calling thread and each other partition on
a thread it starts (at most `runtime.MAX_THREADS` partitions): the collectives meet in `jl_spmd_barrier` and read each other's buffers directly, so
no Python runs between the start and the end of a run. Kernels inside a partition use
`jaxlite_cpu_threads // N` threads (at least one).

In a run of several MPI processes each process runs its own partitions
(`execute_partitions(args, partitions=, owners=)`) and the collectives whose groups span
processes exchange operands through MPI at their barriers (`spmd_exchange`).

A run whose partitions diverged (one waits at a collective another never reaches) ends
after `collective_timeout` seconds with a RuntimeError saying where each partition was.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any, Sequence

import numpy as np

from jaxlite.backends.base import Buffer
from jaxlite.backends.cpu import runtime
from jaxlite.backends.cpu.codegen.collectives import collective_sites
from jaxlite.backends.cpu.codegen.custom_call import raise_pending_error
from jaxlite.backends.cpu.executable import CpuExecutable
from jaxlite.backends.cpu.spmd_exchange import ProcessExchange
from jaxlite.config import config

__all__ = ["SpmdCpuExecutable", "partition_threads"]

_WORD = runtime.RENDEZVOUS_WORDS.index


def partition_threads(threads: int, num_partitions: int) -> int:
    """The threads each partition's kernels may use when `threads` serve them all."""
    return max(1, threads // num_partitions)


class SpmdCpuExecutable(CpuExecutable):
    """A module compiled with `num_partitions > 1`, run by `execute_partitions`.

    Takes `CpuExecutable`'s parameters; `threads` is what each partition's kernels were
    compiled for (`partition_threads`).
    """

    # Seconds a partition waits at a collective for the others before the run is ended.
    collective_timeout = 60

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kept: list[tuple[ctypes.Array, int, np.ndarray | None]] = []
        self._kept_lock = threading.Lock()
        # The last run's exchange between processes (its count of MPI messages), or None.
        self.last_exchange: ProcessExchange | None = None
        self._exchange_plans: dict[tuple[int, ...], dict] = {}  # by the partitions' owners

    @property
    def num_partitions(self) -> int:
        return self._optimized.num_partitions

    def execute_partitions(self, args: Sequence[Sequence[np.ndarray]],
                           partitions: Sequence[int] | None = None,
                           owners: Sequence[int] | None = None) -> list[list[np.ndarray]]:
        """Run the program once per partition, partition p on `args[p]`; returns each
        partition's results (the role of XLA's `ExecuteSharded` for jit over a mesh).
        Partitions may share an argument's array (a replicated value), but not a donated
        one: results are written over a donated argument.

        In a run of several MPI processes each runs its own `partitions` (`args[i]` is
        partition `partitions[i]`'s) and `owners[p]` says which process runs partition p:
        collectives between processes go through MPI (`spmd_exchange`)."""
        count = self.num_partitions
        mine = list(range(count)) if partitions is None else list(partitions)
        if len(args) != len(mine) or not mine:
            raise ValueError(f"execute_partitions: {self._optimized.name} runs on {count} "
                             f"partitions, got arguments for {len(args)} of {len(mine)}.")
        spmd = self._info.spmd
        assert spmd is not None and spmd.num_partitions == count
        exchange = None
        if len(mine) < count:
            if owners is None or len(owners) != count:
                raise ValueError("execute_partitions: a run of some of the partitions needs "
                                 "the process of every partition (owners=).")
            sites = collective_sites(self._optimized)
            assert tuple(inst.name for inst in sites) == spmd.sites
            plans = self._exchange_plans.setdefault(tuple(owners), {})
            exchange = ProcessExchange(spmd, sites, mine, owners, plans)
        rendezvous = np.zeros(spmd.rendezvous_words, np.int64)
        rendezvous[_WORD("partitions")] = len(mine)
        rendezvous[_WORD("timeout")] = self.collective_timeout
        rendezvous[_WORD("hook")] = 0 if exchange is None else exchange.address
        rendezvous[spmd.site_word(0):spmd.site_word(count)] = -1  # no collective reached yet
        threads = partition_threads(config.read("jaxlite_cpu_threads"), len(mine))
        # Each partition's frame and arena are kept for the next run (their pages stay
        # mapped); a run while another is under way gets fresh ones.
        kept = self._kept_lock.acquire(False)
        try:
            if kept and len(self._kept) != len(mine):
                self._kept = [self._new_frame() for _ in mine]
            frames = self._kept if kept else [self._new_frame() for _ in mine]
            runs = [self.prepared_run(arrays, threads, frame)
                    for arrays, frame in zip(args, frames)]
            for p, run in zip(mine, runs):
                header = run.extra + spmd.header_offset
                ctypes.c_int64.from_address(header).value = rendezvous.ctypes.data
                ctypes.c_int64.from_address(header + 8).value = p
            table = (ctypes.c_void_p * len(runs))(*[run.address for run in runs])
            runtime.invoke_all(ctypes.addressof(table), len(runs))
        finally:
            if kept:
                self._kept_lock.release()
        raise_pending_error()  # what a custom-call target raised inside the run
        if exchange is not None and exchange.error is not None:
            raise RuntimeError(f"execute_partitions: the exchange between processes of "
                               f"{self._optimized.name} failed") from exchange.error
        if rendezvous[_WORD("abort")]:
            raise RuntimeError(self._divergence(rendezvous, mine))
        self.last_exchange = exchange
        return [run.results for run in runs]

    def _divergence(self, rendezvous: np.ndarray, partitions: Sequence[int]) -> str:
        spmd = self._info.spmd
        assert spmd is not None
        where = []
        for p in partitions:
            site = int(rendezvous[spmd.site_word(p)])
            where.append(f"partition {p} at %{spmd.sites[site]}" if 0 <= site < len(
                spmd.sites) else f"partition {p} before its first collective")
        return (f"execute_partitions: the partitions of {self._optimized.name} diverged: a "
                f"collective waited {self.collective_timeout} s for partitions that never "
                f"reached it (last collectives reached: {', '.join(where)}). Every partition "
                "must run the same collectives in the same order (a loop or branch whose "
                "condition differs between partitions cannot hold one).")

    def execute_arrays(self, arrays: Sequence[np.ndarray],
                       checked: bool = False) -> list[np.ndarray]:
        raise NotImplementedError(self._one_partition())

    def execute(self, buffers: Sequence[Buffer]) -> list[Buffer]:
        raise NotImplementedError(self._one_partition())

    def run_raw(self, params: Sequence[int], outs: Sequence[int], arena: int | None) -> None:
        raise NotImplementedError(self._one_partition())

    def _one_partition(self) -> str:
        return (f"{self._optimized.name} is an SPMD program of {self.num_partitions} "
                "partitions: run it with execute_partitions (each partition's arguments).")

    def __repr__(self) -> str:
        return f"<SpmdCpuExecutable {self._optimized.name} x{self.num_partitions}>"
