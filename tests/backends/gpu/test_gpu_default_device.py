"""The GPU as the default device, on the numpy stand-in for CuPy (fake_cupy): arrays made
without a placement (`jnp.ones`, results of eager operations on host data) live in the
default GPU's memory, uncommitted, as JAX's do; host Arrays move there on first use and
keep their device copy; eager chains and jit calls on such arrays make no host round
trip; the numbers are the cpu's. Switching the default back to the cpu reads their host
copies."""
from __future__ import annotations


import fake_cupy
import numpy as np
import pytest
from gpu_testing import assert_close, require_gpu, take_transfers, use_fake_cupy

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends import registry
from jaxlite.backends.gpu import launchers
from jaxlite.backends.gpu.client import GpuClient
from jaxlite.config import config
from jaxlite.runtime import device_values
from jaxlite.runtime.device_values import DeviceValue

# A registry name of its own, below every default (chosen only through jax_platforms).
FAKE = "gpu-fake-default"


@pytest.fixture(scope="module")
def fake_gpu_default():
    """The default backend is a gpu client on fake_cupy (CuPy's name points to it), chosen
    through `jax_platforms`; yields a function that makes it the default again."""
    jax.devices()  # (the cpu default chosen before CuPy's name points to the fake)
    patch = pytest.MonkeyPatch()
    use_fake_cupy(patch)
    reg = registry.default_registry()
    if FAKE not in reg.registered():
        reg.register(FAKE, lambda: GpuClient(launchers.start_cupy(0), "gpu"), priority=-100)
    before = config.read("jax_platforms")

    def use() -> None:
        config.update("jax_platforms", FAKE)
        jax.devices()  # (the call that chooses the default backend)

    try:
        use()
        yield use
    finally:
        config.update("jax_platforms", before)
        patch.undo()


def test_on_a_real_gpu_new_arrays_are_cupy_arrays():
    """Where CuPy sees a GPU and it is the default (skipped elsewhere; first in the
    module, before the fixture points CuPy's name at the fake)."""
    cupy = require_gpu()
    if jax.default_backend() != "gpu":
        pytest.skip(f"the default backend is {jax.default_backend()}, not the GPU")
    made = jnp.ones((3, 4)) * 2.0 + jnp.arange(4.0)
    assert not made.committed and isinstance(made._value.array, cupy.ndarray)
    out = jax.jit(lambda v: v.sum(axis=0))(made)
    assert isinstance(out._value.array, cupy.ndarray)
    np.testing.assert_array_equal(np.asarray(out), (2.0 + np.arange(4.0, dtype=np.float32)) * 3)


def _in_default_memory(array):
    value = array._value
    return (type(value) is DeviceValue and type(value.array) is fake_cupy.ndarray
            and not array.committed and value.device is array.device)


def test_new_arrays_live_on_the_default_gpu(fake_gpu_default):
    fake_gpu_default()
    [device] = jax.devices()
    assert device.platform == "gpu"
    for made in (jnp.ones((3, 4)), jnp.arange(5.0), jnp.zeros(2, jnp.int32),
                 jnp.full((2, 2), 7.5), jax.random.normal(jax.random.key(0), (4,))):
        assert _in_default_memory(made), made._value
        assert made.device is device and made.sharding.device_set == {device}


def test_an_eager_chain_stays_on_the_gpu_and_downloads_once(fake_gpu_default):
    fake_gpu_default()
    take_transfers()
    x = jnp.ones((3, 4))
    y = jnp.sin(x) * 2.0 + jnp.arange(4.0)
    z = jnp.sum(y.T @ y, axis=0) / 3.0
    assert _in_default_memory(y) and _in_default_memory(z)
    # Only the Python scalars (one element each) and arange's counts (made on the host,
    # as JAX makes them) go over; nothing comes back.
    assert sorted(take_transfers()) == [("to_device", 1)] * 3 + [("to_device", 4)]
    host = np.sin(np.ones((3, 4), np.float32)) * 2 + np.arange(4, dtype=np.float32)
    assert_close(np.asarray(z), np.sum(host.T @ host, axis=0) / 3, "eager chain on the gpu")
    assert take_transfers() == [("to_host", 4)]
    np.asarray(z)  # the host copy is kept
    assert take_transfers() == []


def test_host_data_goes_over_once_and_keeps_its_copy(fake_gpu_default):
    fake_gpu_default()
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    take_transfers()
    # jnp's functions copy on the device (as JAX's do) and read back once; device_put
    # keeps the host contents it sent, so reading them back costs nothing.
    for put, read_back in ((jnp.asarray, [("to_host", 12)]), (jnp.array, [("to_host", 12)]),
                           (jax.device_put, [])):
        a = put(data)
        assert take_transfers() == [("to_device", 12)]
        assert _in_default_memory(a)
        c = a - 1.0
        assert take_transfers() == [("to_device", 1)]  # the scalar; `a` is there already
        np.testing.assert_array_equal(np.asarray(a), data)
        np.testing.assert_array_equal(np.asarray(a), data)
        assert take_transfers() == read_back
        np.testing.assert_array_equal(np.asarray(c), data - 1)
        take_transfers()


