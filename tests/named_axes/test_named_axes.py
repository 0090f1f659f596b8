"""Named axes: vmap(axis_name=...), the collectives of jaxlite.lax, make_jaxpr(axis_env=),
and pmap on one device, against JAX 0.10.2.

Expected values come from jax_records.npz (made by record_jax.py with real JAX: shard_map on
a 6-device CPU mesh for the collectives, vmap and pmap for whole programs) and from numpy.
Derivatives: JAX's rules make vmap(grad(f)) the gradient of the sum over members of f (each
collective's transpose is its adjoint), which is checked against grad of the sum, where the
collectives are resolved before differentiation, and that against finite differences.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads

sys.path.insert(0, str(Path(__file__).parent))
from collective_cases import cases, programs  # noqa: E402

RECORDS = np.load(Path(__file__).parent / "jax_records.npz")
CASES = cases(lax)
PROGRAMS = programs(jax)


def named_map(fun, mesh):
    """`fun` mapped over the leading axes with the mesh's names, the first one outermost."""
    for name, _ in reversed(mesh):
        fun = jax.vmap(fun, axis_name=name)
    return fun


# ------------------------------------------------------------------ values against JAX

@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_matches_jax_shard_map(name):
    case = CASES[name]
    x = RECORDS[f"{name}/x"]
    expected = RECORDS[f"{name}/shard_map"]
    out = named_map(case.fun, case.mesh)(x)
    assert np.asarray(out).dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)
    if f"{name}/vmap" in RECORDS:  # where JAX's own vmap can batch the case, it agrees
        np.testing.assert_array_equal(out, RECORDS[f"{name}/vmap"])


@pytest.mark.parametrize("name", ["psum_ij", "all_gather_ji", "psum_scatter_ji_tiled",
                                  "all_to_all_ij_tiled_01", "ppermute_ji_partial",
                                  "all_to_all_10", "axis_index_ij"])
def test_collective_under_jit_matches_jax(name):
    case = CASES[name]
    out = jax.jit(named_map(case.fun, case.mesh))(RECORDS[f"{name}/x"])
    np.testing.assert_array_equal(out, RECORDS[f"{name}/shard_map"])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_jax(name):
    leaves, tree = jax.tree_util.tree_flatten(PROGRAMS[name]())
    assert str(tree) == str(RECORDS[f"program/{name}/tree"])
    for k, leaf in enumerate(leaves):
        expected = RECORDS[f"program/{name}/{k}"]
        actual = np.asarray(leaf)
        assert actual.dtype == expected.dtype, f"leaf {k}"
        assert actual.shape == expected.shape, f"leaf {k}"
        np.testing.assert_allclose(actual, expected, rtol=4e-6, atol=1e-6, err_msg=f"leaf {k}")


def test_weak_types_follow_jax():
    # psum of a weakly typed value stays weak, as JAX's reduce over the batch axis does.
    out = jax.vmap(lambda u: lax.psum(u * 2.0, "i"), axis_name="i")(jnp.arange(3))
    assert out.dtype == np.float32 and out.weak_type
    strong = jax.vmap(lambda u: lax.psum(u, "i"), axis_name="i")(jnp.arange(3.0))
    assert not strong.weak_type
    gathered = jax.vmap(lambda u: lax.all_gather(2.0, "i"), axis_name="i")(jnp.ones(3))
    assert gathered.weak_type and gathered.shape == (3, 3)


def test_constant_psum_keeps_the_python_type():
    # As JAX's lax._const: a Python scalar stays one, numpy stays numpy.
    seen = {}

    def f(u):
        seen["int"] = lax.psum(1, "i")
        seen["float"] = lax.psum(2.0, "i")
        seen["numpy"] = lax.psum(np.float32(2.0), "i")
        seen["size"] = lax.axis_size("i")
        return u
    jax.vmap(f, axis_name="i")(jnp.ones(3))
    assert seen["int"] == 3 and type(seen["int"]) is int
    assert seen["float"] == 6.0 and type(seen["float"]) is float
    assert seen["numpy"] == 6.0 and type(seen["numpy"]) is np.float32
    assert seen["size"] == 3 and type(seen["size"]) is int


