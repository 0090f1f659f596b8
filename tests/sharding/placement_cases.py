"""Devices, meshes, shardings and placed arrays on however many CPU devices this process
has (test_multi_device.py runs these with 1, 2, 4 and 8). Expected values are numpy's;
the reprs, indices and messages are JAX 0.10.2's (checked with forced host devices)."""
import contextlib
import io
import sys
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

sys.path.insert(0, str(Path(__file__).parent))
import views  # noqa: E402

N = jax.device_count()


def test_devices_and_their_names():
    devices = jax.devices()
    assert [d.id for d in devices] == list(range(N))
    assert repr(devices) == "[" + ", ".join(f"CpuDevice(id={i})" for i in range(N)) + "]"
    assert str(devices[-1]) == f"cpu:{N - 1}" and devices[-1].platform == "cpu"
    assert jax.local_devices() == devices and jax.local_device_count() == N
    with pytest.raises(RuntimeError, match="before backends are initialized"):
        jax.config.update("jax_num_cpu_devices", N + 1)


def test_meshes():
    mesh = jax.make_mesh((N,), ("x",))
    assert repr(mesh) == f"Mesh(axis_sizes=({N},), axis_names=('x',), axis_types=(Explicit,))"
    assert str(mesh) == f"Mesh('x': {N}, axis_types=(Explicit,))"
    assert mesh.device_ids.tolist() == list(range(N))
    with pytest.raises(ValueError) as error:
        jax.make_mesh((N + 1,), ("x",))
    assert str(error.value) == f"Number of devices {N} must be >= the product of " \
                               f"mesh_shape ({N + 1},)"
    if N >= 4:
        grid = jax.make_mesh((2, N // 2), ("a", "b"))
        assert grid.devices.shape == (2, N // 2)
        assert grid.device_ids.tolist() == np.arange(N).reshape(2, N // 2).tolist()


def _blocks_cover(array, value):
    """Each shard holds its block of `value`, on its own device, in a buffer of its own."""
    shards = array.addressable_shards
    assert [s.device for s in shards] == list(array.sharding._device_assignment)
    for shard in shards:
        np.testing.assert_array_equal(np.asarray(shard.data), value[shard.index])
        assert shard.data.committed
        # (on one device JAX's shard holds the array itself, with its sharding)
        assert shard.data.sharding == (array.sharding if len(shards) == 1
                                       else SingleDeviceSharding(shard.device))
    for a in shards:
        for b in shards:
            if a is not b:
                assert not np.shares_memory(np.asarray(a.data), np.asarray(b.data))
    np.testing.assert_array_equal(np.asarray(array), value)


def test_device_put_splits_over_a_mesh():
    value = np.arange(8.0 * N * 3, dtype=np.float32).reshape(2 * N, 4, 3)
    mesh = Mesh(np.array(jax.devices()), ("x",))
    for spec in [P("x"), P(None), P(), P(None, None, None)]:
        x = jax.device_put(value, NamedSharding(mesh, spec))
        _blocks_cover(x, value)
        assert x.committed and x.devices() == set(jax.devices())
        assert x.is_fully_replicated == (spec != P("x") or N == 1)
    x = jax.device_put(value, NamedSharding(mesh, P("x")))
    rows = 2 * N // N
    blocks = [slice(rows * i, rows * (i + 1)) if N > 1 else slice(None) for i in range(N)]
    assert [s.index for s in x.addressable_shards] == [
        (block, slice(None), slice(None)) for block in blocks]
    assert x.addressable_shards[0].data.shape == (rows, 4, 3)
    replicated = jax.device_put(value, NamedSharding(mesh, P()))
    assert [s.replica_id for s in replicated.addressable_shards] == list(range(N))


@pytest.mark.skipif(N < 4, reason="a 2-d mesh needs 4 devices")
def test_two_axis_mesh_indices_and_replicas():
    devices = np.array(jax.devices())[::-1].reshape(2, N // 2)
    mesh = Mesh(devices, ("x", "y"))
    value = np.arange(4.0 * N).reshape(4, N)
    x = jax.device_put(value, NamedSharding(mesh, P(None, "x")))
    _blocks_cover(x, value)
    half = N // 2
    expected = [(d.id, (slice(None), slice(0, half) if i < half else slice(half, N)),
                 i % half) for i, d in enumerate(devices.flat)]
    assert [(s.device.id, s.index, s.replica_id) for s in x.addressable_shards] == expected
    both = jax.device_put(value.T, NamedSharding(mesh, P(("x", "y"))))
    assert [s.index[0] for s in both.addressable_shards] == [slice(i, i + 1) for i in range(N)]
    assert not both.is_fully_replicated and both.sharding.shard_shape((N, 4)) == (1, 4)


def test_device_put_on_one_device():
    value = np.arange(6.0, dtype=np.float32)
    last = jax.devices()[-1]
    x = jax.device_put(value, last)
    assert x.committed and x.device == last and x.devices() == {last}
    assert x.sharding == SingleDeviceSharding(last)
    assert repr(x.sharding) == f"SingleDeviceSharding(device=CpuDevice(id={N - 1}), " \
                               "memory_kind=device)"
    (shard,) = x.addressable_shards
    assert shard.device == last and shard.index == (slice(None),)
    assert not jnp.arange(3.0).committed and jnp.arange(3.0).device == jax.devices()[0]


def test_sharding_errors():
    mesh = Mesh(np.array(jax.devices()), ("x",))
    odd = NamedSharding(mesh, P("x"))
    if N > 1:
        with pytest.raises(ValueError) as error:
            jax.device_put(np.zeros(2 * N + 1), odd)
        assert type(error.value).__name__ == "IndivisibleError"
        assert str(error.value) == (
            f"Sharding {odd!r} implies that array axis 0 is partitioned {N} times, but the "
            f"dimension size is {2 * N + 1} (full shape: ({2 * N + 1},), per-dimension tiling "
            f"factors: [{N}] should evenly divide the shape)")
    wide = NamedSharding(mesh, P("x", None))
    with pytest.raises(ValueError) as error:
        jax.device_put(np.zeros(N), wide)
    assert str(error.value) == (
        f"One of device_put args is incompatible with its sharding annotation {wide!r}: "
        f"Sharding {wide!r} is only valid for values of rank at least 2, but was applied to "
        "a value of rank 1.")
    with pytest.raises(ValueError, match="Resource axis: z of P\\('z',\\) is not found"):
        NamedSharding(mesh, P("z"))


def test_results_are_placed_as_jax_places_them():
    mesh = Mesh(np.array(jax.devices()), ("x",))
    value = np.arange(2.0 * N * 4, dtype=np.float32).reshape(2 * N, 4)
    x = jax.device_put(value, NamedSharding(mesh, P("x")))
    cases = [(x + 1, value + 1, P("x")), (jnp.sin(x), np.sin(value), P("x")),
             (x.sum(1), value.sum(1), P("x")), (x.sum(0), value.sum(0), P()),
             (x.T, value.T, P(None, "x")), (x @ x.T, value @ value.T, None),
             (jax.jit(lambda a: a * 2)(x), value * 2, P("x")),
             (jax.jit(lambda a: jnp.exp(a).sum(1))(x), np.exp(value).sum(1), P("x"))]
    for result, expected, spec in cases:
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-6)
        assert result.committed
        if spec is not None:
            assert result.sharding == NamedSharding(mesh, spec)
        _blocks_cover(result, np.asarray(result))
    last = jax.devices()[-1]
    y = jax.device_put(value, last)
    for result in [y + 1, y + jnp.asarray(value), jax.jit(jnp.cos)(y)]:
        assert result.sharding == SingleDeviceSharding(last) and result.committed
    assert not (jnp.asarray(value) + 1).committed
    if N > 1:
        with pytest.raises(ValueError) as error:
            x + y
        assert str(error.value).startswith(
            "Received incompatible devices for jitted computation. Got argument ")
        assert f"with device ids {list(range(N))} on platform CPU" in str(error.value)
        assert f"with device ids [{N - 1}] on platform CPU" in str(error.value)


def test_visualize_array_sharding_as_jax_draws_it():
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        views.draw(jax)
    expected = (Path(__file__).parent / "data" / f"views_{N}.txt").read_text()
    assert printed.getvalue() == expected


def test_jit_in_and_out_shardings_place():
    mesh = Mesh(np.array(jax.devices()), ("x",))
    split, whole = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
    value = np.arange(2.0 * N, dtype=np.float32)
    f = jax.jit(lambda a, b: (a * 2, a.sum(), b), in_shardings=(split, None))
    doubled, total, same = f(value, 3.0)
    np.testing.assert_array_equal(np.asarray(doubled), value * 2)
    assert float(total) == value.sum() and float(same) == 3.0
    assert [r.sharding for r in (doubled, total, same)] == [split, whole, whole]
    g = jax.jit(lambda a: a + 1, out_shardings=whole)
    assert g(value).sharding == whole and g(value).committed
    h = jax.jit(lambda a: a + 1, in_shardings=split)
    if N == 1:  # the same placement on one device: accepted, as by JAX
        np.testing.assert_array_equal(np.asarray(h(jax.device_put(value, whole))), value + 1)
        return
    with pytest.raises(ValueError) as error:
        h(jax.device_put(value, whole))
    assert str(error.value) == (
        "Sharding passed to jit does not match the sharding on the respective arg. Got jit "
        f"sharding: {split},\narg sharding: {whole} for arg type: float32[{2 * N}]")


def test_deleting_a_placed_array_deletes_its_blocks():
    mesh = Mesh(np.array(jax.devices()), ("x",))
    x = jax.device_put(np.arange(2.0 * N), NamedSharding(mesh, P("x")))
    shards = x.addressable_shards
    x.delete()
    assert x.is_deleted() and all(s.data.is_deleted() or N == 1 for s in shards)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x)


def test_propagated_specs_of_common_operations():
    # Each spec is the one JAX 0.10.2 gives on 4 forced host devices (an Auto mesh).
    mesh = Mesh(np.array(jax.devices()), ("x",))
    value = np.arange(8.0 * N, dtype=np.float32).reshape(2 * N, 4)
    x = jax.device_put(value, NamedSharding(mesh, P("x")))
    cases = [(x[0], value[0], P()), (x[:, 1], value[:, 1], P("x")),
             (x.reshape(-1), value.reshape(-1), P("x")),
             (jax.nn.softmax(x), np.exp(value) / np.exp(value).sum(1, keepdims=True), P("x")),
             (x[None], value[None], P(None, "x")),
             (jnp.concatenate([x, x], 1), np.concatenate([value, value], 1), P("x")),
             (x @ jnp.ones((4, 3)), value @ np.ones((4, 3)), P("x")),
             (jnp.cumsum(x, 0), np.cumsum(value, 0), P("x")), (x[1:], value[1:], P())]
    for result, expected, spec in cases:
        np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5)
        if N > 1:  # (on one device JAX's specs vary; all mean the whole array)
            assert result.sharding == NamedSharding(mesh, spec), (result.sharding, spec)


def test_repeated_jit_calls_keep_placing():
    # The second call takes jit's call plan, which must place as the first did.
    mesh = Mesh(np.array(jax.devices()), ("x",))
    value = np.arange(2.0 * N, dtype=np.float32)
    split = NamedSharding(mesh, P("x"))
    f = jax.jit(lambda a, b: a * b)
    x = jax.device_put(value, split)
    last = jax.device_put(value, jax.devices()[-1])
    for _ in range(3):
        assert f(x, x).sharding == split
        assert f(last, last).sharding == SingleDeviceSharding(jax.devices()[-1])
        assert not f(value, value).committed
    if N > 1:
        with pytest.raises(ValueError, match="Received incompatible devices"):
            f(x, last)


def test_jit_device_commits_results_there():
    last = jax.devices()[-1]
    f = jax.jit(lambda a: a + 1, device=last)
    for _ in range(2):  # the general path, then the call plan
        result = f(jnp.ones(3))
        assert result.sharding == SingleDeviceSharding(last) and result.committed
        np.testing.assert_array_equal(np.asarray(result), np.full(3, 2.0))
