"""Names of traced functions and of their arguments' leaves (`x`, `params['w']`), for
error messages (mirrors the naming in `jax._src.api_util`). In core so that the loops and
branches of `lax` name the functions they trace as `jit` does."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from jaxlite.tree_util import keystr, tree_flatten_with_path


def function_name(fun: Callable[..., Any]) -> str:
    """`fun.__name__`, or its type's name for a callable object without one."""
    return getattr(fun, "__name__", None) or type(fun).__name__


def parameter_names(fun: Callable[..., Any], num_args: int) -> list[str]:
    """Names of the first `num_args` positional parameters (`args[i]` where unknown)."""
    names: list[str] = []
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    for i in range(num_args):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                   params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            names.append(f"args[{i}]")
    return names


def leaf_names(args: Sequence[Any], names: Sequence[str], kwargs: dict | None = None
               ) -> list[str]:
    """One name per leaf of (args, kwargs): the parameter name and the key path inside it."""
    out = []
    for arg, name in zip(args, names):
        for path, _ in tree_flatten_with_path(arg)[0]:
            out.append(name + keystr(path))
    for key in sorted(kwargs or {}):
        for path, _ in tree_flatten_with_path(kwargs[key])[0]:
            out.append(key + keystr(path))
    return out
