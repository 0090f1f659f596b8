"""Training an MLP with its parameters and data placed over all devices, the way JAX users
split models: data-parallel, tensor-parallel (Megatron: first layer split by columns, second
by rows) and FSDP (parameters split over the data axis). jit partitions each step into one
program per device (runtime/spmd_call.py); the losses and parameters must equal those of the
same steps on one device (float32 tolerance: the partial sums meet in another order).

Run by test_multi_device.py on 1, 2, 4 and 8 devices (JAXLITE_NUM_CPU_DEVICES).
"""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.runtime import spmd_call
from jaxlite.sharding import Mesh, NamedSharding, PartitionSpec as P

COUNT = jax.device_count()
# The partitioner's failures are warnings to users (the call falls back to global values);
# here they fail the test.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
STEPS = 3
RTOL, ATOL = 2e-5, 2e-6  # float32 sums over 16-64 terms met in another order


def _mesh(*names):
    if len(names) == 1:
        return Mesh(np.array(jax.devices()), names)
    rows = 2 if COUNT >= 4 else 1
    return Mesh(np.array(jax.devices()).reshape(rows, COUNT // rows), names)


def _problem(batch=32, d_in=16, hidden=32, d_out=8, seed=0):
    rng = np.random.default_rng(seed)
    params = {
        "w1": rng.normal(size=(d_in, hidden)).astype(np.float32) / 4,
        "b1": rng.normal(size=(hidden,)).astype(np.float32) / 10,
        "w2": rng.normal(size=(hidden, d_out)).astype(np.float32) / 6,
        "b2": rng.normal(size=(d_out,)).astype(np.float32) / 10,
    }
    x = rng.normal(size=(batch, d_in)).astype(np.float32)
    y = rng.normal(size=(batch, d_out)).astype(np.float32)
    return params, x, y


def _loss(params, x, y):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return jnp.mean((out - y) ** 2)


@jax.jit
def _step(params, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss


def _train(params, x, y):
    losses = []
    for _ in range(STEPS):
        params, loss = _step(params, x, y)
        losses.append(float(loss))
    return params, losses


def _reference():
    params, x, y = _problem()
    params = jax.tree.map(jnp.asarray, params)
    return _train(params, jnp.asarray(x), jnp.asarray(y))


def _check_against_one_device(params, losses):
    want_params, want_losses = _reference()
    np.testing.assert_allclose(losses, want_losses, rtol=RTOL, atol=ATOL)
    for name in want_params:
        np.testing.assert_allclose(np.asarray(params[name]), np.asarray(want_params[name]),
                                   rtol=RTOL, atol=ATOL, err_msg=name)


def _placed(tree, mesh, specs):
    return {k: jax.device_put(v, NamedSharding(mesh, specs[k])) for k, v in tree.items()}


def _partitioned_calls():
    return [call for calls in spmd_call._CALLS.values() for call in calls.values()
            if call is not None]


def _collectives(call):
    text = call.module_text()
    return {kind: text.count(f" {kind}(") for kind in
            ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
             "collective-permute")}


@pytest.fixture(autouse=True)
def _fresh():
    spmd_call._CALLS.clear()
    _step.clear_cache()


def test_data_parallel_training_matches_one_device():
    mesh = _mesh("data")
    params, x, y = _problem()
    params = _placed(params, mesh, {k: P() for k in params})
    x = jax.device_put(x, NamedSharding(mesh, P("data")))
    y = jax.device_put(y, NamedSharding(mesh, P("data")))
    new, losses = _train(params, x, y)
    _check_against_one_device(new, losses)
    assert new["w1"].sharding == NamedSharding(mesh, P())
    if COUNT > 1:
        (call,) = _partitioned_calls()
        counts = _collectives(call)
        assert counts["all-reduce"] >= 1  # the gradients are summed over the batch shards


def test_tensor_parallel_training_matches_one_device():
    mesh = _mesh("model")
    params, x, y = _problem()
    specs = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None), "b2": P()}
    params = _placed(params, mesh, specs)
    new, losses = _train(params, jnp.asarray(x), jnp.asarray(y))
    _check_against_one_device(new, losses)
    for name, spec in specs.items():
        assert new[name].sharding.is_equivalent_to(NamedSharding(mesh, spec),
                                                   new[name].ndim), name
    if COUNT > 1:
        (call,) = _partitioned_calls()
        assert _collectives(call)["all-reduce"] >= 1


