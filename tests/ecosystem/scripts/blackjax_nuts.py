"""blackjax: NUTS with a fixed step size on a correlated 2-d Gaussian (the first steps are
compared with JAX's exactly), then window adaptation and a longer chain (compared with the
target's true moments, since a chain amplifies rounding differences step by step)."""
import json

import blackjax
import jax
import jax.numpy as jnp

cov = jnp.array([[1.0, 0.8], [0.8, 1.0]])
prec = jnp.linalg.inv(cov)


def logdensity(x):
    return -0.5 * x @ prec @ x


def chain(kernel, state, key, steps):
    def one_step(state, k):
        state, _ = kernel(k, state)
        return state, state.position
    return jax.lax.scan(one_step, state, jax.random.split(key, steps))[1]


fixed = blackjax.nuts(logdensity, step_size=0.4, inverse_mass_matrix=jnp.ones(2))
first = chain(fixed.step, fixed.init(jnp.array([1.0, -0.5])), jax.random.PRNGKey(3), 8)

warm_key, sample_key = jax.random.split(jax.random.PRNGKey(7))
adapt = blackjax.window_adaptation(blackjax.nuts, logdensity)
(state, params), _ = adapt.run(warm_key, jnp.ones(2), num_steps=300)
positions = chain(blackjax.nuts(logdensity, **params).step, state, sample_key, 2000)
print(json.dumps({"first_steps": first.tolist(),
                  "stats": {"mean": positions.mean(axis=0).tolist(),
                            "corr": float(jnp.corrcoef(positions.T)[0, 1])}}))
