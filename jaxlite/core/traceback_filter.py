"""Tracebacks that show the user's code, not jaxlite's machinery (mirrors JAX's traceback
filtering and its `jax_traceback_filtering` option).

An error raised while jaxlite traces, transforms or runs a function passes through a dozen
frames of tracing, transformation and dispatch code between the user's call and the line
that raised. At the outermost API boundary (`jit`, `grad`, `vmap`, ... called by the user),
`filter_traceback` removes those frames before it is re-raised: what is left is the user's frames
and the frames of jaxlite's user-level libraries (`jaxlite.numpy`, `nn`, `scipy`, ...),
which say which library function was called, as JAX keeps `jax.numpy`'s. A note on the
exception says so and how to see everything.

Modes (`jax_traceback_filtering`, environment `JAX_TRACEBACK_FILTERING`): "off" keeps
every frame; "quiet_remove_frames" removes them without the note; "auto",
"remove_frames" and "tracebackhide" remove them with the note.
"""
from __future__ import annotations

import functools
import os
import types
from typing import Any, Callable
from jaxlite.config import config

__all__ = ["is_machinery", "filtered_traceback", "filter_traceback", "api_boundary", "NOTE",
           "EXCLUDED_PATHS"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# jaxlite's machinery: tracing, transformations, primitives and their rules, the compiler
# and the runtime. The user-level libraries (numpy, nn, scipy, random, ...) are kept.
_MACHINERY_DIRS = tuple(os.path.join(_PACKAGE, d) + os.sep for d in (
    "core", "interpreters", "transforms", "runtime", "backends", "xla", "lax", "pytree",
    "compat"))
_MACHINERY_FILES = frozenset(os.path.join(_PACKAGE, f) for f in (
    "config.py", "tree_util.py", "custom_derivatives.py", "custom_batching.py",
    "ad_checkpoint.py", "_callback.py", "api_util.py", "stages.py",
    os.path.join("numpy", "_placement.py")))

# Path prefixes libraries register as their own internals (`jax._src.traceback_util.
# register_exclusion`: flax, equinox, diffrax), hidden like jaxlite's; the registry is this
# list, which flax also edits in place.
EXCLUDED_PATHS: list[str] = []

NOTE = ("--------------------\nFor simplicity, jaxlite has removed its internal frames from "
        "the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to "
        "include these.")


def is_machinery(filename: str) -> bool:
    """Whether a frame of this file is jaxlite's machinery (hidden from users)."""
    return (filename.startswith(_MACHINERY_DIRS) or filename in _MACHINERY_FILES
            or any(filename.startswith(path) for path in EXCLUDED_PATHS))


def filtered_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """`tb` without the frames of jaxlite's machinery (a new chain; frames are shared)."""
    kept = []
    while tb is not None:
        if not is_machinery(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    result = None
    for entry in reversed(kept):
        result = types.TracebackType(result, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return result


def filter_traceback(error: BaseException) -> None:
    """Remove jaxlite's machinery from the traceback of `error`, per the option, in place.

    Call it in the `except` clause of an API boundary, then re-raise with a bare `raise`
    (which adds no frame: the boundary's own frame, machinery too, stays out). Each
    boundary the error leaves filters again, dropping the frames added since; interrupts
    and exits pass unchanged.
    """
    mode = config.read("jax_traceback_filtering")
    if mode == "off" or not isinstance(error, Exception):
        return
    if mode != "quiet_remove_frames" and NOTE not in getattr(error, "__notes__", ()):
        error.add_note(NOTE)
    error.__traceback__ = filtered_traceback(error.__traceback__)


def api_boundary(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` with the tracebacks of the errors it raises filtered (see the module's
    docstring): for the entry points users call (`grad(f)(x)`, `vmap(f)(x)`, `lax.scan`)."""
    @functools.wraps(function)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except Exception as error:
            filter_traceback(error)
            raise
    return boundary
