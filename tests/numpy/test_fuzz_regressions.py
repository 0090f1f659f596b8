"""Regressions found by differential fuzzing of jaxlite.numpy against JAX 0.10.2.

Each expected value below was read from real JAX 0.10.2 on CPU (x64 off).
"""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp


def test_logical_ops_promote_before_taking_truth():
    # True is a strong bool, -0.5j a weak complex: promoted together they are a weak
    # complex, whose truth is a weak bool in JAX.
    for op in (jnp.logical_and, jnp.logical_or, jnp.logical_xor):
        out = op(True, -0.5j)
        assert out.dtype == np.bool_ and out.weak_type
    assert not jnp.logical_and(True, True).weak_type
    assert jnp.logical_or(1, 2.0).weak_type
    assert jaxlite.jit(jnp.logical_xor)(True, 2.0).weak_type
    # JAX's logical functions give weak results only when 0-d.
    weak_vector = jnp.broadcast_to(jnp.asarray(2.0), (2,))
    assert weak_vector.weak_type
    assert not jnp.logical_and(weak_vector, 2.0).weak_type
    assert not jnp.logical_not(weak_vector).weak_type
    assert jnp.logical_not(jnp.asarray(2.0)).weak_type
    assert jnp.logical_and(jnp.ones((), jnp.int32), 2.0).weak_type
    assert not jnp.logical_and(jnp.ones(2, jnp.int32), 2.0).weak_type
    # Promotion first: 1e-10 is 0 in float16.
    assert jnp.logical_and(jnp.ones(2, jnp.float16), 1e-10).tolist() == [False, False]


def test_sinc_keeps_weak_type_angle_and_spacing_are_strong():
    assert jnp.sinc(2).weak_type and jnp.sinc(-0.0).weak_type and jnp.sinc(1j).weak_type
    assert float(jnp.sinc(-0.0)) == 1.0
    assert not jnp.sinc(True).weak_type
    assert not jnp.angle(2).weak_type and not jnp.angle(-0.0).weak_type
    assert jnp.angle(1j).weak_type
    assert float(jnp.angle(2)) == 0.0 and float(jnp.angle(-2)) == np.float32(np.pi)
    assert not jnp.spacing(2).weak_type and not jnp.spacing(-0.0).weak_type


@pytest.mark.parametrize("jit", [False, True])
def test_broadcast_error_type_depends_on_ranks(jit):
    # Different ranks: JAX broadcasts up front (ValueError); equal ranks reach lax (TypeError).
    def call(f, a, b):
        return (jaxlite.jit(f) if jit else f)(a, b)
    with pytest.raises(ValueError) as info:
        call(jnp.remainder, np.ones(4, np.uint32), np.ones((2, 3), np.float32))
    assert str(info.value) == "Incompatible shapes for broadcasting: shapes=[(4,), (2, 3)]"
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        call(jnp.add, np.ones((2, 1, 3)), np.ones((2, 4)))
    with pytest.raises(TypeError, match="got incompatible shapes for broadcasting"):
        call(jnp.add, np.ones(3), np.ones(2))


def test_array_equiv_of_unbroadcastable_ranks_is_false():
    assert not bool(jnp.array_equiv(np.ones(4), np.ones((2, 3))))
    assert not bool(jnp.array_equiv(np.ones((2, 1, 3)), np.ones((2, 4))))
    assert bool(jnp.array_equiv(np.ones(3), np.ones((2, 3))))
    with pytest.raises(TypeError, match="got incompatible shapes for broadcasting"):
        jnp.array_equiv(np.ones(3), np.ones(2))