def test_fsdp_training_matches_one_device():
    mesh = _mesh("data")
    params, x, y = _problem()
    specs = {"w1": P("data", None), "b1": P(), "w2": P("data", None), "b2": P()}
    params = _placed(params, mesh, specs)
    x = jax.device_put(x, NamedSharding(mesh, P("data")))
    y = jax.device_put(y, NamedSharding(mesh, P("data")))
    new, losses = _train(params, x, y)
    _check_against_one_device(new, losses)
    if COUNT > 1:
        (call,) = _partitioned_calls()
        assert _collectives(call)["all-gather"] >= 1  # weights gathered per layer


def test_two_axis_mesh_data_and_model_parallel():
    mesh = _mesh("data", "model")
    params, x, y = _problem()
    specs = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None), "b2": P()}
    params = _placed(params, mesh, specs)
    x = jax.device_put(x, NamedSharding(mesh, P("data")))
    y = jax.device_put(y, NamedSharding(mesh, P("data")))
    new, losses = _train(params, x, y)
    _check_against_one_device(new, losses)


def test_results_keep_each_device_block():
    mesh = _mesh("data")
    x = jax.device_put(np.arange(8 * COUNT * 3, dtype=np.float32).reshape(8 * COUNT, 3),
                       NamedSharding(mesh, P("data")))
    y = jax.jit(lambda a: jnp.sin(a) * 2.0)(x)
    want = np.sin(np.asarray(x)) * np.float32(2.0)
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-6)
    assert y.sharding == NamedSharding(mesh, P("data"))
    for shard in y.addressable_shards:
        np.testing.assert_allclose(np.asarray(shard.data), want[shard.index], rtol=1e-6)


@pytest.mark.skipif(COUNT == 1, reason="a one-device mesh runs no partitioned program")
def test_partitioned_results_name_dimensions_as_jax():
    # JAX 0.10.2: a jit result over an Explicit mesh names every dimension (P('x', None));
    # over an Auto mesh the spec stops at the last split dimension (P('x',)).
    x = np.ones((4 * COUNT, 3), np.float32)
    for kind, want in [(jax.sharding.AxisType.Explicit, P("x", None)),
                       (jax.sharding.AxisType.Auto, P("x"))]:
        mesh = jax.make_mesh((COUNT,), ("x",), axis_types=(kind,))
        placed = jax.device_put(x, NamedSharding(mesh, P("x")))
        double = jax.jit(lambda a: a * 2)  # (kept: the calls are cached per live jaxpr)
        y = double(placed)
        assert tuple(y.sharding.spec) == tuple(want)
        assert _partitioned_calls()


def test_keys_and_every_dtype_through_placed_jit():
    mesh = _mesh("x")
    x = jax.device_put(np.ones((4 * COUNT, 3), np.float32), NamedSharding(mesh, P("x")))
    for key in [jax.random.key(0), jax.random.PRNGKey(0)]:
        noisy = jax.jit(lambda k, a: a + jax.random.normal(k, a.shape))
        want = noisy(key, np.ones((4 * COUNT, 3), np.float32))
        np.testing.assert_array_equal(np.asarray(noisy(key, x)), np.asarray(want))
    keys = jax.random.split(jax.random.key(1), 2 * COUNT)
    uniform = jax.jit(jax.vmap(lambda k: jax.random.uniform(k, (2,))))
    np.testing.assert_array_equal(
        np.asarray(uniform(jax.device_put(keys, NamedSharding(mesh, P("x"))))),
        np.asarray(uniform(keys)))
    ops = jax.jit(lambda a: (a.sum(0), a.T, a & a if a.dtype == np.bool_ else a * a))
    for dtype in [np.int32, np.bool_, np.complex64, jnp.bfloat16, np.float16, np.uint8]:
        value = (np.arange(12 * COUNT) % 5).astype(dtype).reshape(4 * COUNT, 3)
        placed = jax.device_put(value, NamedSharding(mesh, P("x")))
        for got, want in zip(ops(placed), ops(value)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
