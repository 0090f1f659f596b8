"""jax.dlpack, Array.__dlpack__ and jax.distributed on jaxlite's one host process.

Expected behaviour recorded from JAX 0.10.2 (/tmp/jaxvenv/bin/python, CPU backend): the
messages, exception types and results asserted below are what JAX printed for the same
calls (e.g. `jax.dlpack.from_dlpack([1, 2])`, `jax.distributed.initialize()`).
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import distributed, dlpack


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "int32", "bool", "complex64"])
def test_numpy_round_trip(dtype):
    host = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    x = dlpack.from_dlpack(host)
    assert isinstance(x, jax.Array) and x.dtype == host.dtype
    np.testing.assert_array_equal(np.asarray(x), host)
    back = np.from_dlpack(x)  # through Array.__dlpack__
    np.testing.assert_array_equal(back, host)
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU, device 0, as JAX's on the CPU


def test_64_bit_data_narrows_as_jax_does():
    x = dlpack.from_dlpack(np.arange(4, dtype=np.float64))
    assert x.dtype == (np.float64 if jax.config.jax_enable_x64 else np.float32)
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0, 3.0])


@pytest.mark.parametrize("copy", [None, True, False])
def test_copy_argument_and_jnp_from_dlpack(copy):
    host = np.arange(4, dtype=np.float32)
    for convert in (lambda a: dlpack.from_dlpack(a, copy=copy),
                    lambda a: jnp.from_dlpack(a, copy=copy)):
        np.testing.assert_array_equal(np.asarray(convert(host)), host)


def test_copy_true_is_independent_of_the_source():
    host = np.arange(4, dtype=np.float32)
    x = dlpack.from_dlpack(host, copy=True)
    host[0] = 100.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0, 3.0])


def test_device_argument_commits_the_result():
    device = jax.devices()[0]
    x = dlpack.from_dlpack(np.ones(3, np.float32), device=device)
    assert x.committed and x.devices() == {device}
    y = jnp.from_dlpack(np.ones(3, np.float32), device=device)
    assert y.committed


def test_jaxlite_array_in_and_out():
    x = jnp.arange(6.0).reshape(2, 3)
    y = dlpack.from_dlpack(x)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    assert x.__dlpack__(copy=True) is not None


def test_object_without_protocol_is_a_type_error():
    with pytest.raises(TypeError, match="must have __dlpack__ and __dlpack_device__ methods"):
        dlpack.from_dlpack([1, 2])


def test_string_data_is_refused_as_numpy_refuses_it():
    with pytest.raises(BufferError, match="DLPack only supports"):
        dlpack.from_dlpack(np.array(["a"]))


@pytest.mark.parametrize("dtype,supported", [
    (np.float32, True), (np.float64, True), (jnp.bfloat16, True), (np.bool_, True),
    (np.complex64, True), (jnp.int4, False), (np.float16, True),
    (jnp.float8_e4m3fn, False), (np.uint64, True), ("float32", True),
    (np.dtype("int8"), True), (object, False)])
def test_is_supported_dtype_as_jax(dtype, supported):
    assert dlpack.is_supported_dtype(dtype) is supported


def test_is_supported_dtype_refuses_none():
    with pytest.raises(TypeError, match="Expected a string or dtype-like object"):
        dlpack.is_supported_dtype(None)


@pytest.fixture
def fresh_distributed():
    distributed.shutdown()
    yield
    distributed.shutdown()


@pytest.mark.parametrize("kwargs,message", [
    ({}, "coordinator_address should be defined."),
    ({"num_processes": 1, "process_id": 0}, "coordinator_address should be defined."),
    ({"coordinator_address": "localhost:1234", "num_processes": 2},
     "The process id of the current process must be defined."),
    ({"coordinator_address": "localhost:1234", "process_id": 0},
     "Number of processes must be defined."),
    ({"coordinator_address": "localhost:1234", "num_processes": 2, "process_id": 2},
     "process_id and num_processes must be nonnegative, with process_id < num_processes. "
     "Got process_id=2, num_processes=2."),
])
def test_initialize_checks_arguments_as_jax(fresh_distributed, kwargs, message, monkeypatch):
    monkeypatch.delenv("JAX_COORDINATOR_ADDRESS", raising=False)
    with pytest.raises(ValueError) as info:
        distributed.initialize(**kwargs)
    assert str(info.value) == message
    assert not distributed.is_initialized()


def test_initialize_type_errors(fresh_distributed):
    with pytest.raises(TypeError, match="process_id must be a nonnegative int"):
        distributed.initialize("localhost:1234", 1, 0.0)
    with pytest.raises(TypeError, match="num_processes must be a positive int"):
        distributed.initialize("localhost:1234", 1.0, 0)


def test_single_process_run(fresh_distributed):
    assert not distributed.is_initialized()
    distributed.initialize("localhost:1234", 1, 0)
    assert distributed.is_initialized()
    assert jax.process_count() == 1 and jax.process_index() == 0
    with pytest.raises(RuntimeError, match="should only be called once"):
        distributed.initialize("localhost:1234", 1, 0)
    distributed.shutdown()
    assert not distributed.is_initialized()
    distributed.shutdown()  # a no-op, as in JAX
    distributed.initialize(coordinator_address="localhost:1235", num_processes=1,
                           process_id=0)
    assert distributed.is_initialized()


def test_coordinator_from_the_environment(fresh_distributed, monkeypatch):
    monkeypatch.setenv("JAX_COORDINATOR_ADDRESS", "localhost:4321")
    distributed.initialize(num_processes=1, process_id=0)
    assert distributed.is_initialized()


def test_several_processes_start_through_mpiexec_only(fresh_distributed, monkeypatch):
    for name in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(NotImplementedError) as info:
        distributed.initialize("localhost:1234", num_processes=2, process_id=0)
    assert "mpiexec -n 2 python script.py" in str(info.value)
    assert 'pip install -e ".[distributed]"' in str(info.value)
    assert not distributed.is_initialized()
    assert jax.process_count() == 1
