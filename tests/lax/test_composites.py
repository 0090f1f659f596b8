"""lax.composite and lax.platform_dependent against JAX 0.10.2 on the CPU
(/tmp/jaxvenv/bin/python: the same calls; values and messages are its output)."""
from __future__ import annotations

import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def test_composite_values_jaxpr_and_refusals():
    fma = lax.composite(lambda x, y: x * y + 1, name="my.fma")
    assert float(fma(2.0, 3.0)) == 7.0 and float(jax.jit(fma)(2.0, 3.0)) == 7.0
    text = str(jax.make_jaxpr(fma)(2.0, 3.0))
    assert "composite[" in text and "name=my.fma" in text and "version=0" in text
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        jax.grad(fma)(2.0, 3.0)
    with pytest.raises(NotImplementedError, match="Batching rule for 'composite' not "
                                                  "implemented"):
        jax.vmap(fma)(jnp.ones(3), jnp.ones(3))
    scaled = lax.composite(lambda x, *, scale: x * scale, name="my.scale", version=2)
    assert float(scaled(2.0, scale=4.0)) == 8.0
    with pytest.raises(TypeError, match="Found a JAX Tracer as an attribute"):
        jax.jit(lambda s: scaled(2.0, scale=s))(4.0)


def test_platform_dependent_takes_the_cpu_branch():
    def f(x):
        return lax.platform_dependent(x, cpu=lambda x: x * 2, default=lambda x: x * 3)
    assert float(f(1.0)) == 2.0 and float(jax.jit(f)(1.0)) == 2.0
    assert float(jax.grad(f)(1.0)) == 2.0
    other = lax.platform_dependent(1.0, tpu=lambda x: x * 2, default=lambda x: x * 3)
    assert float(other) == 3.0
    assert float(lax.platform_dependent(1.0, foo=lambda x: x * 2, default=lambda x: x)) == 1.0
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm' for lax.platform_dependent."):
        lax.platform_dependent(1.0, gpu=lambda x: x * 2, default=lambda x: x)
    with pytest.raises(NotImplementedError):
        lax.platform_dependent(1.0, tpu=lambda x: x * 2)
