"""Prints scaled_dot results (scales in float32 and float8_e8m0fnu, default scales, jit,
other dimension numbers) and errors. `/tmp/jaxvenv/bin/python scaled_dot_script.py jax >
scaled_dot_jax.txt` recorded JAX 0.10.2's output; tests/lax/test_scaled_dot.py compares."""
import sys, numpy as np
if sys.argv[1] == 'jax':
    import jax, jax.numpy as jnp; from jax import lax
else:
    import jaxlite as jax, jaxlite.numpy as jnp; from jaxlite import lax
rng=np.random.default_rng(0)
x=jnp.asarray(rng.standard_normal((2,3,8)),jnp.float32); y=jnp.asarray(rng.standard_normal((2,8,4)),jnp.float32)
s1=jnp.asarray(2.0**rng.integers(-2,3,(2,3,2)), jnp.float32); s2=jnp.asarray(2.0**rng.integers(-2,3,(2,2,4)),jnp.float32)
def show(r): print(r.dtype, r.shape, np.asarray(r.astype(jnp.float32)).ravel().tolist())
show(lax.scaled_dot(x, y, lhs_scale=s1, rhs_scale=s2))
show(lax.scaled_dot(x, y, lhs_scale=s1.astype(jnp.float8_e8m0fnu), rhs_scale=s2.astype(jnp.float8_e8m0fnu), preferred_element_type=jnp.float32))
show(lax.scaled_dot(x, y))
show(jax.jit(lambda x, y: lax.scaled_dot(x, y, preferred_element_type=jnp.float32))(x, y))
show(lax.scaled_dot(x[0], y[0].T, dimension_numbers=(((1,), (1,)), ((), ()))))
for bad in [lambda: lax.scaled_dot(x[0], y[0,:,:1].T), lambda: lax.scaled_dot(x, y, lhs_scale=s1[..., :1].repeat(3, -1)), lambda: lax.scaled_dot(x[0,0], y[0,0])]:
    try: show(bad())
    except Exception as e: print(type(e).__name__, e)
