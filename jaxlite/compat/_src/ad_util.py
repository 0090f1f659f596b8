"""`jax._src.ad_util` under the hook. Needed by lineax, which installs a transpose rule on
the stop_gradient primitive through `jax.interpreters.ad.primitive_transposes`."""
from jaxlite.lax.ad_util import stop_gradient_p

__all__ = ["stop_gradient_p"]
