"""Argument handling shared by the user transformations: pytrees, argnums, names.

Mirrors `jax._src.api_util`: flattening arguments to leaves, checking that they are arrays,
and naming each leaf (`x`, `params['w']`) so that errors can point at an argument.
"""
from __future__ import annotations

import inspect
import sys
from typing import Any, Callable, Sequence

# The naming helpers live in core (lax's loops use them too); the transformations reach
# them through this module.
from jaxlite.core.arg_names import function_name, leaf_names, parameter_names  # noqa: F401
from jaxlite.core.avals import ShapedArray, get_aval, is_array_like


def check_array_leaves(leaves: Sequence[Any], names: Sequence[str], where: str) -> None:
    for leaf, name in zip(leaves, names):
        if not is_array_like(leaf):
            raise TypeError(
                f"Argument '{name}' of type {type(leaf)} is not a valid JAX type: {where} "
                "takes arrays, Python scalars and pytrees of them. Mark non-array arguments "
                "static (static_argnums / static_argnames) or close over them.")


def function_location(fun: Callable[..., Any]) -> str:
    """`fun`'s name and, when known, where it is defined ("f at file.py:12"), as JAX
    names traced functions in its messages."""
    target = inspect.unwrap(fun) if callable(fun) else fun
    code = getattr(target, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
    return f"{function_name(fun)}{where}"


def check_output_leaves(leaves: Sequence[Any], fun: Callable[..., Any], what: str) -> None:
    """Raise JAX's TypeError when a traced function returned something that is not an
    array (a string, an object): it is the function's output, not an argument, at fault."""
    for leaf in leaves:
        if not is_array_like(leaf):
            raise TypeError(
                f"function {function_location(fun)} traced for {what} returned a value of "
                f"type {type(leaf)}, which is not a valid JAX type. (Outputs must be "
                "arrays, Python scalars or pytrees of them; return other values from "
                "outside the jitted function.)")


_TRACE_RECURSION = "maximum recursion depth exceeded while tracing"


def recursion_error(error: RecursionError, fun: Callable[..., Any]) -> RecursionError:
    """Python's RecursionError from tracing `fun`, said in terms of what the user wrote
    (once: a nested trace that already said it passes it on)."""
    if str(error).startswith(_TRACE_RECURSION):
        return error
    limit = sys.getrecursionlimit()
    return RecursionError(
        f"{_TRACE_RECURSION} {function_location(fun)} for jit (Python's recursion limit is "
        f"{limit}). Tracing a jit-decorated function inside another takes about 10 Python "
        f"frames per level, so about {limit // 10} nested levels reach the limit; for deeper "
        "nesting raise it with sys.setrecursionlimit(...), or check the function for "
        "unbounded recursion.")


def abstract_argument_error(error: TypeError, fun: Callable[..., Any],
                            leaves: Sequence[Any], names: Sequence[str]) -> TypeError:
    """JAX's TypeError for a jit argument that has no abstract value (a big-endian numpy
    array), naming the argument; `error` says why."""
    for leaf, name in zip(leaves, names):
        try:
            get_aval(leaf)
        except TypeError as why:
            return TypeError(
                f"Error interpreting argument to {function_location(fun)} as an abstract "
                f"array. The problematic value is of type {type(leaf)} and was passed to the "
                f"function at path {name}. {why}")
    return error


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
