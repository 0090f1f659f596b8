"""Tests of the creation, shape and indexing functions that do not fit the differential
harness: functions taking no arrays, index tricks, io and printing, Array methods, JAX's
own conventions (modes, fills, jit behaviour), and the errors users see.

Expected values come from numpy, or, where JAX departs from numpy, from results of real JAX
0.10.2 written out below next to the call that produced them.
"""
import io

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.errors import ConcretizationTypeError


def assert_array(actual, expected, dtype=None):
    """Same values and shape, and the dtype JAX gives (x64 off)."""
    assert isinstance(actual, jaxlite.Array), type(actual)
    np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))
    if dtype is not None:
        assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)


# --------------------------------------------------------------------- no-array creation

@pytest.mark.parametrize("args", [(5,), (2, 7), (1, 2, 0.5), (3.0,), (-2,), (5, 1, -2)])
def test_arange_matches_numpy(args):
    out = jnp.arange(*args)
    expected = np.arange(*args)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    assert out.dtype == (np.int32 if expected.dtype.kind == "i" else np.float32)


@pytest.mark.parametrize("N,M,k", [(3, None, 0), (2, 4, 1), (4, 2, -1), (0, 3, 0), (3, 3, 5)])
def test_eye_tri_and_identity(N, M, k):
    assert_array(jnp.eye(N, M, k), np.eye(N, M, k), np.float32)
    assert_array(jnp.tri(N, M, k), np.tri(N, M, k), np.float32)
    assert_array(jnp.tri(N, M, k, dtype=jnp.int8), np.tri(N, M, k, dtype=np.int8), np.int8)
    assert_array(jnp.identity(N, dtype=bool), np.identity(N, dtype=bool), bool)


def test_filled_arrays():
    assert_array(jnp.zeros((2, 3)), np.zeros((2, 3)), np.float32)
    assert_array(jnp.ones(4, dtype=jnp.int16), np.ones(4), np.int16)
    assert_array(jnp.full((2,), 7), np.full((2,), 7), np.int32)
    assert jnp.full((2,), 7).weak_type  # a Python scalar fill stays weak, as in JAX
    assert_array(jnp.empty((2, 2)), np.zeros((2, 2)), np.float32)  # JAX gives zeros
    assert_array(jnp.empty_like(np.ones((3,), np.int8)), np.zeros(3), np.int8)


@pytest.mark.parametrize("n,k,m", [(3, 0, None), (4, -1, None), (3, 1, 5), (2, 3, 2)])
def test_triangle_indices(n, k, m):
    for ours, theirs in ((jnp.tril_indices, np.tril_indices),
                         (jnp.triu_indices, np.triu_indices)):
        got, want = ours(n, k, m), theirs(n, k, m)
        assert len(got) == 2
        for g, w in zip(got, want):
            assert_array(g, w, np.int32)


def test_tril_indices_default_arguments():
    for got, want in zip(jnp.tril_indices(4), np.tril_indices(4)):
        assert_array(got, want, np.int32)


def test_diag_and_mask_indices():
    for g, w in zip(jnp.diag_indices(3, 3), np.diag_indices(3, 3)):
        assert_array(g, w, np.int32)
    for g, w in zip(jnp.mask_indices(4, jnp.triu, 1), np.mask_indices(4, np.triu, 1)):
        assert_array(g, w, np.int32)
    rows, cols = jnp.mask_indices(3, jnp.tril, size=8)
    assert_array(rows, [0, 1, 1, 2, 2, 2, 0, 0])
    assert_array(cols, [0, 0, 1, 0, 1, 2, 0, 0])
    with pytest.raises(ValueError, match="equal length"):
        jnp.diag_indices_from(jnp.ones((2, 3)))


@pytest.mark.parametrize("M", [0, 1, 2, 5, 12])
def test_windows_match_numpy(M):
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        out = getattr(jnp, name)(M)
        assert out.dtype == np.float32 and out.shape == (M,)
        np.testing.assert_allclose(np.asarray(out), getattr(np, name)(M), atol=2e-6)
    np.testing.assert_allclose(np.asarray(jnp.kaiser(M, 3.0)), np.kaiser(M, 3.0), rtol=1e-5,
                               atol=1e-6)


