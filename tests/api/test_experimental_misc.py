"""jnp.finfo/iinfo as classes, jax.experimental's EArray, cur_qdd, primal_tangent_dtype,
compilation_cache and mesh_utils.

Expected values recorded from JAX 0.10.2 (/tmp/jaxvenv/bin/python, CPU backend, one
device): each constant below is what JAX printed for the same call.
"""
from __future__ import annotations

import pathlib

import ml_dtypes
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.core.avals import ShapedArray
from jaxlite.experimental import EArray, cur_qdd, mesh_utils, primal_tangent_dtype
from jaxlite.experimental.compilation_cache import compilation_cache as cc


# ------------------------------------------------------------------------- finfo / iinfo

def test_finfo_and_iinfo_are_classes_taking_ml_dtypes_types():
    assert isinstance(jnp.finfo, type) and isinstance(jnp.iinfo, type)
    assert issubclass(jnp.finfo, np.finfo)
    # JAX: isinstance(jnp.finfo(np.float32), jnp.finfo) is True, likewise for iinfo.
    assert isinstance(jnp.finfo(np.float32), jnp.finfo)
    assert isinstance(jnp.iinfo(np.int32), jnp.iinfo)
    assert isinstance(jnp.iinfo(jnp.int4), jnp.iinfo)
    assert not isinstance(3, jnp.finfo)
    assert float(jnp.finfo(jnp.float8_e4m3fn).max) == 448.0
    assert float(jnp.finfo(jnp.bfloat16).eps) == float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps)
    assert jnp.finfo(jnp.complex64).dtype == np.float32
    assert int(jnp.iinfo(jnp.int4).max) == 7
    assert int(jnp.iinfo(jnp.array(1, jnp.int8)).max) == 127


def test_finfo_of_integers_raises_as_jax():
    # (numpy's words, which JAX's ml_dtypes.finfo passes on: they changed in numpy 2.5)
    with pytest.raises(ValueError, match="not inexact|not compatible with finfo"):
        jnp.finfo(jnp.int32)
    with pytest.raises(ValueError, match="Invalid integer data type"):
        jnp.iinfo(jnp.float32)


# ------------------------------------------------------------------ primal_tangent_dtype

def test_primal_tangent_dtype_as_jax():
    d = primal_tangent_dtype(jnp.float32, jnp.bfloat16)
    assert repr(d) == str(d) == d.name == "PrimalTangentDType{f32/bf16}"
    assert d.primal_dtype == np.float32 and d.tangent_dtype == jnp.bfloat16
    assert jax.dtypes.issubdtype(d, jax.dtypes.extended)
    assert d == primal_tangent_dtype("float32", "bfloat16")
    assert hash(d) == hash(primal_tangent_dtype("float32", "bfloat16"))
    assert str(primal_tangent_dtype(np.int32, jax.dtypes.float0, name="foo")) == "foo"
    with pytest.raises(AttributeError):
        d.itemsize


def test_primal_tangent_dtype_narrows_64_bit_types():
    d = primal_tangent_dtype(np.float64, np.complex128)
    expected = ("PrimalTangentDType{f64/c128}" if jax.config.jax_enable_x64
                else "PrimalTangentDType{f32/c64}")
    assert d.name == expected


def test_primal_tangent_dtype_refuses_none():
    with pytest.raises(ValueError, match="Invalid argument to dtype: None."):
        primal_tangent_dtype("float32", None)


# ------------------------------------------------------------------------------- EArray

def test_earray_attributes_as_jax():
    d = primal_tangent_dtype(jnp.float32, jnp.bfloat16)
    e = EArray(ShapedArray((3,), d), jnp.ones(3))
    assert repr(e) == "EArray([1., 1., 1.], dtype=float32)"
    assert (e.shape, e.dtype, e.ndim, e.size, len(e)) == ((3,), d, 1, 3, 3)
    assert isinstance(e, jax.Array)
    assert jax.tree_util.tree_leaves(e) == [e]  # a pytree leaf, as in JAX
    assert e.block_until_ready() is e
    np.testing.assert_array_equal(np.asarray(e.copy()._data), np.ones(3))
    with pytest.raises(TypeError, match="unhashable type: 'EArray'"):
        hash(e)
    scalar = EArray(ShapedArray((), d), jnp.ones(()))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(scalar)
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(scalar)


def test_computing_on_a_primal_tangent_earray_is_not_implemented():
    d = primal_tangent_dtype(jnp.float32, jnp.bfloat16)
    e = EArray(ShapedArray((3,), d), jnp.ones(3))
    with pytest.raises(NotImplementedError, match="extended dtype PrimalTangentDType"):
        jax.jit(lambda v: v)(e)


