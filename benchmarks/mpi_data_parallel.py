"""Step time of the data-parallel MLP train step (issue 14): one process on the whole batch
against P MPI processes on 1/P of it each, gradients summed by one MPI Allreduce.

    python benchmarks/mpi_data_parallel.py --cores 1 [--split 2] [--jit]
    mpiexec -n 2 python benchmarks/mpi_data_parallel.py --cores 0,1 [--jit]

The MLP is ../shared/bench's mlp_train_step (784-1024-1024-10, batch 256, cross-entropy,
SGD). `--cores` pins process r to the r-th listed core (one listed core: all share it). Rank 0
prints one JSON line of medians in ms: the whole step, and its parts (gradients of the local
batch, the Allreduce of all gradients as one float32 buffer, the SGD update).

`--jit`: the bench's step as it is, plain jit, on the whole batch placed over a mesh of
every process's devices (split along the batch, parameters replicated): each process runs
its own partitions of the partitioned step and the gradients' all-reduces go through MPI
inside it (runtime/spmd_call.py, backends/cpu/spmd_exchange.py). Prints the step's median
and its range.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "shared", "bench"))

import workloads  # noqa: E402  (../shared/bench)

import jaxlite as jax  # noqa: E402
from jaxlite.backends import processes  # noqa: E402
from jaxlite.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


def _pin(cores: str) -> None:
    listed = [int(c) for c in cores.split(",")]
    rank = int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
    os.sched_setaffinity(0, {listed[rank % len(listed)]})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cores", default="1")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--split", type=int, default=None,
                        help="take 1/SPLIT of the batch (default: 1/process count), e.g. "
                             "to time one process's share of a P-process step alone")
    parser.add_argument("--jit", action="store_true",
                        help="the plain-jit step over a mesh of every process's devices")
    args = parser.parse_args()
    _pin(args.cores)
    if processes.launched_by_mpi():
        jax.distributed.initialize()
    if args.jit:
        _jit_step(args.steps)
        return
    rank, count = jax.process_index(), jax.process_count()
    params, x, y = workloads._mlp_inputs(np.random.default_rng(0))
    share = len(x) // (args.split or count)
    x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]
    grad = jax.jit(jax.value_and_grad(lambda p, a, b: workloads.xent_loss(jax, p, a, b)))
    flatten = jax.jit(lambda tree: jax.numpy.concatenate(
        [leaf.ravel() for leaf in jax.tree.leaves(tree)]))
    update = jax.jit(lambda p, flat: jax.tree.map(
        lambda leaf, g: leaf - workloads.MLP_LR * g, p,
        jax.flatten_util.ravel_pytree(p)[1](flat)))
    times: dict[str, list[float]] = {"step": [], "grad": [], "allreduce": [], "update": []}
    for step in range(args.steps + 3):
        processes.barrier()
        start = time.perf_counter()
        loss, grads = grad(params, x, y)
        flat = flatten(grads).block_until_ready()
        computed = time.perf_counter()
        flat = processes.allreduce_sum(np.asarray(flat)) / count
        reduced = time.perf_counter()
        params = jax.block_until_ready(update(params, flat))
        done = time.perf_counter()
        if step >= 3:  # the first steps compile
            for key, seconds in (("step", done - start), ("grad", computed - start),
                                 ("allreduce", reduced - computed), ("update", done - reduced)):
                times[key].append(seconds * 1e3)
    if rank == 0:
        print(json.dumps({"processes": count, "cores": args.cores, "local_batch": share,
                          **{key: round(statistics.median(v), 2)
                             for key, v in times.items()}}))
    if count > 1:
        jax.distributed.shutdown()


def _jit_step(steps: int) -> None:
    """Step times of the bench's plain-jit train step over a batch-split mesh."""
    mesh = Mesh(np.array(jax.devices()), ("data",))
    params, x, y = workloads._mlp_inputs(np.random.default_rng(0))
    params = jax.device_put(params, NamedSharding(mesh, P()))
    x, y = (jax.device_put(v, NamedSharding(mesh, P("data"))) for v in (x, y))
    step = workloads.jx_mlp_train_step(jax)
    times = []
    for k in range(steps + 3):
        processes.barrier()
        start = time.perf_counter()
        loss, params = jax.block_until_ready(step(params, x, y))
        if k >= 3:  # the first steps compile
            times.append((time.perf_counter() - start) * 1e3)
    if jax.process_index() == 0:
        print(json.dumps({"mode": "jit", "processes": jax.process_count(),
                          "devices": jax.device_count(), "loss": round(float(loss), 5),
                          "step": round(statistics.median(times), 2),
                          "min": round(min(times), 2), "max": round(max(times), 2)}))
    if jax.process_count() > 1:
        jax.distributed.shutdown()


if __name__ == "__main__":
    main()
