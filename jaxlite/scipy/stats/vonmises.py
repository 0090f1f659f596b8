"""The von Mises distribution (mirrors `jax.scipy.stats.vonmises`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any) -> Any:
    """kappa (cos x - 1) - log(2 pi i0e(kappa)); nan for kappa <= 0."""
    x, kappa = promote("vonmises.logpdf", x, kappa)
    log_probs = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return jnp.where(lax.gt(kappa, const(kappa, 0)), log_probs, np.nan)


def pdf(x: Any, kappa: Any) -> Any:
    """The von Mises density (mirrors `jax.scipy.stats.vonmises.pdf`)."""
    return lax.exp(logpdf(x, kappa))