def test_linspace_rounds_as_jax():
    # JAX's samples are start * (1 - i * r) + i * (stop * r), r = 1 / divisions.
    assert jnp.linspace(-2.0, 3.0, 6).tolist() == [-2.0, -1.0, 0.0, 1.0000001192092896,
                                                    2.0, 3.0]
    out = jnp.linspace(1.0, -7.3, 11)
    assert float(out[9]) == np.float32(-6.4700002670288086)
    assert jnp.linspace(0.0, 1.0, 7).tolist()[5] == np.float32(0.8333333730697632)
    # float16 samples are computed in float16.
    half = jnp.linspace(0.1, -7.3, 10, dtype=jnp.float16)
    assert half.dtype == np.float16
    assert float(half[2]) == -1.5439453125 and float(half[7]) == -5.65234375
    # histogram's edges come from linspace: 1.0 falls below the edge 1.0000001.
    counts, _ = jnp.histogram(jnp.array([1.0, 1.066, 1e-40]), bins=5, range=(-2.0, 3.0))
    assert counts.tolist() == [0, 0, 2, 1, 0]


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nan_extremum_of_an_empty_axis_raises_as_jax(name):
    empty = np.zeros((2, 0, 3), np.float32)
    for axis in (None, 1, (0, 1)):
        with pytest.raises(ValueError) as info:
            getattr(jnp, name)(empty, axis=axis)
        assert str(info.value).startswith("zero-size array to reduction operation")
    assert getattr(jnp, name)(empty, axis=0).shape == (0, 3)
    assert float(getattr(jnp, name)(empty, axis=1, initial=2.0)[0, 0]) == 2.0
    assert np.isnan(float(getattr(jnp, name)(jnp.array([np.nan, np.nan]))))


def test_spacing_signs_as_jax():
    half = jnp.spacing(np.array([0.0, 4.0, -5.109375, -0.0], np.float16))
    assert half.tolist() == [np.float16(6e-8), 0.00390625, 0.00390625, np.float16(6e-8)]
    single = jnp.spacing(np.array([-0.0, 4.0, -4.0], np.float32))
    assert single.tolist() == [-1.401298464324817e-45, 4.76837158203125e-07,
                               -4.76837158203125e-07]
    assert np.signbit(np.asarray(single)[0])


def test_nonzero_of_an_empty_array_pads_with_zeros():
    # JAX 0.10.2 pads with zeros for an empty input whatever fill_value says.
    empty = np.zeros((0, 2), np.uint8)
    assert [r.tolist() for r in jnp.nonzero(empty, size=2, fill_value=-1)] == [[0, 0], [0, 0]]
    assert jnp.flatnonzero(empty, size=2, fill_value=-1).tolist() == [0, 0]
    assert jnp.argwhere(empty, size=2, fill_value=-1).tolist() == [[0, 0], [0, 0]]
    zeros = np.zeros((2, 2), np.uint8)
    assert jnp.flatnonzero(zeros, size=2, fill_value=-1).tolist() == [-1, -1]


def test_index_dtypes_as_jax_with_and_without_x64():
    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0], np.float32)
    for x64, default in ((False, np.int32), (True, np.int64)):
        with jaxlite.enable_x64(x64):
            assert jnp.argpartition(x, 2).dtype == np.int32
            assert jnp.indices((2,)).dtype == default
            assert all(i.dtype == default for i in jnp.tril_indices(2) + jnp.triu_indices(2))
            assert all(i.dtype == default for i in jnp.diag_indices(2))
            coords = (np.array([0, 1]), np.array([2, 1]))
            flat = jnp.ravel_multi_index(coords, (2, 3), mode="wrap")
            assert flat.dtype == default and flat.tolist() == [2, 4]
            small = (np.array([0, 1], np.int8), np.array([2, 1], np.int8))
            assert jnp.ravel_multi_index(small, (2, 3)).dtype == np.int8


def test_cond_of_an_empty_array_raises_as_jax():
    for shape in ((0, 0), (2, 0, 0), (2, 3, 0)):
        with pytest.raises(ValueError) as info:
            jnp.linalg.cond(np.zeros(shape, np.float32))
        assert str(info.value) == ("jnp.linalg.cond: input array must not be empty; got "
                                   f"arr.shape={shape}")
    assert jnp.linalg.cond(np.zeros((0, 2, 2), np.float32)).shape == (0,)


def test_concatenate_shape_mismatch_raises_jax_type_error():
    with pytest.raises(TypeError) as info:
        jnp.append(np.ones((2, 3)), np.ones((2, 1)), axis=0)
    assert str(info.value) == (
        "Cannot concatenate arrays with shapes that differ in dimensions other than the one "
        "being concatenated: concatenating along dimension 0 for shapes (2, 3), (2, 1).")
    with pytest.raises(TypeError) as info:
        jnp.concatenate([np.ones((2, 3)), np.ones(3)])
    assert str(info.value) == ("Cannot concatenate arrays with different numbers of "
                               "dimensions: got (2, 3), (3,).")


