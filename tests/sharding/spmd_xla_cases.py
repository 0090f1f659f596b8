"""jit of sharded programs through jaxlite's whole SPMD path (lowering with shardings, sharding
propagation, the partitioner, per-device execution) against XLA's partitioning of the same
JAX programs: the numbers equal one device's, and the partitioned module holds no more
collectives of each kind than XLA's partitioner inserted (tests/xla/fixtures/spmd/counts.json,
recorded by its generate.py with JAX 0.10.2 and forced host devices); for the sharded
matmuls and the Megatron MLP, exactly as many.

Run by test_multi_device.py on 1, 2, 4 and 8 devices; each program runs on the device counts
XLA's fixtures have.
"""
import json
from pathlib import Path

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
XLA_COUNTS = json.loads((Path(__file__).parents[1] / "xla" / "fixtures" / "spmd" /
                         "counts.json").read_text())
KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
# Programs whose partitioned module must hold exactly XLA's collectives.
EXACT = {"matmul_rows", "matmul_columns", "matmul_contracting", "matmul_2d",
         "megatron_forward", "megatron_train_step", "fsdp_forward", "slice_concat"}


def _mlp(params, x):
    w1, w2 = params
    return jnp.tanh(x @ w1) @ w2


def _loss(params, x, y):
    return jnp.mean((_mlp(params, x) - y) ** 2)


def _train_step(params, x, y):
    value, grads = jax.value_and_grad(_loss)(params, x, y)
    return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def _layernorm(a, g):
    mean = a.mean(-1, keepdims=True)
    var = ((a - mean) ** 2).mean(-1, keepdims=True)
    return (a - mean) / jnp.sqrt(var + 1e-5) * g


def _program(name, mesh):
    """(jitted function, its arguments as (shape, spec) pairs) of the fixture `name`."""
    rep = NamedSharding(mesh, P())
    matmul = lambda a, b: a @ b  # noqa: E731
    programs = {
        "matmul_rows": lambda: (jax.jit(matmul), [((16, 8), P("x", None)), ((8, 16), P())]),
        "matmul_contracting": lambda: (jax.jit(matmul, out_shardings=rep),
                                       [((16, 8), P(None, "x")), ((8, 16), P("x", None))]),
        "matmul_columns": lambda: (jax.jit(matmul), [((16, 8), P()), ((8, 16), P(None, "x"))]),
        "matmul_2d": lambda: (jax.jit(matmul), [((16, 8), P("data", None)),
                                                ((8, 16), P(None, "model"))]),
        "megatron_forward": lambda: (jax.jit(_mlp, out_shardings=rep),
                                     [(((8, 32), P(None, "x")), ((32, 8), P("x", None))),
                                      ((16, 8), P())]),
        "megatron_train_step": lambda: (jax.jit(_train_step),
                                        [(((8, 32), P(None, "x")), ((32, 8), P("x", None))),
                                         ((16, 8), P()), ((16, 8), P())]),
        "fsdp_forward": lambda: (jax.jit(_mlp, out_shardings=NamedSharding(mesh, P("x", None))),
                                 [(((8, 32), P("x", None)), ((32, 8), P("x", None))),
                                  ((16, 8), P("x", None))]),
        "data_parallel_train_step": lambda: (jax.jit(_train_step),
                                             [(((8, 32), P()), ((32, 8), P())),
                                              ((16, 8), P("x", None)), ((16, 8), P("x", None))]),
        "mlp_2d_forward": lambda: (jax.jit(_mlp), [(((8, 32), P(None, "model")),
                                                    ((32, 8), P("model", None))),
                                                   ((16, 8), P("data", None))]),
        "mlp_2d_train_step": lambda: (jax.jit(_train_step),
                                      [(((8, 32), P(None, "model")), ((32, 8), P("model", None))),
                                       ((16, 8), P("data", None)), ((16, 8), P("data", None))]),
        "softmax_sharded_axis": lambda: (
            jax.jit(lambda a: jax.nn.softmax(a, axis=0) + jax.nn.softmax(a, axis=1)),
            [((16, 8), P("x", None))]),
        "layernorm_features": lambda: (jax.jit(_layernorm),
                                       [((8, 16), P(None, "x")), ((16,), P("x"))]),
        "reshape_transpose": lambda: (
            jax.jit(lambda a: a.reshape(8, 4, 4).transpose(0, 2, 1).reshape(8, 16) * 2
                    + a.T.sum()), [((8, 16), P("x", None))]),
        "slice_concat": lambda: (
            jax.jit(lambda a: jnp.concatenate([a[:, :4], a[:, 4:] * 2], axis=1)
                    + jnp.roll(a, 1, 0)), [((16, 8), P("x", None))]),
        "loop_body": lambda: (jax.jit(lambda a, w: jax.lax.fori_loop(
            0, 3, lambda i, c: jnp.tanh(c @ w) + c.sum(), a)),
            [((16, 8), P("x", None)), ((8, 8), P())]),
    }
    return programs[name]()


