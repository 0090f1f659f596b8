"""jaxlite.distributed.initialize's choices without a second process: MPI detected from
the launcher's environment, mpi4py missing, and the one-process run."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import distributed
from jaxlite.experimental import multihost_utils


@pytest.fixture
def fresh():
    distributed.shutdown()
    yield
    distributed.shutdown()


def test_mpi_launcher_without_mpi4py_names_the_extra(fresh, monkeypatch):
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # `import mpi4py` now fails
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", None)
    with pytest.raises(ImportError) as info:
        distributed.initialize()
    assert 'pip install -e ".[distributed]"' in str(info.value)
    assert not distributed.is_initialized() and jax.process_count() == 1


def test_one_process_run_keeps_every_device_local(fresh):
    distributed.initialize("localhost:1234", num_processes=1, process_id=0)
    assert jax.process_index() == 0 and jax.process_indices() == [0]
    assert jax.local_devices() == jax.devices()
    assert jax.local_devices(process_index=1) == []
    assert all(device.process_index == 0 for device in jax.devices())
    assert jax.local_device_count() == jax.device_count()


def test_multihost_utils_in_one_process():
    x = np.arange(3.0)
    assert multihost_utils.process_allgather(x).shape == (1, 3)
    np.testing.assert_array_equal(multihost_utils.process_allgather(x, tiled=True), x)
    np.testing.assert_array_equal(multihost_utils.broadcast_one_to_all({"a": x})["a"], x)
    multihost_utils.sync_global_devices("alone")
    multihost_utils.assert_equal(x)


def test_host_local_and_global_arrays_in_one_process():
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("x",))
    spec = jax.sharding.PartitionSpec("x")
    local = np.arange(4.0 * len(jax.devices()))
    global_array = multihost_utils.host_local_array_to_global_array(local, mesh, spec)
    assert global_array.sharding == jax.sharding.NamedSharding(mesh, spec)
    np.testing.assert_array_equal(global_array, local)
    back = multihost_utils.global_array_to_host_local_array(global_array, mesh, spec)
    np.testing.assert_array_equal(back, local)
    with pytest.raises(ValueError) as info:
        multihost_utils.host_local_array_to_global_array(local, mesh, None)
    assert str(info.value).startswith("`None` is not a valid input to the pspecs argument.")
