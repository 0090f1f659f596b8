"""Tests of the array interface that jaxlite.numpy installs: operators, methods, indexing.

`Array` and every tracer share the operator table filled by `jaxlite.numpy`; these tests
check Python operators (reflected ones included) against JAX's dtype rules, the numpy-style
methods and properties, basic indexing against numpy, iteration, printing and conversion
to Python scalars.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import jaxlite
import jaxlite.numpy as jnp


def code(x) -> str:
    short = {"bool": "b1", "int8": "i8", "int32": "i32", "uint8": "u8", "float32": "f32",
             "float16": "f16", "complex64": "c64", "bfloat16": "bf16"}
    return short[np.dtype(x.dtype).name] + ("*" if x.weak_type else "")


# ------------------------------------------------------------------------ operators

def test_arithmetic_operators_follow_jax_dtypes():
    i = jnp.arange(1, 4)
    f = jnp.arange(1.0, 4.0)
    cases = [
        # (result, expected values, dtype code verified with JAX 0.10.2)
        (i + 1, [2, 3, 4], "i32"), (1 + i, [2, 3, 4], "i32"),
        (i - 1, [0, 1, 2], "i32"), (10 - i, [9, 8, 7], "i32"),
        (i * 2, [2, 4, 6], "i32"), (2 * i, [2, 4, 6], "i32"),
        (i / 2, [0.5, 1.0, 1.5], "f32"), (3 / i, [3.0, 1.5, 1.0], "f32"),
        (i // 2, [0, 1, 1], "i32"), (7 // i, [7, 3, 2], "i32"),
        (i % 2, [1, 0, 1], "i32"), (-7 % i, [0, 1, 2], "i32"),
        (i ** 2, [1, 4, 9], "i32"), (2 ** i, [2, 4, 8], "i32"),
        (i ** 2.0, [1.0, 4.0, 9.0], "f32*"), (f ** -1, [1.0, 0.5, 1 / 3], "f32"),
        (i + 0.5, [1.5, 2.5, 3.5], "f32*"), (f + i, [2.0, 4.0, 6.0], "f32"),
        (-i, [-1, -2, -3], "i32"), (+f, [1.0, 2.0, 3.0], "f32"),
        (abs(-f), [1.0, 2.0, 3.0], "f32"), (~i, [-2, -3, -4], "i32"),
        (jnp.ones(3, jnp.int8) + 2, [3, 3, 3], "i8"),
        (np.float32(2) * jnp.ones(3, jnp.int32), [2.0, 2.0, 2.0], "f32"),
        (np.ones(3) + i, [2.0, 3.0, 4.0], "f32"), (i + np.ones(3), [2.0, 3.0, 4.0], "f32"),
    ]
    for result, values, dtype in cases:
        assert isinstance(result, jaxlite.Array)
        np.testing.assert_allclose(np.asarray(result), values, rtol=1e-6)
        assert code(result) == dtype


def test_divmod_and_bitwise_operators():
    quotient, remainder = divmod(jnp.arange(3), 2)
    assert quotient.tolist() == [0, 0, 1] and remainder.tolist() == [0, 1, 0]
    quotient, remainder = divmod(7, jnp.arange(1, 3))
    assert quotient.tolist() == [7, 3] and remainder.tolist() == [0, 1]
    x = jnp.arange(4)
    assert (x & 1).tolist() == [0, 1, 0, 1] and (1 & x).tolist() == [0, 1, 0, 1]
    assert (x | 4).tolist() == [4, 5, 6, 7] and (4 | x).tolist() == [4, 5, 6, 7]
    assert (x ^ 3).tolist() == [3, 2, 1, 0] and (3 ^ x).tolist() == [3, 2, 1, 0]
    assert (x << 2).tolist() == [0, 4, 8, 12] and (1 << x).tolist() == [1, 2, 4, 8]
    assert (x >> 1).tolist() == [0, 0, 1, 1] and (-16 >> x).tolist() == [-16, -8, -4, -2]
    assert (jnp.array([True, False]) & True).dtype == np.bool_
    with pytest.raises(TypeError):
        jnp.ones(2) & 1
    with pytest.raises(TypeError):
        ~jnp.ones(2)
    with pytest.raises(TypeError):
        -jnp.array([True])


def test_matmul_operator():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(np.asarray(jnp.asarray(a) @ jnp.asarray(b)), a @ b)
    np.testing.assert_allclose(np.asarray(a @ jnp.asarray(b)), a @ b)
    np.testing.assert_allclose(np.asarray(jnp.asarray(a) @ b), a @ b)
    assert isinstance(a @ jnp.asarray(b), jaxlite.Array)


def test_comparisons_give_bool_arrays():
    x = jnp.arange(3)
    for result, values in [(x == 1, [False, True, False]), (1 == x, [False, True, False]),
                           (x != 1.5, [True, True, True]), (x < 1, [True, False, False]),
                           (1 < x, [False, False, True]), (x <= 1, [True, True, False]),
                           (x > 0, [False, True, True]), (x >= jnp.arange(3.0), [True] * 3)]:
        assert result.dtype == np.bool_ and result.tolist() == values
    assert code(jnp.ones(3, jnp.int32) == 2.5) == "b1*"
    assert (jnp.ones(2) < 1j).tolist() == [False, False]


def test_unsupported_operands_defer_to_python():
    x = jnp.ones(2)
    with pytest.raises(TypeError):
        x + [1, 2]
    with pytest.raises(TypeError):
        [1, 2] * x
    with pytest.raises(TypeError):
        x + "a"
    assert (x == None) is False  # noqa: E711 (the operator itself is under test)
    assert (x != None) is True  # noqa: E711


# ------------------------------------------------------------------------ methods

def test_methods_and_properties():
    x = jnp.arange(12.0).reshape(3, 4)
    n = np.arange(12.0).reshape(3, 4)
    assert x.reshape(2, 6).shape == (2, 6) and x.reshape((2, -1)).shape == (2, 6)
    np.testing.assert_array_equal(np.asarray(x.reshape(4, 3, order="F")),
                                  n.reshape(4, 3, order="F"))
    assert x.transpose(1, 0).shape == (4, 3) and x.transpose((1, 0)).shape == (4, 3)
    assert x.transpose().shape == (4, 3) and x.T.shape == (4, 3)
    assert jnp.arange(3).T.shape == (3,) and jnp.ones((2, 3, 4)).mT.shape == (2, 4, 3)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        jnp.ones(3).mT
    assert x.astype(jnp.int8).dtype == np.int8 and x.astype(bool).dtype == np.bool_
    assert float(x.sum()) == 66.0 and x.sum(axis=0, keepdims=True).shape == (1, 4)
    assert x.max(0).tolist() == [8, 9, 10, 11] and x.min(axis=1).tolist() == [0, 4, 8]
    assert x.mean(1).tolist() == [1.5, 5.5, 9.5] and float(x.ptp()) == 11.0
    np.testing.assert_allclose(float(x.var()), n.var(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(x.std(0)), n.std(0), rtol=1e-6)
    assert x.prod(1).tolist() == n.prod(1).tolist() and bool(x.any()) and not bool(x.all())
    assert x.argmax(1).tolist() == [3, 3, 3] and int(x.argmin()) == 0
    assert x.cumsum(0).tolist() == n.cumsum(0).tolist()
    assert x.cumprod().shape == (12,)
    assert x.clip(2, 3).max() == 3 and x.clip(min=2).min() == 2
    assert x.dot(jnp.ones(4)).tolist() == [6.0, 22.0, 38.0]
    assert x.swapaxes(0, 1).shape == (4, 3) and x.flatten().shape == (12,)
    assert x.ravel().shape == (12,) and jnp.ones((2, 1)).squeeze().shape == (2,)
    assert x.round(1).dtype == np.float32 and x.conj().dtype == np.float32
    assert x.real.dtype == np.float32 and x.imag.tolist() == np.zeros((3, 4)).tolist()
    c = jnp.array([1 + 2j])
    assert c.real.tolist() == [1.0] and c.imag.tolist() == [2.0]
    assert c.conjugate().tolist() == [1 - 2j]
    assert jnp.arange(3).repeat(2).tolist() == [0, 0, 1, 1, 2, 2]
    assert x.diagonal().tolist() == [0.0, 5.0, 10.0] and float(x.trace()) == 15.0
    copied = x.copy()
    assert copied is not x and copied.tolist() == x.tolist()
    assert x[1, 1].item() == 5.0


def test_unavailable_methods_say_why():
    x = jnp.arange(3)
    with pytest.raises(NotImplementedError, match="flatten"):
        x.flat
    # Methods once listed here as unavailable now exist.
    assert jnp.array([2, 0, 1]).sort().tolist() == [0, 1, 2]
    assert x.take(jnp.array([2, 0])).tolist() == [2, 0]


def test_item_assignment_points_to_at():
    x = jnp.arange(3)
    with pytest.raises(TypeError, match=r"\.at\["):
        x[0] = 1


# ------------------------------------------------------------------------ indexing

@st.composite
def basic_index(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)))
    entries: list = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "full"] if size else ["slice", "full"]))
        if kind == "int":
            entries.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
            step = draw(st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3])))
            entries.append(slice(draw(bound), draw(bound), step))
        else:
            entries.append(slice(None))
    entries = entries[:draw(st.integers(0, len(entries)))]
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if draw(st.booleans()):
        # `...` goes last: anywhere else it can move an integer drawn for one axis onto
        # another (of size 0, say), an index numpy itself rejects.
        entries.append(Ellipsis)
    index = tuple(entries)
    if len(index) == 1 and draw(st.booleans()):
        index = index[0]
    return shape, index


@given(case=basic_index())
def test_basic_indexing_matches_numpy(case):
    shape, index = case
    n = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = jnp.asarray(n)
    result = x[index]
    expected = n[index]
    assert isinstance(result, jaxlite.Array)
    assert result.shape == expected.shape and result.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(result), expected)


def test_indexing_details():
    x = jnp.arange(12.0).reshape(3, 4)
    assert x[jnp.array(1)].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert x[np.int64(1)].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert x[jnp.array(1):jnp.array(3)].shape == (2, 4)
    assert code(jnp.asarray(3.0)[()]) == "f32*" and jnp.asarray(3.0)[None].shape == (1,)
    assert jnp.arange(10)[8:2:-3].tolist() == [8, 5]
    # out-of-bounds static integers clamp as in JAX 0.10.2 (x[5] is x[2], x[0, -5] is x[0, 0])
    assert x[5].tolist() == [8.0, 9.0, 10.0, 11.0] and float(x[0, -5]) == 0.0
    with pytest.raises(IndexError, match="Too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    with pytest.raises(TypeError, match="string indexing"):
        x["a"]
    with pytest.raises(TypeError, match="integer or boolean type"):
        x[1.5]
    assert x[jnp.array([0, 1])].shape == (2, 4) and x[np.array([0, 2])].shape == (2, 4)
    assert x[jnp.array([True, False, True])].shape == (2, 4) and x[True].shape == (1, 3, 4)
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x[[0, 1]]


def test_indexing_under_transformations():
    f = jaxlite.jit(lambda v: v[1:, ::-1][0] * 2)
    assert f(jnp.arange(6.0).reshape(2, 3)).tolist() == [10.0, 8.0, 6.0]
    assert jaxlite.vmap(lambda v: v[0])(jnp.arange(6.0).reshape(3, 2)).tolist() == [0.0, 2.0, 4.0]
    grad = jaxlite.grad(lambda v: v[1] * v[-1])(jnp.arange(3.0))
    assert grad.tolist() == [0.0, 2.0, 1.0]
    assert float(jaxlite.jit(lambda v, i: v[i])(jnp.arange(3.0), 1)) == 1.0


def test_iteration():
    rows = list(jnp.arange(6).reshape(3, 2))
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    assert [int(v) for v in jnp.arange(3)] == [0, 1, 2]
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(jnp.asarray(3.0))
    assert jaxlite.jit(lambda v: sum(y for y in v))(jnp.ones((2, 2))).tolist() == [2.0, 2.0]


# ------------------------------------------------------------------------ conversion, repr

def test_python_scalar_conversion():
    assert bool(jnp.array(1)) is True and bool(jnp.array([0.0])) is False
    with pytest.raises(ValueError, match="ambiguous"):
        bool(jnp.arange(2))
    assert int(jnp.array(2.7)) == 2 and float(jnp.asarray(2)) == 2.0
    assert complex(jnp.array(1 + 2j)) == 1 + 2j
    assert [0, 1, 2][jnp.array(1)] == 1
    with pytest.raises(TypeError):
        len(jnp.array(1))
    assert len(jnp.ones((3, 2))) == 3


def test_repr():
    assert repr(jnp.array([1.0, 2.0])) == "Array([1., 2.], dtype=float32)"
    assert repr(jnp.array(1)) == "Array(1, dtype=int32, weak_type=True)"
    assert repr(jnp.zeros((0, 3))) == "Array([], shape=(0, 3), dtype=float32)"
    assert repr(jnp.array([True])) == "Array([ True], dtype=bool)"
    assert repr(jnp.float32(3)) == "Array(3., dtype=float32)"
    assert str(jnp.array([1.0, 2.0])) == "[1. 2.]"


def test_operators_on_tracers():
    def f(x):
        return (x / 2, x // 2, x @ x, x == 1, -x, x[::-1], x.sum(), x.T, 2 ** x)
    outs = jaxlite.jit(f)(jnp.arange(3))
    eager = f(jnp.arange(3))
    for traced, direct in zip(outs, eager):
        assert traced.dtype == direct.dtype
        np.testing.assert_array_equal(np.asarray(traced), np.asarray(direct))
    assert outs[0].dtype == np.float32 and outs[3].dtype == np.bool_
