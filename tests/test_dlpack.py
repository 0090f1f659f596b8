"""DLPack without copies, both ways, with numpy (and PyTorch where it is installed).

What JAX 0.10.2 does on the CPU, read in /tmp/jaxvenv: `np.from_dlpack(jax_array)` shares the
array's buffer and is read-only; `copy=True` copies; `jnp.from_dlpack(numpy_array)` shares a
64-byte-aligned buffer (a write to the numpy array shows through) and copies others; 64-bit
data is narrowed (so copied) with x64 off; bfloat16 goes out with DLPack's bfloat16 code,
which numpy cannot import ("Unsupported dtype in DLTensor"). jaxlite shares any buffer
numpy's import gives it, aligned or not.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import dlpack
from jaxlite.runtime.dlpack_buffers import DLDeviceType


def _element_type(capsule, name):
    """(code, bits) of the tensor in a DLPack capsule, read from its C struct."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    start = get(capsule, name) + (32 if name == b"dltensor_versioned" else 0)
    code, bits = (ctypes.c_uint8 * 2).from_address(start + 20)
    return code, bits


def test_numpy_reads_the_array_buffer_without_a_copy():
    x = jnp.arange(6.0).reshape(2, 3) * 2
    view = np.from_dlpack(x)
    assert view.ctypes.data == x.unsafe_buffer_pointer()
    assert not view.flags.writeable  # a versioned capsule flags it read-only
    np.testing.assert_array_equal(view, [[0, 2, 4], [6, 8, 10]])
    copied = np.from_dlpack(x, copy=True)
    assert copied.ctypes.data != x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(copied, view)


class _LegacyProducer:
    """A producer of the unversioned capsule only (DLPack before 1.0)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_unversioned_capsule_of_a_read_only_buffer():
    x = jnp.asarray([1, 2, 3], jnp.int16)
    capsule = x.__dlpack__()
    assert "dltensor" in repr(capsule) and "versioned" not in repr(capsule)
    view = np.from_dlpack(_LegacyProducer(x))
    assert view.ctypes.data == x.unsafe_buffer_pointer()
    assert view.dtype == np.int16 and view.tolist() == [1, 2, 3]


def test_broadcast_arrays_export_their_values():
    x = jnp.full((2, 3), 7.0)
    np.testing.assert_array_equal(np.from_dlpack(x), np.full((2, 3), 7.0))


@pytest.mark.parametrize("convert", [jnp.from_dlpack, dlpack.from_dlpack])
def test_an_array_from_numpy_shares_its_memory(convert):
    host = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = convert(host)
    assert x.unsafe_buffer_pointer() == host.ctypes.data
    assert convert(host, copy=False).unsafe_buffer_pointer() == host.ctypes.data
    host[0, 0] = 100.0  # as with JAX, the producer must not write afterwards: it shows
    assert float(x[0, 0]) == 100.0
    y = convert(host, copy=True)
    assert y.unsafe_buffer_pointer() != host.ctypes.data
    host[0, 1] = -1.0
    assert y.tolist() == [[100.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert host.flags.writeable  # the producer's own array is left as it was


def test_transposed_and_read_only_numpy_arrays():
    host = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = jnp.from_dlpack(host.T)
    assert x.unsafe_buffer_pointer() == host.ctypes.data
    np.testing.assert_array_equal(x + 1, host.T + 1)
    frozen = np.arange(3.0, dtype=np.float32)
    frozen.flags.writeable = False
    assert jnp.from_dlpack(frozen).tolist() == [0.0, 1.0, 2.0]


def test_64_bit_data_is_narrowed_so_copied_with_x64_off():
    host = np.arange(3.0)
    with jaxlite.enable_x64(False):
        x = jnp.from_dlpack(host, copy=False)
        assert x.dtype == np.float32 and x.tolist() == [0.0, 1.0, 2.0]
    with jaxlite.enable_x64(True):
        y = jnp.from_dlpack(host)
        assert y.dtype == np.float64 and y.unsafe_buffer_pointer() == host.ctypes.data


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "complex128", "int64"])
def test_dtypes_round_trip(dtype):
    with jaxlite.enable_x64(True):
        x = jnp.asarray(np.array([0, 1, 1], dtype=dtype))
        out = np.from_dlpack(x)
        assert out.dtype == np.dtype(dtype) and out.tolist() == x.tolist()
        back = jnp.from_dlpack(out)
        assert back.dtype == np.dtype(dtype) and back.tolist() == x.tolist()


def test_bfloat16_travels_with_its_dlpack_code():
    x = jnp.asarray([1.5, -2.0, 3.0], jnp.bfloat16)
    assert _element_type(x.__dlpack__(), b"dltensor") == (4, 16)  # kDLBfloat
    assert _element_type(x.__dlpack__(max_version=(1, 0)), b"dltensor_versioned") == (4, 16)
    y = jnp.from_dlpack(x)
    assert y.dtype == jnp.bfloat16 and y.tolist() == [1.5, -2.0, 3.0]
    assert y.unsafe_buffer_pointer() == x.unsafe_buffer_pointer()
    if _numpy_reads_bfloat16():  # numpy 2.5 and later: as it reads JAX's
        got = np.from_dlpack(x)
        assert got.dtype == jnp.bfloat16 and got.tolist() == [1.5, -2.0, 3.0]
    else:  # numpy has no bfloat16 code, as with JAX
        with pytest.raises(RuntimeError) as error:
            np.from_dlpack(x)
        assert "Unsupported dtype" in str(error.value)


def _numpy_reads_bfloat16() -> bool:
    """Whether this numpy imports DLPack's bfloat16 (from 2.5, through ml_dtypes)."""
    try:
        np.from_dlpack(np.zeros(1, jnp.bfloat16))
    except (RuntimeError, BufferError, TypeError):
        return False
    return True


