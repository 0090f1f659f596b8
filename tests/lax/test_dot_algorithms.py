"""Dot algorithms, accuracy arguments and the enums of jax.lax, against JAX 0.10.2
(/tmp/jaxvenv/bin/python: the same calls; values and messages below are its output)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

P = lax.DotAlgorithmPreset
X = jnp.array([[1.0001, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("compiled", [False, True])
def test_presets_compute_in_their_types(compiled):
    def dot(a, p):
        return (jax.jit(lambda a: lax.dot(a, a, precision=p)) if compiled else
                (lambda a: lax.dot(a, a, precision=p)))(a)
    # F16 rounds float32 operands to float16 first: 1.0001 becomes 1.
    np.testing.assert_array_equal(dot(X, P.F16_F16_F16), [[7, 10], [15, 22]])
    # F64 computes in float64: 3 * 1.0001 + 12 rounds once.
    out = dot(X, P.F64_F64_F64)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.float32([[7.000200271606445, 10.000200271606445],
                                                   [15.000300407409668, 22.0]]))
    assert dot(X.astype(jnp.bfloat16), P.BF16_BF16_F32).dtype == jnp.bfloat16
    np.testing.assert_array_equal(dot(X, "F32_F32_F32"), dot(X, None))


@pytest.mark.parametrize("precision", [P.F16_F16_F32, P.TF32_TF32_F32, "F16_F16_F32",
                                       lax.DotAlgorithm(jnp.bfloat16, jnp.bfloat16,
                                                        jnp.float32)])
def test_presets_the_cpu_does_not_run(precision):
    with pytest.raises(ValueError, match="is not supported by dot_general on CPU"):
        lax.dot(X, X, precision=precision)
    # As in JAX, tracing is fine: the dot fails when it is computed.
    assert "dot_general" in str(jax.make_jaxpr(lambda x: lax.dot(x, x, precision=precision))(X))


def test_algorithm_jaxpr_and_gradient():
    text = str(jax.make_jaxpr(lambda x: lax.dot(x, x, precision=P.F32_F32_F32))(X))
    assert "precision=F32_F32_F32" in text
    grad = jax.grad(lambda x: lax.dot(x, x, precision=P.F32_F32_F32).sum())(X)
    np.testing.assert_allclose(grad, [[7.0002003, 11.0001], [9.0001, 13.0]], rtol=1e-6)


def test_preset_properties():
    assert [(m.name, m.value) for m in P][:3] == [("DEFAULT", 1), ("ANY_F8_ANY_F8_F32", 2),
                                                   ("ANY_F8_ANY_F8_F32_FAST_ACCUM", 3)]
    assert len(P) == 16 and P.F64_F64_F64.value == 16
    assert repr(P.DEFAULT) == "DotAlgorithmPreset.DEFAULT" and str(P.F32_F32_F32) == "F32_F32_F32"
    assert P.F16_F16_F32.supported_lhs_types == (np.float16,)
    assert P.F16_F16_F32.accumulation_type == np.float32
    assert P.DEFAULT.supported_lhs_types is None and P.DEFAULT.accumulation_type is None
    algorithm = lax.DotAlgorithm(jnp.float32, jnp.float32, jnp.float32)
    assert algorithm.lhs_component_count == 1 and not algorithm.allow_imprecise_accumulation


def test_accuracy_arguments_and_enums():
    x = jnp.array([0.5, 1.5])
    for f in (lax.exp, lax.tanh, lax.sin, lax.log, lax.sqrt, lax.logistic):
        np.testing.assert_array_equal(f(x, accuracy=lax.AccuracyMode.HIGHEST), f(x))
        np.testing.assert_array_equal(f(x, accuracy=lax.Tolerance(atol=1e-3, rtol=1e-3)), f(x))
    with pytest.raises(NotImplementedError, match="Accuracy 3 not supported"):
        lax.exp(x, accuracy=3)
    with pytest.raises(ValueError, match="Tolerances must be non-negative."):
        lax.Tolerance(atol=-1)
    with pytest.raises(ValueError, match="At least one of atol, rtol, or ulps must be set."):
        lax.Tolerance()
    assert [(m.name, m.value) for m in lax.AccuracyMode] == [("HIGHEST", 1), ("DEFAULT", 2)]
