"""Partitioned programs over a mesh spanning MPI processes: what each process sees.

`python spmd_processes.py OUT.json` under `mpiexec -n 2` (with JAXLITE_NUM_CPU_DEVICES=k
devices per process) runs, over a mesh of every process's devices: a data-parallel MLP
trained with plain jit (each process gives its half of every batch), a Megatron
tensor-parallel MLP, an FSDP one (parameters split too, gathered per layer), shard_map with psum / all_gather / ppermute, and pmap with psum. Each
process runs only its own partitions (runtime/spmd_call.py) and the collectives between
processes go through MPI (backends/cpu/spmd_exchange.py). It writes, per process,
OUT.json.rank<r>: the values, the same steps computed on one device in this process (no
mesh), and how many partitioned calls and MPI collectives each case made.
"""
from __future__ import annotations

import json
import sys

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends.cpu.spmd_exchange import ProcessExchange
from jaxlite.experimental import multihost_utils
from jaxlite.runtime import spmd_call
from jaxlite.sharding import Mesh, NamedSharding, PartitionSpec as P

STEPS = 4
BATCH = 32


def problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = {"w1": rng.normal(size=(16, 32)).astype(np.float32) / 4,
              "b1": rng.normal(size=(32,)).astype(np.float32) / 10,
              "w2": rng.normal(size=(32, 8)).astype(np.float32) / 6,
              "b2": rng.normal(size=(8,)).astype(np.float32) / 10}
    x = rng.normal(size=(BATCH, 16)).astype(np.float32)
    y = rng.normal(size=(BATCH, 8)).astype(np.float32)
    return params, x, y


def loss(params, x, y):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


loss_and_grads = jax.jit(jax.value_and_grad(loss))
sgd = jax.jit(lambda params, grads: jax.tree.map(lambda p, g: p - 0.1 * g, params, grads))


def train(params, x, y):
    """STEPS steps of SGD (two jitted calls a step); the final parameters and the losses."""
    losses = []
    while len(losses) < STEPS:
        value, grads = loss_and_grads(params, x, y)
        params = sgd(params, grads)
        losses.append(float(value))
    return {k: np.asarray(v).tolist() for k, v in params.items()}, losses


class Counted:
    """Partitioned calls over the whole mesh and MPI collectives during a block."""

    def __init__(self, report: dict, name: str, mesh: Mesh) -> None:
        self.report, self.name, self.mesh = report, name, mesh

    def __enter__(self) -> None:
        spmd_call._CALLS.clear()
        self.before = ProcessExchange.calls_in_process

    def __exit__(self, *exc) -> None:
        calls = [c for calls in spmd_call._CALLS.values() for c in calls.values()]
        self.report[self.name + "_partitioned"] = sum(
            c is not None and c.mesh.size == self.mesh.size for c in calls)
        self.report[self.name + "_mpi"] = ProcessExchange.calls_in_process - self.before


def data_parallel(report: dict, mesh: Mesh, rank: int) -> None:
    params, x, y = problem()
    report["dp_reference"] = train(jax.tree.map(jnp.asarray, params), jnp.asarray(x),
                                   jnp.asarray(y))[1]
    half = BATCH // jax.process_count()
    mine = slice(rank * half, (rank + 1) * half)
    with Counted(report, "dp", mesh):
        placed = {k: jax.device_put(v, NamedSharding(mesh, P())) for k, v in params.items()}
        xs = multihost_utils.host_local_array_to_global_array(x[mine], mesh, P("data"))
        ys = multihost_utils.host_local_array_to_global_array(y[mine], mesh, P("data"))
        new, report["dp_losses"] = train(placed, xs, ys)
    report["dp_w1"] = new["w1"]
    report["dp_w1_reference"] = train(jax.tree.map(jnp.asarray, params), jnp.asarray(x),
                                      jnp.asarray(y))[0]["w1"]


def tensor_parallel(report: dict, mesh: Mesh) -> None:
    params, x, y = problem(1)
    report["tp_reference"] = train(jax.tree.map(jnp.asarray, params), jnp.asarray(x),
                                   jnp.asarray(y))[1]
    specs = {"w1": P(None, "data"), "b1": P("data"), "w2": P("data", None), "b2": P()}
    with Counted(report, "tp", mesh):
        placed = {k: jax.device_put(v, NamedSharding(mesh, specs[k]))
                  for k, v in params.items()}
        new, report["tp_losses"] = train(placed, jnp.asarray(x), jnp.asarray(y))


