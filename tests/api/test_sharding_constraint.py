"""lax.with_sharding_constraint and lax.sharding_constraint_p on one device.

Expected behaviour recorded from JAX 0.10.2 (/tmp/jaxvenv/bin/python, one CPU device) for
the same calls: the messages and exception types below, the primitive's parameters in
jaxprs, the batched spec (the mapped dimension UNCONSTRAINED) and the values of grad.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import (AxisType, NamedSharding, PartitionSpec as P,
                              SingleDeviceSharding)

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


@pytest.fixture
def auto_mesh():
    return jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))


@pytest.fixture
def explicit_mesh():
    return jax.make_mesh((1,), ("x",))


def _eqns(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive is lax.sharding_constraint_p]


def test_primitive_is_a_single_result_primitive():
    assert lax.sharding_constraint_p.name == "sharding_constraint"
    assert not lax.sharding_constraint_p.multiple_results


def test_identity_under_eager_jit_vmap_grad(auto_mesh):
    s = NamedSharding(auto_mesh, P("x"))
    f = lambda a: lax.with_sharding_constraint(a, s)
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(f(x)), X)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), X)
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(x)), X)
    grad = jax.grad(lambda a: jnp.sum(f(a) ** 2))(x)
    np.testing.assert_array_equal(np.asarray(grad), 2 * X)
    (transposed,) = jax.linear_transpose(f, x)(x)
    np.testing.assert_array_equal(np.asarray(transposed), X)
    primal, tangent = jax.jvp(f, (x,), (2 * x,))
    np.testing.assert_array_equal(np.asarray(tangent), 2 * X)
    assert f(x).sharding == s  # eager results are committed, as JAX's


def test_jaxpr_parameters_as_jax(auto_mesh):
    s = NamedSharding(auto_mesh, P("x"))
    (eqn,) = _eqns(jax.make_jaxpr(lambda a: lax.with_sharding_constraint(a, s))(X))
    assert eqn.params["sharding"] == s and eqn.params["layout"] is None
    assert eqn.params["unconstrained_dims"] == frozenset()
    # the transpose constrains the cotangent in the same way: two equations under grad
    closed = jax.make_jaxpr(jax.grad(
        lambda a: jnp.sum(lax.with_sharding_constraint(a, s) ** 2)))(X)
    assert len(_eqns(closed)) == 2


@pytest.mark.parametrize("in_axes,spec,dims", [(0, P(P.UNCONSTRAINED, None), {0}),
                                               (1, P("x", P.UNCONSTRAINED), {1})])
def test_vmap_leaves_the_mapped_dimension_unconstrained(auto_mesh, in_axes, spec, dims):
    s = NamedSharding(auto_mesh, P("x"))
    closed = jax.make_jaxpr(jax.vmap(lambda a: lax.with_sharding_constraint(a, s),
                                     in_axes=in_axes))(X)
    (eqn,) = _eqns(closed)
    assert eqn.params["sharding"].spec == spec
    assert eqn.params["unconstrained_dims"] == frozenset(dims)


def test_pytree_prefix_and_single_device_sharding(auto_mesh):
    x = jnp.asarray(X)
    out = lax.with_sharding_constraint({"a": x, "b": (x, 2 * x)}, NamedSharding(auto_mesh, P()))
    np.testing.assert_array_equal(np.asarray(out["b"][1]), 2 * X)
    out = lax.with_sharding_constraint(x, SingleDeviceSharding(jax.devices()[0]))
    assert out.sharding == SingleDeviceSharding(jax.devices()[0])
    assert float(lax.with_sharding_constraint(3.0, NamedSharding(auto_mesh, P()))) == 3.0


def test_bare_spec_under_a_mesh(auto_mesh):
    with jax.set_mesh(auto_mesh):
        closed = jax.make_jaxpr(lambda a: lax.with_sharding_constraint(a, P("x")))(X)
        (eqn,) = _eqns(closed)
        assert eqn.params["sharding"].spec == P("x")
        np.testing.assert_array_equal(
            np.asarray(jax.jit(lambda a: lax.with_sharding_constraint(a, P("x")) * 2)(X)),
            2 * X)
        # JAX: an uncommitted concrete array has no NamedSharding to place the spec by
        with pytest.raises(TypeError, match="The sharding on the input must be a "
                                            "`NamedSharding`"):
            lax.with_sharding_constraint(jnp.asarray(X), P("x"))


def test_bare_spec_without_mesh_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="requires a non-empty mesh in context"):
        lax.with_sharding_constraint(jnp.asarray(X), P("x"))


@pytest.mark.parametrize("value,spec,message", [
    (X, P("x", None, None), "is only valid for values of rank at least 3, but was applied "
                            "to a value of rank 2."),
    (3.0, P("x"), "rank 0. For scalars the PartitionSpec should be P()"),
])
def test_rank_errors_as_jax(auto_mesh, value, spec, message):
    with pytest.raises(ValueError, match="One of with_sharding_constraint arguments is "
                                         "incompatible with its sharding annotation") as info:
        lax.with_sharding_constraint(value, NamedSharding(auto_mesh, spec))
    assert str(info.value).endswith(message)


def test_leaf_and_structure_errors_as_jax(auto_mesh):
    x = jnp.asarray(X)
    with pytest.raises(ValueError, match="got sharding None which is not allowed"):
        lax.with_sharding_constraint(x, None)
    with pytest.raises(TypeError, match="expected to be PartitionSpec instances or None, "
                                        "but got 3"):
        lax.with_sharding_constraint(x, 3)
    with pytest.raises(ValueError, match="must be a tree prefix of the corresponding value"):
        lax.with_sharding_constraint([x, x], [NamedSharding(auto_mesh, P())])
    with pytest.raises(ValueError, match="Resource axis: y of P\\('y',\\) is not found in "
                                         "mesh: \\('x',\\)"):
        lax.with_sharding_constraint(x, NamedSharding(auto_mesh, P("y")))


def test_explicit_axes_outside_a_mesh_context(explicit_mesh):
    with pytest.raises(ValueError, match="can only refer to Auto axes of the mesh"):
        lax.with_sharding_constraint(jnp.asarray(X), NamedSharding(explicit_mesh, P("x")))


def test_explicit_mesh_context_asserts(explicit_mesh):
    x = jnp.asarray(X)
    with jax.set_mesh(explicit_mesh):
        assert lax.with_sharding_constraint(x, P()) is x
        closed = jax.make_jaxpr(lambda a: lax.with_sharding_constraint(a, P()))(X)
        assert not closed.jaxpr.eqns  # JAX: `{ lambda ; a. let  in (a,) }`
        y = jax.device_put(x, P("x"))
        assert lax.with_sharding_constraint(y, P("x")) is y
        with pytest.raises(AssertionError, match="The array sharding: P\\('x', None\\) did "
                                                 "not match the sharding provided: "
                                                 "P\\(None, None\\)"):
            lax.with_sharding_constraint(y, P())
