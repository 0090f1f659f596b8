"""jaxlite.numpy as a Python array API (2024.12) namespace, answering as jax.numpy 0.10.2 does.

The expected values were read from JAX 0.10.2: the namespace-info answers, the dtypes of
searchsorted (int32 under x64 too), arange's length and elements, eye with a diagonal far
outside the matrix, repeat of an empty axis, and the exception types.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp

CREATION = ("arange", "asarray", "empty", "empty_like", "eye", "full", "full_like",
            "linspace", "ones", "ones_like", "zeros", "zeros_like")


def test_namespace_and_version():
    x = jnp.arange(3)
    assert x.__array_namespace__() is jnp
    assert jnp.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError) as error:
        x.__array_namespace__(api_version="2021.12")
    assert "2024.12" in str(error.value)


def test_namespace_info_capabilities_and_devices():
    info = jnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False,
                                   "data-dependent shapes": False, "max dimensions": 64}
    assert info.default_device() is None
    assert info.devices() == [None, *jaxlite.devices()]


@pytest.mark.parametrize("x64", [False, True])
def test_namespace_info_dtypes_follow_x64(x64):
    info = jnp.__array_namespace_info__()
    width = "64" if x64 else "32"
    with jaxlite.enable_x64(x64):
        defaults = info.default_dtypes()
        assert defaults == {"real floating": np.dtype(f"float{width}"),
                            "complex floating": np.dtype(f"complex{2 * int(width)}"),
                            "integral": np.dtype(f"int{width}"),
                            "indexing": np.dtype(f"int{width}")}
        assert info.default_dtypes(device=jaxlite.devices()[0]) == defaults
        names = set(info.dtypes())
        assert set(info.dtypes(kind="integral")) == (
            {"int8", "int16", "int32", "uint8", "uint16", "uint32"}
            | ({"int64", "uint64"} if x64 else set()))
    small = {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32",
             "complex64"}
    assert names == (small | {"int64", "uint64", "float64", "complex128"} if x64 else small)


def test_namespace_info_dtypes_by_kind():
    info = jnp.__array_namespace_info__()
    with jaxlite.enable_x64(True):
        assert info.dtypes(kind="bool") == {"bool": np.dtype(bool)}
        assert info.dtypes(kind=("bool", "real floating")) == {
            "bool": np.dtype(bool), "float32": np.dtype(np.float32),
            "float64": np.dtype(np.float64)}
        assert list(info.dtypes(kind="unsigned integer")) == [
            "uint8", "uint16", "uint32", "uint64"]
        assert "float16" not in info.dtypes() and "bfloat16" not in info.dtypes()
    with pytest.raises(KeyError):
        info.dtypes(kind="real")


@pytest.mark.parametrize("name", CREATION)
def test_creation_functions_take_a_keyword_device(name):
    parameter = inspect.signature(getattr(jnp, name)).parameters["device"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None


def test_device_keyword_and_to_device():
    device = jnp.__array_namespace_info__().devices()[1]
    x = jnp.full((2,), 3.0, device=device)
    assert x.device == device and x.to_device(device).device == device
    # As JAX: to_device commits a new array to the device (device_put).
    free = jnp.arange(3)
    placed = free.to_device(device)
    assert placed.committed and not free.committed and placed.tolist() == [0, 1, 2]
    assert jaxlite.jit(lambda a: a.to_device(device))(free).tolist() == [0, 1, 2]
    np.testing.assert_array_equal(jnp.zeros_like(x, device=device), [0.0, 0.0])
    np.testing.assert_array_equal(jnp.eye(2, device=device), [[1, 0], [0, 1]])
    with pytest.raises(NotImplementedError) as error:
        x.to_device(device, stream=0)
    assert str(error.value).startswith("stream argument of array.to_device()")


def test_searchsorted_positions_are_int32_as_jax():
    with jaxlite.enable_x64(True):
        out = jnp.searchsorted(jnp.asarray([1.0, 2.0, 2.0, 3.0]), jnp.asarray([2.0, 0.0, 9.0]),
                               side="right")
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out, [3, 0, 4])
        assert jnp.searchsorted(jnp.zeros(0), jnp.asarray([1.0])).dtype == np.int32
        assert jnp.digitize(jnp.asarray([1.5]), jnp.asarray([1.0, 2.0])).dtype == np.int32
        # Callers that add to the positions keep working under x64.
        np.testing.assert_allclose(jnp.interp(jnp.asarray([0.5, 5.0]), jnp.asarray([0.0, 1.0]),
                                              jnp.asarray([0.0, 2.0])), [1.0, 2.0])
        counts, _ = jnp.histogram(jnp.asarray([0.1, 0.6, 0.9]), bins=2, range=(0, 1))
        np.testing.assert_array_equal(counts, [1, 2])


def test_fftfreq_with_device():
    device = jaxlite.devices()[0]
    with jaxlite.enable_x64(True):
        freq = jnp.fft.fftfreq(4, device=device)
        assert freq.dtype == np.float64
        np.testing.assert_array_equal(freq, [0.0, 0.25, -0.5, -0.25])
        np.testing.assert_array_equal(jnp.fft.rfftfreq(4, d=0.5, device=device),
                                      [0.0, 0.5, 1.0])


def test_eye_with_a_diagonal_outside_the_matrix_is_zeros():
    with jaxlite.enable_x64(True):
        for k in (355687428096001, -355687428096001, 2**31, 26, -26):
            out = jnp.eye(26, k=k)
            assert out.shape == (26, 26) and not np.asarray(out).any()
        np.testing.assert_array_equal(jnp.eye(2, 3, k=2), [[0, 0, 1], [0, 0, 0]])
        assert jnp.eye(0, 3, k=10**12).shape == (0, 3)


def test_arange_length_and_elements_as_jax():
    with jaxlite.enable_x64(True):
        # The length underflows to 0: no 195 GiB array (JAX gives shape (0,)).
        assert jnp.arange(5e-324, step=26163595684).shape == (0,)
        assert jnp.arange(1e-300, step=26163595684).shape == (1,)
        assert jnp.arange(-5, 5, 26163595684).tolist() == [-5]
        # Element i is start + i * step, not a running sum.
        assert jnp.arange(1, 2, 0.1).tolist()[2] == 1.2
        assert jnp.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    with pytest.raises(ValueError) as error:
        jnp.arange(0, 3j)
    assert "complex" in str(error.value)


def test_repeat_of_an_empty_axis():
    assert jnp.repeat(jnp.zeros((0, 3)), jnp.asarray([2]), axis=0).shape == (0, 3)
    assert jnp.repeat(jnp.zeros((0,), jnp.int16), 3).shape == (0,)
    assert jnp.repeat(jnp.zeros((0, 2)), jnp.asarray([1, 2]), axis=1).shape == (0, 3)
    np.testing.assert_array_equal(jnp.repeat(jnp.asarray([1, 2]), jnp.asarray([2])),
                                  [1, 1, 2, 2])


def test_cumulative_prod_and_sum_of_small_unsigned_ints():
    with jaxlite.enable_x64(True):
        out = jnp.cumulative_prod(jnp.asarray([200, 2], dtype=jnp.uint8))
        assert out.dtype == np.uint8 and out.tolist() == [200, 144]
        total = jnp.cumulative_sum(jnp.asarray([200, 200], dtype=jnp.uint8))
        assert total.dtype == np.uint64 and total.tolist() == [200, 400]
        assert jnp.prod(jnp.asarray([200, 2], dtype=jnp.uint8)).dtype == np.uint64


def test_asarray_copy_of_an_array():
    x = jnp.asarray([1.0, 2.0])
    assert jnp.asarray(x, copy=False) is x and jnp.asarray(x) is x
    copied = jnp.asarray(x, copy=True)
    assert copied is not x and copied.tolist() == [1.0, 2.0]
    assert jnp.asarray(x, dtype=jnp.int32, copy=True).tolist() == [1, 2]
    assert jnp.asarray(memoryview(b"ab"), dtype=jnp.uint8).tolist() == [97, 98]


def test_finfo_and_expand_dims_answer_as_jax_not_the_standard():
    # JAX 0.10.2 departs from the standard here, and jaxlite follows JAX: eps is a numpy
    # float32 for float32, and an out-of-range axis raises ValueError (not IndexError).
    eps = jnp.finfo(jnp.float32).eps
    assert type(eps) is np.float32 and eps == np.finfo(np.float32).eps
    assert isinstance(jnp.iinfo(jnp.int8).max, int)
    with pytest.raises(ValueError):
        jnp.expand_dims(jnp.zeros((2, 3)), axis=3)


def test_complex_log2_and_log10_keep_zero_imaginary_parts():
    # JAX: log2(0j) = -inf+0j, log2(inf+0j) = inf+0j; a complex division made them NaN.
    z = jnp.asarray([0j, complex("inf"), -2.5 + 1j], jnp.complex64)
    for fun, base in ((jnp.log2, 2.0), (jnp.log10, 10.0)):
        out = np.asarray(fun(z))
        assert out.dtype == np.complex64
        assert out[0] == complex(-np.inf, 0) and out[1] == complex(np.inf, 0)
        np.testing.assert_allclose(out[2], np.log(-2.5 + 1j) / np.log(base), rtol=1e-6)


def test_complex128_atan2_keeps_double_precision():
    with jaxlite.enable_x64(True):
        out = jnp.atan2(jnp.asarray([1 + 0j, 2 + 1j]), jnp.asarray([0j, 1 + 1j]))
        assert out.dtype == np.complex128
        # JAX 0.10.2's values; complex64 rounding gave 1.5707963705062866.
        np.testing.assert_allclose(np.asarray(out).real, [1.5707963267948966, 1.0172219678978514],
                                   rtol=1e-14)


def test_python_complex_fill_for_a_real_dtype():
    # JAX converts a Python complex with the dtype's scalar type: Python's TypeError for
    # numbers, `!= 0` for bool; arrays of complex values convert with the real part.
    with pytest.raises(TypeError) as error:
        jnp.full(2, 1j, dtype=jnp.float32)
    assert str(error.value) == "float() argument must be a string or a real number, not 'complex'"
    with pytest.raises(TypeError) as error:
        jnp.full_like(jnp.ones(2, jnp.int8), 1j)
    assert str(error.value).startswith("int() argument must be")
    with pytest.raises(TypeError):
        jnp.asarray(0j, dtype=jnp.float32)
    assert jnp.full(2, 1j, dtype=jnp.bool).tolist() == [True, True]
    assert jnp.asarray(1j, dtype=jnp.bool).tolist() is True
    assert jnp.full(2, 300, dtype=jnp.int8).tolist() == [44, 44]  # wraps, as in JAX


def test_refusals_as_jax():
    with pytest.raises(TypeError) as error:
        jnp.arange(0, 5, 2, dtype=jnp.bool)
    assert str(error.value).startswith("iota does not accept dtype bool")
    with pytest.raises(TypeError):
        jnp.arange(3, dtype=jnp.bool)
    with pytest.raises(ValueError) as error:
        jnp.clip(jnp.asarray([1j]), 0, 1)
    assert str(error.value).startswith("Clip received a complex value")
    with pytest.raises(TypeError) as error:
        int(jnp.asarray(1 + 0j))
    assert "not 'complex'" in str(error.value)
    with pytest.raises(TypeError):
        float(jnp.asarray(1 + 0j))
    assert complex(jnp.asarray(1 + 2j)) == 1 + 2j
    with pytest.raises(TypeError) as error:
        jnp.asarray(True).__index__()
    assert str(error.value) == "Only integer scalar arrays can be converted to a scalar index."
    assert [5, 6][jnp.asarray(1)] == 6


@pytest.mark.parametrize("call", [lambda z: jnp.signbit(z), lambda z: jnp.spacing(z),
                                  lambda z: jnp.hypot(z, z),
                                  lambda z: jnp.ldexp(z, jnp.asarray([1]))])
def test_complex_inputs_where_jax_raises_value_error(call):
    with pytest.raises(ValueError):
        call(jnp.asarray([1j]))
