"""Sharding in types on a 2x2 mesh of Explicit axes, and shard_map's check_vma: every
program of sharding_types_programs.py gives JAX 0.10.2's result type, spec and value, or JAX's
error type and message (recorded by record_sharding_types.py). Needs 4 devices
(test_multi_device.py runs this file with 1, 2, 4 and 8)."""
import json
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.core.sharding_rules import ShardingTypeError
from jaxlite.sharding import NamedSharding, PartitionSpec as P

from sharding_types_programs import arrays, programs, vma_programs

pytestmark = pytest.mark.skipif(jax.device_count() < 4, reason="a 2x2 mesh needs 4 devices")

RECORDED = json.loads((Path(__file__).parent / "data" / "sharding_types.json").read_text())
# Programs whose result jit places: the partitioner may drop trailing None entries of the
# spec, which name the same layout (checked by equivalence, the type exactly).
JITTED = {"jit typeof", "jit reshard", "device_put in jit", "vma: invarying all_gather",
          "data-parallel training", "jit matmul with out_sharding", "tensor-parallel grad"}


@pytest.fixture(scope="module")
def split_arrays():
    return arrays(jax)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_program_gives_jax_answer(name, split_arrays):
    expected = RECORDED[name]
    program = {**programs(jax), **vma_programs(jax)}[name]
    if "strings" in expected:
        assert program(split_arrays) == expected["strings"]
        return
    if "error" in expected:
        with pytest.raises(Exception) as caught:
            program(split_arrays)
        assert type(caught.value).__name__ == expected["error"]
        assert str(caught.value) == expected["message"]
        return
    y = program(split_arrays)
    assert str(jax.typeof(y)) == expected["type"]
    # (float32 sums and tanh may round differently from XLA in the last bits)
    np.testing.assert_allclose(np.asarray(y), np.asarray(expected["value"]), rtol=1e-5,
                               atol=1e-6)
    if name in JITTED:
        want = NamedSharding(split_arrays["mesh"], eval(expected["spec"]))
        assert y.sharding.is_equivalent_to(want, y.ndim), (y.sharding, want)
    else:
        assert repr(y.sharding.spec) == expected["spec"]


def test_typed_sharding_is_over_the_abstract_mesh(split_arrays):
    x = split_arrays["x"]
    assert repr(jax.typeof(x).sharding) == (
        "NamedSharding(mesh=AbstractMesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit), "
        "device_kind=cpu, num_cores=None, platform=cpu), spec=P('x', 'y'))")
    assert x.aval.sharding.spec == P("x", "y")
    assert repr(jax.typeof(jnp.ones(3)).sharding) == \
        "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None,))"


def test_sharding_type_error_under_jit_names_the_specs(split_arrays):
    f = jax.jit(lambda a, b: a @ b)
    with pytest.raises(ShardingTypeError, match="consistent sharding"):
        f(split_arrays["x"], split_arrays["x"])
    # The same function with other shardings is another signature, and runs.
    out = f(split_arrays["xr"], split_arrays["xr"])
    assert str(jax.typeof(out)) == "float32[4@x,4]"


def test_auto_mesh_types_carry_no_splits():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    x = jax.device_put(np.ones((4, 4), np.float32), NamedSharding(mesh, P("x", "y")))
    assert str(jax.typeof(x)) == "float32[4,4]"
    assert jax.typeof(x).sharding.spec == P(None, None)
    assert str(jax.typeof(x @ x.T)) == "float32[4,4]"  # no rule refuses on Auto axes


def test_auto_axes_and_explicit_axes(split_arrays):
    mesh = split_arrays["mesh"]
    x = split_arrays["x"]
    with jax.set_mesh(mesh):
        # JAX 0.10.2: inside auto_axes the contraction is allowed; the result is resharded.
        f = jax.jit(jax.sharding.auto_axes(lambda b: b @ b.T, out_sharding=P("x", None)))
        out = f(x)
        assert str(jax.typeof(out)) == "float32[4@x,4]"
        np.testing.assert_allclose(np.asarray(out), np.asarray(x) @ np.asarray(x).T)
    auto = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    seen = []
    with jax.set_mesh(auto):
        xa = jax.device_put(np.asarray(x), NamedSharding(auto, P("x", "y")))
        g = jax.sharding.explicit_axes(lambda b: seen.append(str(jax.typeof(b))) or b * 2,
                                       in_sharding=P("x", None))
        out = jax.jit(g)(xa)
    assert seen == ["float32[4@x,4]"]  # JAX 0.10.2's type inside
    assert out.sharding == NamedSharding(auto, P("x"))  # and its result's sharding
