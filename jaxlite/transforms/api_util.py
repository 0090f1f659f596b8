"""Argument handling shared by the user transformations: pytrees, argnums, names.

Mirrors `jax._src.api_util`: flattening arguments to leaves, checking that they are arrays,
and naming each leaf (`x`, `params['w']`) so that errors can point at an argument.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from jaxlite.core.avals import ShapedArray, get_aval, is_array_like
from jaxlite.tree_util import keystr, tree_flatten_with_path


def function_name(fun: Callable[..., Any]) -> str:
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


def check_array_leaves(leaves: Sequence[Any], names: Sequence[str], where: str) -> None:
    for leaf, name in zip(leaves, names):
        if not is_array_like(leaf):
            raise TypeError(
                f"Argument '{name}' of type {type(leaf)} is not a valid JAX type: {where} "
                "takes arrays, Python scalars and pytrees of them. Mark non-array arguments "
                "static (static_argnums / static_argnames) or close over them.")


def abstractify(leaf: Any) -> ShapedArray:
    return get_aval(leaf)


def normalize_argnums(argnums: int | Sequence[int], num_args: int, fun_name: str,
                      what: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"{what}: argnums must be ints or tuples of ints, got {argnums!r}")
        if not -num_args <= n < num_args:
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at least "
                f"{max(n + 1, -n)} positional arguments to be passed by the caller, but got "
                f"only {num_args} positional arguments.")
    return tuple(n % num_args for n in nums)
