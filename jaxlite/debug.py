"""Debugging from inside traced programs (mirrors `jax.debug`): `print`, `log`, `callback`,
`breakpoint`, and the sharding views `inspect_array_sharding`, `visualize_array_sharding`,
`visualize_sharding`.

`print` and `callback` stage a `debug_callback` equation (`jaxlite.lax.callbacks`), so the
function runs when the program runs: eagerly at once, under `jit` every time the compiled
program runs, under `vmap` once per batch element, under `grad` with the primal values in
the forward pass (and again in the recomputation of a `checkpoint`), inside loops once per
iteration. Calls run in program order (JAX promises that for `ordered=True` only).
Arguments reach the function as `Array`s (weakly typed Python scalars stay so eagerly, as
in JAX), other leaves as they are. Differences from JAX: `print` is a `debug_callback`
equation too (JAX has a separate `debug_print` primitive, so jaxprs print differently);
`partitioned` has no effect (one device).
"""
from __future__ import annotations

import copy
import inspect
import logging
import os
import string
import sys
from typing import Any, Callable

import numpy as np

from jaxlite._callback import flat_callback
from jaxlite._debugger import breakpoint
from jaxlite._sharding_view import (inspect_array_sharding, visualize_array_sharding,
                                    visualize_sharding)
from jaxlite.core import dtypes
from jaxlite.core.avals import get_aval
from jaxlite.core.trace import current_trace
from jaxlite.interpreters.staging import StagingTrace
from jaxlite.lax.callbacks import (DebugEffect, HostCallback, OrderedDebugEffect,
                                   debug_callback_p, debug_effect, ordered_debug_effect)
from jaxlite.random import key_data
from jaxlite.tree_util import PyTreeDef, tree_flatten

__all__ = ["callback", "print", "log", "breakpoint", "DebugEffect", "OrderedDebugEffect",
           "inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"]

logger = logging.getLogger("jax._src.debugging")  # JAX's name, which log handlers select
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _split_arguments(args: tuple, kwargs: dict) -> tuple[PyTreeDef, list[Any], dict[int, Any]]:
    """The tree of `(args, kwargs)`, its array leaves (staged as operands) and its other
    leaves by position (strings, objects: handed to the callback as they are)."""
    leaves, tree = tree_flatten((args, kwargs))
    dynamic, static = [], {}
    for i, leaf in enumerate(leaves):
        try:
            get_aval(leaf)
        except TypeError:
            static[i] = leaf
        else:
            dynamic.append(leaf)
    return tree, dynamic, static


def _stage(function: Callable[..., Any], args: tuple, kwargs: dict, ordered: bool,
           partitioned: bool, name: str) -> None:
    tree, dynamic, static = _split_arguments(args, kwargs)
    host = HostCallback(flat_callback(function, tree, static), name)
    debug_callback_p.bind(*dynamic, callback=host, partitioned=bool(partitioned),
                          effect=ordered_debug_effect if ordered else debug_effect)


def _keys_as_data(*args: Any, **params: Any) -> Any:
    """`debug_callback`'s rule for values of extended dtypes (typed PRNG keys): a callback
    that runs eagerly gets the keys, one in a compiled program gets their physical data
    (as in JAX, whose compiled programs hold only physical arrays)."""
    trace = current_trace()
    while trace is not None and not isinstance(trace, StagingTrace):
        trace = trace.parent
    if trace is None:  # nothing is staged: the keys reach the eager callback as they are
        return current_trace().process_primitive(debug_callback_p, args, params)
    physical = [key_data(a) if dtypes.is_extended(get_aval(a).dtype) else a for a in args]
    return debug_callback_p.bind(*physical, **params)


debug_callback_p.extended_rule = _keys_as_data


def callback(callback: Callable[..., None] | None = None, *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Call `callback(*args, **kwargs)` when the program runs (mirrors
    `jax.debug.callback`).

    Array leaves of the arguments arrive as `Array`s, other leaves as they are. The
    two-call form `callback(ordered=True)(fn, *args)` takes the options first. `ordered`
    keeps program order with other ordered callbacks (every callback keeps program order
    here); `partitioned` has no effect on one device.
    """
    def staged(function: Callable[..., None], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(function):
            raise TypeError("first argument to jax.debug.callback must be callable, but got "
                            f"an object of type {type(function)}")
        _stage(function, c_args, c_kwargs, ordered, partitioned, "jax.debug.callback")

    if callback is not None:
        staged(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_callback received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return staged


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting any value."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        unused = [arg for i, arg in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        unused_names = [k for k in kwargs if k not in used_args]
        if unused_names:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_names}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead "
                "should pass in a regular string.")


def _has_placeholders(fmt: str) -> bool:
    # JAX looks at the first piece of the format string only.
    if not fmt:
        return False
    _, field_name, _, _ = next(iter(string.Formatter().parse(fmt)))
    return field_name is not None


def _user_frame() -> inspect.FrameInfo | None:
    """The innermost frame outside jaxlite: where the user called `log`."""
    frame = inspect.currentframe()
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR):
        frame = frame.f_back
    return None if frame is None else inspect.getframeinfo(frame, context=0)


def _printer(fmt: str, placeholders: bool, printoptions: dict[str, Any],
             record: logging.LogRecord | None) -> Callable[..., None]:
    def show(*args: Any, **kwargs: Any) -> None:
        if placeholders:
            with np.printoptions(**printoptions):
                message = fmt.format(*args, **kwargs)
        else:
            message = " ".join((fmt, *(str(a) for a in args)))
        if record is None:
            sys.stdout.write(message + "\n")
        else:
            entry = copy.copy(record)
            entry.msg = message
            logger.handle(entry)
    return show


def print(fmt: str | None = None, *args: Any, ordered: bool = False,
          partitioned: bool = False, skip_format_check: bool = False,
          _use_logging: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Print `fmt.format(*args, **kwargs)` when the program runs (mirrors
    `jax.debug.print`).

    Arrays print as `str` of the array under the numpy print options current at the call
    (so `{x}` shows `[1. 2.]`, and `{x:.3f}` works on scalars). Write `"{x}", x=x`, not an
    f-string: formatting waits for the values. The format is checked now: a missing
    argument raises IndexError or KeyError, an unused one ValueError. A format without
    placeholders prints the arguments after it, separated by spaces. The two-call form
    `print(ordered=True)("{}", x)` takes the options first.
    """
    def staged(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not skip_format_check:
            _FormatChecker().format(fmt, *c_args, **c_kwargs)
        placeholders = _has_placeholders(fmt)
        record = None
        if _use_logging:
            frame = _user_frame()
            path, line = (frame.filename, frame.lineno) if frame else ("(unknown file)", 0)
            record = logger.makeRecord(logger.name, logging.INFO, path, line, "", (), None)
        show = _printer(fmt, placeholders, dict(np.get_printoptions()), record)
        _stage(show, c_args, c_kwargs, ordered, partitioned, "jax.debug.callback")

    if fmt is not None:
        staged(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_print received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return staged


def log(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """As `print`, but the message goes to the logger "jax._src.debugging" (JAX's name) at
    level INFO, as a record that names the caller's file and line (mirrors
    `jax.debug.log`)."""
    return print(fmt, *args, ordered=ordered, partitioned=partitioned,
                 skip_format_check=skip_format_check, _use_logging=True, **kwargs)
