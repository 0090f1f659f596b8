"""numpyro: NUTS on a Bayesian linear regression, and SVI with an AutoNormal guide.

The first NUTS draws with a fixed step size are compared with JAX's exactly; the adapted
chain's posterior means only statistically, since a chain amplifies rounding differences
step by step."""
import json

import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS, SVI, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal

x = jnp.linspace(-1, 1, 30)
y = 2.0 * x - 0.5 + 0.3 * jax.random.normal(jax.random.PRNGKey(5), (30,))


def model(x, y=None):
    w = numpyro.sample("w", dist.Normal(0.0, 2.0))
    b = numpyro.sample("b", dist.Normal(0.0, 2.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    numpyro.sample("obs", dist.Normal(w * x + b, sigma), obs=y)


fixed = MCMC(NUTS(model, step_size=0.1, adapt_step_size=False, adapt_mass_matrix=False),
             num_warmup=0, num_samples=8, progress_bar=False)
fixed.run(jax.random.PRNGKey(2), x, y)
first = fixed.get_samples()

mcmc = MCMC(NUTS(model), num_warmup=150, num_samples=150, progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), x, y)
samples = mcmc.get_samples()

guide = AutoNormal(model)
svi = SVI(model, guide, numpyro.optim.Adam(0.05), Trace_ELBO())
result = svi.run(jax.random.PRNGKey(1), 300, x, y, progress_bar=False)
print(json.dumps({"first_w": first["w"].tolist(), "first_sigma": first["sigma"].tolist(),
                  "nuts": {"w_mean": float(samples["w"].mean()),
                           "b_mean": float(samples["b"].mean()),
                           "sigma_mean": float(samples["sigma"].mean())},
                  "svi_loss_last": float(result.losses[-1]),
                  "svi_w_loc": float(result.params["w_auto_loc"])}))
