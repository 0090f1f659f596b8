"""Partitioned programs across two MPI processes (`mpiexec -n 2`), one and two devices each.

The worker, `spmd_processes.py`, runs jit, shard_map and pmap over a mesh of every
process's devices; each process runs only its own partitions, and the collectives between
processes go through MPI. Its values must be JAX's (and the one-device run's), and each case
must have run partitioned with MPI collectives. Needs the distributed extra (skipped with
the install line without it, as test_mpi.py).
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from test_mpi import _missing, _mpiexec, _open_mpi_flags  # noqa: E402  (beside this file)

pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")
RTOL, ATOL = 2e-5, 2e-6  # float32 partial sums met in another order


def _run(local_devices: int, tmp_path: pathlib.Path) -> list[dict]:
    out = tmp_path / f"spmd{local_devices}.json"
    env = dict(os.environ, JAXLITE_NUM_CPU_DEVICES=str(local_devices),
               PYTHONPATH=os.pathsep.join([str(HERE.parent.parent),
                                           os.environ.get("PYTHONPATH", "")]))
    env.pop("XLA_FLAGS", None)
    command = [_mpiexec(), "-n", "2", *_open_mpi_flags(), sys.executable,
               str(HERE / "spmd_processes.py"), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(pathlib.Path(f"{out}.rank{rank}").read_text()) for rank in (0, 1)]


@pytest.fixture(scope="module", params=[1, 2], ids=["1-device-each", "2-devices-each"])
def reports(request, tmp_path_factory) -> list[dict]:
    return _run(request.param, tmp_path_factory.mktemp("spmd"))


def _ran_partitioned_through_mpi(report: dict, case: str, at_least: int = 1) -> None:
    assert report[f"{case}_partitioned"] >= 1, case
    assert report[f"{case}_mpi"] >= at_least, case


def test_mesh_spans_processes(reports):
    for rank, report in enumerate(reports):
        count = report["devices"] // 2
        assert report["mesh"] == [True, [2048 * rank + k for k in range(count)]]


def test_a_mesh_of_one_process_computes_everywhere(reports):
    for report in reports:
        n = 8 * (report["devices"] // 2)
        assert report["one_process_mesh"] == n * (n - 1) / 2


def _matches_one_device(report: dict, case: str) -> None:
    np.testing.assert_allclose(report[f"{case}_losses"], report[f"{case}_reference"],
                               rtol=RTOL, atol=ATOL)
    if f"{case}_w1" in report:
        np.testing.assert_allclose(report[f"{case}_w1"], report[f"{case}_w1_reference"],
                                   rtol=RTOL, atol=ATOL)
    assert report[f"{case}_losses"][-1] < report[f"{case}_losses"][0]  # it learns
    _ran_partitioned_through_mpi(report, case, at_least=4)  # one a step at least


def test_data_parallel_jit_matches_one_device(reports):
    for report in reports:
        _matches_one_device(report, "dp")
    assert reports[0]["dp_losses"] == reports[1]["dp_losses"]


def test_tensor_parallel_step_matches_one_device(reports):
    for report in reports:
        _matches_one_device(report, "tp")


def test_fsdp_training_matches_one_device(reports):
    for report in reports:
        _matches_one_device(report, "fsdp")


def _blocks(report: dict) -> list[float]:
    # Process r's devices hold 10 r, 10 r + 1, ...: the mesh's blocks in device order.
    per_process = report["devices"] // 2
    return [10.0 * r + k for r in (0, 1) for k in range(per_process)]


def test_shard_map_collectives_across_processes(reports):
    for rank, report in enumerate(reports):
        blocks = _blocks(report)
        n = len(blocks)
        assert report["psum"] == [sum(blocks)]
        assert report["all_gather"] == blocks
        # ppermute i -> i + 1: device i receives block i - 1 (JAX's numbers).
        shifted = [blocks[(i - 1) % n] for i in range(n)]
        assert report["ppermute"] == shifted
        mine = shifted[rank * n // 2:(rank + 1) * n // 2]
        assert report["ppermute_local"] == [[v] for v in mine]
        assert report["chunked_error"] < 1e-6
        for case in ("psum", "all_gather", "ppermute", "chunked"):
            _ran_partitioned_through_mpi(report, case)


def test_pmap_across_processes(reports):
    for rank, report in enumerate(reports):
        count = report["devices"] // 2
        # JAX: pmap maps over every process's devices; psum of ones is the device count,
        # axis_index counts the devices of all processes, and each process gets its own.
        assert report["pmap_psum"] == [float(report["devices"])] * count
        assert report["pmap_index"] == [100.0 * rank + rank * count + k
                                        for k in range(count)]
        _ran_partitioned_through_mpi(report, "pmap")
