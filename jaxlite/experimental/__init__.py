"""`jaxlite.experimental` (mirrors `jax.experimental`): JAX's experimental functions, with
their submodules added beside this file."""
from jaxlite._callback import io_callback
from jaxlite.experimental import checkify  # noqa: F401  (submodule, as `jax.experimental.checkify`)
from jaxlite.experimental import compilation_cache  # noqa: F401  (submodule)
from jaxlite.experimental._extended_arrays import EArray, cur_qdd, primal_tangent_dtype

__all__ = ["EArray", "cur_qdd", "io_callback", "primal_tangent_dtype"]
