"""`jax.Array`: the one base class of every array-like value a user's function sees.

Concrete arrays (`jaxlite.runtime.array.ArrayImpl`), tracers inside transformations and
typed PRNG key arrays all derive from it, so `isinstance(x, jax.Array)` holds for each of
them, as in JAX, and libraries can annotate with it. It carries the operators and the
numpy-style methods (from `ArrayOperators`); it cannot be instantiated itself.
"""
from __future__ import annotations

from typing import Any

from jaxlite.core.operators import ArrayOperators


class Array(ArrayOperators):
    """The base class of arrays, tracers and key arrays (mirrors `jax.Array`).

    Use it in `isinstance` checks and annotations; arrays are made by `jnp.asarray`,
    `jnp.array`, `device_put` and every jaxlite function, never by calling `Array`.
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Array:
            raise TypeError("jax.Array cannot be instantiated directly; make arrays with "
                            "jnp.asarray, jnp.array or jax.device_put.")
        return super().__new__(cls)
