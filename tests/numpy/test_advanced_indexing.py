"""numpy indexing with arrays and masks, and `x.at[...]`, against numpy and JAX.

Values are checked against numpy on hypothesis-drawn indices (integer arrays, lists, masks,
integers, slices, None and Ellipsis, in any mix) eagerly, under jit and under vmap, and
`x.at[idx].op(y)` against `numpy.<ufunc>.at`. Expected values marked "JAX" were computed with
JAX 0.10.2 (x64 off) and are written out literally: out-of-bounds handling, promotion.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.errors import NonConcreteBooleanIndexError
from jaxlite.test_util import check_grads


def values(x):
    return np.asarray(x).tolist()


# ------------------------------------------------------------------------ strategies

@st.composite
def mixed_index(draw, allow_negative=True):
    """(shape, index, arrays): an index mixing integer arrays, lists, integers, slices, None
    and Ellipsis; `arrays` are the positions of its array entries (traced under jit)."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    entries: list = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "full", "array", "array", "list"]))
        low = -size if allow_negative else 0
        if kind == "int":
            entries.append(int(rng.integers(low, size)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-size - 1, size + 1))
            step = draw(st.sampled_from([None, 1, 2, -1, -2]))
            entries.append(slice(draw(bound), draw(bound), step))
        elif kind == "full":
            entries.append(slice(None))
        else:
            sub = batch[len(batch) - draw(st.integers(0, len(batch))):]
            sub = tuple(1 if draw(st.booleans()) else s for s in sub)
            array = rng.integers(low, size, sub)
            entries.append(array.tolist() if kind == "list" and array.ndim == 1 else array)
    # Index the leading dims (an ellipsis may stand for the rest), or with an ellipsis
    # first, the trailing ones.
    kept = draw(st.integers(1, len(entries)))
    ellipsis = draw(st.sampled_from([None, "first", "last"]))
    entries = entries[len(entries) - kept:] if ellipsis == "first" else entries[:kept]
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if ellipsis is not None:
        entries.insert(0 if ellipsis == "first" else len(entries), Ellipsis)
    arrays = [i for i, e in enumerate(entries) if isinstance(e, np.ndarray)]
    return shape, tuple(entries), arrays


def _as_jax(index, arrays, kind):
    entries = list(index)
    for i in arrays:
        entries[i] = jnp.asarray(entries[i]) if kind == "jax" else entries[i]
    return tuple(entries)


# ------------------------------------------------------------------------- getitem

@given(case=mixed_index(), kind=st.sampled_from(["numpy", "jax"]))
def test_mixed_indexing_matches_numpy(case, kind):
    shape, index, arrays = case
    n = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    expected = n[index]
    result = jnp.asarray(n)[_as_jax(index, arrays, kind)]
    assert result.shape == expected.shape and result.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(result), expected)


@settings(max_examples=8)
@given(case=mixed_index())
def test_mixed_indexing_under_jit(case):
    shape, index, arrays = case
    n = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)

    def f(x, *traced):
        entries = list(index)
        for i, t in zip(arrays, traced):
            entries[i] = t
        return x[tuple(entries)]
    result = jax.jit(f)(n, *[index[i] for i in arrays])
    np.testing.assert_array_equal(np.asarray(result), n[index])


@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), seed=st.integers(0, 99),
       lead=st.integers(0, 1))
def test_boolean_masks_match_numpy(shape, seed, lead):
    shape = tuple(shape)
    lead = min(lead, len(shape) - 1)
    n = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    rng = np.random.default_rng(seed)
    mask_ndim = int(rng.integers(1, len(shape) - lead + 1))
    mask = rng.random(shape[lead:lead + mask_ndim]) < 0.5
    index = (slice(None),) * lead + (mask,)
    for m in (mask, jnp.asarray(mask), mask.tolist()):
        if isinstance(m, list) and mask.ndim > 1:
            continue
        entries = (slice(None),) * lead + (m,)
        np.testing.assert_array_equal(np.asarray(jnp.asarray(n)[entries]), n[index])