def _is_leaf(entry):
    return isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], P)


def _arguments(specs, mesh):
    def make(entry, placed):
        shape, spec = entry
        value = jnp.arange(int(np.prod(shape)), dtype=jnp.float32).reshape(shape) / 100
        return jax.device_put(value, NamedSharding(mesh, spec)) if placed else value
    placed = jax.tree_util.tree_map(lambda e: make(e, True), specs, is_leaf=_is_leaf)
    whole = jax.tree_util.tree_map(lambda e: make(e, False), specs, is_leaf=_is_leaf)
    return placed, whole


def _mesh(name):
    if "_2d" in name:
        return Mesh(np.array(jax.devices()).reshape(2, COUNT // 2), ("data", "model"))
    return Mesh(np.array(jax.devices()), ("x",))


CASES = sorted(key for key in XLA_COUNTS
               if key.rsplit("_", 1)[0] in EXACT | {
                   "data_parallel_train_step", "mlp_2d_forward", "mlp_2d_train_step",
                   "softmax_sharded_axis", "layernorm_features", "reshape_transpose",
                   "slice_concat", "loop_body"})


@pytest.mark.parametrize("case", CASES)
def test_partitioned_like_xla(case):
    name, devices = case.rsplit("_", 1)
    if int(devices) != COUNT:
        pytest.skip(f"XLA's fixture is for {devices} devices; this run has {COUNT}")
    mesh = _mesh(name)
    f, specs = _program(name, mesh)
    placed, whole = _arguments(specs, mesh)
    spmd_call._CALLS.clear()
    got = f(*placed)
    calls = [c for calls in spmd_call._CALLS.values() for c in calls.values()]
    assert len(calls) == 1 and calls[0] is not None, "the call was not partitioned"
    want = jax.jit(f._fun)(*whole)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=1e-6)
    text = calls[0].module_text()
    ours = {kind: text.count(f" {kind}(") for kind in KINDS}
    xla = XLA_COUNTS[case]["partitioned"]
    for kind in KINDS:
        assert ours[kind] <= xla[kind], (kind, ours, xla)
    if name in EXACT:
        assert ours == {kind: xla[kind] for kind in KINDS}


def test_roll_by_a_known_shift_is_static_slices_under_jit():
    # (what lets the partitioner rotate blocks with one collective-permute, as XLA)
    jaxpr = jax.make_jaxpr(lambda a: jnp.roll(a, 1, 0))(np.zeros((4, 3), np.float32))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["slice", "slice", "concatenate"]
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    for shift, axis in [(1, 0), (-5, 1), ((1, 2), (0, 1)), (7, None)]:
        np.testing.assert_array_equal(
            np.asarray(jax.jit(lambda a: jnp.roll(a, shift, axis))(x)), np.roll(x, shift, axis))
