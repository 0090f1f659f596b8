"""shard_map and pmap over however many CPU devices this process has (test_multi_device.py
runs these with 1, 2, 4 and 8). The expected numbers are computed here with numpy from
what each device holds; they were checked against JAX 0.10.2 with forced host devices."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import Mesh, NamedSharding, PartitionSpec as P

N = jax.device_count()
MESH = Mesh(np.array(jax.devices()), ("x",))
K = 3  # elements per device-chunk


def _shmap(f, in_specs=P("x"), out_specs=P("x"), mesh=MESH, **kw):
    return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


def _blocks(x):
    """Each device's block of x split along its first axis."""
    return np.asarray(x).reshape(N, -1, *np.shape(x)[1:])


X = np.arange(N * N * K, dtype=np.float32) * 0.5 - 3.0


def test_each_device_computes_its_block():
    out = _shmap(lambda a: a * 2 + lax.axis_index("x"))(X)
    expected = _blocks(X) * 2 + np.arange(N)[:, None]
    np.testing.assert_array_equal(np.asarray(out), expected.reshape(-1))
    assert out.sharding == NamedSharding(MESH, P("x")) or N == 1
    for i, shard in enumerate(out.addressable_shards):
        np.testing.assert_array_equal(np.asarray(shard.data), expected[i])


@pytest.mark.parametrize("name, reduce", [("psum", np.sum), ("pmean", np.mean),
                                           ("pmax", np.max), ("pmin", np.min)])
def test_reductions_over_the_devices(name, reduce):
    out = _shmap(lambda a: getattr(lax, name)(a, "x"), out_specs=P(), check_vma=False)(X)
    np.testing.assert_allclose(np.asarray(out), reduce(_blocks(X), axis=0), rtol=1e-6)


def test_all_gather_tiled_and_stacked():
    tiled = _shmap(lambda a: lax.all_gather(a, "x", tiled=True), out_specs=P(),
                   check_vma=False)(X)
    np.testing.assert_array_equal(np.asarray(tiled), X)
    stacked = _shmap(lambda a: lax.all_gather(a, "x")[None], out_specs=P("x"))(X)
    # every device holds all blocks stacked: N copies of the (N, block) stack
    np.testing.assert_array_equal(np.asarray(stacked),
                                  np.broadcast_to(_blocks(X), (N, *_blocks(X).shape)))


def test_psum_scatter_all_to_all_ppermute():
    scattered = _shmap(lambda a: lax.psum_scatter(a, "x", tiled=True))(X)
    # device j keeps chunk j of the sum of every device's block
    np.testing.assert_allclose(np.asarray(scattered), _blocks(X).sum(0), rtol=1e-6)
    exchanged = _shmap(lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True))(X)
    # device j receives chunk j of every device's block, in device order
    chunks = X.reshape(N, N, K)
    np.testing.assert_array_equal(np.asarray(exchanged),
                                  chunks.transpose(1, 0, 2).reshape(-1))
    shift = [(i, (i + 1) % N) for i in range(N)]
    moved = _shmap(lambda a: lax.ppermute(a, "x", shift))(X)
    np.testing.assert_array_equal(np.asarray(moved), np.roll(_blocks(X), 1, axis=0).ravel())


def test_replicated_inputs_and_tiled_outputs():
    small = np.arange(4.0, dtype=np.float32)
    tiled = _shmap(lambda a: a + 1, in_specs=P(), out_specs=P("x"))(small)
    np.testing.assert_array_equal(np.asarray(tiled), np.tile(small + 1, N))
    first = _shmap(lambda a: a, out_specs=P(), check_vma=False)(X)
    np.testing.assert_array_equal(np.asarray(first), _blocks(X)[0])


@pytest.mark.skipif(N < 4, reason="a 2-d mesh needs 4 devices")
def test_two_axis_mesh():
    rows, cols = 2, N // 2
    mesh = Mesh(np.array(jax.devices()).reshape(rows, cols), ("x", "y"))
    x = np.arange(8.0 * N, dtype=np.float32).reshape(8, N)

    def body(a):
        where = (lax.axis_index("x") * 10 + lax.axis_index("y")).reshape(1, 1)
        return lax.psum(a, "y"), where, lax.pmax(a, ("x", "y"))
    summed, where, top = _shmap(body, mesh=mesh, in_specs=P("x", "y"),
                                out_specs=(P("x"), P("x", "y"), P()), check_vma=False)(x)
    blocks = x.reshape(rows, 8 // rows, cols, N // cols).transpose(0, 2, 1, 3)
    np.testing.assert_array_equal(np.asarray(summed), np.concatenate(blocks.sum(1)))
    np.testing.assert_array_equal(np.asarray(where),
                                  np.add.outer(np.arange(rows) * 10, np.arange(cols)))
    np.testing.assert_array_equal(np.asarray(top), blocks.max((0, 1)))
    assert summed.sharding == NamedSharding(mesh, P("x"))


def test_under_jit_and_grad():
    f = _shmap(lambda a: lax.psum(jnp.sin(a), "x"), out_specs=P(), check_vma=False)
    jitted = jax.jit(f)(X)
    np.testing.assert_allclose(np.asarray(jitted), np.sin(_blocks(X)).sum(0), rtol=1e-5)
    doubled = jax.jit(_shmap(lambda a: a * 2))(X)
    assert doubled.sharding == NamedSharding(MESH, P("x")) or N == 1
    loss = lambda a: _shmap(lambda b: lax.psum((b ** 2).sum(), "x"), out_specs=P(),
                            check_vma=False)(a)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(X)), 2 * X, rtol=1e-6)