def test_scalar_booleans_and_special_cases():  # JAX
    x = jnp.arange(24.0).reshape(2, 3, 4)
    assert x[True].shape == (1, 2, 3, 4) and x[False].shape == (0, 2, 3, 4)
    assert x[np.True_, 1].shape == (1, 3, 4) and x[1, np.True_].shape == (1, 3, 4)
    assert x[:, np.True_, np.array([0, 1])].shape == (2, 2, 4)
    assert x[jnp.zeros((2, 3), bool)].shape == (0, 4)
    assert x[jnp.array(True)].shape == (1, 2, 3, 4)
    assert x[1, [0, 1]].shape == (2, 4) and x[1, ((0, 1),)].shape == (1, 2, 4)
    assert jnp.ones((0, 3))[jnp.array([], np.int32)].shape == (0, 3)
    assert jnp.ones((3, 0))[jnp.array([0, 1])].shape == (2, 0)


def test_out_of_bounds_and_negative_indices():  # JAX
    x = jnp.arange(5.0)
    assert values(x[jnp.array([10, -10, 2, -1])]) == [4.0, 0.0, 2.0, 4.0]
    assert float(x[jnp.array(7)]) == 4.0 and float(x[jnp.array(-7)]) == 0.0
    f = jax.jit(lambda x, i: x[i])
    assert float(f(x, 9)) == 4.0 and float(f(x, -1)) == 4.0
    assert values(f(x, jnp.array([1, -1, 9]))) == [1.0, 4.0, 4.0]
    assert values(x.at[jnp.array([10, -10, 2])].get()) == [4.0, 0.0, 2.0]
    filled = values(x.at[jnp.array([10, -10, 2])].get(mode="fill"))
    assert np.isnan(filled[:2]).all() and filled[2] == 2.0
    assert values(x.at[jnp.array([10, -10, 2])].get(mode="fill", fill_value=7)) == [7, 7, 2]
    assert values(jnp.arange(5).at[jnp.array([1, 1, 3])].get(mode="fill", fill_value=-1)) == \
        [1, 1, 3]
    assert np.isnan(float(jnp.arange(6.0).reshape(2, 3).at[1, 5].get(mode="fill")))
    assert values(x.at[jnp.array([-1])].get(mode="fill", wrap_negative_indices=False))[0] != 4.0


def test_indexing_errors():  # messages as JAX's
    x = jnp.arange(6.0).reshape(2, 3)
    with pytest.raises(NonConcreteBooleanIndexError,
                       match=r"Array boolean indices must be concrete; got bool\[2,3\]"):
        jax.jit(lambda x, m: x[m])(x, x > 2)
    with pytest.raises(IndexError, match="Slice entries must be static integers"):
        jax.jit(lambda x, i: x[i:i + 1])(x, 1)
    with pytest.raises(TypeError, match=r"use `arr\[array\(seq\)\]` instead"):
        x[[0, 1]]
    with pytest.raises(TypeError, match=r"use `arr\[tuple\(seq\)\]` instead"):
        x[[[0, 1]]]
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type, got "
                                        "indexer with type float32"):
        x[jnp.array([1.0])]
    # JAX clamps an out-of-bounds static integer (numpy would raise); an empty axis raises
    assert float(x[0, 5]) == 2.0 and float(x[0, -5]) == 0.0
    with pytest.raises(IndexError, match="index is out of bounds for axis 0 with size 0"):
        jnp.zeros((0, 3))[0]
    with pytest.raises(IndexError, match="too many|Too many"):
        x[0, 0, jnp.array([0])]


# --------------------------------------------------------------------------- x.at

AT_UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
             "min": np.minimum, "max": np.maximum}


@given(case=mixed_index(), op=st.sampled_from(sorted(AT_UFUNCS) + ["set"]),
       seed=st.integers(0, 99), broadcast=st.booleans())
