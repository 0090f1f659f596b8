"""`jax.debug.breakpoint`: an interactive prompt on the host, inside a running program, with
the values of the Python frames that traced it (mirrors `jax.debug.breakpoint` and JAX's
command-line debugger "jdb").

At the breakpoint the Python stack is captured (frames of jaxlite itself left out, unless
`filter_frames=False`). The local variables that are tracers become the operands of a
`debug_callback` equation; when the program reaches it, the prompt opens with those locals
replaced by their values (under `vmap`, once per batch element). The prompt `(jdb) `
evaluates expressions in the current frame and knows `p`, `pp`, `u(p)`, `d(own)`,
`l(ist)`, `w(here)`/`bt`, `c(ont(inue))` and `q(uit)`/`exit`.
"""
from __future__ import annotations

import cmd
import dataclasses
import inspect
import os
import pprint
import sys
import threading
import traceback
from typing import IO, Any, Callable

from jaxlite._callback import flat_callback, pure_callback
from jaxlite.core.trace import Tracer
from jaxlite.lax.ad_util import stop_gradient
from jaxlite.lax.callbacks import (HostCallback, debug_callback_p, debug_effect,
                                   ordered_debug_effect)
from jaxlite.tree_util import tree_flatten, tree_unflatten

__all__ = ["breakpoint", "DebuggerFrame", "register_debugger", "get_debugger"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One Python frame at a breakpoint (mirrors JAX's `DebuggerFrame`): its file, local
    variables, source lines and the position of the current line in them."""

    filename: str
    locals: dict[str, Any]
    globals: dict[str, Any]
    code_context: Any
    source: list[str]
    lineno: int
    offset: int | None


def _frame_of(info: inspect.FrameInfo) -> DebuggerFrame:
    try:
        lines, start = inspect.getsourcelines(info.frame)
        source = "".join(lines).split("\n")
        # `start` is 0 for a module's frame, whose source is the whole file
        offset: int | None = info.lineno - max(start, 1)
        if offset >= len(source):  # code from eval() has no usable source
            source, offset = [], None
    except (OSError, TypeError):
        source, offset = [], None
    return DebuggerFrame(info.filename, dict(info.frame.f_locals), {}, info.code_context,
                         source, info.lineno, offset)


class _CantFlatten:
    def __repr__(self) -> str:
        return "<cant_flatten>"


_CANT_FLATTEN = _CantFlatten()


def _split_frames(frames: list[DebuggerFrame]
                  ) -> tuple[list[Any], Callable[[list[Any]], list[DebuggerFrame]]]:
    """The traced values among the frames' locals, and a function that rebuilds the frames
    with other values in their places."""
    traced: list[Any] = []
    layout = []  # per frame: per local, (name, tree, leaves with traced ones as None)
    for frame in frames:
        entries = []
        for name, value in frame.locals.items():
            try:
                leaves, tree = tree_flatten(value)
            except Exception:  # noqa: BLE001 (any object may sit in a frame)
                leaves, tree = tree_flatten(_CANT_FLATTEN)
            kept = []
            for leaf in leaves:
                if isinstance(leaf, Tracer):
                    traced.append(leaf)
                    kept.append(None)
                else:
                    kept.append(leaf)
            entries.append((name, tree, kept, [isinstance(x, Tracer) for x in leaves]))
        layout.append(entries)

    def rebuild(values: list[Any]) -> list[DebuggerFrame]:
        given = iter(values)
        result = []
        for frame, entries in zip(frames, layout):
            local_values = {}
            for name, tree, kept, is_traced in entries:
                leaves = [next(given) if t else leaf for leaf, t in zip(kept, is_traced)]
                local_values[name] = tree_unflatten(tree, leaves)
            result.append(dataclasses.replace(frame, locals=local_values))
        return result
    return traced, rebuild


# ------------------------------------------------------------------------ debuggers

_DEBUGGERS: dict[str, tuple[int, Callable[..., None]]] = {}
_LOCK = threading.Lock()


def register_debugger(name: str, debugger: Callable[..., None], priority: int) -> None:
    """Add a debugger `debugger(frames, thread_id, **kwargs)` under `name`."""
    if name in _DEBUGGERS:
        raise ValueError(f"Debugger with name \"{name}\" already registered.")
    _DEBUGGERS[name] = (priority, debugger)


def get_debugger(backend: str | None = None) -> Callable[..., None]:
    """The debugger named `backend`, else the one of highest priority."""
    if backend is not None and backend in _DEBUGGERS:
        return _DEBUGGERS[backend][1]
    if not _DEBUGGERS:
        raise ValueError("No debuggers registered!")
    return max(_DEBUGGERS.values(), key=lambda entry: entry[0])[1]


class CliDebugger(cmd.Cmd):
    """The text debugger behind `breakpoint` (JAX's "jdb")."""

    prompt = "(jdb) "

    def __init__(self, frames: list[DebuggerFrame], thread_id: int | None,
                 stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 completekey: str = "tab") -> None:
        super().__init__(completekey=completekey, stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0
        self.thread_id = thread_id
        self.intro = "Entering jdb:"

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")

    def evaluate(self, expression: str) -> Any:
        frame = self.frames[self.frame_index]
        return eval(expression, {}, {**frame.globals, **frame.locals})

    def _show(self, expression: str, render: Callable[[Any], str]) -> None:
        try:
            self._say(render(self.evaluate(expression)))
        except Exception:  # noqa: BLE001 (the user's expression may raise anything)
            kind, error = sys.exc_info()[:2]
            self._say("*** " + traceback.format_exception_only(kind, error)[-1].strip())

    def default(self, line: str) -> None:
        """Evaluates an expression."""
        self._show(line, repr)

    def do_p(self, arg: str) -> None:
        """p expression
        Evaluates and prints the value of an expression
        """
        self._show(arg, repr)

    def do_pp(self, arg: str) -> None:
        """pp expression
        Evaluates and pretty-prints the value of an expression
        """
        self._show(arg, pprint.pformat)

    def print_context(self, num_lines: int = 2) -> None:
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        if frame.offset is not None:
            for i, text in enumerate(frame.source):
                if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                    lines.append(("->  " if i == frame.offset else "    ") + text)
        self._say("\n".join(lines))

    def do_up(self, arg: str) -> None:
        """u(p)
        Move up a stack frame.
        """
        if self.frame_index == len(self.frames) - 1:
            self._say("At topmost frame.")
        else:
            self.frame_index += 1
        self.print_context()
    do_u = do_up

    def do_down(self, arg: str) -> None:
        """d(own)
        Move down a stack frame.
        """
        if self.frame_index == 0:
            self._say("At bottommost frame.")
        else:
            self.frame_index -= 1
        self.print_context()
    do_d = do_down

    def do_list(self, arg: str) -> None:
        """l(ist)
        List source code for the current file.
        """
        self.print_context(num_lines=5)
    do_l = do_list

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue))
        Continue the program's execution.
        """
        return True
    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> None:
        """q(uit)
        (exit)
        Quit the debugger. The program is given an exit command.
        """
        sys.exit(0)
    do_q = do_EOF = do_exit = do_quit

    def do_where(self, arg: str) -> None:
        """w(here)
        Prints a stack trace with the most recent frame on the bottom.
        'bt' is an alias for this command.
        """
        lines = ["Traceback:"]
        for frame in reversed(self.frames):
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None
                         else "    " + frame.source[frame.offset].strip())
        self._say("\n".join(lines))
    do_w = do_bt = do_where

    def run(self) -> None:
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                self._say("--KeyboardInterrupt--")


def _run_cli_debugger(frames: list[DebuggerFrame], thread_id: int | None,
                      **kwargs: Any) -> None:
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", _run_cli_debugger, -1)


# ----------------------------------------------------------------------- breakpoint

def breakpoint(*, backend: str | None = None, filter_frames: bool = True,
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> Any:
    """Stop at this point of the program and open a debugger prompt (mirrors
    `jax.debug.breakpoint`).

    `backend` names a registered debugger ("cli"); `filter_frames` leaves jaxlite's own
    frames out; `num_frames` keeps that many innermost frames; `ordered` keeps program order
    with other ordered callbacks. With `token` (a pytree of arrays) the breakpoint runs once
    the token is computed and returns it unchanged (a pure callback, which vmap cannot map:
    as in JAX); `ordered` and `token` exclude each other. Other keyword arguments go to the
    debugger (`stdin`, `stdout` for the cli one).
    """
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [i for i in infos if not os.path.abspath(i.filename).startswith(_PACKAGE_DIR)]
    frames = [_frame_of(info) for info in infos]
    if num_frames is not None:
        frames = frames[:num_frames]
    traced, rebuild = _split_frames(frames)

    def on_host(*values: Any) -> None:
        thread_id = None
        if threading.current_thread() is not threading.main_thread():
            thread_id = threading.get_ident()
        debugger = get_debugger(backend)
        with _LOCK:  # callbacks of several threads take turns at the prompt
            debugger(rebuild(list(values)), thread_id, **kwargs)

    if token is None:
        _, tree = tree_flatten((tuple(traced), {}))
        debug_callback_p.bind(*traced, callback=HostCallback(flat_callback(on_host, tree),
                                                             "jax.debug.callback"),
                              effect=ordered_debug_effect if ordered else debug_effect,
                              partitioned=False)
        return None

    def pass_token(value: Any, *values: Any) -> Any:
        on_host(*values)
        return value
    token, traced = stop_gradient((token, traced))
    return pure_callback(pass_token, token, token, *traced)
