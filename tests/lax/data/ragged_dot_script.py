"""Prints ragged_dot and ragged_dot_general results in the three modes, with gradients,
low precision and errors. `/tmp/jaxvenv/bin/python ragged_dot_script.py jax >
ragged_dot_jax.txt` recorded the expected output with JAX 0.10.2; tests/lax/test_ragged_dot.py
runs it with jaxlite and compares."""
import sys, numpy as np
if sys.argv[1] == 'jax':
    import jax, jax.numpy as jnp; from jax import lax
else:
    import jaxlite as jax, jaxlite.numpy as jnp; from jaxlite import lax
rng = np.random.default_rng(0)
def show(a): print(np.asarray(a).shape, np.asarray(a).dtype, np.round(np.asarray(a).astype(np.float64), 4).ravel().tolist())
lhs = jnp.asarray(rng.standard_normal((7, 3)).astype(np.float32))
rhs = jnp.asarray(rng.standard_normal((3, 3, 2)).astype(np.float32))
gs = jnp.array([2, 0, 4], jnp.int32)
show(lax.ragged_dot(lhs, rhs, gs))
show(lax.ragged_dot(lhs, rhs, jnp.array([1, 2, 1], jnp.int32)))
show(jax.jit(lax.ragged_dot)(lhs, rhs, gs))
show(lax.ragged_dot(lhs.astype(jnp.bfloat16), rhs.astype(jnp.bfloat16), gs))
show(lax.ragged_dot(lhs.astype(jnp.bfloat16), rhs.astype(jnp.bfloat16), gs, preferred_element_type=jnp.float32))
g = jax.grad(lambda l, r: lax.ragged_dot(l, r, gs).sum(), argnums=(0, 1))(lhs, rhs); show(g[0]); show(g[1])
D = lax.RaggedDotDimensionNumbers
# mode 2: ragged contracting: lhs [m,k], rhs [k,n] -> [g,m,n]
l2 = jnp.asarray(rng.standard_normal((2, 6)).astype(np.float32)); r2 = jnp.asarray(rng.standard_normal((6, 3)).astype(np.float32))
show(lax.ragged_dot_general(l2, r2, jnp.array([2, 3, 1], jnp.int32), D((([1], [0]), ([], [])), [1], [])))
show(lax.ragged_dot_general(l2, r2, jnp.array([2, 3], jnp.int32), D((([1], [0]), ([], [])), [1], [])))
# mode 3: ragged batch: lhs [b,m,k], rhs [b,k,n]
l3 = jnp.asarray(rng.standard_normal((4, 2, 3)).astype(np.float32)); r3 = jnp.asarray(rng.standard_normal((4, 3, 2)).astype(np.float32))
show(lax.ragged_dot_general(l3, r3, jnp.array([1, 2], jnp.int32), D((([2], [1]), ([0], [0])), [0], [])))
# mode 1 with batch: lhs [b, m, k], rhs [g, b, k, n]
l4 = jnp.asarray(rng.standard_normal((2, 5, 3)).astype(np.float32)); r4 = jnp.asarray(rng.standard_normal((2, 2, 3, 4)).astype(np.float32))
show(lax.ragged_dot_general(l4, r4, jnp.array([3, 2], jnp.int32), D((([2], [2]), ([0], [1])), [1], [0])))
for bad in [lambda: lax.ragged_dot(lhs, rhs, jnp.array([2, 0], jnp.int32)), lambda: lax.ragged_dot(lhs, rhs, gs, group_offset=jnp.array([1])), lambda: lax.ragged_dot(lhs, rhs[:, :2], gs)]:
    try: show(bad())
    except Exception as e: print(type(e).__name__, str(e)[:200])
print(D((([1], [0]), ([], [])), [1], []))
