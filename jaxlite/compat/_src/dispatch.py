"""`jax._src.dispatch` under the hook. Needed by equinox, which re-registers
`wait_for_tokens` at exit: it waits for pending ordered effects (callbacks)."""
from jaxlite import effects_barrier as wait_for_tokens

__all__ = ["wait_for_tokens"]