# ------------------------------------------------------------------------------ cur_qdd

def test_cur_qdd_as_jax():
    with pytest.raises(AttributeError, match="object has no attribute 'cur_qdd'"):
        cur_qdd(jnp.ones(3))
    assert jax.jit(cur_qdd)(jnp.ones(3)) is None  # JAX: None for a type without qdd


def test_cur_qdd_asks_the_value():
    class Box:
        def cur_qdd(self):
            return ("shape", 3)
    assert cur_qdd(Box()) == ("shape", 3)


# -------------------------------------------------------------------- compilation_cache

def test_compilation_cache_module_as_jax():
    names = {n for n in dir(cc) if not n.startswith("_")}
    assert {"set_cache_dir", "reset_cache"} <= names
    assert hasattr(jax.experimental.compilation_cache, "compilation_cache")


def test_set_cache_dir_stores_compiled_code(tmp_path):
    before = jax.config.jax_compilation_cache_dir
    try:
        cc.set_cache_dir(str(tmp_path))
        assert jax.config.jax_compilation_cache_dir == str(tmp_path)
        cc.reset_cache()  # JAX keeps the folder option
        assert jax.config.jax_compilation_cache_dir == str(tmp_path)
        out = jax.jit(lambda v: v * 3.0 + 0.125)(jnp.arange(5.0))
        np.testing.assert_allclose(np.asarray(out), np.arange(5.0) * 3.0 + 0.125)
        assert any(tmp_path.rglob("*")), "nothing was written to the cache folder"
        cc.set_cache_dir(None)
        assert jax.config.jax_compilation_cache_dir is None
    finally:
        jax.config.update("jax_compilation_cache_dir", before)


@pytest.mark.parametrize("bad", [pathlib.Path("/tmp/x2"), 3])
def test_set_cache_dir_refuses_non_strings_as_jax(bad):
    with pytest.raises(ValueError, match="new string config value must be None or of type str"):
        cc.set_cache_dir(bad)


# ---------------------------------------------------------------------------- mesh_utils

def test_create_device_mesh_as_jax():
    device = jax.devices()[0]
    mesh = mesh_utils.create_device_mesh((1,))
    assert mesh.dtype == object and mesh.shape == (1,) and mesh[0] is device
    assert mesh_utils.create_device_mesh([1, 1]).shape == (1, 1)
    assert mesh_utils.create_device_mesh(()).shape == ()
    assert jax.sharding.Mesh(mesh_utils.create_device_mesh((1, 1)), ("a", "b")).size == 1


@pytest.mark.parametrize("call,message", [
    (lambda: mesh_utils.create_device_mesh((2,)),
     "Number of devices 1 must equal the product of mesh_shape (2,)"),
    (lambda: mesh_utils.create_device_mesh(("a",)),
     "`mesh_shape` passed to `create_device_mesh` should be a sequence of ints. Got ('a',)"),
    (lambda: mesh_utils.create_device_mesh((1,), devices=[]),
     "Number of devices 0 must equal the product of mesh_shape (1,)"),
    (lambda: mesh_utils.create_hybrid_device_mesh((1,), (2,), process_is_granule=True),
     "Number of slices 1 must equal the product of dcn_mesh_shape (2,)"),
    (lambda: mesh_utils.create_hybrid_device_mesh((2,), (1,), process_is_granule=True),
     "Number of devices 1 must equal the product of mesh_shape (2,)"),
])
def test_mesh_shape_errors_as_jax(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message


def test_hybrid_mesh_over_processes():
    mesh = mesh_utils.create_hybrid_device_mesh((1, 1), (1, 1), process_is_granule=True)
    assert mesh.shape == (1, 1) and mesh[0, 0] is jax.devices()[0]
    with pytest.raises(ValueError, match="does not have attribute slice_index"):
        mesh_utils.create_hybrid_device_mesh((1,), (1,))  # CPU devices have no slices


def test_device_kind_handler_is_used():
    calls = []

    def handler(shape, devices, *, contiguous_submeshes):
        calls.append((shape, contiguous_submeshes))
        return np.array(devices, dtype=object).reshape(shape)[..., ::-1]

    kind = jax.devices()[0].device_kind
    mesh_utils.device_kind_handler_dict[kind] = handler
    try:
        mesh_utils.create_device_mesh((1,), contiguous_submeshes=True)
    finally:
        del mesh_utils.device_kind_handler_dict[kind]
    assert calls == [((1,), True)]
