"""Student's t distribution (mirrors `jax.scipy.stats.t`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite.scipy.stats._util import const, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """lgamma((df+1)/2) - lgamma(df/2) - log(pi df scale^2)/2 - (df+1)/2 log(1 + z^2/df)."""
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    two = const(x, 2)
    z = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    half_df_plus = lax.add(half_df, const(x, 0.5))
    log_scale_term = lax.div(lax.log(lax.mul(lax.mul(lax.mul(scale, scale),
                                                     const(x, np.pi)), df)), two)
    normalizer = lax.sub(lax.add(lax.lgamma(half_df), log_scale_term),
                         lax.lgamma(half_df_plus))
    quadratic = lax.div(lax.mul(z, z), df)
    return lax.neg(lax.add(normalizer, lax.mul(half_df_plus, lax.log1p(quadratic))))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The t density (mirrors `jax.scipy.stats.t.pdf`)."""
    return lax.exp(logpdf(x, df, loc, scale))
