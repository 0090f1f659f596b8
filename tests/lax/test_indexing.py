"""jax.lax indexing functions: dynamic slices, gather and the scatters, beyond the records.

Expected values marked "JAX" were computed with JAX 0.10.2 (x64 off) and are written out
literally: out-of-bounds handling per mode, default fill values, repeated indices, the
derivative conventions of scatter, scatter_mul, scatter_min/max and scatter_apply.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads
from records import all_records

DN1 = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
SN1 = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                  scatter_dims_to_operand_dims=(0,))
X5 = np.arange(5.0, dtype=np.float32)


def values(x):
    return np.asarray(x).tolist()


# ---------------------------------------------------------------------- API surface

def test_modes_and_dimension_numbers():
    mode = lax.GatherScatterMode
    assert mode.from_any(None) is mode.FILL_OR_DROP
    assert mode.from_any("clip") is mode.CLIP and mode.from_any("drop") is mode.FILL_OR_DROP
    assert mode.from_any("fill") is mode.FILL_OR_DROP
    assert mode.from_any("promise_in_bounds") is mode.PROMISE_IN_BOUNDS
    assert mode.from_any(mode.CLIP) is mode.CLIP
    with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
        mode.from_any("wrap")
    assert DN1.operand_batching_dims == () and SN1.scatter_indices_batching_dims == ()
    assert repr(DN1) == ("GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), "
                         "start_index_map=(0,), operand_batching_dims=(), "
                         "start_indices_batching_dims=())")
    with pytest.raises(NotImplementedError, match="ONE_HOT"):
        lax.gather(X5, np.array([[1]]), DN1, (1,), mode="one_hot")


def test_jaxpr_of_gather_and_scatter():
    text = str(jax.make_jaxpr(lambda x, i: lax.gather(x, i, DN1, (1,)))(X5, np.array([[1]])))
    assert "gather[" in text and "mode=GatherScatterMode.PROMISE_IN_BOUNDS" in text
    assert "fill_value=None" in text and "slice_sizes=(1,)" in text
    text = str(jax.make_jaxpr(lambda x: lax.scatter_add(x, np.array([[1]]), np.ones(1, np.float32),
                                                        SN1))(X5))
    assert "scatter-add[" in text and "mode=GatherScatterMode.FILL_OR_DROP" in text


# ------------------------------------------------------------------- dynamic slicing

def test_dynamic_slice_clamps_and_wraps():  # JAX
    assert values(lax.dynamic_slice(X5, (-1,), (2,))) == [3.0, 4.0]
    assert values(lax.dynamic_slice(X5, (-7,), (2,))) == [0.0, 1.0]
    assert values(lax.dynamic_slice(X5, (7,), (2,))) == [3.0, 4.0]
    assert values(lax.dynamic_slice(X5, (-1,), (2,), allow_negative_indices=False)) == [0.0, 1.0]
    assert values(lax.dynamic_update_slice(X5, np.ones(2, np.float32), (-1,))) == \
        [0.0, 1.0, 2.0, 1.0, 1.0]
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    assert values(lax.dynamic_slice(x, jnp.array([1, 2]), (2, 2))) == [[6.0, 7.0], [10.0, 11.0]]
    assert values(lax.dynamic_slice_in_dim(x, -1, 2, axis=1)) == [[2, 3], [6, 7], [10, 11]]
    assert values(lax.dynamic_index_in_dim(x, 1, keepdims=False)) == [4, 5, 6, 7]
    assert lax.dynamic_index_in_dim(x, 1, axis=1).shape == (3, 1)
    updated = lax.dynamic_update_index_in_dim(x, np.zeros(4, np.float32), -1, 0)
    assert values(updated[2]) == [0, 0, 0, 0] and values(updated[1]) == [4, 5, 6, 7]
    updated = lax.dynamic_update_slice_in_dim(x, np.zeros((3, 2), np.float32), 3, 1)
    assert values(updated[0]) == [0, 1, 0, 0]


def test_dynamic_slice_errors():
    # JAX's types and key phrases.
    with pytest.raises(ValueError, match="^Length of slice indices must match number of "
                                         "operand dimensions"):
        lax.dynamic_slice(X5, (1, 2), (1,))
    with pytest.raises(TypeError, match="^index arguments to dynamic_slice must be integers "
                                        "of the same type, got: float32"):
        lax.dynamic_slice(X5, (1.5,), (1,))
    with pytest.raises(TypeError, match="slice_sizes"):
        lax.dynamic_slice(X5, (0,), (6,))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.dynamic_update_slice(X5, np.ones(2, np.int32), (0,))


def test_dynamic_slice_with_traced_starts():
    f = jax.jit(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))
    assert values(f(X5, 1)) == [1.0, 2.0] and values(f(X5, 9)) == [3.0, 4.0]
    assert values(f(X5, -1)) == [3.0, 4.0]
    batched = jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))
    rows = np.arange(10.0, dtype=np.float32).reshape(2, 5)
    assert values(batched(rows, jnp.array([1, 4]))) == [[1, 2], [8, 9]]
    assert "gather" in str(jax.make_jaxpr(batched)(rows, jnp.array([1, 4])))
    update = jax.vmap(lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)))
    assert values(update(rows, jnp.array([1, 4]))) == [[0, 1, 1, 3, 4], [5, 6, 7, 1, 1]]
    assert "scatter" in str(jax.make_jaxpr(update)(rows, jnp.array([1, 4])))
    grad = jax.grad(lambda x, i: lax.dynamic_slice(x, (i,), (2,)).sum())(X5, 9)
    assert values(grad) == [0, 0, 0, 1, 1]


def test_index_take():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    out = lax.index_take(x, (jnp.array([0, 2]), jnp.array([1, 3])), (0, 1))
    assert values(out) == [1.0, 11.0]
    assert values(lax.index_take(x, (jnp.array([2, 0]),), (0,))) == [[8, 9, 10, 11], [0, 1, 2, 3]]


# ------------------------------------------------------------------------------- gather

def test_gather_modes():  # JAX
    idx = np.array([[7], [1], [-1]], np.int32)
    assert values(lax.gather(X5, idx, DN1, (1,))) == [4.0, 1.0, 0.0]
    assert values(lax.gather(X5, idx, DN1, (1,), mode="clip")) == [4.0, 1.0, 0.0]
    filled = lax.gather(X5, idx, DN1, (1,), mode="fill")
    assert np.isnan(values(filled)[0]) and values(filled)[1] == 1.0
    assert values(lax.gather(X5, idx, DN1, (1,), mode="fill", fill_value=7)) == [7, 1, 7]
    window = lax.GatherDimensionNumbers((1,), (), (0,))
    # A window that is partly outside is filled whole.
    out = lax.gather(X5, np.array([[3], [4]]), window, (2,), mode="fill", fill_value=-1)
    assert values(out) == [[3, 4], [-1, -1]]


@pytest.mark.parametrize("dtype,fill", [(np.int32, -2147483648), (np.uint8, 255),
                                        (np.bool_, True), (np.int8, -128)])
def test_gather_default_fill_values(dtype, fill):  # JAX
    x = np.arange(3).astype(dtype)
    out = lax.gather(x, np.array([[5]]), DN1, (1,), mode="fill")
    assert values(out) == [fill]


def test_gather_checks_its_arguments():
    with pytest.raises(ValueError, match="^indices must have an integer type"):  # as JAX
        lax.gather(X5, np.array([[1.0]]), DN1, (1,))
    with pytest.raises(TypeError, match="slice_sizes"):
        lax.gather(X5, np.array([[1]]), DN1, (6,))
    with pytest.raises(TypeError, match="start_index_map"):
        lax.gather(X5, np.array([[1, 2]]), DN1, (1,))
    with pytest.raises(TypeError, match="offset_dims"):
        lax.gather(X5, np.array([[1]]), lax.GatherDimensionNumbers((0,), (0,), (0,)), (1,))


def test_gather_grad_follows_the_mode():
    idx = np.array([[7], [1], [1]], np.int32)
    grad = jax.grad(lambda x: lax.gather(x, idx, DN1, (1,), mode="clip").sum())(X5)
    assert values(grad) == [0, 2, 0, 0, 1]
    grad = jax.grad(lambda x: lax.gather(x, idx, DN1, (1,), mode="fill").sum())(X5)
    assert values(grad) == [0, 2, 0, 0, 0]


# ----------------------------------------------------------------------------- scatters

def test_scatter_family_values():  # JAX
    idx = np.array([[1], [1], [3], [7]], np.int32)
    upd = np.array([2.0, 3.0, 4.0, 5.0], np.float32)
    assert values(lax.scatter_add(X5, idx, upd, SN1)) == [0, 6, 2, 7, 4]
    assert values(lax.scatter_add(X5, idx, upd, SN1, mode="clip")) == [0, 6, 2, 7, 9]
    assert values(lax.scatter_sub(X5, idx, upd, SN1)) == [0, -4, 2, -1, 4]
    assert values(lax.scatter_mul(X5, idx, upd, SN1)) == [0, 6, 2, 12, 4]
    assert values(lax.scatter_min(X5, idx, upd, SN1)) == [0, 1, 2, 3, 4]
    assert values(lax.scatter_max(X5, idx, upd, SN1)) == [0, 3, 2, 4, 4]
    assert values(lax.scatter(X5, idx, upd, SN1)) == [0, 3, 2, 4, 4]
    assert values(lax.scatter(X5, idx, upd, SN1, mode="clip")) == [0, 3, 2, 4, 5]
    applied = lax.scatter_apply(X5, idx[:3], lambda v: v * 2, SN1, update_shape=(3,))
    assert values(applied) == [0, 4, 2, 6, 4]  # applied once per occurrence


def test_scatter_lowering_matches_eager():
    idx = np.array([[1], [1], [3], [7], [-1]], np.int32)
    upd = np.array([2.0, 3.0, 4.0, 5.0, 6.0], np.float32)
    for fn in (lax.scatter_add, lax.scatter_sub, lax.scatter_mul, lax.scatter_min,
               lax.scatter_max, lax.scatter):
        for mode in ("clip", "drop", "promise_in_bounds"):
            def f(x, i, u):
                return fn(x, i, u, SN1, mode=mode)
            np.testing.assert_array_equal(np.asarray(jax.jit(f)(X5, idx, upd)),
                                          np.asarray(f(X5, idx, upd)))
    text = jax.jit(lambda x, i: lax.scatter_add(x, i, upd, SN1, mode="clip")).lower(X5, idx)
    assert "scatter(" in text.as_text() and "clamp(" in text.as_text()


def test_scatter_derivatives():  # JAX
    x = jnp.arange(5.0)
    i = np.array([[1], [1], [2]], np.int32)
    u = jnp.array([1.0, 1.0, 3.0])
    grad_u = jax.grad(lambda u: lax.scatter_max(x, i, u, SN1).sum())(u)
    np.testing.assert_allclose(values(grad_u), [1 / 3, 1 / 3, 1.0], rtol=1e-6)
    grad_x = jax.grad(lambda x: lax.scatter_max(x, i, u, SN1).sum())(x)
    np.testing.assert_allclose(values(grad_x), [1.0, 1 / 3, 0.0, 1.0, 1.0], rtol=1e-6)
    grad_u = jax.grad(lambda u: lax.scatter_min(x, i, u, SN1).sum())(u)
    np.testing.assert_allclose(values(grad_u), [1 / 3, 1 / 3, 0.0], rtol=1e-6)
    # scatter (set): the last update to a position carries its derivative.
    grad_u = jax.grad(lambda u: lax.scatter(x, i, u, SN1).sum())(jnp.array([1.0, 2.0, 3.0]))
    assert values(grad_u) == [0.0, 1.0, 1.0]
    grad_x = jax.grad(lambda x: lax.scatter(x, i, u, SN1).sum())(x)
    assert values(grad_x) == [1.0, 0.0, 0.0, 1.0, 1.0]
    grad_x = jax.grad(lambda x: lax.scatter_mul(x, i, jnp.array([2.0, 3.0, 4.0]), SN1).sum())(x)
    assert values(grad_x) == [1.0, 6.0, 4.0, 1.0, 1.0]
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        jax.grad(lambda u: lax.scatter_mul(x, i, u, SN1).sum())(u)
    unique = np.array([[1], [3], [2]], np.int32)
    grad_u = jax.grad(lambda u: lax.scatter_mul(x, unique, u, SN1, unique_indices=True)
                      .sum())(jnp.array([2.0, 3.0, 4.0]))
    assert values(grad_u) == [1.0, 3.0, 2.0]
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        jax.grad(lambda x: lax.scatter_apply(x, i, jnp.sin, SN1, update_shape=(3,)).sum())(x)


def test_scatter_with_unique_indices_transposes():
    i = np.array([[1], [3]], np.int32)
    with jax.enable_x64(True):
        x, u = np.arange(5.0), np.array([7.0, 8.0])
        check_grads(lambda x, u: lax.scatter(x, i, u, SN1, unique_indices=True), (x, u), 2)
        check_grads(lambda x, u: lax.scatter_mul(x, i, u, SN1, unique_indices=True),
                    (x, u), 2)


def test_scatter_apply_under_transformations():
    i = np.array([[1], [1], [4]], np.int32)
    f = lambda x: lax.scatter_apply(x, i, lambda v: v + 1, SN1, update_shape=(3,))  # noqa: E731
    assert values(f(X5)) == [0, 3, 2, 3, 5]
    assert values(jax.jit(f)(X5)) == [0, 3, 2, 3, 5]
    rows = np.stack([X5, X5 * 2])
    assert values(jax.vmap(f)(rows)) == [[0, 3, 2, 3, 5], [0, 4, 4, 6, 9]]
    with pytest.raises(TypeError, match="same dtype"):
        lax.scatter_apply(X5, i, lambda v: v > 0, SN1, update_shape=(3,))


def test_scatter_checks_its_arguments():
    with pytest.raises(TypeError, match="same dtype"):
        lax.scatter_add(X5, np.array([[1]]), np.ones(1, np.int32), SN1)
    with pytest.raises(TypeError, match="updates"):
        lax.scatter_add(X5, np.array([[1]]), np.ones(2, np.float32), SN1)
    with pytest.raises(TypeError, match="does not accept dtype bool"):
        lax.scatter_sub(np.zeros(3, bool), np.array([[1]]), np.ones(1, bool), SN1)


# ------------------------------------------------------------------- mixed batching

INDEXING_RECORDS = ["dynamic_slice", "dynamic_update_slice", "gather", "scatter",
                    "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"]


@pytest.mark.parametrize("name", INDEXING_RECORDS)
@pytest.mark.parametrize("seed", range(3))
def test_vmap_with_some_arguments_unmapped(name, seed):
    """Every pattern of mapped and unmapped arguments (the shared test maps all or one)."""
    record = all_records()[name]
    rng = np.random.default_rng(seed)
    case = record.make_case(rng, np.float32)
    size = 2
    members = [list(case.args)] + [[case.values(rng, np.shape(a), np.asarray(a).dtype)
                                    for a in case.args] for _ in range(size - 1)]
    count = len(case.args)
    for pattern in range(1, 2 ** count):
        mapped = [bool(pattern >> k & 1) for k in range(count)]
        args = [np.stack([m[k] for m in members], -1 if np.ndim(a) else 0) if on else a
                for k, (a, on) in enumerate(zip(case.args, mapped))]
        in_axes = tuple((-1 if np.ndim(a) else 0) if on else None
                        for a, on in zip(case.args, mapped))
        loop = [case.fun(*[m[k] if on else case.args[k] for k, on in enumerate(mapped)])
                for m in members]
        out = jax.vmap(case.fun, in_axes=in_axes)(*args)
        np.testing.assert_array_equal(np.asarray(out), np.stack([np.asarray(o) for o in loop]),
                                      err_msg=f"{name} in_axes={in_axes}")


def test_vmap_of_indexing_over_an_empty_batch():
    # optax's hungarian_algorithm under vmap of zero problems; JAX 0.10.2 gives these shapes.
    x, i = jnp.zeros((0, 2, 3)), jnp.zeros((0,), jnp.int32)
    assert jax.vmap(lambda a, k: a[k])(x, i).shape == (0, 3)
    assert jax.vmap(lambda a, k: a[k, 1:])(x, i).shape == (0, 2)
    assert jax.jit(jax.vmap(lambda a, k: a[k] * 2))(x, i).shape == (0, 3)
    assert jax.vmap(lambda a, k: a.at[k].set(1.0))(x, i).shape == (0, 2, 3)
