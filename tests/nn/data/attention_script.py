"""dot_product_attention in every configuration (bias, mask, causal, lengths, windows,
grouped and multi-head, residual, bfloat16, float16, rank 3, gradient, jit), saved to the
.npz path given second; errors printed. `/tmp/jaxvenv/bin/python attention_script.py jax
attention_jax.npz` recorded JAX 0.10.2's; tests/nn/test_attention.py compares."""
import sys, numpy as np, json
if sys.argv[1] == 'jax':
    import jax, jax.numpy as jnp
else:
    import jaxlite as jax, jaxlite.numpy as jnp
rng = np.random.default_rng(0)
B, T, S, N, K, H = 2, 5, 6, 4, 2, 8
q = jnp.asarray(rng.standard_normal((B, T, N, H)).astype(np.float32))
k = jnp.asarray(rng.standard_normal((B, S, K, H)).astype(np.float32))
v = jnp.asarray(rng.standard_normal((B, S, K, H)).astype(np.float32))
bias = jnp.asarray(rng.standard_normal((B, 1, T, S)).astype(np.float32))
mask = jnp.asarray(rng.random((B, N, T, S)) < 0.8)
ql = jnp.array([3, 5], jnp.int32); kl = jnp.array([6, 2], jnp.int32)
out = {}
f = jax.nn.dot_product_attention
out['plain'] = f(q, k, v)
out['bias_mask'] = f(q, k, v, bias, mask)
out['causal_scale'] = f(q, k, v, is_causal=True, scale=0.3)
out['lengths'] = f(q, k, v, query_seq_lengths=ql, key_value_seq_lengths=kl)
out['window'] = f(q, k, v, local_window_size=(1, 2))
out['window_int'] = f(q, k, v, local_window_size=1, is_causal=True)
out['xla'] = f(q, k, v, implementation='xla')
enc, res = f(q, k, v, mask=mask, return_residual=True); out['res_enc'] = enc; out['res'] = res
out['bf16'] = f(q.astype(jnp.bfloat16), k.astype(jnp.bfloat16), v.astype(jnp.bfloat16), bias.astype(jnp.bfloat16)).astype(jnp.float32)
out['f16'] = f(q.astype(jnp.float16), k.astype(jnp.float16), v.astype(jnp.float16)).astype(jnp.float32)
out['3d'] = f(q[0], k[0], v[0])
out['mha'] = f(q, jnp.concatenate([k, k], 2), jnp.concatenate([v, v], 2), mask=mask)
out['grad'] = jax.grad(lambda q, k, v: (f(q, k, v, bias, mask, is_causal=True) ** 2).sum(), argnums=(0, 1, 2))(q, k, v)[1]
out['jit'] = jax.jit(lambda q, k, v: f(q, k, v, is_causal=True))(q, k, v)
np.savez(sys.argv[2], **{kk: np.asarray(vv) for kk, vv in out.items()})
for bad in [lambda: f(q, k, v[..., :4]), lambda: f(q[..., :3, :], k, v), lambda: f(q, k, v, mask=mask.astype(jnp.int32)), lambda: f(q, k, v, implementation='foo'), lambda: f(q, k, v, query_seq_lengths=ql.astype(jnp.float32))]:
    try: bad(); print('ok')
    except Exception as e: print(type(e).__name__, e)
