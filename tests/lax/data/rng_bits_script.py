"""Prints rng_bit_generator results over shapes, dtypes and algorithms.

`/tmp/jaxvenv/bin/python rng_bits_script.py jax > rng_bits_jax.txt` recorded the expected
output with JAX 0.10.2; tests/lax/test_rng.py runs it with jaxlite and compares. With a
second argument `quick`, the jit lines are printed for three shapes only (compiling every
case takes minutes).
"""
import sys, numpy as np
if sys.argv[1] == "jax":
    import jax, jax.numpy as jnp; from jax import lax
else:
    import jaxlite as jax, jaxlite.numpy as jnp; from jaxlite import lax
k = jnp.array([1,2,3,4], jnp.uint32)
QUICK = [(5,), (2, 3), (3, 3)]
for jit in [False, True]:
  for alg in [lax.RandomAlgorithm.RNG_DEFAULT, lax.RandomAlgorithm.RNG_THREE_FRY, lax.RandomAlgorithm.RNG_PHILOX]:
    for shape in [(), (1,),(2,),(5,),(6,),(2,2),(2,3),(3,2),(1,5),(5,1),(3,3),(2,2,2),(0,),(3,0)]:
      if jit and sys.argv[2:] == ['quick'] and shape not in QUICK:
        continue
      for dt in [jnp.uint32, jnp.uint8, jnp.uint16]:
        f = (lambda k: lax.rng_bit_generator(k, shape, dtype=dt, algorithm=alg))
        nk, b = (jax.jit(f) if jit else f)(k)
        print(jit, alg, shape, np.asarray(b).dtype, np.asarray(b).ravel().tolist(), np.asarray(nk).tolist())
nk, b = lax.rng_bit_generator(jnp.array([1,2,0xffffffff,0xffffffff], jnp.uint32), (9,)); print(np.asarray(b).tolist(), np.asarray(nk).tolist())
nk, b = lax.rng_bit_generator(jnp.array([1,2,0xffffffff,0xffffffff], jnp.uint32), (3,), algorithm=1); print(np.asarray(b).tolist(), np.asarray(nk).tolist())
with jax.enable_x64(True):
  for alg in [0, 1]:
    nk, b = lax.rng_bit_generator(k, (3,), dtype=jnp.uint64, algorithm=alg); print(np.asarray(b).tolist(), np.asarray(nk).tolist())
    nk, b = lax.rng_bit_generator(jnp.array([1 | 2<<32, 3 | 4<<32], jnp.uint64), (2,3), dtype=jnp.uint16, algorithm=alg); print(np.asarray(b).tolist(), np.asarray(nk).tolist(), nk.dtype)
    nk, b = jax.jit(lambda k: lax.rng_bit_generator(k, (3,), dtype=jnp.uint64, algorithm=alg))(jnp.array([1 | 2<<32, 3 | 4<<32], jnp.uint64)); print(np.asarray(b).tolist(), np.asarray(nk).tolist())
print(jax.make_jaxpr(lambda k: lax.rng_bit_generator(k, (5,)))(k))
for bad in [lambda: lax.rng_bit_generator(k, (3,), dtype=jnp.float32), lambda: lax.rng_bit_generator(k, (3,), dtype=jnp.int32)]:
  try: bad()
  except Exception as e: print(type(e).__name__, e)