def test_indices_and_fromfunction():
    assert_array(jnp.indices((2, 3)), np.indices((2, 3)), np.int32)
    for g, w in zip(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
        assert_array(g, w, np.int32)
    assert jnp.indices((2,), dtype=jnp.int8).dtype == np.int8
    out = jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3))
    assert_array(out, np.fromfunction(lambda i, j: i * 10 + j, (2, 3)), np.float32)
    assert jnp.fromfunction(lambda i: i, (3,), dtype=int).dtype == np.int32


def test_spacing_with_integer_dtypes_truncate():
    # JAX 0.10.2: jnp.logspace(0, 2, 4, dtype=int) -> [1, 4, 21, 100]
    assert_array(jnp.logspace(0, 2, 4, dtype=int), [1, 4, 21, 100], np.int32)
    # JAX 0.10.2: jnp.geomspace(1, 1000, 4, dtype=int) -> [1, 10, 100, 1000]
    assert_array(jnp.geomspace(1, 1000, 4, dtype=int), [1, 10, 100, 1000], np.int32)
    out = jnp.geomspace(1j, 100j, 3)
    np.testing.assert_allclose(np.asarray(out), [1j, 10j, 100j], rtol=1e-6)
    assert out.dtype == np.complex64
    # JAX gives NaN where numpy refuses (a zero end) or goes complex (opposite signs).
    assert np.isnan(np.asarray(jnp.geomspace(-1, 1000, 4))).all()


# --------------------------------------------------------------------- index tricks

def test_mgrid_and_ogrid():
    assert_array(jnp.mgrid[0:3, 0:2], np.mgrid[0:3, 0:2], np.int32)
    assert_array(jnp.mgrid[0:3], np.arange(3), np.int32)
    np.testing.assert_allclose(np.asarray(jnp.mgrid[0:1:5j]), np.mgrid[0:1:5j])
    both = jnp.mgrid[0:3, 0:1:3j]
    assert both.dtype == np.float32
    np.testing.assert_allclose(np.asarray(both), np.mgrid[0:3, 0:1:3j])
    for g, w in zip(jnp.ogrid[0:3, 0:2], np.ogrid[0:3, 0:2]):
        assert_array(g, w, np.int32)


def test_r_and_c():
    assert_array(jnp.r_[1:4, 0, 4], np.r_[1:4, 0, 4], np.int32)
    out = jnp.r_[jnp.array([1, 2]), 3.5]  # JAX 0.10.2: float32, weak
    assert_array(out, [1.0, 2.0, 3.5], np.float32)
    np.testing.assert_allclose(np.asarray(jnp.r_[0:1:3j, 5]), np.r_[0:1:3j, 5])
    assert_array(jnp.r_["-1", np.ones((2, 2)), np.zeros((2, 1))],
                 np.r_["-1", np.ones((2, 2)), np.zeros((2, 1))])
    for directive in ("0,2", "0,2,0", "1,2,0", "0,3,-1"):
        assert_array(jnp.r_[directive, [1, 2], [3, 4]], np.r_[directive, [1, 2], [3, 4]])
    assert_array(jnp.r_["r", [1, 2], [3, 4]], [[1, 2, 3, 4]])  # JAX: a 2-d row
    assert_array(jnp.r_["c", [1, 2], [3, 4]], [[1], [2], [3], [4]])
    assert_array(jnp.c_[jnp.array([1, 2]), jnp.array([3, 4])], np.c_[[1, 2], [3, 4]])
    assert_array(jnp.c_[np.ones((2, 2)), [3, 4]], np.c_[np.ones((2, 2)), [3, 4]])
    assert jnp.s_ is np.s_ and jnp.index_exp is np.index_exp
    assert jnp.s_[1:2, ::-1] == (slice(1, 2), slice(None, None, -1))


# --------------------------------------------------------------------- io and printing

