"""checkify's public functions: `checkify`, `check`, `debug_check` and `check_error`."""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import numpy as np

from jaxlite import numpy as jnp
from jaxlite.core import source_info
from jaxlite.core.basearray import Array
from jaxlite.experimental.checkify._error_value import (Error, assert_func, check_error_value,
                                                        init_error)
from jaxlite.experimental.checkify._errors import FailedCheckError, user_checks
from jaxlite.experimental.checkify._interpreter import checkify_closed
from jaxlite.interpreters.staging import DebugInfo, trace_to_jaxpr
from jaxlite.transforms.api_util import function_name
from jaxlite.tree_util import tree_flatten, tree_leaves, tree_unflatten

Out = TypeVar("Out")


def checkify(f: Callable[..., Out], errors: frozenset = user_checks
             ) -> Callable[..., tuple[Error, Out]]:
    """`f` returning `(error, output)`: its `check`s, and the automatic checks chosen by
    `errors`, become an `Error` value instead of raising (mirrors
    `jax.experimental.checkify.checkify`).

    The function is traced with its arguments as constants, then evaluated with the error
    threaded through every primitive, so it works eagerly and under `jit`, `vmap` and
    `grad` alike; `err.get()` gives the first failure's message, `err.throw()` raises it.
    """
    def checked_fun(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        out_trees = []

        def traced() -> list[Any]:
            leaves, tree = tree_flatten(f(*args, **kwargs))
            out_trees.append(tree)
            return leaves
        closed = trace_to_jaxpr(traced, [], DebugInfo("checkify", function_name(f), ()))
        error, outs = checkify_closed(closed, frozenset(errors), init_error, [])
        return error, tree_unflatten(out_trees[0], outs)
    return checked_fun


def _is_scalar_pred(pred: Any) -> bool:
    return isinstance(pred, bool) or (isinstance(pred, Array) and pred.shape == ()
                                      and pred.dtype == np.dtype("bool"))


def _check(pred: Any, msg: str, debug: bool, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    for arg in tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (Array, np.ndarray)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {arg!r} of type {type(arg)}.")
    failure = FailedCheckError(source_info.current().traceback, msg, *fmt_args, **fmt_kwargs)
    error = assert_func(init_error, jnp.logical_not(pred), failure)
    check_error_value(error, debug=debug)


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False,
          **fmt_kwargs: Any) -> None:
    """Record a failure with message `msg` (formatted with the arguments, which may be
    traced arrays) where the scalar boolean `pred` is False (mirrors
    `jax.experimental.checkify.check`). Eagerly a failure raises `JaxRuntimeError`; under
    `checkify` it becomes part of the returned error; staged (jit, scan, ...) without
    `checkify` it cannot be compiled (JAX's ValueError). With `debug=True` it only acts
    under `checkify`."""
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """A `check` that acts only under `checkify` and is dropped elsewhere (mirrors
    `jax.experimental.checkify.debug_check`)."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise `JaxRuntimeError` if `error` holds a failure; under `checkify` the failure
    joins the returned error instead (mirrors `jax.experimental.checkify.check_error`)."""
    if not isinstance(error, Error):
        raise TypeError("check_error takes an Error as argument, got type "
                        f"{type(error)} instead.")
    check_error_value(error, debug=False)
