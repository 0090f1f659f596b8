"""Runs SPMD StableHLO programs with real XLA on forced host devices, for
tests/xla/test_collectives_xla.py.

Run by the jax virtual environment's python, never imported by jaxlite's tests:
`python collectives_runner.py CASES.npz OUT.npz`. CASES.npz holds, per case `k`, the module
text `k/text`, the layout `k/replicas` and `k/partitions`, and device d's single argument
`k/dev<d>` (device d is replica d // partitions, partition d % partitions). OUT.npz gets each
device's result `k/out<d>`, or `k/error` with jaxlib's message.
"""
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax._src import array, core, xla_bridge  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402
from jaxlib import _jax  # noqa: E402


def run(backend, text, replicas, partitions, args):
    count = replicas * partitions
    options = _jax.CompileOptions()
    build = options.executable_build_options
    build.num_replicas, build.num_partitions = replicas, partitions
    build.use_spmd_partitioning = partitions > 1
    build.device_assignment = _jax.DeviceAssignment.create(
        np.arange(count).reshape(replicas, partitions))
    devices = backend.local_devices()[:count]
    executable = backend.compile_and_load(text, _jax.DeviceList(tuple(devices)), options)
    shards = [jax.device_put(a, d) for a, d in zip(args, devices)]
    # One argument holding a different value on each device: what execute_sharded takes.
    whole = array.ArrayImpl(core.ShapedArray(args[0].shape, args[0].dtype),
                            NamedSharding(Mesh(np.array(devices), ("d",)), PartitionSpec()),
                            shards, committed=True, _skip_checks=True)
    results = executable.execute_sharded([whole])
    return [np.asarray(r) for r in results.disassemble_into_single_device_arrays()[0]]


def main(cases_path, out_path):
    backend = xla_bridge.get_backend("cpu")
    cases = np.load(cases_path, allow_pickle=False)
    out = {}
    for name in sorted({key.split("/")[0] for key in cases.files}):
        replicas, partitions = int(cases[f"{name}/replicas"]), int(cases[f"{name}/partitions"])
        args = [cases[f"{name}/dev{d}"] for d in range(replicas * partitions)]
        try:
            for d, value in enumerate(run(backend, str(cases[f"{name}/text"]), replicas,
                                          partitions, args)):
                out[f"{name}/out{d}"] = value
        except Exception as err:  # reported to the test, which fails with the message
            out[f"{name}/error"] = np.array(f"{type(err).__name__}: {err}")
    np.savez(out_path, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
