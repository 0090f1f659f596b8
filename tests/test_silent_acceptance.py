"""Misuse that JAX 0.10.2 refuses and jaxlite used to accept silently (issue 11, section 1).

Exception types and messages recorded with /tmp/jaxvenv/bin/python (real JAX 0.10.2), e.g.
`jax.lax.convert_element_type(jnp.ones(3), object)` ->
TypeError("JAX only supports number, bool, and string dtypes, got dtype <class 'object'> in
convert_element_type"). Each case is checked eagerly and, where it applies, under jit.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.errors import JaxRuntimeError


@pytest.mark.parametrize("dtype", [object, np.str_, "V8", np.dtype("M8[s]")])
@pytest.mark.parametrize("under_jit", [False, True])
def test_convert_element_type_to_unsupported_dtype(dtype, under_jit):
    f = lambda x: lax.convert_element_type(x, dtype)  # noqa: E731
    with pytest.raises(TypeError, match="JAX only supports number, bool, and string dtypes, "
                                        r"got dtype .* in convert_element_type"):
        (jaxlite.jit(f) if under_jit else f)(jnp.ones(3))


def test_convert_element_type_without_dtype():
    with pytest.raises(ValueError, match="dtype must be specified"):
        lax.convert_element_type(jnp.ones(3), None)


@pytest.mark.parametrize("out_axes,shape,ndim", [(2, (3, 4), 2), (-3, (3, 4), 2),
                                                  (1, (3,), 1), (5, (2, 2, 2), 3)])
def test_vmap_out_axes_beyond_output_rank(out_axes, shape, ndim):
    f = (lambda x: x * 2) if len(shape) == ndim else (lambda x: x.sum())
    with pytest.raises(ValueError, match=f"axis {out_axes} is out of bounds for array of "
                                         f"dimension {ndim}"):
        jaxlite.vmap(f, out_axes=out_axes)(jnp.ones(shape))


@pytest.mark.parametrize("out_axes,expected", [(-1, (4, 3)), (1, (4, 3)), (-2, (3, 4))])
def test_vmap_out_axes_in_range_still_work(out_axes, expected):
    out = jaxlite.vmap(lambda x: x * 2, out_axes=out_axes)(jnp.ones((3, 4)))
    assert out.shape == expected


def _bad_rule(tangent):
    @jaxlite.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), tangent

    return f


@pytest.mark.parametrize("tangent,got", [(jnp.ones(5), "float32[5]"),
                                         (jnp.ones(3, jnp.int32), "int32[3]"),
                                         (jnp.ones((3, 1)), "float32[3,1]")])
@pytest.mark.parametrize("how", ["jvp", "grad", "jit_grad"])
def test_custom_jvp_tangent_of_another_type(tangent, got, how):
    f = _bad_rule(tangent)
    x = jnp.ones(3)
    message = re.escape("Custom JVP rule must produce primal and tangent outputs with "
                        "corresponding shapes and dtypes. Expected float32[3] (tangent type "
                        f"of float32[3]) but got {got}.")
    with pytest.raises(TypeError, match=message):
        if how == "jvp":
            jaxlite.jvp(f, (x,), (x,))
        elif how == "grad":
            jaxlite.grad(lambda x: f(x).sum())(x)
        else:
            jaxlite.jit(jaxlite.grad(lambda x: f(x).sum()))(x)


def test_custom_jvp_correct_tangent_still_works():
    f = _bad_rule(jnp.full(3, 2.0))
    _, t = jaxlite.jvp(f, (jnp.ones(3),), (jnp.ones(3),))
    np.testing.assert_array_equal(t, np.full(3, 2.0, np.float32))


def _two(a, b):
    return a + b


@pytest.mark.parametrize("kind,nums", [("static_argnums", 5), ("static_argnums", (0, -3)),
                                       ("static_argnums", 2), ("donate_argnums", 5),
                                       ("donate_argnums", (1, 2))])
def test_argnums_beyond_arity_raise_at_jit_time(kind, nums):
    shown = (nums,) if isinstance(nums, int) else nums
    message = re.escape(f"Jitted function has {kind}={shown}, but only accepts 2 positional "
                        "arguments.")
    with pytest.raises(ValueError, match=message):
        jaxlite.jit(_two, **{kind: nums})


def test_argnums_with_varargs_are_accepted():
    f = jaxlite.jit(lambda *a: a[0], static_argnums=5)
    np.testing.assert_array_equal(f(jnp.ones(3), jnp.ones(3)), np.ones(3, np.float32))


@pytest.mark.parametrize("donate,phrase,first,second", [
    (0, "Attempt to use a buffer that was previously donated in the same call", 0, 1),
    (1, "Attempt to donate a buffer which is also used by the same call", 0, 1),
    ((0, 1), "Attempt to use a buffer that was previously donated in the same call", 0, 1)])
def test_same_array_donated_and_used(donate, phrase, first, second):
    x = jnp.ones(3)
    f = jaxlite.jit(_two, donate_argnums=donate)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX's "Some donated buffers were not usable" too
        with pytest.raises(JaxRuntimeError, match=rf"INVALID_ARGUMENT: {phrase} to Execute\(\) "
                           rf"\(flattened argument {second}, replica 0, partition 0, "
                           rf"first use: {first}\)"):
            f(x, x)
    assert not x.is_deleted()  # the refused call ran nothing


def test_donation_of_distinct_arrays_and_unusable_donation_still_work():
    x = jnp.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # JAX: no result can take the donated buffer, so nothing is donated and no error.
        assert float(jaxlite.jit(lambda a, b: a.sum(), donate_argnums=0)(x, x)) == 3.0
    out = jaxlite.jit(_two, donate_argnums=0)(x, jnp.ones(3))
    np.testing.assert_array_equal(out, np.full(3, 2.0, np.float32))
    assert x.is_deleted()