def test_psum_positional_axes_outside_maps():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(lax.psum(x, 0), x.sum(0))
    np.testing.assert_array_equal(jax.jit(lambda u: lax.psum(u, (0,)))(x), x.sum(0))
    np.testing.assert_array_equal(lax.pmax(x, 1), x.max(1))


def test_psum_with_groups_of_a_constant():
    # psum of a constant over groups multiplies by the group size (JAX's constant rule);
    # groups over a mapped value are not supported under vmap, as in JAX.
    out = jax.vmap(lambda u: u * lax.psum(1.0, "i", axis_index_groups=[[0, 1], [2, 3]]),
                   axis_name="i")(jnp.ones(4))
    np.testing.assert_array_equal(out, [2.0] * 4)
    with pytest.raises(NotImplementedError, match="axis_index_groups not supported in vmap"):
        jax.vmap(lambda u: lax.psum(u, "i", axis_index_groups=[[0, 1], [2, 3]]),
                 axis_name="i")(jnp.ones(4))
    with pytest.raises(ValueError, match="must cover all indices exactly once"):
        jax.vmap(lambda u: lax.psum(u, "i", axis_index_groups=[[0, 1], [1, 2]]),
                 axis_name="i")(jnp.ones(4))


def test_make_jaxpr_with_axis_env():
    text = str(jax.make_jaxpr(lambda u: lax.psum(u, "i"), axis_env=[("i", 4)])(1.0))
    assert "psum[axes=('i',) axis_index_groups=None]" in text
    closed = jax.make_jaxpr(lambda u: lax.all_gather(u, "i"), axis_env=[("i", 4)])(1.0)
    assert closed.out_avals[0].shape == (4,)
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.make_jaxpr(lambda u: lax.all_gather(u, "i"))(1.0)


def test_jit_inside_vmap_retraces_for_another_axis_size():
    gather = jax.jit(lambda u: lax.all_gather(u, "i"))
    for size in (2, 3):
        out = jax.vmap(gather, axis_name="i")(jnp.arange(float(size)))
        np.testing.assert_array_equal(out, np.tile(np.arange(size), (size, 1)))


def test_collective_under_an_unnamed_vmap_inside_and_outside():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    inner = jax.vmap(jax.vmap(lambda u: lax.all_gather(u, "i", axis=0)), in_axes=1,
                     axis_name="i")(x)
    # member i of the named axis (x's axis 1) gathers x[:, k, :] over k, for each row b.
    np.testing.assert_array_equal(inner, np.broadcast_to(
        np.transpose(x, (0, 1, 2))[None], (3, 2, 3, 4)))
    outer = jax.vmap(jax.vmap(lambda u: lax.psum_scatter(u, "i", tiled=True),
                              axis_name="i"), in_axes=2, out_axes=2)(
        np.arange(36.0, dtype=np.float32).reshape(3, 6, 2))
    y = np.arange(36.0).reshape(3, 6, 2)
    expected = np.stack([y.sum(0)[2 * k:2 * k + 2] for k in range(3)])
    np.testing.assert_array_equal(outer, expected)


# ------------------------------------------------------------------ derivatives

LINEAR = {
    "psum": lambda u: lax.psum(u, "i"),
    "pmean": lambda u: lax.pmean(u * u, "i"),
    "all_gather": lambda u: lax.all_gather(u, "i", axis=1),
    "all_gather_tiled": lambda u: lax.all_gather(u, "i", tiled=True),
    "psum_scatter": lambda u: lax.psum_scatter(u[:2] * u[1:], "i"),
    "psum_scatter_tiled": lambda u: lax.psum_scatter(jnp.tile(u, 4), "i", tiled=True),
    "all_to_all": lambda u: lax.all_to_all(jnp.tile(u, 2), "i", 0, 0, tiled=True),
    "all_to_all_untiled": lambda u: lax.all_to_all(jnp.outer(u[:2], u), "i", 0, 1),
    "ppermute": lambda u: lax.ppermute(u, "i", [(0, 1), (1, 0)]),
    "pshuffle": lambda u: lax.pshuffle(jnp.sin(u), "i", [1, 0]),
    "pbroadcast": lambda u: lax.pbroadcast(u, "i", 1) * u,
    "psum_ij": lambda u: lax.psum(u, ("i", "j")),
    "all_gather_ji": lambda u: lax.all_gather(u, ("j", "i")),
    "psum_scatter_ij": lambda u: lax.psum_scatter(jnp.tile(u, 4), ("i", "j"), tiled=True),
    "ppermute_ji": lambda u: lax.ppermute(u, ("j", "i"), [(0, 3), (3, 1), (2, 0)]),
    "all_to_all_ij": lambda u: lax.all_to_all(jnp.tile(u, 4), ("i", "j"), 0, 0, tiled=True),
}


