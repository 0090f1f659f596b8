"""Complex fusions, which the kernel builders do not compute, run on the host with the cpu
backend's numbers (they raised from the builders, crashing the compile)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp

PROGRAMS = {
    "scaled rfft": lambda x: jnp.fft.rfft(x * 2.0) * (1 + 2j),
    "grad through rfft": jax.grad(lambda x: jnp.abs(jnp.fft.rfft(x)).sum()),
    "complex elementwise": lambda x: jnp.exp(1j * x) * jnp.conj(x + 1j),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_complex_fusions_fall_back_with_the_cpu_numbers(name):
    fn = PROGRAMS[name]
    x = np.linspace(-1.0, 2.0, 16, dtype=np.float32)
    got = np.asarray(jax.jit(fn, backend="gpu-interpreter")(x))
    want = np.asarray(jax.jit(fn, backend="cpu")(x))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    text = jax.jit(fn, backend="gpu-interpreter").lower(x).compile().as_text("kernels")
    assert "host" in text