def test_at_updates_match_numpy(case, op, seed, broadcast):
    shape, index, arrays = case
    rng = np.random.default_rng(seed)
    n = rng.integers(-5, 6, shape).astype(np.float32)
    indexed_shape = n[index].shape
    value_shape = indexed_shape[1:] if broadcast and indexed_shape else indexed_shape
    v = rng.integers(-5, 6, value_shape).astype(np.float32)
    expected = n.copy()
    if op == "set":
        expected[index] = v
    else:  # numpy's ufunc.at mishandles values that broadcast: broadcast them first
        AT_UFUNCS[op].at(expected, index, np.broadcast_to(v, indexed_shape))
    result = getattr(jnp.asarray(n).at[_as_jax(index, arrays, "jax")], op)(v)
    np.testing.assert_array_equal(np.asarray(result), expected)


def test_at_methods():  # JAX
    x = jnp.arange(1.0, 6.0)
    i = jnp.array([1, 1, 3])
    assert values(x.at[i].divide(2.0)) == [1.0, 0.5, 3.0, 2.0, 5.0]
    assert values(x.at[i].power(2.0)) == [1.0, 16.0, 3.0, 16.0, 5.0]
    assert values(x.at[i].mul(2.0)) == values(x.at[i].multiply(2.0)) == [1, 8, 3, 8, 5]
    assert values(x.at[i].min(jnp.array([0.5, 3.0, 1.0]))) == [1.0, 0.5, 3.0, 1.0, 5.0]
    assert values(jnp.arange(5.0).at[jnp.array([1, 1, 2])].apply(lambda v: v + 1)) == \
        [0, 3, 3, 3, 4]
    y = jnp.arange(5.0).at[jnp.array([10, -10, 2])]
    assert values(y.set(9.0)) == [0, 1, 9, 3, 4]
    assert values(y.set(9.0, mode="clip")) == [9, 1, 9, 3, 9]
    assert values(jnp.arange(5.0).at[::2].set(jnp.array([7.0, 8, 9]))) == [7, 1, 8, 3, 9]
    assert values(jnp.arange(5.0).at[::-2].set(jnp.array([7.0, 8, 9]))) == [9, 1, 8, 3, 7]
    grid = jnp.arange(6.0).reshape(2, 3)
    assert values(grid.at[:, jnp.array([0, 2])].set(jnp.array([[10.0], [20.0]]))) == \
        [[10, 1, 10], [20, 4, 20]]
    assert values(grid.at[jnp.array([True, False])].add(1.0)) == [[1, 2, 3], [3, 4, 5]]
    assert values(grid.at[np.True_, 1].set(0.0)) == [[0, 1, 2], [0, 0, 0]]
    assert values(grid.at[0, 5].add(1.0)) == values(grid)
    assert repr(x.at).startswith("_IndexUpdateHelper(") and repr(x.at[1]).endswith(", 1)")


