"""flax.nnx: a module with Linear layers and Rngs trained with nnx.Optimizer."""
import json

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(4, 16, rngs=rngs)
        self.l2 = nnx.Linear(16, 1, rngs=rngs)

    def __call__(self, x):
        return self.l2(nnx.tanh(self.l1(x)))


model = Model(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
x = jax.random.normal(jax.random.key(1), (32, 4))
y = jnp.cos(x[:, :1])


@nnx.jit
def step(model, optimizer):
    def loss_fn(m):
        return jnp.mean((m(x) - y) ** 2)
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


losses = [float(step(model, optimizer)) for _ in range(40)]
print(json.dumps({"losses": losses[::8] + [losses[-1]],
                  "bias_sum": float(model.l2.bias[...].sum())}))