def _mesh_for(name):
    return (("i", 2), ("j", 2)) if name.endswith(("ij", "ji")) else (("i", 2),)


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_vmap_of_grad_is_grad_of_the_sum(name):
    mesh = _mesh_for(name)
    with jax.enable_x64(True):
        x = np.random.default_rng(len(name)).standard_normal(
            tuple(s for _, s in mesh) + (3,))
        weights = np.random.default_rng(1).standard_normal(64)

        def member(u):
            out = LINEAR[name](u)
            return jnp.sum(jnp.sin(out).ravel() * weights[:out.size])

        per_member = named_map(jax.grad(member), mesh)(x)
        total = lambda u: jnp.sum(named_map(member, mesh)(u))  # noqa: E731
        np.testing.assert_allclose(per_member, jax.grad(total)(x), rtol=1e-12, atol=1e-12)
        check_grads(total, (x,), order=2, modes=("fwd", "rev"))
        # and forward mode inside the map: jvp of each member against the summed jvp
        tangent = np.ones_like(x)
        inner = named_map(lambda u, t: jax.jvp(member, (u,), (t,))[1], mesh)(x, tangent)
        np.testing.assert_allclose(jnp.sum(inner), jax.jvp(total, (x,), (tangent,))[1],
                                   rtol=1e-12)


def test_pmax_and_pmin_have_no_derivative():
    for api in (lax.pmax, lax.pmin):
        with pytest.raises(NotImplementedError,
                           match=f"Differentiation rule for '{api.__name__}' not implemented"):
            jax.vmap(jax.grad(lambda u: api(u, "i")), axis_name="i")(jnp.ones(3))


# ------------------------------------------------------------------ errors

def test_unbound_axis_names():
    x = jnp.arange(3.0)
    with pytest.raises(NameError, match="^unbound axis name: i$"):
        lax.psum(x, "i")
    with pytest.raises(NameError, match="^unbound axis name: i$"):
        lax.axis_size("i")
    with pytest.raises(NameError, match="Found an unbound axis name: i. To fix this, please "
                                        "call psum under `jax.shard_map`."):
        jax.jit(lambda u: lax.psum(u, "i"))(x)
    with pytest.raises(NameError, match="Found an unbound axis name: j.*call psum"):
        jax.vmap(lambda u: lax.psum(u, "j"), axis_name="i")(x)
    with pytest.raises(NameError, match="Found an unbound axis name: i.*call axis_index"):
        lax.axis_index("i")
    with pytest.raises(NameError, match="unbound axis name: d"):
        jax.vmap(lambda u: lax.all_gather(u, "d"), spmd_axis_name="d")(x)
    for api in (lax.pmax, lax.pmin):
        with pytest.raises(NameError, match="Found an unbound axis name: i"):
            api(x, "i")


