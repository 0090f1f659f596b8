"""jax.shard_map, jax.smap and jax.experimental.shard_map.shard_map on one device, against
JAX 0.10.2 on a one-device mesh (jax_shard_map_records.npz, made by record_jax_shard_map.py
from shard_map_cases.py), and JAX's errors for bad specs and meshes.
"""
from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import AbstractMesh, AxisType, PartitionSpec as P

sys.path.insert(0, str(Path(__file__).parent))
from program_records import check_program  # noqa: E402
from shard_map_cases import programs  # noqa: E402

RECORDS = np.load(Path(__file__).parent / "jax_shard_map_records.npz")
PROGRAMS = programs(jax)
MESH = jax.make_mesh((1,), ("i",), axis_types=(AxisType.Auto,))
X = jnp.arange(4.0)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_jax(name):
    # float32 programs of a few dozen operations.
    check_program(jax, RECORDS, name, PROGRAMS[name](), rtol=2e-6, atol=1e-6)


def test_signatures_are_jaxs():
    # The API list's last column: name:kind (po positional-only, pk positional-or-keyword,
    # ko keyword-only), `=` where there is a default.
    lines = (Path(__file__).parents[1] / "data/api/public/jax.txt").read_text().splitlines()
    rows = {r[0]: r[3] for r in (line.split("\t") for line in lines)
            if r[0] in ("shard_map", "smap")}
    assert set(rows) == {"shard_map", "smap"}
    for name, compact in rows.items():
        params = inspect.signature(getattr(jax, name)).parameters.values()
        got = [f"{p.name}:{_short(p.kind.name)}"
               f"{'=' if p.default is not p.empty else ''}" for p in params]
        assert ",".join(got) == compact, name
    assert inspect.signature(jax.shard_map).parameters["check_vma"].default is True
    assert repr(inspect.signature(jax.shard_map).parameters["in_specs"].default) == \
        "jax.sharding.Infer"


def _short(kind):
    return {"POSITIONAL_ONLY": "po", "POSITIONAL_OR_KEYWORD": "pk", "KEYWORD_ONLY": "ko"}[kind]


def test_collectives_see_size_one_axes():
    def f(x):
        return (lax.psum(x, "i"), lax.axis_index("i"), lax.axis_size("i"),
                lax.all_gather(x, "i").shape)
    total, index, size, gathered = jax.shard_map(
        f, mesh=MESH, in_specs=P("i"), out_specs=P(), check_vma=False)(X)
    np.testing.assert_array_equal(total, X)
    assert int(index) == 0 and int(size) == 1 and tuple(gathered) == (1, 4)


def test_cond_on_arguments_stays_a_cond():
    # The arguments are not mapped, so a cond on them runs one branch (and its callbacks).
    calls = []

    def f(x):
        return lax.cond(x[0] > 0, lambda: jax.debug.callback(lambda: calls.append(1)) or x,
                        lambda: -x)
    out = jax.shard_map(f, mesh=MESH, in_specs=P("i"), out_specs=P("i"))(X)
    np.testing.assert_array_equal(out, -X)
    assert calls == []


def test_under_jit_grad_vmap_compose():
    f = jax.shard_map(lambda a: lax.psum(jnp.sin(a), "i") * a, mesh=MESH, in_specs=P("i"),
                      out_specs=P("i"))
    x = jnp.arange(6.0).reshape(2, 3) / 4
    np.testing.assert_allclose(jax.jit(jax.vmap(f))(x), np.sin(x) * x, rtol=1e-6)
    g = jax.grad(lambda u: f(u).sum())(x[0])
    np.testing.assert_allclose(g, np.cos(x[0]) * x[0] + np.sin(x[0]), rtol=1e-6)


def test_experimental_shard_map_is_deprecated_but_works():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from jaxlite.experimental.shard_map import shard_map as legacy
    assert [w.category for w in caught] == [DeprecationWarning]
    out = legacy(lambda a: lax.psum(a, "i") * 2.0, MESH, P("i"), P("i"), check_rep=False)(X)
    np.testing.assert_array_equal(out, X * 2.0)
    assert list(inspect.signature(legacy).parameters) == [
        "f", "mesh", "in_specs", "out_specs", "check_rep"]


# JAX 0.10.2's exception types and the first words of its messages for the same calls.
def _shmap(f=lambda a: a, **kw):
    kw.setdefault("mesh", MESH)
    kw.setdefault("in_specs", P("i"))
    kw.setdefault("out_specs", P("i"))
    return jax.shard_map(f, **kw)


