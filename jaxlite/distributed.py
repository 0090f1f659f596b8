"""Starting and stopping a multi-process run (mirrors `jax.distributed`).

A run of several processes is started by an MPI launcher, `mpiexec -n P python train.py`,
and each process calls `initialize()` before anything else touches a device: the process
index and count come from MPI (mpi4py, from the `distributed` extra), and the cpu backend
that starts afterwards lists every process's devices (`jaxlite.devices()`), this process's
in `jaxlite.local_devices()`. Without an MPI launcher, `initialize` takes JAX's explicit
arguments and checks them as JAX does; a run of one process is all it can start that way
(jaxlite has no coordinator service): more raise NotImplementedError pointing at mpiexec.
"""
from __future__ import annotations

import os
from typing import Sequence

from jaxlite.backends import processes
from jaxlite.backends.registry import default_registry

__all__ = ["initialize", "is_initialized", "shutdown"]


class _State:
    """What `initialize` recorded: the coordinator's address and this process's index."""

    coordinator_address: str | None = None
    process_id: int | None = None


_state = _State()


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None,
               local_device_ids: int | Sequence[int] | None = None,
               cluster_detection_method: str | None = None,
               initialization_timeout: int = 300, heartbeat_timeout_seconds: int = 100,
               shutdown_timeout_seconds: int = 300,
               coordinator_bind_address: str | None = None, slice_index: int | None = None,
               partition_index: int | None = None) -> None:
    """Join a run of `num_processes` processes (mirrors `jax.distributed.initialize`).

    Under an MPI launcher (its environment variables say so), or with
    `cluster_detection_method="mpi4py"`, the process id and count come from MPI's world
    (given ones must agree); mpi4py missing raises ImportError naming the extra. Otherwise,
    as in JAX, the address (or `JAX_COORDINATOR_ADDRESS`), the process count and this
    process's id must be given, and only a run of one process starts. A second call raises
    RuntimeError, as does joining several processes after a backend started.
    `local_device_ids` and the timeouts are accepted and unused (every process has
    `jax_num_cpu_devices` CPU devices).
    """
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if _state.coordinator_address is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    if cluster_detection_method == "mpi4py" or (
            cluster_detection_method is None and processes.launched_by_mpi()):
        _join_mpi(coordinator_address, num_processes, process_id)
        return
    _check_arguments(coordinator_address, num_processes, process_id)
    if num_processes > 1:
        raise NotImplementedError(
            f"jax.distributed.initialize(num_processes={num_processes}): jaxlite starts runs "
            "of several processes through MPI only: launch them with `mpiexec -n "
            f"{num_processes} python script.py` and call initialize() without arguments "
            f"({processes.EXTRA_HELP}).")
    _state.coordinator_address = coordinator_address
    _state.process_id = process_id


def _join_mpi(coordinator_address: str | None, num_processes: int | None,
              process_id: int | None) -> None:
    world = processes.mpi_module().COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if num_processes is not None and num_processes != size:
        raise ValueError(f"jax.distributed.initialize(num_processes={num_processes}): MPI "
                         f"started {size} processes.")
    if process_id is not None and process_id != rank:
        raise ValueError(f"jax.distributed.initialize(process_id={process_id}): this "
                         f"process's MPI rank is {rank}.")
    if size > 1 and default_registry().started():
        raise RuntimeError("jax.distributed.initialize() must be called before any JAX "
                           "calls that might initialise the XLA backend. This includes any "
                           "computation, but also calls to jax.devices, jax.device_put, and "
                           "others.")
    processes.join_mpi()
    _state.coordinator_address = coordinator_address or f"mpi:{world.Get_name()}"
    _state.process_id = rank


def _check_arguments(coordinator_address: str | None, num_processes: int | None,
                     process_id: int | None) -> None:
    if coordinator_address is None:
        raise ValueError("coordinator_address should be defined.")
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if not isinstance(process_id, int):
        raise TypeError(f"process_id must be a nonnegative int. Got process_id={process_id} "
                        f"of type {type(process_id)}.")
    if not isinstance(num_processes, int):
        raise TypeError(f"num_processes must be a positive int. Got "
                        f"num_processes={num_processes} of type {type(num_processes)}.")
    if not 0 <= process_id < num_processes:
        raise ValueError("process_id and num_processes must be nonnegative, with process_id "
                         f"< num_processes. Got process_id={process_id}, "
                         f"num_processes={num_processes}.")


def is_initialized() -> bool:
    """Whether `initialize` has run (and `shutdown` not since) (mirrors
    `jax.distributed.is_initialized`)."""
    return _state.coordinator_address is not None


def shutdown() -> None:
    """Leave the run, after every process has reached this call; nothing happens when none
    was joined (mirrors `jax.distributed.shutdown`). The cpu backend keeps listing every
    process's devices, and MPI stays up until the process exits (it cannot start twice)."""
    if _state.coordinator_address is not None:
        processes.barrier()
        processes.leave()
    _state.coordinator_address = None
    _state.process_id = None
