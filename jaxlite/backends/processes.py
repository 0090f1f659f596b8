"""The processes of a run and the MPI messages between them (the machinery behind
`jax.distributed`, `jax.process_index` and `jax.experimental.multihost_utils`).

A run of several processes is started by `mpiexec -n P python train.py`; each process calls
`jaxlite.distributed.initialize()`, which joins the MPI world here (`join_mpi`). From then
on `current()` says this process's index, the process count and its communicator, and the
cpu backend that starts afterwards lists the devices of every process (process p owns the
global ids p * 2048 + k, as in JAX). The collectives below move numpy buffers through
mpi4py's buffer interface (`Allgather`, `Allreduce`, `Bcast`), never pickled objects.

mpi4py is optional (the `distributed` extra, with the MPI library of the `mpich` wheel),
so it is imported only when a run of several processes starts.
"""
from __future__ import annotations

import dataclasses
import importlib
import os
from typing import Any

import numpy as np

__all__ = ["ProcessGroup", "allgather", "allreduce_sum", "barrier", "broadcast", "current",
           "join", "join_mpi", "launched_by_mpi", "leave", "mpi_module"]

# Variables that MPI launchers set in each process they start: MPICH's hydra (PMI), Open
# MPI, and PMIx-based launchers (Open MPI 5, Slurm's srun --mpi=pmix).
_MPI_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE")

EXTRA_HELP = ('install the distributed extra: pip install -e ".[distributed]" (mpi4py with '
              "the MPI library of the mpich wheel; no system MPI needed)")


@dataclasses.dataclass(frozen=True)
class ProcessGroup:
    """The processes of a run as this process sees them.

    index : this process's rank, 0 <= index < count.
    count : the number of processes.
    communicator : the mpi4py communicator of the run (None for a run of one process).
    """

    index: int = 0
    count: int = 1
    communicator: Any = None


_SINGLE = ProcessGroup()
_GROUP = [_SINGLE]


def current() -> ProcessGroup:
    """The run this process belongs to (a run of one process until `join`)."""
    return _GROUP[0]


def join(group: ProcessGroup) -> None:
    _GROUP[0] = group


def leave() -> None:
    """Back to a run of one process (MPI itself stays up: it cannot start twice)."""
    _GROUP[0] = _SINGLE


def launched_by_mpi() -> bool:
    """Whether an MPI launcher started this process as one of several."""
    return any(int(os.environ.get(name, "1") or "1") > 1 for name in _MPI_SIZE_VARIABLES)


def mpi_module() -> Any:
    """mpi4py's `MPI` module, or ImportError saying how to install it."""
    try:
        return importlib.import_module("mpi4py.MPI")
    except ImportError as error:
        raise ImportError(f"jaxlite.distributed needs mpi4py for a run of several processes "
                          f"({error}); {EXTRA_HELP}.") from error


def join_mpi() -> ProcessGroup:
    """Join the MPI world this process was started in and make it the current run."""
    world = mpi_module().COMM_WORLD
    group = ProcessGroup(world.Get_rank(), world.Get_size(), world)
    join(group)
    return group


def _communicator() -> Any:
    group = current()
    if group.communicator is None:
        raise RuntimeError("No MPI run: call jaxlite.distributed.initialize() in each "
                           "process started by mpiexec first.")
    return group.communicator


def _buffer(x: Any) -> np.ndarray:
    # MPI reads and writes raw memory: a C-contiguous array of a plain numpy dtype.
    return np.asarray(x, order="C")  # (np.ascontiguousarray would make scalars 1-d)


def _bytes(array: np.ndarray) -> np.ndarray:
    # Moved as bytes, so that dtypes MPI has no name for (bfloat16, float8) travel too.
    return array.reshape(-1).view(np.uint8)


def allgather(x: Any) -> np.ndarray:
    """Every process's `x` (same shape and dtype everywhere), stacked on a new leading axis
    in process order."""
    group = current()
    local = _buffer(x)
    if group.count == 1:
        return local[None].copy()
    gathered = np.empty((group.count,) + local.shape, local.dtype)
    _communicator().Allgather(_bytes(local), _bytes(gathered))
    return gathered


def allreduce_sum(x: Any) -> np.ndarray:
    """The elementwise sum of every process's `x`."""
    local = _buffer(x)
    if current().count == 1:
        return local.copy()
    total = np.empty_like(local)
    _communicator().Allreduce(local, total, op=mpi_module().SUM)
    return total


def broadcast(x: Any, root: int) -> np.ndarray:
    """Process `root`'s `x` in every process (the others' `x` gives shape and dtype)."""
    data = _buffer(x).copy()
    if current().count > 1:
        _communicator().Bcast(_bytes(data), root=root)
    return data


def barrier() -> None:
    """Wait until every process of the run has arrived."""
    if current().count > 1:
        _communicator().Barrier()
