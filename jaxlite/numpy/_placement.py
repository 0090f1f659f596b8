"""JAX's placement keywords on array-making functions: `device=` and `out_sharding=`.

`jnp.zeros(3, device=d)`, `jnp.reshape(x, s, out_sharding=...)` and their kin take where the
result goes. `accepts_placement` adds those keyword-only parameters to a function (its
signature shows them, as JAX's does) and puts the result there with `device_put`, which on
jaxlite's one device checks the placement and records it on the array.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from jaxlite.runtime.device import device_put


def accepts_placement(*names: str) -> Callable[[Callable], Callable]:
    """Decorate a function to take the keyword-only placement arguments `names` (among
    "device" and "out_sharding"), each None by default."""
    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def placed(*args: Any, **kwargs: Any) -> Any:
            targets = [kwargs.pop(name) for name in names if name in kwargs]
            out = fn(*args, **kwargs)
            target = next((t for t in targets if t is not None), None)
            return out if target is None else device_put(out, target)
        placed.__signature__ = _with_keywords(inspect.signature(fn), names)  # type: ignore
        return placed
    return decorate


def _with_keywords(signature: inspect.Signature, names: tuple[str, ...]) -> inspect.Signature:
    params = list(signature.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
             for name in names]
    return signature.replace(parameters=params[:at] + added + params[at:])
