"""optax: an MLP regression trained with adamw and a cosine schedule, plus clipping."""
import json

import jax
import jax.numpy as jnp
import optax

key = jax.random.PRNGKey(0)
k1, k2, k3, k4 = jax.random.split(key, 4)
x = jax.random.normal(k1, (64, 8))
y = jnp.sin(x.sum(axis=1, keepdims=True))
params = {"w1": jax.random.normal(k2, (8, 32)) * 0.3, "b1": jnp.zeros(32),
          "w2": jax.random.normal(k3, (32, 1)) * 0.3, "b2": jnp.zeros(1)}


def loss_fn(p):
    h = jax.nn.gelu(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


schedule = optax.warmup_cosine_decay_schedule(0.0, 3e-2, 10, 100)
opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-3))
state = opt.init(params)


@jax.jit
def step(p, s):
    loss, grads = jax.value_and_grad(loss_fn)(p)
    updates, s = opt.update(grads, s, p)
    return optax.apply_updates(p, updates), s, loss


losses = []
for i in range(100):
    params, state, loss = step(params, state)
    losses.append(float(loss))
print(json.dumps({"losses": losses[::10] + [losses[-1]],
                  "w2_sum": float(params["w2"].sum())}))
