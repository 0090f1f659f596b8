"""`jaxlite.sharding` with single-device semantics, against what JAX 0.10.2 prints and
returns on a one-CPU machine."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec,
                              SingleDeviceSharding)

P = PartitionSpec


def test_default_array_placement():
    x = jnp.ones((4, 2))
    cpu = jax.devices()[0]
    assert x.sharding == SingleDeviceSharding(cpu)
    assert repr(x.sharding) == f"SingleDeviceSharding(device={cpu!r}, memory_kind=device)"
    assert x.sharding.device_set == {cpu} and x.sharding.is_fully_replicated
    assert not x.committed and x.is_fully_replicated and x.is_fully_addressable
    (shard,) = x.addressable_shards
    assert shard.device == cpu and shard.index == (slice(None), slice(None))
    np.testing.assert_array_equal(shard.data, x)


def test_partition_spec_as_jax():
    assert repr(P("x")) == "P('x',)" and repr(P("x", None)) == "P('x', None)"
    assert repr(P()) == "P()" and repr(P(("x", "y"))) == "P(('x', 'y'),)"
    assert P("x") == P("x") and hash(P("x")) == hash(P("x")) and P(None) != P()
    assert list(P("x", None)) == ["x", None] and len(P("x", "y")) == 2
    assert P("x")[0] == "x" and P("x").unreduced == frozenset()


def test_make_mesh_and_named_sharding():
    mesh = jax.make_mesh((1,), ("x",))
    assert repr(mesh) == "Mesh(axis_sizes=(1,), axis_names=('x',), axis_types=(Explicit,))"
    assert str(mesh) == "Mesh('x': 1, axis_types=(Explicit,))"
    assert dict(mesh.shape) == {"x": 1} and mesh.axis_names == ("x",) and mesh.size == 1
    assert mesh.axis_types == (AxisType.Explicit,)
    assert list(mesh.devices.flat) == jax.devices()
    with pytest.raises(ValueError, match=r"Number of devices 1 must be >= the product of "
                                         r"mesh_shape \(2,\)"):
        jax.make_mesh((2,), ("x",))
    sharding = NamedSharding(mesh, P("x"))
    assert repr(sharding) == ("NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), "
                              "spec=P('x',), memory_kind=device)")
    assert sharding.num_devices == 1 and sharding.shard_shape((4, 2)) == (4, 2)
    with pytest.raises(ValueError, match="Resource axis: z of P\\('z',\\) is not found"):
        NamedSharding(mesh, P("z"))
    assert str(Mesh(np.array(jax.devices()), ("a",))) == "Mesh('a': 1, axis_types=(Auto,))"
    assert repr(AbstractMesh((2,), ("x",))) == "AbstractMesh('x': 2, axis_types=(Auto,))"


def test_device_put_with_shardings_and_specs():
    mesh = jax.make_mesh((1,), ("x",))
    sharding = NamedSharding(mesh, P("x"))
    x = jnp.arange(8.0).reshape(4, 2)
    y = jax.device_put(x, sharding)
    assert y.sharding == sharding and y.committed
    np.testing.assert_array_equal(y, x)
    tree = jax.device_put({"a": x, "b": np.ones(2)}, {"a": sharding, "b": None})
    assert tree["a"].sharding == sharding and not tree["b"].committed
    with pytest.raises(ValueError, match="no mesh is set"):
        jax.device_put(x, P("x"))
    with jax.set_mesh(mesh):
        assert jax.device_put(x, P("x", None)).sharding == NamedSharding(mesh, P("x", None))
        assert jax.sharding.get_abstract_mesh() == mesh.abstract_mesh
    assert jax.sharding.get_abstract_mesh().empty
    with pytest.raises(ValueError, match="only valid for values of rank at least 2"):
        jax.device_put(jnp.ones(3), NamedSharding(mesh, P("x", None)))
    assert jax.reshard(y, NamedSharding(mesh, P())).sharding.spec == P()


def test_jit_in_and_out_shardings():
    mesh = jax.make_mesh((1,), ("x",))
    sharding = NamedSharding(mesh, P("x"))
    x = jnp.ones((4, 2))
    out = jax.jit(lambda a: a * 2, in_shardings=sharding, out_shardings=sharding)(x)
    assert out.sharding == sharding
    np.testing.assert_array_equal(out, 2 * np.ones((4, 2)))
    single = SingleDeviceSharding(jax.devices()[0])
    assert jax.jit(lambda a: a + 1, out_shardings=single)(x).sharding == single
    grads = jax.grad(jax.jit(lambda a: (a * 2).sum(), in_shardings=sharding))(x)
    np.testing.assert_array_equal(grads, 2 * np.ones((4, 2)))
    with pytest.raises(ValueError, match="in_shardings has 1 entries for 2"):
        jax.jit(lambda a, b: a + b, in_shardings=(sharding,))(x, x)


def test_device_put_of_typed_keys_keeps_them():
    key = jax.random.key(0)
    assert jax.device_put(key) is key
    keys = jax.device_put(jax.random.split(key), jax.devices()[0])
    assert keys.shape == (2,) and jnp.issubdtype(keys.dtype, jax.dtypes.prng_key)
    np.testing.assert_array_equal(jax.random.key_data(jax.jit(jax.device_put)(key)),
                                  jax.random.key_data(key))


def test_out_shardings_pass_none_outputs_through():
    single = SingleDeviceSharding(jax.devices()[0])
    out = jax.jit(lambda x: (x, None), out_shardings=(single, None))(jnp.ones(2))
    assert out[1] is None and out[0].sharding == single
    tree = jax.device_put({"a": jnp.ones(2), "b": None}, {"a": single, "b": None})
    assert tree["b"] is None and tree["a"].committed


def test_a_spec_names_each_mesh_axis_once():
    mesh = jax.make_mesh((1,), ("x",))
    for spec in (PartitionSpec("x", "x"), PartitionSpec(("x",), None, "x")):
        with pytest.raises(Exception, match="has duplicate entries for `x`") as info:
            NamedSharding(mesh, spec)
        assert type(info.value).__name__ == "DuplicateSpecError"


def test_devices_print_as_platform_and_id():
    device = jax.devices()[0]
    assert (str(device), repr(device)) == ("cpu:0", "CpuDevice(id=0)")


def test_shaped_arrays_carry_the_unsharded_sharding_of_their_rank():
    # JAX 0.10.2 prints NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None, None))
    aval = jax.core.ShapedArray((2, 3), jnp.float32)
    assert aval.sharding.spec == PartitionSpec(None, None)
    assert aval.sharding.mesh.empty and aval.sharding.mesh.axis_names == ()
    assert aval.update(shape=(4,)).sharding.spec == PartitionSpec(None)
    seen = []
    jax.jit(lambda x: seen.append(jax.typeof(x).sharding) or x)(jnp.ones(3))
    assert seen[0].spec == PartitionSpec(None) and seen[0] == jax.typeof(jnp.ones(3)).sharding
    assert repr(aval.sharding) == ("NamedSharding(mesh=AbstractMesh((), axis_types=()), "
                                   "spec=P(None, None))")