def test_buffers_strings_and_files(tmp_path):
    data = np.arange(3.0)
    assert_array(jnp.frombuffer(data.tobytes()), data, np.float32)
    assert_array(jnp.frombuffer(data.tobytes(), dtype=np.float64, count=2, offset=8),
                 [1.0, 2.0], np.float32)
    assert_array(jnp.fromstring("1 2 3", dtype=int, sep=" "), [1, 2, 3], np.int32)
    assert_array(jnp.from_dlpack(np.arange(3)), [0, 1, 2], np.int32)
    buffer = io.BytesIO()
    jnp.save(buffer, jnp.arange(4))
    buffer.seek(0)
    assert_array(jnp.load(buffer), np.arange(4), np.int32)
    path = tmp_path / "two.npz"
    jnp.savez(path, a=jnp.ones(2))
    np.testing.assert_array_equal(np.load(path)["a"], np.ones(2))
    for reader in (jnp.fromfile, jnp.fromiter):
        with pytest.raises(NotImplementedError, match="side effect"):
            reader([1, 2])


def test_printing_follows_numpy_options():
    x = jnp.array([1.23456, 2.0])
    # As in JAX (these are numpy's functions there too, naming the concrete class): JAX
    # 0.10.2 prints '[1.23456001 2.     ]' and 'ArrayImpl([1.23456001, 2.     ], dtype=float32)'.
    assert jnp.array_str(x) == "[1.23456001 2.     ]"
    assert jnp.array_repr(x) == "ArrayImpl([1.23456001, 2.     ], dtype=float32)"
    with jnp.printoptions(precision=2):
        assert "1.23" in repr(x) and "1.235" not in repr(x)
        assert jnp.get_printoptions()["precision"] == 2
    assert jnp.get_printoptions()["precision"] == np.get_printoptions()["precision"]
    assert jnp.set_printoptions is np.set_printoptions


# --------------------------------------------------------------------- shape helpers

def test_shape_ndim_size_and_broadcast_shapes():
    x = jnp.ones((2, 3))
    assert jnp.shape(x) == (2, 3) and jnp.ndim(x) == 2 and jnp.size(x) == 6
    assert jnp.shape([[1, 2]]) == (1, 2) and jnp.ndim(3.0) == 0
    assert jnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError):
        jnp.broadcast_shapes((2,), (3,))


def test_pad_modes_outside_the_harness():
    x = jnp.arange(1, 4)
    # JAX 0.10.2: mode="empty" pads with zeros.
    assert_array(jnp.pad(x, 2, mode="empty"), [0, 0, 1, 2, 3, 0, 0], np.int32)
    # JAX 0.10.2: linear ramp with end values (10, -3) -> [10, 5, 1, 2, 3, 0, -3]
    assert_array(jnp.pad(x, 2, mode="linear_ramp", end_values=(10, -3)),
                 [10, 5, 1, 2, 3, 0, -3], np.int32)

    def mark_front(vector, width, axis, kwargs):
        return vector.at[:width[0]].set(kwargs.get("value", 9))
    assert_array(jnp.pad(x, 2, mode=mark_front), [9, 9, 1, 2, 3, 0, 0], np.int32)
    assert_array(jnp.pad(jnp.ones((2, 2)), 1, mode=mark_front, value=5),
                 np.pad(np.ones((2, 2)), 1, mode=lambda v, w, a, k: v.__setitem__(
                     slice(0, w[0]), 5)))
    out = jaxlite.jit(lambda x, c: jnp.pad(x, 1, constant_values=c))(x, 5)
    assert_array(out, [5, 1, 2, 3, 5], np.int32)
    with pytest.raises(ValueError, match="unsupported keyword"):
        jnp.pad(x, 1, mode="edge", constant_values=1)
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(x, -1)
    with pytest.raises(ValueError, match="empty axis"):
        jnp.pad(jnp.zeros((0,)), 1, mode="edge")


