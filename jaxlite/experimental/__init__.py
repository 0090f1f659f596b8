"""`jaxlite.experimental` (mirrors `jax.experimental`): JAX's experimental functions, with
their submodules added beside this file.

Not yet here: `EArray`, `cur_qdd` and `primal_tangent_dtype` (JAX's extended-dtype arrays,
quasi-dynamic data and primal/tangent dtypes), and the `compilation_cache` submodule.
"""
from jaxlite._callback import io_callback
from jaxlite.experimental import checkify  # noqa: F401  (submodule, as `jax.experimental.checkify`)

__all__ = ["io_callback"]