def test_bad_arguments_raise_jax_errors():
    x = jnp.arange(12.0).reshape(3, 4)
    vm = lambda f: jax.vmap(f, axis_name="i")  # noqa: E731
    with pytest.raises(ValueError, match="all_to_all requires the size of the mapped axis "
                                         "axis_name to equal x.shape\\[split_axis\\], but "
                                         "they are 3 and 4 respectively."):
        vm(lambda u: lax.all_to_all(u, "i", 0, 0))(x)
    with pytest.raises(ValueError, match="The size of all_to_all split_axis \\(4\\) has to be "
                                         "divisible by the size of the named axis i \\(3\\)"):
        vm(lambda u: lax.all_to_all(u, "i", 0, 0, tiled=True))(x)
    with pytest.raises(ValueError, match="reduce_scatter operand scatter dimension size 4 "
                                         "must match shard count 3"):
        vm(lambda u: lax.psum_scatter(u, "i"))(x)
    with pytest.raises(ValueError, match="tiled reduce_scatter operand scatter dimension "
                                         "size 4 must be divisible by shard_count 3"):
        vm(lambda u: lax.psum_scatter(u, "i", tiled=True))(x)
    with pytest.raises(ValueError, match="`perm` does not represent a permutation"):
        vm(lambda u: lax.pshuffle(u, "i", [2, 2, 1]))(x)
    with pytest.raises(ValueError, match="ppermute sources and destinations must be unique"):
        vm(lambda u: lax.ppermute(u, "i", [(0, 1), (0, 2)]))(x)
    with pytest.raises(ValueError, match="outside the axis"):
        vm(lambda u: lax.ppermute(u, "i", [(0, 3)]))(x)
    with pytest.raises(ValueError, match="collective broadcast doesn't fit in the axis size"):
        vm(lambda u: lax.pbroadcast(u, "i", 3))(x)
    with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
        vm(lambda u: lax.all_gather(u[0], "i", tiled=True))(x)
    with pytest.raises(ValueError, match="Got unexpected `to` value for `jax.lax.all_gather`"):
        vm(lambda u: lax.all_gather(u, "i", to="bad"))(x)
    with pytest.raises(NotImplementedError):
        vm(lambda u: lax.all_gather(u, "i", to="reduced"))(x)


def test_pcast():
    x = jnp.arange(6.0).reshape(2, 3)
    out = jax.vmap(lambda u: lax.pcast(u, "i", to="varying"), axis_name="i")(x)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(ValueError, match="Got unexpected `to` value. Allowed `to` values"):
        jax.vmap(lambda u: lax.pcast(u, "i", to="x"), axis_name="i")(x)
    with pytest.raises(ValueError, match="Unsupported pcast from=invarying, to='unreduced'"):
        jax.vmap(lambda u: lax.pcast(u, "i", to="unreduced"), axis_name="i")(x)
    with pytest.raises(NotImplementedError):
        jax.vmap(lambda u: lax.pcast(u, "i", to="reduced"), axis_name="i")(x)
    with pytest.raises(TypeError, match="must be a tuple or a str"):
        lax.pcast(x, {"i"}, to="varying")


def test_not_implemented_collectives():
    x = jnp.zeros((4,))
    sizes = jnp.ones((2,), jnp.int32)
    with pytest.raises(NotImplementedError, match="ragged_all_to_all under vmap"):
        jax.vmap(lambda u: lax.ragged_all_to_all(u, u, sizes, sizes, sizes, sizes,
                                                 axis_name="i"), axis_name="i")(
            jnp.zeros((2, 4)))
    closed = jax.make_jaxpr(lambda u: lax.ragged_all_to_all(
        u, jnp.zeros(5), sizes, sizes, sizes, sizes, axis_name="i"), axis_env=[("i", 2)])(x)
    assert closed.out_avals[0].shape == (5,) and not closed.out_avals[0].weak_type
    with pytest.raises(ValueError, match="ragged_all_to_all input_offsets must be integer"):
        jax.make_jaxpr(lambda u: lax.ragged_all_to_all(
            u, u, u, sizes, sizes, sizes, axis_name="i"), axis_env=[("i", 2)])(x)
    with pytest.raises(NotImplementedError, match="psend"):
        lax.psend(x, "i", [(0, 1)])
    with pytest.raises(NotImplementedError, match="precv"):
        lax.precv(None, x, "i", [(0, 1)])


def test_vmap_out_axes_none_messages():
    x = jnp.ones((3, 2))
    # (the whole message, compared as a string: pytest's `match` also reads the exception's
    # notes, where traceback filtering says what it removed, as JAX's does)
    with pytest.raises(ValueError) as info:
        jax.vmap(lambda u: {"a": u, "b": u}, out_axes={"a": 0, "b": None}, axis_name="q")(x)
    assert str(info.value) == "vmap has mapped output (axis_name=q) but out_axes is None"
    with pytest.raises(ValueError) as info:
        jax.vmap(lambda u: {"a": u, "b": u}, out_axes={"a": 0, "b": None})(x)
    assert str(info.value) == ("at vmap out_axes['b'], got axis spec None but output was "
                               "batched on axis 0")
    with pytest.raises(ValueError, match="^at vmap out_axes\\[1\\], got axis spec None"):
        jax.vmap(lambda u: (u, u), out_axes=(0, None))(x)


