"""Regression tests for the bugs issue 10 found by running JAX programs on jaxlite, each
against JAX 0.10.2's behaviour."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def test_unsigned_scalar_types_take_their_whole_range():
    assert int(jnp.uint32(2998342421)) == 2998342421
    assert jnp.uint32(2998342421).dtype == np.uint32
    assert int(jnp.array(2**31, dtype=jnp.uint32)) == 2**31
    assert int(jax.jit(lambda: jnp.uint32(2998342421))()) == 2998342421
    for make, value in ((jnp.uint32, 2**32), (jnp.uint32, -1), (jnp.int32, 2**31),
                        (jnp.int32, -2**31 - 1), (jnp.uint8, 300)):
        with pytest.raises(OverflowError, match=f"Python integer {value} out of bounds"):
            make(value)
    with jax.enable_x64():
        assert int(jnp.uint64(2**63 + 5)) == 2**63 + 5


@pytest.mark.parametrize("make,fill", [
    (jnp.zeros_like, 0), (jnp.ones_like, 1), (jnp.empty_like, 0),
    (lambda s, **kw: jnp.full_like(s, 3, **kw), 3),
])
def test_like_functions_take_shape_dtype_structs(make, fill):
    spec = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    out = make(spec)
    assert out.shape == (2, 3) and out.dtype == np.float32 and not out.weak_type
    np.testing.assert_array_equal(out, np.full((2, 3), fill, np.float32))
    assert make(spec, dtype=jnp.int32).dtype == np.int32
    assert make(spec, shape=(3, 1)).shape == (3, 1)
    assert jax.jit(lambda: make(spec))().shape == (2, 3)


def test_lowered_compiler_ir_has_as_hlo_text():
    lowered = jax.jit(lambda a, b: a @ b.T).lower(jnp.ones((1, 3)), jnp.ones((2, 3)))
    text = lowered.compiler_ir("hlo").as_hlo_text()
    assert text == lowered.as_text() and text.startswith("HloModule jit__lambda")


def test_stages_classes():
    f = jax.jit(lambda x, y: x + y, donate_argnums=0)
    assert isinstance(f, jax.stages.Wrapped)
    lowered = f.lower(jnp.ones(2), jnp.ones(2))
    assert isinstance(lowered, jax.stages.Lowered)
    args, kwargs = lowered.args_info
    assert kwargs == {} and [a.donated for a in args] == [True, False]
    assert args[0].shape == (2,) and args[0].dtype == np.float32
    compiled = lowered.compile()
    assert isinstance(compiled, jax.stages.Compiled)
    np.testing.assert_array_equal(compiled(jnp.ones(2), jnp.ones(2)), [2.0, 2.0])
    assert isinstance(f.trace(jnp.ones(2), jnp.ones(2)), jax.stages.Traced)


def test_numpy_scalars_are_strongly_typed_as_in_jax():
    out = jax.jit(lambda x: x)(np.float64(3))
    assert out.dtype == np.float32 and not out.weak_type
    assert jax.jit(lambda x: x)(3.0).weak_type
    assert (jnp.float32(2) + np.float64(1)).dtype == np.float32


def test_shape_dtype_struct_keeps_its_dtype():
    spec = jax.ShapeDtypeStruct((3,), jnp.float64)
    assert spec.dtype == np.float64  # as JAX: not canonicalized on construction
    assert jax.eval_shape(lambda x: x, spec).dtype == np.float32
    assert jax.ShapeDtypeStruct((3,), int).dtype == np.int64
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.zeros_like(spec).dtype == np.float32


def test_array_format_follows_numpy():
    assert "{}".format(jnp.arange(3)) == "[0 1 2]"
    assert "{:.2f}".format(jnp.float32(1.5)) == "1.50"
    with pytest.raises(TypeError, match="unsupported format string"):
        "{:>10}".format(jnp.arange(3))


def test_broadcast_errors_have_jax_types():
    with pytest.raises(TypeError, match="^add got incompatible shapes for broadcasting"):
        jnp.ones(3) + jnp.ones(2)
    with pytest.raises(TypeError, match="^maximum got incompatible shapes"):
        jnp.maximum(jnp.ones(3), jnp.ones(2))
    with pytest.raises(ValueError, match=r"^Incompatible shapes for broadcasting: "
                                         r"shapes=\[\(3,\), \(2,\)\]"):
        jnp.broadcast_shapes((3,), (2,))
    with pytest.raises(ValueError, match="^Incompatible shapes for broadcasting"):
        jnp.where(jnp.ones(3) > 0, jnp.ones(2), 0)
    for decomposition in (jnp.linalg.svd, jnp.linalg.qr):
        with pytest.raises(TypeError, match="must have rank at least 2"):
            decomposition(jnp.ones(3))


def test_arange_with_step_and_no_start():
    assert jnp.arange(10, step=3).tolist() == [0, 3, 6, 9]
    assert jnp.arange(2, 10, 3).tolist() == [2, 5, 8]
    assert jnp.arange(start=2, stop=5).tolist() == [2, 3, 4]


def test_at_set_takes_a_tuple_of_traced_values():
    out = jax.jit(lambda a, b: jnp.zeros((3, 2)).at[1, :].set((a, b)))(1.0, 2.0)
    np.testing.assert_array_equal(out, [[0, 0], [1, 2], [0, 0]])


def test_finfo_of_a_python_value_is_a_type_error():
    # numpy would answer with float64's limits; a Python value names no width.
    for value in (1.0, 3, True, 1j):
        with pytest.raises(TypeError, match=f"Cannot interpret '{value!r}' as a data type"):
            jnp.finfo(value)
    assert jnp.finfo(np.float32(1)).dtype == np.float32
    assert jnp.finfo(jnp.ones(2, jnp.bfloat16)).eps == 2.0 ** -7


def test_polyval_with_a_coefficient_per_column():
    # JAX (and numpy) run Horner's rule along p's first axis, broadcasting the rest with x.
    p = jnp.arange(6.0).reshape(3, 2)
    x = jnp.array([[1.0], [2.0]])
    np.testing.assert_array_equal(jnp.polyval(p, x), np.polyval(np.arange(6.0).reshape(3, 2),
                                                                 np.array([[1.0], [2.0]])))
    np.testing.assert_array_equal(jax.jit(jnp.polyval)(p, x), [[6, 9], [8, 15]])
    assert jnp.polyval(jnp.array([1, 2]), 3).dtype == np.int32
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.polyval(p, jnp.ones(3))
    with pytest.raises(IndexError):
        jnp.polyval(jnp.array(2.0), 3.0)


def test_astype_none_is_the_default_float():
    out = jnp.arange(3).astype(None)
    assert out.dtype == np.float32 and not out.weak_type
    np.testing.assert_array_equal(jnp.astype(jnp.arange(2), None, device=jax.devices()[0]),
                                  [0.0, 1.0])
