"""jaxopt: L-BFGS on an l2-regularised logistic regression, and a projected gradient."""
import json

import jax
import jax.numpy as jnp
import jaxopt

key = jax.random.PRNGKey(11)
x = jax.random.normal(key, (80, 5))
w_true = jnp.array([1.0, -2.0, 0.5, 0.0, 3.0])
y = (x @ w_true > 0).astype(jnp.float32)


def loss(w):
    logits = x @ w
    return jnp.mean(jnp.logaddexp(0.0, logits) - y * logits) + 1e-2 * jnp.sum(w ** 2)


solver = jaxopt.LBFGS(fun=loss, maxiter=100, tol=1e-6)
result = solver.run(jnp.zeros(5))
projected = jaxopt.ProjectedGradient(fun=loss, projection=jaxopt.projection.projection_box,
                                     tol=1e-7, maxiter=3000)
box = projected.run(jnp.zeros(5), hyperparams_proj=(-1.0, 1.0))
print(json.dumps({"w": result.params.tolist(), "loss": float(loss(result.params)),
                  "box_w": box.params.tolist()}))