def test_uneven_split_raises_jaxs_error():
    if N == 1:
        return
    with pytest.raises(ValueError) as error:
        _shmap(lambda a: a)(np.zeros(N + 1, np.float32))
    message = str(error.value)
    assert message.startswith(
        "shard_map applied to the function '<lambda>' was given argument arrays with axis "
        "sizes that are not evenly divisible by the corresponding mesh axis sizes:\n\n"
        f"The mesh given has shape ({N},) with corresponding axis names ('x',).\n\n"
        f"the passed args[0] of shape float32[{N + 1}], where args[0] is bound to "
        "<lambda>'s parameter 'a', corresponds to in_specs of value P('x',), which maps "
        f"array axis 0 (of size {N + 1}) to mesh axis 'x' (of size {N}), but {N} does not "
        f"evenly divide {N + 1}")


def test_pmap_over_the_devices():
    x = np.arange(N * 2.0, dtype=np.float32).reshape(N, 2)
    out = jax.pmap(lambda a: a * 2 + lax.axis_index("i"), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(out), x * 2 + np.arange(N)[:, None])
    mesh = Mesh(np.array(jax.devices()), ("i",))
    assert out.sharding == NamedSharding(mesh, P("i"))  # (one device too, as JAX 0.10.2)
    unnamed = jax.pmap(lambda a: a * 2)(x)  # JAX's mesh axis for a pmap without a name
    assert repr(unnamed.sharding.spec) == "P('_internal_pmap_axis_name',)"
    assert [s.index for s in out.addressable_shards] == (
        [(slice(i, i + 1), slice(None)) for i in range(N)] if N > 1
        else [(slice(None), slice(None))])
    total = jax.pmap(lambda a: lax.psum(a, "i"), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(total), np.broadcast_to(x.sum(0), (N, 2)))
    one = jax.pmap(lambda a: a, axis_name="i", out_axes=None)(x)
    np.testing.assert_array_equal(np.asarray(one), x[0])
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        jax.pmap(lambda a: a)(np.zeros((2 * N, 2), np.float32))


def test_smap_and_infer_over_the_context_mesh():
    mesh = jax.make_mesh((N,), ("i",), axis_types=(jax.sharding.AxisType.Explicit,))
    x = np.arange(2.0 * N, dtype=np.float32)
    with jax.set_mesh(mesh):
        y = jax.device_put(x, P("i"))
        z = jax.smap(lambda a: a * 2 + lax.axis_index("i"), in_axes=0, out_axes=0,
                     axis_name="i")(y)
        # Infer takes y's spec: each device adds its index to its own block
        w = jax.shard_map(lambda a: a + lax.axis_index("i"), out_specs=P("i"))(y)
    np.testing.assert_array_equal(np.asarray(z), x * 2 + np.repeat(np.arange(N), 2))
    np.testing.assert_array_equal(np.asarray(w), x + np.repeat(np.arange(N), 2))
    assert w.sharding == NamedSharding(mesh, P("i")) or N == 1


def test_data_parallel_training_matches_one_device():
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(3, 8)).astype(np.float32) * 0.5,
              "w2": rng.normal(size=(8, 1)).astype(np.float32) * 0.5}
    xs = rng.normal(size=(4 * N, 3)).astype(np.float32)
    ys = np.sin(xs.sum(1, keepdims=True))

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    @jax.jit
    def step_one_device(p, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        return value, jax.tree.map(lambda w, g: w - 0.1 * g, p, grads)

    def per_device(p, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        grads = lax.pmean(grads, "x")
        return lax.pmean(value, "x"), jax.tree.map(lambda w, g: w - 0.1 * g, p, grads)
    step_sharded = jax.jit(jax.shard_map(per_device, mesh=MESH, in_specs=(P(), P("x"), P("x")),
                                         out_specs=(P(), P()), check_vma=False))
    p1, p2 = params, params
    for _ in range(3):
        l1, p1 = step_one_device(p1, xs, ys)
        l2, p2 = step_sharded(p2, xs, ys)
        np.testing.assert_allclose(float(l2), float(l1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(p2["w1"]), np.asarray(p1["w1"]), rtol=1e-4,
                               atol=1e-6)
