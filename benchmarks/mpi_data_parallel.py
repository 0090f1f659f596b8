"""Step time of the data-parallel MLP train step (issue 14): one process on the whole batch
against P MPI processes on 1/P of it each, gradients summed by one MPI Allreduce.

    python benchmarks/mpi_data_parallel.py --cores 1 [--split 2]
    mpiexec -n 2 python benchmarks/mpi_data_parallel.py --cores 0,1

The MLP is ../shared/bench's mlp_train_step (784-1024-1024-10, batch 256, cross-entropy,
SGD). `--cores` pins process r to the r-th listed core (one listed core: all share it). Rank 0
prints one JSON line of medians in ms: the whole step, and its parts (gradients of the local
batch, the Allreduce of all gradients as one float32 buffer, the SGD update).
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
    args = parser.parse_args()
    _pin(args.cores)
    if processes.launched_by_mpi():
        jax.distributed.initialize()
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


if __name__ == "__main__":
    main()
