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

import numpy as np

from jaxlite.core.sharding import NamedSharding, PartitionSpec
from jaxlite.core.sharding_rules import requested_sharding
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.device import device_put
from jaxlite.runtime.sharding import get_mesh


def accepts_placement(*names: str) -> Callable[[Callable], Callable]:
    """Decorate a function to take the keyword-only placement arguments `names` (among
    "device" and "out_sharding"), each None by default."""
    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def placed(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in names if name in kwargs}
            # (on an Explicit mesh, the operations inside type their results so)
            with requested_sharding(given.get("out_sharding")):
                out = fn(*args, **kwargs)
            target = next((t for t in given.values() if t is not None), None)
            return out if target is None else device_put(out, _typed(target, out))
        placed.__signature__ = _with_keywords(inspect.signature(fn), names)  # type: ignore
        return placed
    return decorate


def _with_keywords(signature: inspect.Signature, names: tuple[str, ...]) -> inspect.Signature:
    params = list(signature.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
             for name in names]
    return signature.replace(parameters=params[:at] + added + params[at:])


def _typed(target: Any, out: Any) -> Any:
    """An `out_sharding` over a mesh of Explicit axes names every dimension of the
    result, as the type JAX gives it does (`P('x')` of a matrix is `P('x', None)`)."""
    if isinstance(target, PartitionSpec) and get_mesh().devices.size:
        target = NamedSharding(get_mesh(), target)
    mesh = getattr(target, "mesh", None)
    if not isinstance(target, NamedSharding) or not mesh.explicit_axes or \
            len(target.spec) >= np.ndim(out):
        return target
    padding = [None] * (np.ndim(out) - len(target.spec))
    return NamedSharding(mesh, PartitionSpec(*target.spec, *padding))


def placed_like(prototype: Any, shape: Any, out: Any) -> Any:
    """`out`, made by a `*_like` function from `prototype`, placed as the prototype is when
    it is on a mesh and keeps its shape (as JAX's `zeros_like` keeps `x.sharding`)."""
    sharding = getattr(prototype, "_sharding", None)
    if shape is not None or type(prototype) is not ArrayImpl or \
            not isinstance(sharding, NamedSharding) or type(out) is not ArrayImpl:
        return out
    return device_put(out, sharding)

