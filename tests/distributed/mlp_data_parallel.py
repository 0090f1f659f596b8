"""The data-parallel MLP of tests/distributed: one training step, and its data.

`python mlp_data_parallel.py OUT.json` trains it under `mpiexec -n P` (each process takes
its 1/P of every batch; gradients and losses are averaged over the processes with MPI) and
writes what each process saw to OUT.json.rank<r>. `train(steps)` trains the same model in one
process on the whole batches, for the test to compare.
"""
from __future__ import annotations

import json
import sys

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends import processes
from jaxlite.experimental import multihost_utils

SIZES = (8, 16, 4)     # features in, hidden, classes
BATCH = 16
STEPS = 5
LEARNING_RATE = 0.1


def initial_params() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
             np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]


def batches() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1)
    return [(rng.normal(size=(BATCH, SIZES[0])).astype(np.float32),
             np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)])
            for _ in range(STEPS)]


def loss(params, x, y):
    """Mean softmax cross-entropy of a ReLU MLP."""
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(x @ w + b), axis=-1))


loss_and_grad = jax.jit(jax.value_and_grad(loss))


@jax.jit
def sgd(params, grads):
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)


def mean_over_processes(tree):
    """Each leaf averaged over the processes of the run: an MPI Allreduce of its numpy
    buffer (jaxlite.backends.processes), then divided by the process count."""
    count = jax.process_count()
    return jax.tree.map(lambda leaf: processes.allreduce_sum(np.asarray(leaf)) / count, tree)


def train(steps: int = STEPS, part: int = 0, parts: int = 1):
    """Losses of `steps` SGD steps on part `part` of `parts` of each batch, averaged over
    the processes; the final parameters."""
    params, losses = initial_params(), []
    share = BATCH // parts
    for x, y in batches()[:steps]:
        mine = slice(part * share, (part + 1) * share)
        value, grads = loss_and_grad(params, x[mine], y[mine])
        if parts > 1:
            value, grads = mean_over_processes((value, grads))
        losses.append(float(value))
        params = sgd(params, grads)
    return losses, params


def _psum_over_global_mesh(rank: int) -> list[float]:
    """psum inside shard_map over a mesh of every process's devices, on a global array
    made of each process's block [10 r, 10 r + 1, ...]."""
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("x",))
    spec = jax.sharding.PartitionSpec("x")
    local = np.arange(float(jax.local_device_count())) + 10 * rank
    blocks = multihost_utils.host_local_array_to_global_array(local, mesh, spec)
    total = jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, in_specs=spec,
                          out_specs=jax.sharding.PartitionSpec())
    return np.asarray(jax.jit(total)(blocks)).tolist()


def main(out: str) -> None:
    jax.distributed.initialize()
    rank, count = jax.process_index(), jax.process_count()
    losses, params = train(STEPS, rank, count)
    flat = np.concatenate([np.ravel(leaf) for leaf in jax.tree.leaves(params)])
    report = {
        "process_index": rank, "process_count": count,
        "devices": [repr(d) for d in jax.devices()],
        "device_processes": [d.process_index for d in jax.devices()],
        "local_devices": [repr(d) for d in jax.local_devices()],
        "device_count": jax.device_count(), "local_device_count": jax.local_device_count(),
        "losses": losses,
        "params_everywhere": multihost_utils.process_allgather(flat).tolist(),
        "allgather": multihost_utils.process_allgather(np.arange(3) + 10 * rank).tolist(),
        "allgather_tiled": multihost_utils.process_allgather(
            np.arange(2.0) * (rank + 1), tiled=True).tolist(),
        "broadcast": multihost_utils.broadcast_one_to_all(np.full(2, rank + 7)).tolist(),
    }
    report["shard_map_psum"] = _psum_over_global_mesh(rank)
    ones = np.ones(jax.local_device_count())
    report["pmap"] = np.asarray(jax.pmap(lambda v: jax.lax.psum(v, "i"), "i")(ones)).tolist()
    try:
        jax.pmap(lambda v: v, "i", devices=jax.local_devices())(ones)
        report["pmap_devices"] = "ran"
    except NotImplementedError as error:
        report["pmap_devices"] = str(error)
    multihost_utils.sync_global_devices("report written")
    with open(f"{out}.rank{rank}", "w") as file:
        json.dump(report, file)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
