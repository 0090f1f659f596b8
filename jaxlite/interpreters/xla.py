"""`jax.interpreters.xla`: the few names JAX still keeps there.

`apply_primitive(prim, *args, **params)` runs one primitive eagerly, outside every
transformation; `Backend` is the type of a backend client; `canonicalize_dtype_handlers`
is the table by which JAX canonicalizes Python values per type (jaxlite canonicalizes in
`core.avals.get_aval` and `jnp.asarray`, and does not read it).
"""
from __future__ import annotations

from typing import Any

from jaxlite.backends.base import Client
from jaxlite.core.trace import root_trace

__all__ = ["Backend", "apply_primitive", "canonicalize_dtype_handlers"]

Backend = Client

canonicalize_dtype_handlers: dict[type, Any] = {}


def apply_primitive(prim: Any, *args: Any, **params: Any) -> Any:
    """Evaluate `prim` eagerly on concrete arguments (mirrors `xla.apply_primitive`)."""
    return prim.bind_with_trace(root_trace(), args, params)
