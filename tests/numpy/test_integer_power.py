"""jnp.power of integer arrays to integer arrays gives JAX 0.10.2's numbers: square-and-
multiply over the exponent's low 6 bits, wrapping, and 0 for a zero base with a nonzero
exponent (so 3 ** 64 is 1 and 3 ** -1 is 3 ** 63; a fuzzer finding: jaxlite used every
exponent bit and a truncated reciprocal for negative exponents).

The digests are of JAX's results on the grid below (its recording: the same grid under
/tmp/jaxvenv/bin/python, `np.asarray(jnp.power(jnp.asarray(b), jnp.asarray(e)))`, eager and
jit equal, SHA-256 of the bytes, first 32 hex digits).
"""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp

BASES = np.array([-7, -3, -2, -1, 0, 1, 2, 3, 7, 100], np.int64)
EXPONENTS = np.array([-129, -100, -64, -7, -3, -1, 0, 1, 2, 31, 63, 64, 65, 127, 128, 1000],
                     np.int64)
JAX_DIGESTS = {
    "int8": "d48e2c57097c581a138db0d9cc19de09",
    "int16": "29df6e3145cdf164f4ca81f7e19c0ffa",
    "int32": "766947bae9505c93b45eb84922287016",
    "uint8": "d48e2c57097c581a138db0d9cc19de09",
    "uint32": "766947bae9505c93b45eb84922287016",
}


@pytest.mark.parametrize("mode", ["eager", "jit", "interpreter"])
@pytest.mark.parametrize("dtype", sorted(JAX_DIGESTS))
def test_integer_power_is_jaxs(dtype, mode):
    b, e = (a.astype(dtype) for a in np.meshgrid(BASES, EXPONENTS, indexing="ij"))
    run = {"eager": jnp.power, "jit": jax.jit(jnp.power),
           "interpreter": jax.jit(jnp.power, backend="interpreter")}[mode]
    out = np.asarray(run(jnp.asarray(b), jnp.asarray(e)))
    assert out.dtype == np.dtype(dtype)
    assert hashlib.sha256(out.tobytes()).hexdigest()[:32] == JAX_DIGESTS[dtype]


def test_small_cases_by_value():
    # JAX 0.10.2: 3**64 = 1, 3**65 = 3, 3**-1 = 3**63 = 2111105451, 0**64 = 0, 0**0 = 1,
    # 2**-1 = 0, (-1)**-3 = -1
    b = jnp.array([3, 3, 3, 0, 0, 2, -1], jnp.int32)
    e = jnp.array([64, 65, -1, 64, 0, -1, -3], jnp.int32)
    np.testing.assert_array_equal(np.asarray(jnp.power(b, e)),
                                  [1, 3, 2111105451, 0, 1, 0, -1])
    # a concrete scalar exponent keeps every bit (lax.integer_pow), as in JAX: 3**65 wraps
    np.testing.assert_array_equal(np.asarray(jnp.power(jnp.array([3], jnp.int32), 65)),
                                  [1820079875])