def test_bincount_under_jit_without_length_raises_concretization_error():
    with pytest.raises(jaxlite.errors.ConcretizationTypeError) as info:
        jaxlite.jit(jnp.bincount)(np.array([1, 2]))
    assert str(info.value).startswith("Abstract tracer value encountered where concrete "
                                      "value is expected")
    counts = jaxlite.jit(lambda x: jnp.bincount(x, length=4))(np.array([1, 2, 2]))
    assert counts.tolist() == [0, 1, 2, 0]


def test_weak_types_of_hypot_logaddexp2_heaviside_as_jax():
    weak_vector = jnp.broadcast_to(jnp.asarray(1.0), (2,))
    ints, int_scalar = jnp.ones(2, jnp.int32), jnp.ones((), jnp.int32)
    for f in (jnp.hypot, jnp.logaddexp2):
        assert f(1.0, 2.0).weak_type and f(1.0, int_scalar).weak_type
        assert not f(weak_vector, weak_vector).weak_type
        assert not f(1.0, ints).weak_type and not f(weak_vector, 1.0).weak_type
    assert jnp.heaviside(1.0, ints).weak_type
    assert not jnp.heaviside(weak_vector, 1.0).weak_type
    assert jnp.logaddexp(1.0, ints).weak_type  # logaddexp follows add


def test_sort_complex_dtypes_as_jax():
    with jaxlite.enable_x64(True):
        for dtype, expected in (("int64", np.complex128), ("uint64", np.complex128),
                                ("int32", np.complex64), ("float16", np.complex64),
                                ("float64", np.complex128)):
            out = jnp.sort_complex(np.array([2, 1], dtype))
            assert out.dtype == expected and out.tolist() == [1, 2]
    assert jnp.sort_complex(np.array([2, 1], np.int32)).dtype == np.complex64


def test_linspace_of_one_sample_is_start():
    assert jnp.linspace(0.5, np.nan, 1, endpoint=False).tolist() == [0.5]
    assert jnp.linspace(0.5, np.inf, 1, endpoint=False).tolist() == [0.5]
    out, step = jnp.linspace(0.5, 2.0, 1, endpoint=False, retstep=True)
    assert out.tolist() == [0.5] and float(step) == 1.5
    out, step = jnp.linspace(0.5, 2.0, 1, retstep=True)
    assert out.tolist() == [0.5] and np.isnan(float(step))


@pytest.mark.parametrize("jit", [False, True])
def test_complex_min_max_reductions_and_scatters_order_nan_as_xla(jit):
    # Values read from JAX 0.10.2: lexicographic comparisons where a NaN loses to the
    # running value on one side only, eagerly and under jit alike.
    nan = np.nan
    a = np.array([4.9, 4.9, complex(nan, 0), 1 + 1j, complex(1, nan)], np.complex64)
    b = np.array([complex(7e4, nan), complex(nan, 0), 1, 1 + 2j, 1], np.complex64)
    wrap = jaxlite.jit if jit else (lambda f: f)
    low = wrap(lambda s: jnp.min(s, axis=0))(np.stack([a, b]))
    assert np.asarray(low)[[0, 2, 3, 4]].tolist() == [np.complex64(4.9),
                                                       1, 1 + 1j, 1]
    assert np.isnan(np.asarray(low)[1].real)
    high = wrap(lambda s: jnp.max(s, axis=0))(np.stack([a, b]))
    assert np.asarray(high)[[2, 3, 4]].tolist() == [1, 1 + 2j, 1]
    scattered = wrap(lambda x, v: x.at[np.array([0, 1])].min(v))(jnp.asarray(a), b[:2])
    assert np.asarray(scattered)[0] == np.complex64(4.9)
    assert np.isnan(np.asarray(scattered)[1].real)


@pytest.mark.parametrize("jit", [False, True])
def test_heaviside_of_nan_is_nan(jit):
    x = np.array([-3.7, 0.0, np.nan, 2.0, -0.0], np.float32)
    f = jaxlite.jit(jnp.heaviside) if jit else jnp.heaviside
    out = np.asarray(f(x, np.uint8(7)))
    assert out[[0, 1, 3, 4]].tolist() == [0.0, 7.0, 1.0, 7.0] and np.isnan(out[2])


