"""Starting and stopping a multi-process run (mirrors `jax.distributed`).

jaxlite runs in one process today: `initialize` accepts a run of one process (checking its
arguments as JAX does) and marks the process initialized; a run of several processes is
refused with NotImplementedError until the scale-out issue (issue 14, MPI) brings them.
`jax.process_count()` stays 1 either way.
"""
from __future__ import annotations

import os
from typing import Sequence

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
    """Join a run of `num_processes` processes coordinated at `coordinator_address`
    (mirrors `jax.distributed.initialize`).

    As in JAX, the address (or `JAX_COORDINATOR_ADDRESS`), the process count and this
    process's id must be given (jaxlite detects no cluster environment), and a second call
    raises RuntimeError. A run of one process is all jaxlite has: more raise
    NotImplementedError.
    """
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if _state.coordinator_address is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    _check_arguments(coordinator_address, num_processes, process_id)
    if num_processes > 1:
        raise NotImplementedError(
            f"jax.distributed.initialize(num_processes={num_processes}): jaxlite runs in a "
            "single process; multi-process runs come with the scale-out issue (issue 14, "
            "MPI).")
    _state.coordinator_address = coordinator_address
    _state.process_id = process_id


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
    """Leave the run; nothing happens when none was joined (mirrors
    `jax.distributed.shutdown`)."""
    _state.coordinator_address = None
    _state.process_id = None
