"""create_token and after_all: jaxlite's tokens are bool[0] arrays (see lax/tokens.py);
the errors are JAX 0.10.2's."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def test_tokens():
    token = lax.create_token()
    assert token.shape == (0,) and token.dtype == np.bool_
    assert lax.after_all(token, lax.create_token(jnp.ones(3))).shape == (0,)
    assert lax.after_all().shape == (0,)
    text = str(jax.make_jaxpr(lambda: lax.after_all(lax.create_token(),
                                                    lax.create_token()))())
    assert "create_token" in text and "after_all" in text
    assert jax.jit(lambda t: lax.after_all(t))(token).shape == (0,)
    np.testing.assert_array_equal(jax.vmap(lambda x: (lax.create_token(x), x)[1])(jnp.ones(3)),
                                  np.ones(3))
    assert float(jax.grad(lambda x: (lax.create_token(x), x)[1])(1.0)) == 1.0
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(jnp.ones(2))