@pytest.mark.parametrize("jit", [False, True])
def test_complex_cummax_folds_nan_as_xla(jit):
    x = np.array([[complex(-1.1775, np.nan), complex(3.198, np.nan), -1 + 1.49j,
                   complex(0.747, np.nan)]], np.complex64)
    f = jaxlite.jit(lambda v: jaxlite.lax.cummax(v, axis=1, reverse=True)) if jit else \
        (lambda v: jaxlite.lax.cummax(v, axis=1, reverse=True))
    out = np.asarray(f(x))
    # JAX 0.10.2: [3.198+nanj, 3.198+nanj, 0.747+nanj, 0.747+nanj].
    assert out.real.tolist()[0] == [np.float32(3.198)] * 2 + [np.float32(0.747)] * 2
    assert np.isnan(out.imag).all()


# ---------------------------------------------- linear algebra (JAX 0.10.2's values, x64 off)

@pytest.mark.parametrize("jit", [False, True])
def test_partition_of_complex_raises_as_jax(jit):
    x = np.array([1 + 2j, 3 - 1j, 0.5j], np.complex64)
    for name in ("partition", "argpartition"):
        f = getattr(jnp, name)
        call = jaxlite.jit(lambda a: f(a, 1)) if jit else (lambda a: f(a, 1))
        with pytest.raises(NotImplementedError) as info:
            call(x)
        assert str(info.value) == f"jnp.{name} for complex dtype is not implemented."


def test_matrix_rank_of_empty_matrices_raises_and_rtol_is_absolute():
    for shape in ((0, 3), (0, 0), (2, 0, 3)):
        with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
            jnp.linalg.matrix_rank(np.zeros(shape, np.float32))
    # an empty batch of non-empty matrices is fine
    assert jnp.linalg.matrix_rank(np.zeros((0, 3, 3), np.float32)).shape == (0,)
    # JAX compares the singular values with a given rtol (or tol) itself
    d = np.diag(np.array([10.0, 0.5, 0.05], np.float32))
    assert int(jnp.linalg.matrix_rank(d, rtol=0.1)) == 2
    assert int(jnp.linalg.matrix_rank(d, tol=0.01)) == 3
    assert int(jnp.linalg.matrix_rank(d)) == 3


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16])
@pytest.mark.parametrize("jit", [False, True])
def test_half_precision_linalg_raises_not_implemented_as_jax(dtype, jit):
    a = (np.eye(3) + 0.1).astype(dtype)
    for name in ("inv", "slogdet", "svd", "eigh", "qr", "cholesky", "pinv", "eig",
                 "matrix_rank", "cond", "solve", "lstsq"):
        f = getattr(jnp.linalg, name)
        args = (a, a) if name in ("solve", "lstsq") else (a,)
        with pytest.raises(NotImplementedError,
                           match=f"Unsupported dtype {np.dtype(dtype).name}"):
            (jaxlite.jit(f) if jit else f)(*args)
    with pytest.raises(NotImplementedError, match="Unsupported dtype"):
        jnp.linalg.det(np.eye(4, dtype=dtype))
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        jaxlite.lax.linalg.lu(np.eye(2, dtype=np.int32))


@pytest.mark.parametrize("jit", [False, True])
def test_det_of_small_matrices_by_closed_forms_as_jax(jit):
    det = jaxlite.jit(jnp.linalg.det) if jit else jnp.linalg.det
    slogdet = jaxlite.jit(jnp.linalg.slogdet) if jit else jnp.linalg.slogdet
    # the closed forms work in float16 (no LU kernel is needed)
    half = det(np.array([[1, 2], [3, 4.5]], np.float16))
    assert half.dtype == np.float16 and float(half) == -1.5
    b = np.array([[2, 1, 0], [1, 3, 1], [0.5, 1, 4]], np.float16)
    assert float(det(b)) == 18.5
    assert float(det(b.astype(jnp.bfloat16))) == 18.5
    sign, logdet = slogdet(np.array([[-2.5]], np.float16))
    assert float(sign) == -1.0 and float(logdet) == np.float16(0.9165)
    # singular 3x3 and 2x2 matrices give an exact zero, as the closed forms do
    assert float(det(np.array([[1., 2, 3], [4, 5, 6], [7, 8, 9]], np.float32))) == 0.0
    assert float(det(np.array([[1., 2], [2, 4]], np.float32))) == 0.0
    assert float(det(np.array([[1., 2, 3], [4, 5, 6], [7, 8, 10]], np.float32))) == -3.0
    assert np.isnan(float(det(np.diag(np.array([np.inf, 1, 0], np.float32)))))