def test_at_promotion_and_dtypes():  # JAX
    ints = jnp.arange(5)
    i = jnp.array([1, 1, 3])
    with pytest.warns(FutureWarning, match="cannot safely cast"):
        assert values(ints.at[i].set(2.7)) == [0, 2, 2, 2, 4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert values(ints.at[i].add(2.7)) == [0, 6, 2, 5, 4]
    assert values(ints.at[i].divide(2)) == [0.0, 0.25, 2.0, 1.5, 4.0]
    assert values(ints.at[i].power(2)) == [0, 1, 2, 9, 4]
    out = jnp.zeros(3, jnp.bfloat16).at[1].set(2.0)
    assert out.dtype == jnp.bfloat16 and values(out) == [0, 2, 0]
    weak = jnp.asarray(2.0)
    assert weak.weak_type and weak.at[()].set(3.0).weak_type
    assert not jnp.zeros(3).at[0].set(2.0).weak_type
    with pytest.raises(ValueError, match="cannot be broadcast"):
        jnp.zeros(3).at[jnp.array([0, 1])].set(jnp.ones(3))
    with pytest.raises(NotImplementedError, match="out_sharding"):
        jnp.zeros(3).at[0].set(1.0, out_sharding="x")


# ------------------------------------------------------------ derivatives and batching

def test_gradients_of_indexing():  # JAX
    x = jnp.arange(1.0, 6.0)
    grad = jax.grad(lambda x: (x[jnp.array([0, 0, 2])] * jnp.array([1.0, 2.0, 3.0])).sum())(x)
    assert values(grad) == [3.0, 0.0, 3.0, 0.0, 0.0]
    i = jnp.array([1, 1, 3])
    grad = jax.grad(lambda x: x.at[i].multiply(jnp.array([2.0, 3.0, 4.0])).sum())(x)
    assert values(grad) == [1.0, 6.0, 1.0, 4.0, 1.0]
    grad = jax.grad(lambda u: x.at[i].set(u).sum())(jnp.array([1.0, 2.0, 3.0]))
    assert values(grad) == [0.0, 1.0, 1.0]
    with jax.enable_x64(True):
        y = np.arange(12.0).reshape(3, 4) / 7
        idx = (np.array([2, 0, 2]), slice(None, None, -2))
        check_grads(lambda y: jnp.asarray(y)[idx], (y,), 2)
        check_grads(lambda y: jnp.asarray(y)[1:, np.array([[0], [3]])], (y,), 2)
        v = np.array([[0.5, -1.0], [2.0, 3.0], [1.5, 0.25]])
        at = lambda y: jnp.asarray(y).at  # noqa: E731
        for op in ("set", "add", "subtract", "min", "max"):
            check_grads(lambda y, v: getattr(at(y)[idx], op)(v), (y, v), 2)
        check_grads(lambda y: at(y)[idx].multiply(v), (y,), 2)
        unique = (np.array([2, 0, 1]), slice(None, None, -2))
        check_grads(lambda y, v: at(y)[unique].multiply(v, unique_indices=True), (y, v), 2)
        check_grads(lambda y, v: at(y)[unique].divide(v, unique_indices=True)
                    + at(y)[unique].power(v, unique_indices=True), (y, v), 1)
        check_grads(lambda y: at(y)[np.array([5, 1])].get(mode="fill", fill_value=0.0), (y,), 2)


def test_vmap_of_indexing():
    rows = jnp.arange(24.0).reshape(4, 6)
    index = jnp.array([[5, 0], [1, -1], [2, 2], [9, 3]])
    loop = np.stack([np.asarray(rows[k][index[k]]) for k in range(4)])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda r, i: r[i])(rows, index)), loop)
    fixed = np.stack([np.asarray(rows[k][index[0]]) for k in range(4)])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda r: r[index[0]])(rows)), fixed)
    per_index = np.stack([np.asarray(rows[0][index[k]]) for k in range(4)])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda i: rows[0][i])(index)), per_index)
    scalars = jax.vmap(lambda r, i: r[i, None])(rows, jnp.array([0, 5, -1, 2]))
    assert values(scalars) == [[0.0], [11.0], [17.0], [20.0]]
    added = jax.vmap(lambda r, i, v: r.at[i].add(v))(rows, index, jnp.ones((4, 2)))
    for k in range(4):
        expected = np.asarray(rows[k].at[index[k]].add(1.0))
        np.testing.assert_array_equal(np.asarray(added[k]), expected)
    two_d = jax.vmap(lambda r, i: r.reshape(2, 3)[:, i], in_axes=(0, None))(rows, index[2])
    assert two_d.shape == (4, 2, 2)
    assert values(jax.vmap(lambda x, i: x.at[i].add(1.0))(
        jnp.arange(6.0).reshape(2, 3), jnp.array([[2, 2], [0, 5]]))) == [[0, 1, 4], [4, 4, 5]]


def test_jit_of_at_updates():
    x = jnp.arange(1.0, 6.0)
    i = jnp.array([1, 1, 3, 9])
    for op in ("set", "add", "subtract", "multiply", "divide", "power", "min", "max"):
        f = lambda x, i: getattr(x.at[i], op)(3.0, mode="clip")  # noqa: E731
        np.testing.assert_allclose(np.asarray(jax.jit(f)(x, i)), np.asarray(f(x, i)))
    g = lambda x, i: x.at[i].apply(jnp.sin)  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.jit(g)(x, i)), np.asarray(g(x, i)))
