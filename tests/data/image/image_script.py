"""Resizes and scales one random image with every method, shape change and antialias
setting; writes a summary of each result (shape, dtype, sum, sum of squares, first
values) as JSON to the path given second. `/tmp/jaxvenv/bin/python image_script.py jax
image_jax.json` recorded JAX 0.10.2's; tests/test_image.py compares jaxlite's."""
import sys, numpy as np
if sys.argv[1] == 'jax':
    import jax, jax.numpy as jnp; from jax import image
else:
    import jaxlite as jax, jaxlite.numpy as jnp; from jaxlite import image
rng = np.random.default_rng(0)
x = jnp.asarray(rng.standard_normal((2, 7, 9, 3)).astype(np.float32))
out = {}
for method in ['nearest', 'linear', 'cubic', 'lanczos3', 'lanczos5', 'cubic-pytorch', 'area']:
    for shape in [(2, 14, 5, 3), (2, 3, 20, 3), (2, 1, 4, 3)]:
        for aa in [True, False]:
            r = image.resize(x, shape, method, antialias=aa)
            out[f"{method}-{shape}-{aa}"] = np.asarray(r)
out["enum-same-shape"] = np.asarray(image.resize(x, (2, 7, 9, 3), image.ResizeMethod.LINEAR))
out["int-nearest"] = np.asarray(image.resize(jnp.arange(12, dtype=jnp.int32).reshape(3, 4), (5, 2), 'nearest'))
out["int-linear"] = np.asarray(image.resize(jnp.arange(12, dtype=jnp.int32).reshape(3, 4), (5, 2), 'linear'))
out["bf16"] = np.asarray(image.resize(x.astype(jnp.bfloat16), (2, 5, 5, 3), 'cubic').astype(jnp.float32))
for method in ['linear', 'cubic', 'lanczos3', 'area', 'cubic-pytorch']:
    for aa in [True, False]:
        r = image.scale_and_translate(x, (2, 10, 6, 3), (1, 2), jnp.array([1.3, 0.6]), jnp.array([0.5, -1.0]), method, antialias=aa)
        out[f"st-{method}-{aa}"] = np.asarray(r)
out["grad"] = np.asarray(jax.grad(lambda x: (image.resize(x, (2, 5, 11, 3), 'lanczos3') ** 2).sum())(x))
out["jit-st"] = np.asarray(jax.jit(lambda x, s: image.scale_and_translate(x, (2, 10, 6, 3), (1, 2), s, jnp.zeros(2), 'linear'))(x, jnp.array([1.3, 0.6])))
import json
summary = {k: {"shape": list(v.shape), "dtype": str(v.dtype),
               "sum": float(v.astype(np.float64).sum()),
               "sumsq": float((v.astype(np.float64) ** 2).sum()),
               "first": v.astype(np.float64).ravel()[:6].tolist()} for k, v in out.items()}
with open(sys.argv[2], "w") as f:
    json.dump(summary, f, indent=0, sort_keys=True)
for f in [lambda: image.resize(x, (2, 3), 'linear'), lambda: image.resize(x, (2, 3, 3, 3), 'foo'), lambda: image.scale_and_translate(x, (2, 10, 6, 3), (1, 2), jnp.array([1.3, 0.6]), jnp.array([0.5, -1.0]), 'nearest'),
          lambda: jax.jit(lambda s: image.scale_and_translate(x, (2, 10, 6, 3), (1, 2), s, jnp.zeros(2), 'cubic-pytorch', antialias=True))(jnp.array([1.3, 0.6]))]:
    try: f(); print("ok")
    except Exception as e: print(type(e).__name__, str(e)[:120])