def test_half_precision_triangular_solve_and_integer_symmetrized_inputs_as_jax():
    a = np.array([[2., 0], [1, 3]], np.float16)
    x = jaxlite.lax.linalg.triangular_solve(a, np.array([[1., 2], [3, 4]], np.float16),
                                            left_side=True, lower=True)
    # JAX: [[0.5, 1.], [0.833, 1.]] (one float16 ulp apart: JAX multiplies by 1/3)
    assert x.dtype == np.float16
    np.testing.assert_allclose(np.asarray(x, np.float32), [[0.5, 1.], [0.833, 1.]],
                               rtol=1e-3)
    with pytest.raises(TypeError, match="requires arguments to have the same dtypes"):
        jaxlite.lax.linalg.triangular_solve(np.eye(2, dtype=np.float32),
                                            np.eye(2, dtype=np.float16))
    # (x + x^H) / 2 divides as jnp does: integer and bool inputs become float32
    chol = jaxlite.lax.linalg.cholesky(np.array([[4, 1], [1, 3]], np.int8))
    assert chol.dtype == np.float32
    np.testing.assert_allclose(chol, [[2.0, 0.0], [0.5, 1.6583124]], rtol=1e-6)
    np.testing.assert_allclose(jaxlite.lax.linalg.cholesky(np.eye(2, dtype=bool)),
                               np.eye(2) * 0.70710677, rtol=1e-6)
    assert jaxlite.lax.linalg.eigh(np.array([[2, 1], [1, 2]], np.int32))[1].tolist() == [1., 3.]
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        jaxlite.lax.linalg.cholesky(np.eye(2, dtype=np.int32), symmetrize_input=False)


# ------------------------------- delete, unique, stack, quantiles (JAX 0.10.2's behaviour)

@pytest.mark.parametrize("jit", [False, True])
def test_delete_errors_and_clipping_as_jax(jit):
    x = np.arange(5.0, dtype=np.float32)
    def call(obj, **kw):
        f = lambda a: jnp.delete(a, obj, **kw)  # noqa: E731
        return (jaxlite.jit(f) if jit else f)(x)
    # one static index out of range: JAX's axis check (ValueError)
    with pytest.raises(ValueError) as info:
        call(7)
    assert str(info.value) == "axis 7 is out of bounds for array of dimension 5"
    with pytest.raises(ValueError, match="axis -7 is out of bounds"):
        call(np.array(-7))
    # an index array out of range: numpy's IndexError
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        call(np.array([1, 7]))
    with pytest.raises(TypeError, match="delete requires ndarray or scalar arguments"):
        call([1, 2])
    assert call(np.array([True, False, True, False, False])).tolist() == [1.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="for boolean indices, obj must be one-dimensional"):
        call(np.array([True, False]))
    with pytest.raises(ValueError, match="must be integer or bool"):
        call(np.array([1.0]))
    # assume_unique_indices clips: 7 deletes nothing, -7 deletes the first entry
    assert call(np.array([7]), assume_unique_indices=True).tolist() == [0., 1., 2., 3.]
    assert call(np.array([-7, 9]), assume_unique_indices=True).tolist() == [1., 2., 3.]
    assert call(np.array([1, 1, -1])).tolist() == [0., 2., 3.]


