"""flax.linen: a small MLP with dropout and batch norm trained with optax.sgd."""
import json

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Dense(16)(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        x = nn.relu(x)
        x = nn.Dropout(0.1, deterministic=not train)(x)
        return nn.Dense(1)(x)


key = jax.random.PRNGKey(42)
k_data, k_init, k_drop = jax.random.split(key, 3)
x = jax.random.normal(k_data, (32, 4))
y = (x[:, :1] * 2.0 - x[:, 1:2]) ** 2
model = MLP()
variables = model.init({"params": k_init, "dropout": k_drop}, x, train=False)
params, stats = variables["params"], variables["batch_stats"]
opt = optax.sgd(0.01, momentum=0.9)
opt_state = opt.init(params)


@jax.jit
def step(params, stats, opt_state, rng):
    def loss_fn(p):
        out, updates = model.apply({"params": p, "batch_stats": stats}, x, train=True,
                                   rngs={"dropout": rng}, mutable=["batch_stats"])
        return jnp.mean((out - y) ** 2), updates["batch_stats"]
    (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = opt.update(grads, opt_state)
    return optax.apply_updates(params, updates), stats, opt_state, loss


losses = []
for i in range(30):
    params, stats, opt_state, loss = step(params, stats, opt_state, jax.random.fold_in(k_drop, i))
    losses.append(float(loss))
eval_out = model.apply({"params": params, "batch_stats": stats}, x, train=False)
print(json.dumps({"losses": losses[::5] + [losses[-1]], "eval_mean": float(eval_out.mean())}))