def test_traced_shifts_repeats_and_insertions():
    x = jnp.arange(6).reshape(2, 3)
    assert_array(jaxlite.jit(lambda s: jnp.roll(x, s))(4), np.roll(np.arange(6).reshape(2, 3), 4))
    assert_array(jaxlite.jit(lambda s: jnp.roll(x, s, axis=1))(-1),
                 np.roll(np.arange(6).reshape(2, 3), -1, axis=1))
    # JAX 0.10.2: repeat([0, 1, 2], [1, 2, 0], total_repeat_length=5) -> [0, 1, 1, 2, 2]
    counts = jnp.array([1, 2, 0])
    out = jaxlite.jit(lambda r: jnp.repeat(jnp.arange(3), r, total_repeat_length=5))(counts)
    assert_array(out, [0, 1, 1, 2, 2], np.int32)
    assert_array(jnp.repeat(jnp.arange(3), 2, total_repeat_length=4), [0, 0, 1, 1])
    with pytest.raises(ConcretizationTypeError, match="total_repeat_length"):
        jaxlite.jit(lambda r: jnp.repeat(jnp.arange(3), r))(counts)
    assert_array(jaxlite.jit(lambda i: jnp.insert(jnp.arange(5), i, 9))(1),
                 [0, 9, 1, 2, 3, 4], np.int32)
    out = jaxlite.jit(lambda i: jnp.delete(jnp.arange(5), i, assume_unique_indices=True))(
        jnp.array([3, 1]))
    assert_array(out, [0, 2, 4], np.int32)
    with pytest.raises(ConcretizationTypeError, match="assume_unique_indices"):
        jaxlite.jit(lambda i: jnp.delete(jnp.arange(5), i))(1)


def test_joining_edge_cases():
    assert_array(jnp.block(1), 1)
    with pytest.raises(ValueError, match="empty list"):
        jnp.block([])
    with pytest.raises(ValueError, match="depth"):
        jnp.block([[1, 2], 3])
    assert_array(jnp.insert(jnp.arange(5), np.array([1, 3]), np.array([9, 8])),
                 np.insert(np.arange(5), [1, 3], [9, 8]), np.int32)
    assert_array(jnp.insert(jnp.arange(6).reshape(2, 3), 1, np.array([7, 8]), axis=1),
                 np.insert(np.arange(6).reshape(2, 3), 1, [7, 8], axis=1))
    # JAX 0.10.2 trims every axis: [[0, 0], [0, 1]] -> [[1]]
    assert_array(jnp.trim_zeros(jnp.array([[0, 0], [0, 1]])), [[1]])
    assert_array(jnp.resize(jnp.arange(0), (2,)), [0, 0])
    assert len(jnp.unstack(jnp.ones((2, 3)), axis=1)) == 3


# --------------------------------------------------------------------- indexing conventions

def test_take_fills_out_of_bounds_as_jax_does():
    idx = jnp.array([0, 5, -1, -5])
    # JAX 0.10.2 results of jnp.take(arange(4, dtype), idx):
    out = np.asarray(jnp.take(jnp.arange(4.0), idx))
    np.testing.assert_array_equal(out[[0, 2]], [0.0, 3.0])
    assert np.isnan(out[[1, 3]]).all()
    assert_array(jnp.take(jnp.arange(4), idx), [0, -2**31, 3, -2**31], np.int32)
    assert_array(jnp.take(jnp.arange(4, dtype=jnp.uint8), idx), [0, 255, 3, 255], np.uint8)
    assert_array(jnp.take(jnp.array([True, False]), jnp.array([0, 5])), [True, True])
    assert_array(jnp.take(jnp.arange(4.0), idx, mode="clip"), [0.0, 3.0, 0.0, 0.0])
    assert_array(jnp.take(jnp.arange(4.0), jnp.array([0, 5]), fill_value=7), [0.0, 7.0])
    assert_array(jnp.take_along_axis(jnp.arange(4), idx, axis=0), [0, -2**31, 3, -2**31])
    with pytest.raises(NotImplementedError, match="raise"):
        jnp.take(jnp.arange(4.0), jnp.array([0]), mode="raise")
    with pytest.raises(IndexError, match="empty axis"):
        jnp.take(jnp.zeros((0,)), jnp.array([0, 1]))


def test_writers_require_inplace_false():
    x = jnp.zeros((3, 3))
    for call in (lambda: jnp.put(x, jnp.array([0]), 1.0),
                 lambda: jnp.put_along_axis(x, jnp.zeros((3, 1), int), 1.0, axis=1),
                 lambda: jnp.place(x, x > 0, 1.0)):
        with pytest.raises(ValueError, match="inplace=False"):
            call()
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(x, 1.0)
    # JAX 0.10.2: put's default mode counts negative indices from the end, then clips.
    out = jnp.put(jnp.arange(6.0), jnp.array([7, -7, -1]), jnp.array([10.0, 20.0, 30.0]),
                  inplace=False)
    assert_array(out, [20.0, 1.0, 2.0, 3.0, 4.0, 30.0])


