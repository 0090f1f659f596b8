"""equinox: eqx.nn.MLP trained with filter_jit / filter_value_and_grad and optax."""
import json

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

key = jax.random.PRNGKey(3)
k_model, k_data = jax.random.split(key)
model = eqx.nn.MLP(in_size=3, out_size=1, width_size=16, depth=2, key=k_model)
x = jax.random.normal(k_data, (48, 3))
y = jnp.tanh(x @ jnp.array([[1.0], [-2.0], [0.5]]))
opt = optax.adam(1e-2)
opt_state = opt.init(eqx.filter(model, eqx.is_array))


@eqx.filter_jit
def step(model, opt_state):
    def loss_fn(m):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, opt_state = opt.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), opt_state, loss


losses = []
for _ in range(40):
    model, opt_state, loss = step(model, opt_state)
    losses.append(float(loss))
print(json.dumps({"losses": losses[::8] + [losses[-1]]}))
