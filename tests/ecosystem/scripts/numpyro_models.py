"""numpyro: NUTS on a Bayesian linear regression, and SVI with an AutoNormal guide."""
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


mcmc = MCMC(NUTS(model), num_warmup=150, num_samples=150, progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), x, y)
samples = mcmc.get_samples()

guide = AutoNormal(model)
svi = SVI(model, guide, numpyro.optim.Adam(0.05), Trace_ELBO())
result = svi.run(jax.random.PRNGKey(1), 300, x, y, progress_bar=False)
print(json.dumps({"w_mean": float(samples["w"].mean()), "b_mean": float(samples["b"].mean()),
                  "sigma_mean": float(samples["sigma"].mean()),
                  "svi_loss_last": float(result.losses[-1]),
                  "svi_w_loc": float(result.params["w_auto_loc"])}))