def test_index_conversions_follow_jax():
    # JAX 0.10.2: unravel_index([5, 13, -1], (3, 4)) -> ([1, 2, 2], [1, 3, 3]) (clamped)
    rows, cols = jnp.unravel_index(jnp.array([5, 13, -1]), (3, 4))
    assert_array(rows, [1, 2, 2], np.int32)
    assert_array(cols, [1, 3, 3], np.int32)
    assert_array(jnp.ravel_multi_index((1, 2), (3, 4)), 6, np.int32)
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((jnp.array([1, 5]), jnp.array([0, 3])), (3, 4))
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        jaxlite.jit(lambda a: jnp.ravel_multi_index((a, a), (3, 4)))(jnp.array([0, 1]))
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        jaxlite.jit(lambda a: jnp.choose(a, [jnp.arange(2), jnp.ones(2)]))(jnp.array([0, 1]))
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.choose(jnp.array([0, 3]), [jnp.arange(2), jnp.ones(2)])


def test_compress_with_size_and_traced_condition():
    cond = jnp.array([True, False, True, True])
    out = jaxlite.jit(lambda c: jnp.compress(c, jnp.arange(4.0), size=2))(cond)
    assert_array(out, [0.0, 2.0])
    out = jnp.compress(jnp.array([True, False, False]), jnp.arange(3.0), size=3,
                       fill_value=-1)
    assert_array(out, [0.0, -1.0, -1.0])
    with pytest.raises(ConcretizationTypeError, match="size="):
        jaxlite.jit(lambda c: jnp.compress(c, jnp.arange(4)))(cond)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.compress(jnp.array([True, False, True, True]), jnp.arange(3))


def test_bit_packing_checks_dtypes():
    with pytest.raises(TypeError, match="integer or boolean"):
        jnp.packbits(jnp.array([1.0, 0.0]))
    with pytest.raises(TypeError, match="uint8"):
        jnp.unpackbits(jnp.array([5], jnp.int32))
    bits = np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1]], np.uint8)
    packed = jnp.packbits(bits, axis=1)
    assert_array(packed, np.packbits(bits, axis=1), np.uint8)
    assert_array(jnp.unpackbits(packed, axis=1, count=9), bits, np.uint8)


# --------------------------------------------------------------------- Array API and methods

def test_array_namespace_and_new_methods():
    x = jnp.arange(4.0)
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2024.12") is jnp
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="2019.12")
    assert callable(jnp.isdtype)
    assert 2.0 in x and 7 not in x
    assert round(jnp.array(2.6)).dtype == np.int32 and int(round(jnp.array(2.5))) == 2
    assert round(jnp.array(2.567), 2).dtype == np.float32
    assert_array(x.compress(x > 1), [2.0, 3.0])
    assert_array(x.take(jnp.array([1, 3])), [1.0, 3.0])
    assert_array(jnp.array([0, 1]).choose([jnp.arange(2), 10 + jnp.arange(2)]), [0, 11])
    assert x.to_device(None) is x
    swapped = jnp.array([1, 256], jnp.int16).byteswap()
    assert_array(swapped, np.array([1, 256], np.int16).byteswap(), np.int16)
    assert_array(jnp.arange(3.0).byteswap(), np.arange(3.0, dtype=np.float32).byteswap())
    assert jnp.ndarray is jaxlite.Array and isinstance(x, jnp.ndarray)


def test_methods_work_on_tracers():
    out = jaxlite.jit(lambda x: x.take(jnp.array([2, 0])) + x.compress(x > 1, size=2))(
        jnp.arange(4.0))
    assert_array(out, [4.0, 3.0])
    assert jaxlite.grad(lambda x: jnp.take(x, jnp.array([1, 1])).sum())(jnp.ones(3)) \
        .tolist() == [0.0, 2.0, 0.0]