def test_vmap_axes_specs_as_jax():
    x = jnp.ones((3, 2))
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
        jax.vmap(lambda u: u, in_axes=np.int64(0))
    with pytest.raises(TypeError, match="vmap out_axes must be an int, None, or \\(nested\\) "
                                        "container with those types as leaves, but got 1.0."):
        jax.vmap(lambda u: u, out_axes=1.0)
    with pytest.raises(ValueError, match="inconsistent sizes.*\n  \\* the `axis_size` "
                                         "argument was 4;\n  \\* one axis had size 3: axis 0 "
                                         "of argument u of type float32\\[3,2\\];"):
        jax.vmap(lambda u: u, axis_size=4)(x)
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        jax.vmap(3)


# ------------------------------------------------------------------ pmap

def test_pmap_size_one_result_is_an_array_of_the_mapped_shape():
    out = jax.pmap(lambda u: u * 2)(np.ones((1, 3), np.float64))
    assert isinstance(out, jax.Array) and out.shape == (1, 3) and out.dtype == np.float32
    lowered = jax.pmap(lambda u: u + 1).lower(jnp.ones((1, 2)))
    assert "add" in lowered.as_text()


@pytest.mark.parametrize("shape, in_axes, message", [
    ((2, 3), 0, "shape=(2, 3) and dimensions=(0,)"),
    ((3, 2), 1, "shape=(3, 2) and dimensions=(1,)"),
])
def test_pmap_larger_than_the_devices_raises_jax_error(shape, in_axes, message):
    with pytest.raises(ValueError, match="^cannot select an axis to squeeze out which has size "
                                         "not equal to one, got " + message.replace(
                                             "(", "\\(").replace(")", "\\)")):
        jax.pmap(lambda u: lax.psum(u, "i"), axis_name="i", in_axes=in_axes)(jnp.ones(shape))


def test_pmap_argument_errors():
    x = jnp.ones((1, 3))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out.*shape=\\(2, 4\\)"):
        jax.pmap(lambda a, b: a)(jnp.ones((1, 4)), jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="pmap requires at least one argument with a mapped "
                                         "axis."):
        jax.pmap(lambda u: u, in_axes=None, axis_size=1)(x)
    with pytest.raises(ValueError, match="pmap requires at least one argument"):
        jax.pmap(lambda u: u)(1.0)
    with pytest.raises(ValueError, match="Specified axis_size 2 doesn't match received "
                                         "axis_size 1."):
        jax.pmap(lambda u: u, axis_size=2)(x)
    with pytest.raises(ValueError, match="'devices' argument to pmap must be non-empty"):
        jax.pmap(lambda u: u, devices=[])(x)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported, as "
                                         "this can lead to unexpected cache-misses. Static "
                                         "argument \\(index 1\\) of type <class "
                                         "'numpy.ndarray'> for function <lambda> is "
                                         "non-hashable."):
        jax.pmap(lambda u, n: u, static_broadcasted_argnums=1)(x, np.ones(2))
    with pytest.raises(TypeError, match="pmap in_axes must be an int, None, or \\(nested\\) "
                                        "container with those types as leaves, but got 1.0."):
        jax.pmap(lambda u: u, in_axes=1.0)
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        jax.pmap(3)
    with pytest.raises(NameError, match="Found an unbound axis name: i"):
        jax.pmap(lambda u: lax.axis_index("i"))(x)


def test_pmap_devices_and_donation():
    x = jnp.ones((1, 3))
    out = jax.pmap(lambda u: u * 2, devices=jax.devices())(x)
    np.testing.assert_array_equal(out, 2 * np.ones((1, 3)))
    out = jax.pmap(lambda n, u: u * n, static_broadcasted_argnums=0, donate_argnums=1)(
        2.0, jnp.ones((1, 3)))
    np.testing.assert_array_equal(out, 2 * np.ones((1, 3)))
    # the default axis name is JAX's
    out = jax.pmap(lambda u: lax.psum(u, "_internal_pmap_axis_name"))(x)
    np.testing.assert_array_equal(out, x)
