"""blackjax: window adaptation and NUTS on a correlated 2-d Gaussian."""
import json

import blackjax
import jax
import jax.numpy as jnp

cov = jnp.array([[1.0, 0.8], [0.8, 1.0]])
prec = jnp.linalg.inv(cov)


def logdensity(x):
    return -0.5 * x @ prec @ x


rng = jax.random.PRNGKey(7)
warm_key, sample_key = jax.random.split(rng)
adapt = blackjax.window_adaptation(blackjax.nuts, logdensity)
(state, params), _ = adapt.run(warm_key, jnp.ones(2), num_steps=200)
kernel = blackjax.nuts(logdensity, **params).step


def one_step(state, key):
    state, info = kernel(key, state)
    return state, state.position


_, positions = jax.lax.scan(one_step, state, jax.random.split(sample_key, 300))
print(json.dumps({"mean": positions.mean(axis=0).tolist(),
                  "corr": float(jnp.corrcoef(positions.T)[0, 1]),
                  "step_size": float(params["step_size"])}))