@pytest.mark.parametrize("jit", [False, True])
def test_unique_of_empty_input_pads_only_the_values(jit):
    f = lambda a: jnp.unique(a, size=3, fill_value=7, return_index=True,  # noqa: E731
                             return_inverse=True, return_counts=True)
    values, index, inverse, counts = (jaxlite.jit(f) if jit else f)(np.zeros(0, np.float32))
    assert values.tolist() == [7.0, 7.0, 7.0]
    assert index.shape == inverse.shape == counts.shape == (0,)
    assert index.dtype == np.int32
    out = jnp.unique_all(np.zeros(0, np.float32), size=2, fill_value=1)
    assert out.values.tolist() == [1.0, 1.0] and out.indices.shape == (0,)
    assert out.counts.shape == (0,)
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(np.zeros(0, np.float32), size=3, return_index=True)


def test_stack_axis_none_raises_pythons_words():
    with pytest.raises(TypeError) as info:
        jnp.stack([np.ones(2), np.ones(2)], axis=None)
    assert str(info.value).startswith("'NoneType' object cannot be interpreted as an integer")


@pytest.mark.parametrize("jit", [False, True])
def test_quantiles_of_empty_and_zero_d_arrays_as_jax(jit):
    def call(f, a, *args, **kw):
        g = lambda x: f(x, *args, **kw)  # noqa: E731
        return (jaxlite.jit(g) if jit else g)(a)
    scalar = np.float32(3.0)
    # JAX ravels a 0-d input, so keepdims keeps one axis
    for f, args in ((jnp.median, ()), (jnp.nanmedian, ()), (jnp.quantile, (0.5,)),
                    (jnp.percentile, (50,))):
        out = call(f, scalar, *args, keepdims=True)
        assert out.shape == (1,) and out.tolist() == [3.0]
    assert call(jnp.quantile, scalar, np.array([0.5, 0.2]), keepdims=True).shape == (2, 1)
    # empty kept axes: an empty result
    e = np.zeros((2, 0, 3), np.float32)
    assert call(jnp.median, e, axis=2).shape == (2, 0)
    assert call(jnp.median, e, axis=2, keepdims=True).shape == (2, 0, 1)
    assert call(jnp.median, e, axis=0).shape == (0, 3)
    assert call(jnp.quantile, e, np.array([0.1, 0.5]), axis=2).shape == (2, 2, 0)
    assert call(jnp.nanquantile, e, 0.5, axis=2).shape == (2, 0)
    median_of_ints = call(jnp.median, np.zeros((2, 0, 3), np.int32), axis=2)
    assert median_of_ints.shape == (2, 0) and median_of_ints.dtype == np.float32
    # an empty reduced axis: JAX's gather fails with TypeError
    for f, kw in ((jnp.median, dict(axis=1)), (jnp.nanmedian, dict(axis=1)),
                  (jnp.median, {})):
        with pytest.raises(TypeError, match="Slice size at index .* in gather op is out of"):
            call(f, e, **kw)


def test_insert_with_traced_index_arrays_as_jax():
    x = np.arange(5.0, dtype=np.float32)
    def traced(a, i, values, **kw):
        return jaxlite.jit(lambda a, i: jnp.insert(a, i, values, **kw))(a, i)
    assert traced(x, np.array([1, 3]), 9.0).tolist() == [0., 9., 1., 2., 9., 3., 4.]
    assert traced(x, np.array([3, 1]), np.array([7., 8.])).tolist() == [0., 8., 1., 2., 7.,
                                                                         3., 4.]
    assert traced(x, np.array([1, 9]), 9.0).tolist() == [0., 9., 1., 2., 3., 4., 9.]
    assert traced(x, np.array([-1, -9]), 9.0).tolist() == [9., 0., 1., 2., 3., 9., 4.]
    assert traced(x, np.array([2, 2]), np.array([7., 8.])).tolist() == [0., 1., 7., 8., 2.,
                                                                         3., 4.]
    ones = np.ones((2, 3), np.float32)
    # one index (an array of one) inserts all the values there; a 0-d one turns them
    assert traced(ones, np.array([1]), np.array([7., 8.]), axis=1).tolist() == [
        [1., 7., 8., 1., 1.], [1., 7., 8., 1., 1.]]
    assert traced(ones, 1, np.array([7., 8.]), axis=1).tolist() == [[1., 7., 1., 1.],
                                                                    [1., 8., 1., 1.]]
    with pytest.raises(ValueError, match="obj must be a slice, a one-dimensional array"):
        traced(x, np.array([[1], [3]]), 9.0)
    with pytest.raises(ValueError, match="index array must be integer typed"):
        jnp.insert(x, np.array([1.0]), 1.0)
    with pytest.raises(ValueError, match="index array must be integer typed"):
        traced(x, 2.0, 9.0)
    with pytest.raises(TypeError, match="insert requires ndarray or scalar arguments"):
        jnp.insert(x, [1, 2], 1.0)
    assert jnp.insert(x, np.array([], np.float64), 5.0).tolist() == x.tolist()


