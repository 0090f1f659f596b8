"""DLPack with arrays in a GPU's memory, on the numpy stand-in for CuPy (fake_cupy, whose
arrays say they are on CUDA device 0): a device Array exports its device memory, shared;
a GPU tensor comes in as a device value over the producer's memory; bfloat16 travels
both ways; a consumer asking for the CPU gets the host copy; and the errors."""
from __future__ import annotations

import fake_cupy
import ml_dtypes
import numpy as np
import pytest
from gpu_testing import require_gpu, take_transfers

import jaxlite as jax
from jaxlite.runtime import device as runtime_device
from jaxlite.runtime.device_values import DeviceValue


def test_on_a_real_gpu_dlpack_shares_device_memory():
    """Where CuPy sees a GPU (skipped elsewhere; first in the module, before the `gpu`
    fixture points CuPy's name at the fake): CuPy reads a device Array's memory in place,
    and a CuPy array comes in without a copy."""
    cupy = require_gpu()
    [device] = jax.devices("gpu")
    x = jax.device_put(np.arange(6, dtype=np.float32), device) * 2.0
    assert x.__dlpack_device__() == (2, device.id)
    seen = cupy.from_dlpack(x)
    assert seen.data.ptr == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(cupy.asnumpy(seen), np.arange(6, dtype=np.float32) * 2)
    tensor = cupy.arange(5, dtype=cupy.float32)
    back = jax.dlpack.from_dlpack(tensor)
    assert back.unsafe_buffer_pointer() == tensor.data.ptr
    np.testing.assert_array_equal(np.asarray(back + 1.0), np.arange(5, dtype=np.float32) + 1)


def _device_array(value):
    array = value._value
    assert type(array) is DeviceValue
    return array.array


def test_a_device_array_exports_its_device_memory(gpu):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = jax.device_put(data, gpu) * 2.0
    assert x.__dlpack_device__() == (2, 0)  # (kDLCUDA, 0)
    take_transfers()
    got = fake_cupy.from_dlpack(x)
    assert take_transfers() == []  # no trip through the host
    assert np.shares_memory(got, _device_array(x))
    np.testing.assert_array_equal(np.asarray(got), data * 2)


def test_a_broadcast_device_array_exports_c_ordered(gpu):
    x = jax.device_put(np.float32(3.0), gpu)
    wide = jax.numpy.broadcast_to(x, (2, 3))
    got = fake_cupy.from_dlpack(wide)
    assert got.flags.c_contiguous and got.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(got), np.full((2, 3), 3.0, np.float32))


def test_a_cpu_consumer_gets_the_host_copy(gpu):
    data = np.linspace(-1, 1, 6, dtype=np.float32)
    x = jax.device_put(data, gpu) + 1.0
    take_transfers()
    host = np.from_dlpack(x, device="cpu")
    assert take_transfers() == [("to_host", 6)]
    np.testing.assert_array_equal(host, data + 1)
    with pytest.raises(BufferError, match="copy=False"):
        x.__dlpack__(dl_device=(1, 0), copy=False)


def test_a_gpu_tensor_comes_in_without_a_copy(gpu):
    data = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    tensor = fake_cupy.asarray(data)  # (another library's array on the GPU)
    take_transfers()
    x = jax.dlpack.from_dlpack(tensor, device=gpu)
    assert take_transfers() == []
    assert x.committed and x.devices() == {gpu}
    assert np.shares_memory(_device_array(x), tensor)
    np.testing.assert_array_equal(np.asarray(x), data)
    copied = jax.dlpack.from_dlpack(tensor, device=gpu, copy=True)
    assert not np.shares_memory(_device_array(copied), tensor)
    np.testing.assert_array_equal(np.asarray(jax.numpy.sum(copied, axis=0)), data.sum(axis=0))


def test_bfloat16_travels_both_ways(gpu):
    data = np.array([1.5, -2.25, 3.0e3, 0.0078125], ml_dtypes.bfloat16)
    x = jax.device_put(data, gpu)
    assert x.dtype == ml_dtypes.bfloat16
    back = jax.dlpack.from_dlpack(x, device=gpu)
    assert back.dtype == ml_dtypes.bfloat16
    assert np.asarray(back).tobytes() == data.tobytes()


def test_64_bit_tensors_are_narrowed_with_x64_off(gpu):
    tensor = fake_cupy.asarray(np.array([1.0, 2.5, 1e-3]))
    x = jax.dlpack.from_dlpack(tensor, device=gpu)
    assert x.dtype == np.float32 and type(x._value) is DeviceValue
    np.testing.assert_array_equal(np.asarray(x), np.array([1.0, 2.5, 1e-3], np.float32))


def test_a_tensor_on_another_gpu_is_refused(gpu):
    class OnDeviceOne:
        def __dlpack__(self, **request):
            raise AssertionError("not to be read")

        def __dlpack_device__(self):
            return (2, 1)

    with pytest.raises(BufferError, match="kDLCUDA device 1"):
        jax.dlpack.from_dlpack(OnDeviceOne(), device=gpu)


def test_without_a_gpu_backend_a_gpu_tensor_is_refused(gpu, monkeypatch):
    [cpu] = jax.devices("cpu")

    def no_gpu(platform=None):
        raise RuntimeError("Backend 'gpu' failed to initialize: no GPU here")
    monkeypatch.setattr(runtime_device, "get_backend", no_gpu)
    with pytest.raises(BufferError, match="gpu backend is not available: .*no GPU here"):
        jax.dlpack.from_dlpack(fake_cupy.asarray(np.ones(3, np.float32)))
    with pytest.raises(BufferError, match="keeps its arrays in host memory"):
        jax.dlpack.from_dlpack(fake_cupy.asarray(np.ones(3, np.float32)),
                               device=cpu)