def fsdp(report: dict, mesh: Mesh) -> None:
    """Parameters split over the data axis too (gathered per layer), batch split."""
    params, x, y = problem(2)
    report["fsdp_reference"] = train(jax.tree.map(jnp.asarray, params), jnp.asarray(x),
                                     jnp.asarray(y))[1]
    specs = {"w1": P("data", None), "b1": P(), "w2": P("data", None), "b2": P()}
    with Counted(report, "fsdp", mesh):
        placed = {k: jax.device_put(v, NamedSharding(mesh, specs[k]))
                  for k, v in params.items()}
        xs, ys = (jax.device_put(v, NamedSharding(mesh, P("data"))) for v in (x, y))
        new, report["fsdp_losses"] = train(placed, xs, ys)
    report["fsdp_w1"] = new["w1"]
    report["fsdp_w1_reference"] = train(jax.tree.map(jnp.asarray, params), jnp.asarray(x),
                                        jnp.asarray(y))[0]["w1"]


def shard_map_collectives(report: dict, mesh: Mesh, rank: int) -> None:
    n = mesh.size
    local = np.arange(float(jax.local_device_count())) + 10 * rank
    blocks = multihost_utils.host_local_array_to_global_array(local, mesh, P("data"))
    cases = {
        "psum": (lambda b: jax.lax.psum(b, "data"), P(), True),
        "all_gather": (lambda b: jax.lax.all_gather(b, "data", tiled=True), P(), False),
        "ppermute": (lambda b: jax.lax.ppermute(b, "data", [(i, (i + 1) % n)
                                                            for i in range(n)]),
                     P("data"), True),
    }
    for name, (body, out_spec, check) in cases.items():
        with Counted(report, name, mesh):
            run = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("data"),
                                        out_specs=out_spec, check_vma=check))
            result = run(blocks)
            report[name] = np.asarray(result).tolist()
            report[name + "_local"] = [np.asarray(s.data).tolist()
                                       for s in result.addressable_shards]
    # An all-reduce large enough to be reduced in chunks (each member folds one): device d
    # holds (d + 1) * [0, 1, 2, ...], so every chunk of the sum differs.
    count = jax.local_device_count()
    ramp = np.arange(40000, dtype=np.float32)
    local = np.stack([ramp * (rank * count + k + 1) for k in range(count)])
    big = multihost_utils.host_local_array_to_global_array(local, mesh, P("data"))
    with Counted(report, "chunked", mesh):
        run = jax.jit(jax.shard_map(lambda b: jax.lax.psum(b, "data"), mesh=mesh,
                                    in_specs=P("data"), out_specs=P()))
        total = np.asarray(run(big))  # (`run` kept alive: calls are cached per live jaxpr)
    want = ramp * sum(range(1, n + 1))
    report["chunked_error"] = float(np.max(np.abs(total[0] - want) / np.maximum(want, 1)))


def one_process_mesh(report: dict) -> None:
    """A mesh of process 0's devices only: every process computes its global values."""
    mesh = Mesh(np.array(jax.devices()[:jax.local_device_count()]), ("data",))
    x = jax.device_put(np.arange(8.0 * mesh.size), NamedSharding(mesh, P("data")))
    total = jax.jit(jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=mesh,
                                  in_specs=P("data"), out_specs=P()))
    report["one_process_mesh"] = float(np.asarray(total(x)))


def pmapped(report: dict, mesh: Mesh, rank: int) -> None:
    count = jax.local_device_count()
    with Counted(report, "pmap", mesh):
        total = jax.pmap(lambda v: jax.lax.psum(v, "i"), "i")
        report["pmap_psum"] = np.asarray(total(np.ones(count, np.float32))).tolist()
        index = jax.pmap(lambda v: v + jax.lax.axis_index("i"), "i")
        report["pmap_index"] = np.asarray(index(np.full(count, 100.0 * rank,
                                                        np.float32))).tolist()


def main(out: str) -> None:
    jax.distributed.initialize()
    rank = jax.process_index()
    mesh = Mesh(np.array(jax.devices()), ("data",))
    report: dict = {"rank": rank, "devices": jax.device_count(),
                    "mesh": [mesh.is_multi_process, [d.id for d in mesh.local_devices]]}
    data_parallel(report, mesh, rank)
    tensor_parallel(report, mesh)
    fsdp(report, mesh)
    shard_map_collectives(report, mesh, rank)
    pmapped(report, mesh, rank)
    one_process_mesh(report)
    with open(f"{out}.rank{rank}", "w") as file:
        json.dump(report, file)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
