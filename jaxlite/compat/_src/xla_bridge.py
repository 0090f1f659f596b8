"""`jax._src.xla_bridge` under the hook. Needed by chex (`set_n_cpu_devices`), which reads
`_backends` to learn whether a backend has started: the started clients, by platform."""
from jaxlite.backends.registry import _DEFAULT

_backends = _DEFAULT._clients

__all__ = ["_backends"]