def test_dlpack_device_and_refusals():
    x = jnp.arange(3)
    assert x.__dlpack_device__() == (DLDeviceType.kDLCPU, 0)
    assert x.__dlpack_device__()[0] is DLDeviceType.kDLCPU and DLDeviceType.kDLCPU == 1
    with pytest.raises(BufferError):
        x.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(DLDeviceType.kDLCUDA, 0))
    assert "versioned" in repr(x.__dlpack__(max_version=(1, 0), dl_device=(1, 0)))
    # float8 is not exchanged (JAX: not supported), whether or not numpy has its code.
    with pytest.raises(BufferError, match="float8_e4m3fn cannot be exported"):
        np.from_dlpack(jnp.zeros(2, jnp.float8_e4m3fn))
    with pytest.raises(BufferError, match="int4 cannot be exported"):
        jnp.zeros(2, jnp.int4).__dlpack__()
    with pytest.raises(TypeError) as error:
        jnp.from_dlpack([1, 2])
    assert str(error.value) == ("The array passed to from_dlpack must have __dlpack__ and "
                                "__dlpack_device__ methods.")


def test_results_of_compiled_code_export_without_a_copy():
    y = jaxlite.jit(lambda a: a * 2 + 1)(jnp.arange(4.0))
    view = np.from_dlpack(y)
    assert view.ctypes.data == y.unsafe_buffer_pointer()
    assert view.tolist() == [1.0, 3.0, 5.0, 7.0]


def test_pytorch_cpu_tensors_both_ways():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional)")
    tensor = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x = jnp.from_dlpack(tensor)
    assert x.unsafe_buffer_pointer() == tensor.data_ptr()
    np.testing.assert_array_equal(x, tensor.numpy())
    back = torch.from_dlpack(x * 2)
    assert back.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    halves = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    assert jnp.from_dlpack(halves).tolist() == [1.5, -2.0]
    assert torch.from_dlpack(jnp.asarray([0.5], jnp.bfloat16)).dtype == torch.bfloat16
