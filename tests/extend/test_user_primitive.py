"""A library-defined primitive works under every transformation and on every backend.

The primitive is declared only through JAX's extension API (`jax.extend.core.Primitive`,
`def_impl`, `def_abstract_eval`, `ad.primitive_jvps`, `ad.primitive_transposes`,
`batching.primitive_batchers`, `mlir.register_lowering(p, mlir.lower_fun(...))`), as a
library would, and checked against numpy eagerly, under jit on the cpu and interpreter
backends, grad, vmap and their compositions.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.core.avals import ShapedArray
from jaxlite.extend.core import Primitive
from jaxlite.interpreters import ad, batching, mlir

# --------------------------------------------------------------------- multiply-add: x*y + z

madd_p = Primitive("multiply_add")


def madd(x, y, z):
    return madd_p.bind(x, y, z)


@madd_p.def_impl
def _madd_impl(x, y, z):
    return jnp.add(jnp.multiply(x, y), z)


@madd_p.def_abstract_eval
def _madd_abstract_eval(x, y, z):
    assert x.shape == y.shape == z.shape and x.dtype == y.dtype == z.dtype
    return ShapedArray(x.shape, x.dtype)


def _madd_jvp(primals, tangents):
    x, y, z = primals
    tx, ty, tz = tangents
    out = madd(x, y, z)
    t_out = ad.Zero.from_primal_value(out)
    # Each term is a madd linear in its first operand, so one transpose rule covers all.
    if type(tx) is not ad.Zero:
        t_out = ad.add_tangents(t_out, madd(tx, y, jnp.zeros_like(y)))
    if type(ty) is not ad.Zero:
        t_out = ad.add_tangents(t_out, madd(ty, x, jnp.zeros_like(x)))
    if type(tz) is not ad.Zero:
        t_out = ad.add_tangents(t_out, tz)
    return out, t_out


def _madd_transpose(ct, x, y, z):
    # Linear in x (with y known) and in z.
    assert not ad.is_undefined_primal(y)
    ct_x = madd(ct, y, jnp.zeros_like(y)) if ad.is_undefined_primal(x) else None
    ct_z = ct if ad.is_undefined_primal(z) else None
    return ct_x, None, ct_z


def _madd_batch(args, dims):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    return madd(*[batching.bdim_at_front(a, d, size) for a, d in zip(args, dims)]), 0


ad.primitive_jvps[madd_p] = _madd_jvp
ad.primitive_transposes[madd_p] = _madd_transpose
batching.primitive_batchers[madd_p] = _madd_batch
mlir.register_lowering(madd_p, mlir.lower_fun(_madd_impl, multiple_results=False))


def _loss(x, y, z):
    return jnp.sum(madd(x, y, z) ** 2)


def _loss_grads_np(x, y, z):
    r = 2 * (x * y + z)
    return r * y, r * x, r


arrays = st.integers(1, 5).flatmap(lambda n: st.tuples(*[
    st.lists(st.floats(-3, 3, width=32), min_size=n, max_size=n) for _ in range(3)]))


@given(arrays)
def test_eager_matches_numpy(xyz):
    x, y, z = (np.asarray(v, np.float32) for v in xyz)
    np.testing.assert_allclose(madd(x, y, z), x * y + z, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_jit_on_each_backend(backend):
    x, y, z = (np.arange(4, dtype=np.float32) + k for k in range(3))
    out = jax.jit(madd, backend=backend)(x, y, z)
    np.testing.assert_allclose(out, x * y + z, rtol=1e-6)
    grads = jax.jit(jax.grad(_loss, argnums=(0, 1, 2)), backend=backend)(x, y, z)
    for got, want in zip(grads, _loss_grads_np(x, y, z)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


@given(arrays)
def test_grad_matches_numpy(xyz):
    x, y, z = (np.asarray(v, np.float32) for v in xyz)
    grads = jax.grad(_loss, argnums=(0, 1, 2))(x, y, z)
    for got, want in zip(grads, _loss_grads_np(x, y, z)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_jvp_and_linearize():
    x, y, z = np.float32([1., 2.]), np.float32([3., 4.]), np.float32([.5, .5])
    tx, ty, tz = np.float32([1., 0.]), np.float32([0., 2.]), np.float32([1., 1.])
    out, t_out = jax.jvp(madd, (x, y, z), (tx, ty, tz))
    np.testing.assert_allclose(out, x * y + z)
    np.testing.assert_allclose(t_out, tx * y + x * ty + tz)
    _, f_jvp = jax.linearize(madd, x, y, z)
    np.testing.assert_allclose(f_jvp(tx, ty, tz), tx * y + x * ty + tz)


def test_vmap_with_mixed_axes():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.float32([1., 2., 3.])
    zs = np.ones((3, 2), np.float32)
    out = jax.vmap(madd, in_axes=(0, None, 1))(xs, y, zs)
    np.testing.assert_allclose(out, xs * y + zs.T)


def test_compositions():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    ys = np.ones((2, 3), np.float32) * 1.5
    zs = np.full((2, 3), -.25, np.float32)
    per_example = jax.jit(jax.vmap(jax.grad(_loss, argnums=(0, 1, 2))))(xs, ys, zs)
    for got, want in zip(per_example, _loss_grads_np(xs, ys, zs)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    batched_loss = lambda x, y, z: jnp.sum(jax.vmap(_loss)(x, y, z))  # noqa: E731
    grads = jax.grad(batched_loss, argnums=(0, 1, 2))(xs, ys, zs)
    for got, want in zip(grads, _loss_grads_np(xs, ys, zs)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # Second order: d2/dx2 sum((x*y+z)^2) = 2 y^2.
    hess = jax.grad(lambda x: jnp.sum(jax.grad(_loss)(x, ys[0], zs[0])))(xs[0])
    np.testing.assert_allclose(hess, 2 * ys[0] ** 2, rtol=1e-6)


def test_jaxpr_shows_the_primitive():
    x = np.ones(2, np.float32)
    text = str(jax.make_jaxpr(madd)(x, x, x))
    assert "multiply_add" in text


# ------------------------------------------------------------ several results, JAX helpers

divmod_p = Primitive("float_divmod")
divmod_p.multiple_results = True
divmod_p.def_impl(lambda x, y: (jnp.floor(x / y), x - y * jnp.floor(x / y)))
divmod_p.def_abstract_eval(lambda x, y: (x, x))
batching.defbroadcasting(divmod_p)
ad.primitive_jvps[divmod_p] = lambda p, t: (
    divmod_p.bind(*p),
    [ad.Zero.from_primal_value(p[0]),
     ad.add_tangents(ad.instantiate_zeros(t[0]),
                     -jnp.floor(p[0] / p[1]) * ad.instantiate_zeros(t[1]))])
mlir.register_lowering(divmod_p, mlir.lower_fun(divmod_p.impl, multiple_results=True))


def test_multiple_results_everywhere():
    x, y = np.float32([7., -7., 5.5]), np.float32([2., 2., 1.5])
    want_q, want_r = np.floor(x / y), x - y * np.floor(x / y)
    for fn in (divmod_p.bind, jax.jit(divmod_p.bind)):
        q, r = fn(x, y)
        np.testing.assert_allclose(q, want_q)
        np.testing.assert_allclose(r, want_r, rtol=1e-6)
    q, r = jax.vmap(divmod_p.bind, in_axes=(0, None))(np.stack([x, 2 * x]), y)
    np.testing.assert_allclose(r[1], 2 * x - y * np.floor(2 * x / y), rtol=1e-6)
    g = jax.grad(lambda y: jnp.sum(divmod_p.bind(x, y)[1]))(y)
    np.testing.assert_allclose(g, -np.floor(x / y))


cube_p = Primitive("cube")
cube_p.def_impl(lambda x: x * x * x)
cube_p.def_abstract_eval(lambda x: x)
ad.defjvp2(cube_p, lambda t, out, x: 3 * x * x * t)
batching.defvectorized(cube_p)
mlir.register_lowering(cube_p, mlir.lower_fun(lambda x: x * x * x, multiple_results=False))

scale_p = Primitive("scale_by")
scale_p.def_impl(lambda x, *, factor: x * factor)
scale_p.def_abstract_eval(lambda x, *, factor: x)
ad.deflinear2(scale_p, lambda ct, x, *, factor: [ct * factor])
batching.defvectorized(scale_p)

outer_p = Primitive("outer_product")
outer_p.def_impl(lambda x, y: x[:, None] * y[None, :])
outer_p.def_abstract_eval(lambda x, y: ShapedArray(x.shape + y.shape, x.dtype))
ad.defbilinear(outer_p, lambda ct, x, y: ct @ y, lambda ct, x, y: x @ ct)

rowsum_p = Primitive("row_sum")
rowsum_p.def_impl(lambda x, *, axes: jnp.sum(x, axis=axes))
rowsum_p.def_abstract_eval(lambda x, *, axes: ShapedArray(
    tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype))
batching.defreducer(rowsum_p)


def test_jax_rule_helpers():
    x = np.float32([1., 2., -3.])
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(cube_p.bind(x)))(x), 3 * x * x)
    np.testing.assert_allclose(jax.vmap(cube_p.bind)(np.stack([x, x])), np.stack([x, x]) ** 3)
    np.testing.assert_allclose(jax.jit(cube_p.bind)(x), x ** 3)
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(scale_p.bind(x, factor=3.)))(x),
                               [3., 3., 3.])
    y = np.float32([1., -1.])
    gx, gy = jax.grad(lambda x, y: jnp.sum(outer_p.bind(x, y) ** 2), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 2 * x * np.sum(y ** 2), rtol=1e-6)
    np.testing.assert_allclose(gy, 2 * y * np.sum(x ** 2), rtol=1e-6)
    m = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = jax.vmap(lambda a: rowsum_p.bind(a, axes=(1,)), in_axes=1)(m)
    np.testing.assert_allclose(out, m.sum(axis=2).T)


# -------------------------------------------------------------------- the tables are views

def test_tables_view_jaxlite_rules():
    from jaxlite import lax
    assert lax.sin_p in ad.primitive_jvps and lax.neg_p in ad.primitive_transposes
    assert lax.sin_p in batching.primitive_batchers
    assert madd_p in ad.primitive_jvps and madd_p in list(ad.primitive_jvps)
    assert lax.sin_p not in ad.primitive_transposes
    assert ad.primitive_jvps[madd_p] is _madd_jvp
    assert batching.primitive_batchers[madd_p] is _madd_batch
    # Read in JAX's conventions: the rules of jaxlite's own primitives work as JAX's.
    x = np.float32([0.5, 1.0])
    out, t = ad.primitive_jvps[lax.sin_p]((x,), (np.ones(2, np.float32),))
    np.testing.assert_allclose(t, np.cos(x), rtol=1e-6)
    out, dim = batching.primitive_batchers[lax.sin_p]([np.ones((2, 3), np.float32)], [1])
    assert dim == 1 and out.shape == (2, 3)
    out, dim = batching.fancy_primitive_batchers[lax.sin_p](
        batching.AxisData(None, 3), [np.ones((2, 3), np.float32)], [1])
    assert dim == 1
    (ct,) = ad.get_primitive_transpose(lax.neg_p)(np.float32(2.), ad.UndefinedPrimal(
        ShapedArray((), np.dtype(np.float32))))
    assert float(ct) == -2.0
    with pytest.raises(NotImplementedError, match="Transpose rule"):
        ad.get_primitive_transpose(lax.sin_p)


def test_deleting_a_rule_removes_it():
    p = Primitive("temporary")
    p.def_abstract_eval(lambda x: x)
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(*args), dims[0])
    assert p in batching.axis_primitive_batchers
    del batching.primitive_batchers[p]
    assert p not in batching.fancy_primitive_batchers
    with pytest.raises(NotImplementedError, match="temporary"):
        jax.vmap(p.bind)(np.ones(3, np.float32))


def test_library_primitives_may_share_names():
    a, b = Primitive("shared_name"), Primitive("shared_name")
    assert a is not b and a.name == b.name


def test_missing_lowering_is_a_clear_error():
    p = Primitive("no_lowering")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda x: x)
    assert float(p.bind(1.)) == 2.0
    with pytest.raises(NotImplementedError, match="no_lowering"):
        jax.jit(p.bind)(1.)


def test_mlir_only_names_say_so():
    with pytest.raises(NotImplementedError, match="MLIR"):
        mlir.ir_constant(1)
    with pytest.raises(NotImplementedError, match="MLIR"):
        mlir.module_to_string(None)
