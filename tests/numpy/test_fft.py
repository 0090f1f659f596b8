"""jaxlite.numpy.fft and lax.fft against numpy.fft (pocketfft) and real JAX's dtypes.

Every transform runs on hypothesis-drawn inputs (shapes with size-1 and empty batch axes,
bool/int/float/complex dtypes with x64 on and off, axes in any order, n/s that cut or pad,
every norm) and must agree with numpy.fft computed in double precision, to a tolerance
derived from the result's precision: FFT errors are normwise relative, about
eps * log2(N) times the size of the result. Result dtypes come from
tests/data/fft_dtypes.json (written by tools/gen_fft_dtypes.py with real JAX). Derivatives
are checked by finite differences in float64 up to second order; jit and vmap against eager.
The primitive itself: its transposes against dense matrices, its errors, its custom-call.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.text import print_module
from jaxlite.xla.text_parser import parse_module

DTYPE_TABLE = json.loads(
    (Path(__file__).parent.parent / "data" / "fft_dtypes.json").read_text())

ONE_AXIS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
TWO_AXES = ("fft2", "ifft2", "rfft2", "irfft2")
N_AXES = ("fftn", "ifftn", "rfftn", "irfftn")
TRANSFORMS = ONE_AXIS + TWO_AXES + N_AXES
REAL_INPUT = {"rfft", "rfft2", "rfftn", "ihfft"}
# these read n // 2 + 1 entries of the last axis, so their default n is 2 * (m - 1)
HALF_SPECTRUM_INPUT = {"irfft", "irfft2", "irfftn", "hfft"}
INPUT_DTYPES = ("bool", "int32", "float32", "float64", "complex64", "complex128")
NORMS = (None, "backward", "ortho", "forward")


# ------------------------------------------------------------------------ drawing calls

def _values(rng: np.random.Generator, shape: tuple, dtype: str) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("int"):
        return rng.integers(-5, 6, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@st.composite
def transform_calls(draw, names=TRANSFORMS, dtypes=INPUT_DTYPES):
    """(function name, input, keyword arguments) of one transform call."""
    name = draw(st.sampled_from(names), label="function")
    allowed = [d for d in dtypes if not (name in REAL_INPUT and d.startswith("complex"))]
    dtype = draw(st.sampled_from(allowed), label="dtype")
    low_rank = 2 if name in TWO_AXES else 1
    ndim = draw(st.integers(low_rank, 4 if name in N_AXES else 3), label="ndim")
    shape = draw(st.lists(st.integers(1, 4 if ndim == 4 else 5), min_size=ndim,
                          max_size=ndim), label="shape")
    if name in ONE_AXIS:
        axes = [draw(st.integers(-ndim, ndim - 1), label="axis")]
    elif name in TWO_AXES and draw(st.booleans(), label="default axes"):
        axes = [-2, -1]
    else:
        axes = draw(st.permutations(range(ndim)), label="axes order")
        # numpy's rfftn and irfftn need an axis; fftn and ifftn take none
        fewest = 0 if name in ("fftn", "ifftn") else 1
        count = 2 if name in TWO_AXES else draw(st.integers(fewest, ndim), label="count")
        axes = axes[:count]
    lengths = None
    if draw(st.booleans(), label="give n/s") or (
            name in HALF_SPECTRUM_INPUT and axes and shape[axes[-1]] == 1):
        lengths = draw(st.lists(st.integers(1, 6), min_size=len(axes), max_size=len(axes)),
                       label="n/s")
    empty = [d for d in range(ndim) if d not in [a % ndim for a in axes]]
    if empty and draw(st.booleans(), label="empty batch axis"):
        shape[draw(st.sampled_from(empty))] = 0
    x = _values(np.random.default_rng(draw(st.integers(0, 2**16))), tuple(shape), dtype)
    kwargs = {"norm": draw(st.sampled_from(NORMS), label="norm")}
    if name in ONE_AXIS:
        kwargs.update(axis=axes[0], n=None if lengths is None else lengths[0])
    elif name in TWO_AXES and list(axes) == [-2, -1]:
        kwargs.update(s=lengths)
    else:
        kwargs.update(axes=tuple(axes), s=lengths)
    return name, x, kwargs


def _numpy_expected(name: str, x: np.ndarray, kwargs: dict) -> np.ndarray:
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    if "axes" in kwargs and kwargs.get("s") is None:
        kwargs = {**kwargs, "s": None}
    return getattr(np.fft, name)(wide, **kwargs)


def _points(x: np.ndarray, expected: np.ndarray) -> int:
    """A bound on the number of points N of one transform (for the tolerance's log2 N)."""
    return max(x.size, expected.size, 1)


def assert_fft_close(actual, expected: np.ndarray, points: int) -> None:
    """Within a few eps * log2(N) of the largest entry (errors are normwise relative)."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    eps = np.finfo(actual.dtype).eps
    scale = np.max(np.abs(expected), initial=0.0)
    tol = 8 * eps * (math.log2(points) + 1) * scale
    np.testing.assert_allclose(actual.astype(np.complex128), expected, rtol=0, atol=tol)


def _call(name: str, x, kwargs: dict):
    return getattr(jnp.fft, name)(x, **kwargs)


# ------------------------------------------------------------------------ values, dtypes

@given(call=transform_calls(), x64=st.booleans())
@settings(max_examples=60)
def test_transforms_match_numpy_with_jax_dtypes(call, x64):
    name, x, kwargs = call
    with jax.enable_x64(x64):
        actual = _call(name, x, kwargs)
    expected = _numpy_expected(name, x, kwargs)
    assert str(actual.dtype) == DTYPE_TABLE[f"{name}|{x.dtype.name}|{x64}"]
    assert_fft_close(actual, expected, _points(x, expected))


@pytest.mark.parametrize("key", sorted(DTYPE_TABLE))
def test_result_dtypes_match_jax_table(key):
    name, *args, x64 = key.split("|")
    with jax.enable_x64(x64 == "True"):
        if name.endswith("freq"):
            dtype, spacing = args
            d = {"python_float": 0.5, "float32": np.float32(0.5),
                 "float64": np.float64(0.5)}[spacing]
            kwargs = {} if dtype == "none" else {"dtype": dtype}
            call = lambda: getattr(jnp.fft, name)(6, d, **kwargs)  # noqa: E731
        else:
            x = np.ones((3, 4), args[0])
            call = lambda: getattr(jnp.fft, name)(x)  # noqa: E731
        if DTYPE_TABLE[key] == "error":
            with pytest.raises((TypeError, ValueError)):
                call()
        else:
            assert str(call().dtype) == DTYPE_TABLE[key]


@given(dtype=st.sampled_from(INPUT_DTYPES), seed=st.integers(0, 2**16),
       shape=st.sampled_from([(1,), (5,), (3, 0, 5), (4, 1, 5), (2, 3, 4)]),
       axes=st.sampled_from([None, 0, -1, (0, -1), (-1, -1), [-1, 0]]))
def test_shifts_match_numpy_exactly(dtype, seed, shape, axes):
    x = _values(np.random.default_rng(seed), shape, dtype)
    for name in ("fftshift", "ifftshift"):
        actual = getattr(jnp.fft, name)(x, axes)
        assert str(actual.dtype) == DTYPE_TABLE[f"{name}|{dtype}|False"]
        # x64 is off: float64 inputs are float32 before they move
        np.testing.assert_array_equal(actual, getattr(np.fft, name)(x.astype(actual.dtype), axes))


@given(n=st.integers(1, 9), d=st.floats(0.1, 10.0), dtype=st.sampled_from([None, "float32",
                                                                            "float64"]),
       x64=st.booleans())
def test_frequencies_match_numpy(n, d, dtype, x64):
    with jax.enable_x64(x64):
        for name in ("fftfreq", "rfftfreq"):
            actual = getattr(jnp.fft, name)(n, d, dtype=dtype)
            expected = getattr(np.fft, name)(n, d)
            eps = np.finfo(actual.dtype).eps
            np.testing.assert_allclose(actual, expected, rtol=4 * eps, atol=0)
            assert str(actual.dtype) == ("float64" if x64 and dtype != "float32"
                                         else "float32")


def test_empty_and_degenerate_lengths_follow_jax():
    assert jnp.fft.irfft(np.ones(1, np.complex64)).shape == (0,)
    assert jnp.fft.fft(np.ones((0,), np.float32)).shape == (0,)
    assert jnp.fft.fftfreq(0).shape == (0,)
    assert jnp.fft.fftshift(np.float32(3)) == 3  # a scalar has no axis to roll
    # no axes: the input comes back in the transform's dtype (as in JAX)
    assert jnp.fft.fftn(np.ones((2, 3), np.float32), axes=()).dtype == np.complex64
    np.testing.assert_array_equal(jnp.fft.rfftn(np.arange(6.0).reshape(2, 3), axes=()),
                                  np.arange(6.0).reshape(2, 3))


# ------------------------------------------------------------------------ transformations

@given(call=transform_calls(dtypes=("float64", "complex128")))
@settings(max_examples=8)
def test_derivatives_against_finite_differences(call):
    name, x, kwargs = call
    with jax.enable_x64(True):
        check_grads(lambda v: _call(name, v, kwargs), [x], order=2, modes=("fwd", "rev"))


@given(seed=st.integers(0, 2**16))
@settings(max_examples=4)
def test_shift_derivatives(seed):
    x = np.random.default_rng(seed).standard_normal((3, 4))
    with jax.enable_x64(True):
        check_grads(lambda v: jnp.fft.fftshift(v, 1) * jnp.fft.ifftshift(v), [x], order=2)


def test_shifts_and_frequencies_under_jit_and_vmap():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    for name in ("fftshift", "ifftshift"):
        shift = getattr(jnp.fft, name)
        expected = getattr(np.fft, name)(x, axes=(-2, -1))
        np.testing.assert_array_equal(jax.jit(shift)(x), getattr(np.fft, name)(x))
        np.testing.assert_array_equal(jax.vmap(shift)(x), expected)
        np.testing.assert_array_equal(jax.vmap(shift, in_axes=2, out_axes=2)(x),
                                      getattr(np.fft, name)(x, axes=(0, 1)))
    spacings = np.array([0.5, 2.0], np.float32)
    for name in ("fftfreq", "rfftfreq"):
        freq = getattr(jnp.fft, name)
        expected = np.stack([getattr(np.fft, name)(7, d) for d in spacings])
        np.testing.assert_allclose(jax.vmap(lambda d: freq(7, d))(spacings), expected,
                                   rtol=4 * np.finfo(np.float32).eps)
        np.testing.assert_allclose(jax.jit(lambda d: freq(7, d))(spacings[1]), expected[1],
                                   rtol=4 * np.finfo(np.float32).eps)


@given(call=transform_calls())
@settings(max_examples=12)
def test_jit_against_eager(call):
    name, x, kwargs = call
    eager = _call(name, x, kwargs)
    compiled = jax.jit(lambda v: _call(name, v, kwargs))(x)
    assert compiled.dtype == eager.dtype
    expected = _numpy_expected(name, x, kwargs)
    assert_fft_close(compiled, np.asarray(eager).astype(np.complex128),
                     _points(x, expected))


@given(call=transform_calls(), in_axis=st.sampled_from([0, 1, -1]))
@settings(max_examples=12)
def test_vmap_against_loop(call, in_axis):
    name, x, kwargs = call
    rng = np.random.default_rng(0)
    members = [x] + [_values(rng, x.shape, x.dtype.name) for _ in range(2)]
    axis = in_axis % (x.ndim + 1)
    batched = jax.vmap(lambda v: _call(name, v, kwargs), in_axes=axis)(np.stack(members, axis))
    expected = np.stack([np.asarray(_call(name, m, kwargs)) for m in members])
    numpy_out = _numpy_expected(name, x, kwargs)
    assert_fft_close(batched, expected.astype(np.complex128),
                     _points(x, numpy_out))


# ------------------------------------------------------------------------ errors

@pytest.mark.parametrize("call, error, match", [
    (lambda: jnp.fft.fft(np.ones(3), norm="bad"), ValueError, "invalid norm value bad"),
    (lambda: jnp.fft.fftn(np.ones((2, 3)), axes=(1, 1)), ValueError, "repeated axes"),
    (lambda: jnp.fft.fftn(np.ones((2, 3)), s=(2, 3), axes=(0,)), ValueError,
     "Shape and axes have different lengths"),
    (lambda: jnp.fft.fft(np.ones(3), n=0), ValueError, "Shape should be positive"),
    (lambda: jnp.fft.rfft(np.ones(3, np.complex64)), ValueError, "only real valued"),
    (lambda: jnp.fft.fft(np.ones(3), axis=1), ValueError, "out of bounds"),
    (lambda: jnp.fft.fft([1.0, 2.0]), TypeError, "requires ndarray or scalar arguments"),
    (lambda: jnp.fft.fftfreq(4, np.ones(2)), TypeError, "must be a scalar"),
])
def test_errors_name_the_problem(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------------ the primitive

def test_fft_type_enum_and_names():
    assert [int(t) for t in lax.FftType] == [0, 1, 2, 3]
    assert [t.name for t in lax.FftType] == ["FFT", "IFFT", "RFFT", "IRFFT"]
    x = np.arange(8.0, dtype=np.float32)
    for spelling in ("rfft", "RFFT", lax.FftType.RFFT):
        np.testing.assert_array_equal(lax.fft(x, spelling, (8,)),
                                      np.fft.rfft(x).astype(np.complex64))
    with pytest.raises(ValueError, match="Unknown FFT type 'Rfft'"):
        lax.fft(x, "Rfft", (8,))
    with pytest.raises(TypeError, match="Unknown FFT type value '2'"):
        lax.fft(x, 2, (8,))


@pytest.mark.parametrize("args, match", [
    ((np.ones((3, 4), np.complex64), "IRFFT", (4,)), r"trailing dimensions to be \(3,\)"),
    ((np.ones((3, 4), np.complex64), "FFT", (5,)), r"trailing dimensions to be \(5,\)"),
    ((np.ones((2, 2, 2, 2), np.complex64), "FFT", (2, 2, 2, 2)), "1 to 3 entries"),
    ((np.ones(4, np.complex64), "FFT", (2, 4)), "fewer dimensions"),
    ((np.ones(4, np.float16), "RFFT", (4,)), "float32 or float64, got float16"),
    ((np.ones(4, np.complex64), "RFFT", (4,)), "only real valued"),
])
def test_primitive_errors(args, match):
    with pytest.raises(ValueError, match=match):
        lax.fft(*args)


def test_empty_lengths_return_the_converted_input():
    out = lax.fft(np.arange(3, dtype=np.int32), "FFT", ())
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(out, np.arange(3))


def _real_matrix(fun, shape: tuple, complex_input: bool) -> np.ndarray:
    """The matrix of an R-linear map on (Re x, Im x) into (Re y, Im y)."""
    n = math.prod(shape)
    basis = [np.eye(n)[i].reshape(shape) for i in range(n)]
    if complex_input:
        basis = [b + 0j for b in basis] + [1j * b for b in basis]
    columns = []
    for b in basis:
        y = np.asarray(fun(b))
        columns.append(np.concatenate([y.real.ravel(), y.imag.ravel()])
                       if y.dtype.kind == "c" else y.ravel())
    return np.stack(columns, 1)


@pytest.mark.parametrize("kind, lengths, in_shape", [
    ("FFT", (5,), (2, 5)), ("IFFT", (3, 4), (3, 4)), ("RFFT", (6,), (2, 6)),
    ("RFFT", (5,), (5,)), ("RFFT", (2, 3, 4), (2, 3, 4)), ("IRFFT", (6,), (2, 4)),
    ("IRFFT", (5,), (3,)), ("IRFFT", (3, 4), (3, 3)), ("IRFFT", (2, 3, 5), (2, 3, 3)),
])
def test_transpose_is_the_dense_transpose(kind, lengths, in_shape):
    """vjp rows against the dense matrix of the map (JAX's convention: with the pairing
    Re(sum u * y), an output's imaginary part pairs with u = -i)."""
    complex_input = kind != "RFFT"
    with jax.enable_x64(True):
        dtype = np.complex128 if complex_input else np.float64
        fun = lambda v: lax.fft(v, kind, lengths)  # noqa: E731
        matrix = _real_matrix(lambda b: fun(b.astype(dtype)), in_shape, complex_input)
        out, pullback = jax.vjp(fun, np.zeros(in_shape, dtype))
        out = np.asarray(out)
        rows = []
        for i in range(matrix.shape[0]):
            unit = np.zeros(matrix.shape[0])
            unit[i] = 1.0
            if out.dtype.kind == "c":
                half = matrix.shape[0] // 2
                unit = unit[:half] - 1j * unit[half:]
            (g,) = pullback(unit.reshape(out.shape).astype(out.dtype))
            g = np.asarray(g)
            rows.append(np.concatenate([g.real.ravel(), -g.imag.ravel()])
                        if complex_input else g.ravel())
    np.testing.assert_allclose(np.stack(rows), matrix, rtol=0, atol=1e-14)


def test_lowers_to_a_custom_call_that_survives_the_text_format():
    x = np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32)
    text = jax.jit(lambda v: lax.fft(v, "RFFT", (6,))).lower(x).as_text()
    assert 'custom_call_target="jaxlite_fft"' in text
    module = parse_module(print_module(parse_module(text)))
    out = np.asarray(evaluate_module(module, [x]))
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(out, np.fft.rfft(x))