@pytest.mark.parametrize("jit", [False, True])
def test_dot_general_float_to_integer_preferred_type_saturates_as_xla(jit):
    def dot(a, b, dtype):
        f = lambda x, y: jaxlite.lax.dot_general(  # noqa: E731
            x, y, (((1,), (0,)), ((), ())), preferred_element_type=dtype)
        return (jaxlite.jit(f) if jit else f)(a, b)
    ones = np.ones((3, 1), np.float32)
    # the float sum 2.1 converts to 2 (not the sum of truncated products)
    assert dot(np.full((1, 3), 0.7, np.float32), ones, np.int32).tolist() == [[2]]
    # JAX 0.10.2: out-of-range sums saturate, NaN converts to 0
    assert dot(np.full((1, 3), -140.0, np.float32), ones, np.uint8).tolist() == [[0]]
    big = np.array([[1e30, 1.0]], np.float32)
    assert dot(big, np.ones((2, 2), np.float32), np.int32).tolist() == [[2147483647] * 2]
    nan = np.array([[np.nan, 1e30]], np.float32)
    assert dot(nan, np.ones((2, 1), np.float32), np.int32).tolist() == [[0]]


@pytest.mark.parametrize("jit", [False, True])
def test_repeat_of_a_zero_d_array_ignores_the_axis_as_jax(jit):
    def call(*args, **kw):
        f = lambda a: jnp.repeat(a, *args, **kw)  # noqa: E731
        return (jaxlite.jit(f) if jit else f)(np.float16(7.0))
    for axis in (0, -1, 1):
        out = call(2, axis=axis)
        assert out.shape == (2,) and out.dtype == np.float16 and out.tolist() == [7.0, 7.0]
    assert call(np.array([3]), axis=0).tolist() == [7.0] * 3
    assert call(np.array([3]), axis=0, total_repeat_length=3).tolist() == [7.0] * 3
    with pytest.raises(ValueError, match="only implemented for scalar values"):
        call(np.array([1, 2]), axis=0)


@pytest.mark.parametrize("jit", [False, True])
def test_rint_and_angle_of_integers_use_the_default_float_as_jax(jit):
    call = (lambda f, x: jaxlite.jit(f)(x)) if jit else (lambda f, x: f(x))
    with jaxlite.enable_x64(True):
        for x in (np.array([1, -2], np.int16), np.array([3], np.uint32), True):
            assert call(jnp.rint, x).dtype == np.float64
            assert call(jnp.angle, x).dtype == np.float64
        assert call(jnp.angle, np.array([-2], np.int8)).tolist() == [np.pi]
        # a 0-d float is computed in the default float too; a 1-d one keeps its type
        assert call(jnp.angle, np.float16(-2)).dtype == np.float64
        assert call(jnp.angle, np.array([-2], np.float16)).dtype == np.float16
    out = call(jnp.rint, 2)
    assert out.dtype == np.float32 and not out.weak_type and float(out) == 2.0
    assert call(jnp.angle, np.float16(-2)).dtype == np.float32


def test_array_with_a_dtype_converts_host_data_as_numpy_as_jax():
    # JAX converts host data with np.asarray(data, dtype): numpy's errors and values
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        jnp.asarray(float("nan"), dtype=jnp.int32)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        jnp.array([float("nan")], dtype=jnp.uint8)
    with pytest.raises(OverflowError, match="cannot convert float infinity to integer"):
        jnp.asarray(float("inf"), dtype=jnp.int32)
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        jnp.array([300], dtype=jnp.uint8)
    with pytest.raises(TypeError, match="expected number, got complex"):
        jnp.asarray(1 + 2j, dtype=jnp.bfloat16)
    with pytest.raises(TypeError, match="float.. argument must be a string or a real number"):
        jnp.array([1 + 2j], dtype=jnp.float32)
    with pytest.raises(TypeError, match="expected number, got complex"):
        jaxlite.jit(lambda: jnp.asarray(1 + 2j, dtype=jnp.bfloat16))()
    # numpy's cast of a NaN float32 array to int32 (JAX 0.10.2 on x86: -2147483648)
    with np.errstate(invalid="ignore"):
        numpy_cast = np.array([np.nan], np.float32).astype(np.int32).tolist()
    assert jnp.asarray(np.array([np.nan], np.float32), dtype=jnp.int32).tolist() == numpy_cast
    assert bool(jnp.asarray(2.5j, dtype=jnp.bool_))