ERRORS = {
    "in_specs_prefix": (lambda: _shmap(lambda a, b: a, in_specs=(P("i"),))(X, X),
                        ValueError, "pytree structure error"),
    "out_specs_prefix": (lambda: _shmap(lambda a: (a, a), out_specs=(P(), P(), P()))(X),
                         ValueError, "pytree structure error"),
    "unknown_axis": (lambda: _shmap(in_specs=P("j"))(X), ValueError,
                     "shard_map in_specs argument must refer to an axis marked as manual"),
    "in_rank": (lambda: _shmap(in_specs=P("i", None))(X), ValueError,
                "shard_map applied to the function '<lambda>' was given an in_specs entry "
                "which is too long"),
    "out_rank": (lambda: _shmap(lambda a: a.sum())(X), ValueError,
                 "shard_map applied to the function '<lambda>' was given an out_specs entry "
                 "which is too long"),
    "infer_auto": (lambda: _shmap(in_specs=jax.shard_map.__kwdefaults__["in_specs"])(X),
                   TypeError, "shard_map in_specs argument must be a pytree of "
                   "`jax.sharding.PartitionSpec` instances, but it was `None` when"),
    "not_a_spec": (lambda: _shmap(in_specs=(3,))(X), TypeError,
                   "shard_map in_specs argument must be a pytree of "
                   "`jax.sharding.PartitionSpec` instances, but:"),
    "no_mesh": (lambda: _shmap(mesh=None)(X), ValueError,
                "The context mesh cannot be empty"),
    "axis_names_subset": (lambda: _shmap(axis_names={"k"})(X), ValueError,
                          "jax.shard_map requires axis_names=frozenset({'k'}) to be a subset"),
    "axis_names_type": (lambda: _shmap(axis_names=["i"])(X), TypeError,
                        "`axis_names` argument of shard_map should be of type `frozenset`"),
    "not_callable": (lambda: jax.shard_map(3, mesh=MESH, in_specs=P(), out_specs=P()),
                     TypeError, "shard_map requires a callable for its first argument"),
    "mesh_type": (lambda: _shmap(mesh="m")(X), TypeError,
                  "shard_map requires a `jax.sharding.Mesh` or a `jax.sharding.AbstractMesh`"),
    "smap_no_mesh": (lambda: jax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="i")(X),
                     ValueError, "The context mesh cannot be empty"),
    "smap_in_axes_list": (lambda: jax.smap(lambda a: a, in_axes=[0], out_axes=0,
                                           axis_name="i"), TypeError,
                          "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple"),
    "smap_axis_name_tuple": (lambda: jax.smap(lambda a: a, in_axes=0, out_axes=0,
                                              axis_name=("i",)), TypeError,
                             "smap axis_name should be a `str` or a `Hashable`"),
    "unreduced_partial": (lambda: jax.shard_map(
        lambda a: a, mesh=jax.make_mesh((1, 1), ("x", "y")), in_specs=P("x"),
        out_specs=P("x", unreduced={"y"}), axis_names={"x"})(X), NotImplementedError,
        "unreduced/reduced can only be passed to out_specs when shard_map is in full manual"),
    "keyword_argument": (lambda: _shmap()(a=X), TypeError, "got an unexpected keyword"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name):
    call, kind, phrase = ERRORS[name]
    with pytest.raises(kind) as info:
        call()
    assert phrase in str(info.value)


def test_context_mesh_must_match():
    other = jax.make_mesh((1,), ("j",), axis_types=(AxisType.Auto,))
    with jax.set_mesh(MESH):
        with pytest.raises(ValueError, match="should match the mesh passed to shard_map"):
            _shmap(mesh=other, in_specs=P("j"), out_specs=P("j"))(X)
        np.testing.assert_array_equal(_shmap(mesh=None)(X), X)


def test_smap_without_in_axes_needs_explicit_axes():
    with jax.set_mesh(MESH):
        with pytest.raises(TypeError, match="in_axes was not specified when axis_name"):
            jax.smap(lambda a: a, out_axes=0, axis_name="i")(X)


def test_abstract_mesh_of_several_devices_needs_placed_arguments():
    # (over real devices: tests/sharding/shard_map_cases.py)
    mesh = AbstractMesh((2,), ("i",), (AxisType.Auto,))
    with pytest.raises(ValueError) as error:
        _shmap(mesh=mesh)(X)
    assert str(error.value) == ("Please pass `jax.Array`s with a `NamedSharding` as input to "
                                "`shard_map` when passing `AbstractMesh` to the mesh argument.")


def test_unbound_axis_name_raises():
    with pytest.raises(NameError):
        _shmap(lambda a: lax.psum(a, "k"))(X)