def test_host_arrays_made_earlier_move_on_first_use(fake_gpu_default):
    """An Array made while the cpu was the default (host memory) goes over on its first
    use on the GPU, once, and keeps its host contents."""
    data = np.arange(6, dtype=np.int32)
    config.update("jax_platforms", "cpu")
    try:
        a = jnp.asarray(data)
    finally:
        fake_gpu_default()
    assert type(a._value) is np.ndarray
    take_transfers()
    b = a * 2
    assert sorted(take_transfers()) == [("to_device", 1), ("to_device", 6)]
    assert _in_default_memory(a) and _in_default_memory(b)
    np.testing.assert_array_equal(np.asarray(a), data)
    assert take_transfers() == []


def test_jit_takes_and_leaves_default_gpu_arrays(fake_gpu_default):
    fake_gpu_default()
    data = np.random.default_rng(3).standard_normal((8, 5)).astype(np.float32)
    f = jax.jit(lambda v: jnp.tanh(v @ v.T) + 1.0)
    a = jnp.asarray(data)
    out = f(a)  # compiles; `a` goes over and stays
    assert _in_default_memory(a) and _in_default_memory(out)
    take_transfers()
    again = f(a)
    twice = f(again)
    assert _in_default_memory(twice)
    assert take_transfers() == []  # arguments and results stay in device memory
    expected = np.tanh(data @ data.T) + 1
    assert_close(np.asarray(again), expected, "jit on the default gpu")
    assert_close(np.asarray(twice), np.tanh(expected @ expected.T) + 1, "jit twice")


def test_jit_of_python_scalars_leaves_its_results_on_the_default_gpu(fake_gpu_default):
    fake_gpu_default()
    f = jax.jit(lambda a, b: jnp.arange(3.0) * a + b)
    f(1.0, 2.0)
    take_transfers()
    out = f(2.0, 0.5)
    assert _in_default_memory(out)
    assert sorted(take_transfers()) == [("to_device", 1), ("to_device", 1)]
    np.testing.assert_array_equal(np.asarray(out), np.array([0.5, 2.5, 4.5], np.float32))


def test_eager_without_a_device_rule_runs_on_host_copies(fake_gpu_default):
    fake_gpu_default()
    x = jnp.asarray(np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)) + 0.0
    assert _in_default_memory(x)
    chol = jnp.linalg.cholesky(x)  # (no xp rule: the reference on the host)
    expected = np.linalg.cholesky(np.array([[4.0, 1.0], [1.0, 3.0]]))
    assert_close(np.asarray(chol), expected.astype(np.float32), "cholesky")
    assert_close(np.asarray(chol @ chol.T), np.asarray(x), "product on the gpu")


def test_a_cupy_install_starts_the_default_at_the_first_operation(fake_gpu_default,
                                                                  monkeypatch):
    """Where CuPy is installed, the first eager operation starts the default backend (a
    GPU may be it); without CuPy nothing starts until a call chooses one."""
    fresh = registry.BackendRegistry(builtins=False)
    name = FAKE + "-fresh"  # (a setting the default registry has chosen nothing for)
    fresh.register(name, lambda: GpuClient(launchers.start_cupy(0), "gpu"))
    monkeypatch.setattr(device_values, "default_registry", lambda: fresh)
    monkeypatch.setattr(device_values, "get_backend", fresh.get_backend)
    config.update("jax_platforms", name)
    monkeypatch.setattr(device_values, "_cupy_installed", lambda: False)
    assert fresh.started() == []
    assert type((jnp.ones(3) + 1.0)._value) is np.ndarray  # nothing chose the GPU yet
    assert fresh.started() == []
    monkeypatch.setattr(device_values, "_cupy_installed", lambda: True)
    made = jnp.ones(3) + 1.0
    assert fresh.started() == [name]
    assert type(made._value) is DeviceValue
    np.testing.assert_array_equal(np.asarray(made), np.full(3, 2.0, np.float32))


def test_back_on_the_cpu_gpu_arrays_are_read_from_their_host_copies(fake_gpu_default):
    fake_gpu_default()
    y = jnp.arange(6.0).reshape(2, 3) * 2.0
    assert _in_default_memory(y)
    config.update("jax_platforms", "cpu")
    try:
        assert jax.devices()[0].platform == "cpu"
        z = jnp.cos(y) + y  # eager, on the host
        w = jax.jit(lambda v: v.sum(axis=1))(y)
        assert type(z._value) is np.ndarray and type(w._value) is np.ndarray
        host = np.arange(6, dtype=np.float32).reshape(2, 3) * 2
        assert_close(np.asarray(z), np.cos(host) + host, "eager on the cpu")
        assert_close(np.asarray(w), host.sum(axis=1), "jit on the cpu")
    finally:
        fake_gpu_default()