@pytest.mark.parametrize("jit", [False, True])
def test_statistic_padding_of_empty_axes_as_jax(jit):
    def pad(x, widths, **kw):
        f = lambda a: jnp.pad(a, widths, **kw)  # noqa: E731
        return (jaxlite.jit(f) if jit else f)(x)
    empty = np.zeros((2, 0), np.float32)
    # the mean of nothing is NaN (0 for integers), and the padding has its full width
    out = pad(empty, ((0, 3), (0, 3)), mode="mean", stat_length=(1, 2))
    assert out.shape == (5, 3) and np.isnan(np.asarray(out)).all()
    assert pad(empty.astype(np.int32), ((0, 1), (1, 1)), mode="mean").tolist() == [[0, 0]] * 3
    with pytest.raises(ValueError, match="stat_length of 0 yields no value"):
        pad(empty, ((0, 1), (1, 1)), mode="mean", stat_length=0)
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        pad(empty, ((0, 3), (0, 3)), mode="maximum")
    with pytest.raises(ValueError, match="zero-size array to reduction operation min"):
        pad(empty, ((1, 1), (0, 0)), mode="minimum")
    with pytest.raises(TypeError, match="Slice size at index 0 in gather op is out of range"):
        pad(np.zeros(0, np.float32), (1, 1), mode="median")


def test_gcd_and_lcm_are_weak_only_when_zero_d():
    # JAX 0.10.2: a bool array with a Python int gives a strong int32 array
    for f, expected in ((jnp.gcd, [1]), (jnp.lcm, [0])):
        out = f(np.array([False]), 1)
        assert out.dtype == np.int32 and not out.weak_type and out.tolist() == expected
        assert f(np.array(False), 1).weak_type
        assert not f(2, np.array([True])).weak_type
    assert jnp.lcm(2, 3).weak_type and int(jnp.lcm(2, 3)) == 6


def test_var_and_std_dtype_errors_as_jax():
    x = np.array([[5.0, 1, 2], [3, 4, 6]], np.float32)
    calls = (lambda: jnp.var(x, dtype=bool), lambda: jnp.nanvar(x, axis=1, dtype=bool),
             lambda: jaxlite.jit(lambda a: jnp.var(a, dtype=bool))(x))
    for call in calls:
        with pytest.raises(TypeError, match="div does not accept dtype bool"):
            call()
    with pytest.raises(ValueError) as info:
        jnp.std(x, dtype=np.int32)
    assert str(info.value).startswith("dtype argument to jnp.std must be inexact")


@pytest.mark.parametrize("jit", [False, True])
def test_unique_reads_complex_nans_as_nan_plus_0j(jit):
    def unique(x, **kw):
        f = lambda a: jnp.unique(a, **kw)  # noqa: E731
        return np.asarray((jaxlite.jit(f) if jit else f)(x))
    nan = np.nan
    x = np.array([complex(nan, 2), 1 + 1j, complex(3, nan)], np.complex64)
    # JAX 0.10.2: [1+1j, nan+0j]; with equal_nan=False [1+1j, nan+0j, nan+0j]
    out = unique(x, size=2)
    assert out[0] == 1 + 1j and np.isnan(out[1].real) and out[1].imag == 0
    out = unique(x, size=3, equal_nan=False)
    assert np.isnan(out[1:].real).all() and (out[1:].imag == 0).all()
    out = unique(np.array([complex(-5, nan)], np.complex64), size=1, fill_value=9)
    assert np.isnan(out[0].real) and out[0].imag == 0
