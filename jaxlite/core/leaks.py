"""Where tracers were made, and finding the ones that leaked (mirrors JAX's
`jax_check_tracer_leaks` / `jax.checking_leaks`).

A tracer leaks when user code keeps it after its transformation has ended: appended to a
global list, stored as an attribute, captured by a closure. Using it later raises
`UnexpectedTracerError`; with `jax_check_tracer_leaks` on, the leak is reported when the
transformation ends, with the chain of objects that holds the tracer.

How a leak is found (`find_leaks`), once a transformation has ended normally:
- the trace's tracers are the objects that refer to the trace (`gc.get_referrers`);
- a tracer has leaked when a chain of holders leads from it to a root the user owns: the
  globals of a module, or a local variable of a function of the user's that is running now
  (the caller of the transformation, a test). jaxlite's own globals, frames and traces, and
  the frames of Python's library, are not: they are the machinery running the
  transformation, and chains through them are not followed.
CPython does not show running frames as referrers, so the user's frames on the stack are
looked at through their `f_locals`; jaxlite's own frames, which hold the transformation's
inputs and outputs until it returns, are left out: what only they hold has not leaked.
Garbage cycles are collected first when a chain is found, so that an unreachable holder is
not mistaken for a live one.

`where_created()` names the user's line that is running now: the first frame outside
jaxlite's package. Staging records it for every equation (so that `UnexpectedTracerError`
can say where a leaked value was made); other traces record it only while the option is on.
"""
from __future__ import annotations

import contextvars
import gc
import inspect
import os
import sys
import sysconfig
import types
from typing import Any, Callable, NamedTuple

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# co_filename -> whether the file is part of jaxlite (a file is asked about once).
_INTERNAL_FILES: dict[str, bool] = {}
# Python's own library: its frames on the stack (contextlib running jaxlite's `with`
# blocks) act for their callers, so their locals are not the user's roots. Installed
# packages live inside it (site-packages) but are code like the user's.
_STDLIB = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                 for k in ("stdlib", "platstdlib")})
_SITE_PACKAGES = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                        for k in ("purelib", "platlib")})
# The user's line that work replayed from a jaxpr stands for (set by
# `source_info.attributed_to`): transposition runs after the user's function returned, so
# the stack no longer shows the line of the operation being transposed.
ATTRIBUTED_LOCATION: contextvars.ContextVar["Location | None"] = contextvars.ContextVar(
    "jaxlite_attributed_location", default=None)


class Location(NamedTuple):
    """A line of the user's code: file, line number and function."""

    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"


def is_jaxlite_file(filename: str) -> bool:
    """Whether `filename` is one of jaxlite's own source files."""
    internal = _INTERNAL_FILES.get(filename)
    if internal is None:
        internal = _INTERNAL_FILES[filename] = os.path.abspath(filename).startswith(_PACKAGE)
    return internal


def _is_python_library(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_STDLIB) and not path.startswith(_SITE_PACKAGES)


def where_created() -> Location | None:
    """The innermost frame of the running stack that is not jaxlite's own code.

    Staging asks for every equation it records, so the walk is kept lean: one dict look-up
    per frame, and the `Location` made by `tuple.__new__` (a NamedTuple's own constructor is
    Python code). Inside `source_info.attributed_to`, the line given there."""
    attributed = ATTRIBUTED_LOCATION.get()
    if attributed is not None:
        return attributed
    internal_files = _INTERNAL_FILES
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        internal = internal_files.get(code.co_filename)
        if internal is None:
            internal = is_jaxlite_file(code.co_filename)
        if not internal:
            return _make_tuple(Location, (code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return None


_make_tuple = tuple.__new__


def defined_at(fun: Any) -> str:
    """`file:line` where a Python function is defined ('' when it has no code)."""
    while hasattr(fun, "func"):  # functools.partial
        fun = fun.func
    fun = getattr(fun, "__wrapped__", fun)
    code = getattr(fun, "__code__", None)
    return "" if code is None else f"{code.co_filename}:{code.co_firstlineno}"


# ---------------------------------------------------------------------------- leak search

# How many links a chain of holders may have before the search gives up on it.
_MAX_DEPTH = 16


def find_leaks(trace: Any, tracer_type: type, trace_type: type
               ) -> list[tuple[Any, list[str]]]:
    """The tracers of `trace` that something outside jaxlite still holds, each with the
    chain of holders, one line per link ("<list 140...>[0]", ..., "__main__.leaked").

    Chains stop at traces (`trace_type`) and at jaxlite's module globals: what they hold
    (the equations of a jaxpr being built, caches) is the machinery's, even when a user's
    running function holds a tracer of that trace, or a user's global a jaxlite function."""
    search = _Search(trace_type)
    try:
        tracers = search.own([r for r in gc.get_referrers(trace)
                              if isinstance(r, tracer_type) and r._trace is trace])
        if not tracers:
            return []
        chains = search.chains(tracers)
        if chains:
            # A chain may run through garbage that a cycle keeps alive: collect it, then
            # look again (only now: a collection takes milliseconds on a large heap).
            del chains
            gc.collect()
            chains = search.chains(tracers)
        return [(t, chains[id(t)]) for t in tracers if id(t) in chains]
    finally:
        search.release()


class _Search:
    """A search for chains of holders from tracers up to the user's roots.

    The roots are the globals of modules and the locals of the user's running frames (their
    `f_locals`: CPython does not list a running frame as a referrer). The search goes up one
    level of holders at a time, for all tracers together (one `gc.get_referrers` pass over
    the heap per level). Every container it makes refers to what it holds, so it is noted
    in `mine` and never taken for a holder."""

    def __init__(self, trace_type: type) -> None:
        self.trace_type = trace_type
        self.kept: list[Any] = []
        self.mine: set[int] = {id(self.kept), id(self.__dict__)}
        self.modules = self.own({})  # id of the globals of a user's module -> its name
        # jaxlite's own globals are machinery: what its caches hold is not the user's, even
        # where a user's global holds a jaxlite function (whose __globals__ they are)
        self.machinery = self.own(set())
        for name, module in list(sys.modules.items()):
            if hasattr(module, "__dict__"):
                if is_jaxlite_file(getattr(module, "__file__", None) or ""):
                    self.machinery.add(id(vars(module)))
                else:
                    self.modules[id(vars(module))] = name
        self.frames = self.own({})  # id of a user frame's locals -> the frame
        self.snapshots = self.own([])  # the locals of user functions, copied for us
        frame = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not is_jaxlite_file(filename) and not _is_python_library(filename):
                local_vars = frame.f_locals
                self.frames[id(local_vars)] = frame
                if frame.f_code.co_flags & inspect.CO_OPTIMIZED:
                    self.snapshots.append(local_vars)
                else:  # a module's or a class body's namespace itself
                    self.kept.append(local_vars)
            frame = frame.f_back

    def release(self) -> None:
        """Drop what the search holds, and empty the snapshots of functions' locals that
        no one else holds.

        A function's `f_locals` is a copy that CPython keeps on its frame until the
        function returns: kept full, it would hold a local that the function then deletes
        (`del x`) alive. Emptied, it is refilled by the next reader (`locals()`, a
        debugger), which always copies afresh. A copy someone else holds (a debugger's
        view, a `locals()` result) is left alone, as is a namespace that is no copy (a
        module's, a class body's)."""
        snapshots = self.snapshots
        self.kept.clear()
        while snapshots:
            local_vars = snapshots.pop()
            # held by: its frame, this variable, getrefcount's argument
            if sys.getrefcount(local_vars) <= 3:
                local_vars.clear()
            del local_vars

    def own(self, container: Any) -> Any:
        """Note a container the search made (and keep it, so that its id stays its own)."""
        self.kept.append(container)
        self.mine.add(id(container))
        return container

    def is_root(self, obj: Any) -> bool:
        return id(obj) in self.modules or id(obj) in self.frames

    def chains(self, tracers: list[Any]) -> dict[int, list[str]]:
        """id of a tracer -> the chain from it to a root, for the tracers that have one."""
        # (id of a holder, id of a tracer) -> what the holder holds on that tracer's chain
        held = self.own({})
        found: dict[int, list[str]] = self.own({})
        # The nodes of the level being searched, and the tracer each one leads from (two
        # lists: a pair would be one more object referring to the node).
        frontier, sources = self.own(list(tracers)), self.own(list(tracers))
        for _ in range(_MAX_DEPTH):
            if not frontier:
                break
            below = self.own({})  # id of a node -> the tracers whose chains reach it
            nodes = self.own([])
            for node, tracer in zip(frontier, sources):
                if id(node) not in below:
                    below[id(node)] = self.own([])
                    nodes.append(node)
                below[id(node)].append(tracer)
            holders = self.own(gc.get_referrers(*nodes))
            frontier, sources = self.own([]), self.own([])
            for holder in holders:
                if id(holder) in self.mine or id(holder) in self.machinery or \
                        isinstance(holder, self.trace_type):
                    continue
                for child in gc.get_referents(holder):
                    for tracer in below.get(id(child), ()):
                        if id(tracer) in found or (id(holder), id(tracer)) in held:
                            continue
                        held[(id(holder), id(tracer))] = child
                        if self.is_root(holder):
                            found[id(tracer)] = self.describe(
                                self.path(holder, held, tracer))
                        else:
                            frontier.append(holder)
                            sources.append(tracer)
        return found

    def path(self, root: Any, held: dict[tuple[int, int], Any], tracer: Any) -> list[Any]:
        """The objects from `tracer` up to `root`."""
        nodes = [root]
        while nodes[-1] is not tracer:
            nodes.append(held[(id(nodes[-1]), id(tracer))])
        return nodes[::-1]

    def describe(self, nodes: list[Any]) -> list[str]:
        """One line per link: "<what> is referred to by <holder and how>", where an
        object's attribute dict and a function's closure cell read as the object and the
        function."""
        lines = []
        i = 0
        while i + 1 < len(nodes):
            child, holder = nodes[i], nodes[i + 1]
            step, link = self.link(child, holder, nodes[i + 2:])
            lines.append(f"{_short(child)} is referred to by {link}")
            i += step
        return lines

    def link(self, child: Any, holder: Any, above: list[Any]) -> tuple[int, str]:
        """How `holder` holds `child` (and how many nodes the description spans)."""
        if type(holder) is dict:
            key = next((k for k, v in holder.items() if v is child), None)
            if id(holder) in self.modules:
                return 1, f"{self.modules[id(holder)]}.{key}"
            if id(holder) in self.frames:
                code = self.frames[id(holder)].f_code
                return 1, (f"the local variable {key} of {code.co_name} at "
                           f"{code.co_filename}:{self.frames[id(holder)].f_lineno}")
            owner = above[0] if above else None
            if owner is not None and (getattr(owner, "__dict__", None) is holder or (
                    isinstance(owner, type) and owner.__dict__.get(key) is child)):
                return 2, f"{_short(owner)}.{key}"
            return 1, f"{_short(holder)}[{key!r}]"
        if isinstance(holder, types.CellType) and len(above) >= 2 and \
                getattr(above[1], "__closure__", None) is above[0]:
            fun = above[1]
            index = next(i for i, cell in enumerate(above[0]) if cell is holder)
            name = fun.__code__.co_freevars[index]
            return 3, f"{_short(fun)} closed-over variable {name}"
        if isinstance(holder, (list, tuple)):
            index = next((i for i, x in enumerate(holder) if x is child), "?")
            return 1, f"{_short(holder)}[{index}]"
        if isinstance(holder, types.FrameType):
            code = holder.f_code
            return 1, f"<frame of {code.co_name} at {code.co_filename}:{holder.f_lineno}>"
        return 1, _attribute_link(holder, child)


def _short(obj: Any) -> str:
    if isinstance(obj, type):
        return f"<class {obj.__qualname__}>"
    if isinstance(obj, types.FunctionType):
        return f"<function {obj.__qualname__} {id(obj)}>"
    return f"<{type(obj).__name__} {id(obj)}>"


def _attribute_link(holder: Any, obj: Any) -> str:
    """"<Holder 140...>.attr" for the attribute (or slot) of `holder` that is `obj`. Read
    from the instance dict and the slots themselves, so that no property of the user's
    runs."""
    attributes = getattr(holder, "__dict__", None)
    if isinstance(attributes, dict):
        for name, value in attributes.items():
            if value is obj:
                return f"{_short(holder)}.{name}"
    for cls in type(holder).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in [slots] if isinstance(slots, str) else slots:
            slot = cls.__dict__.get(name)
            try:
                if isinstance(slot, types.MemberDescriptorType) and \
                        slot.__get__(holder, cls) is obj:
                    return f"{_short(holder)}.{name}"
            except AttributeError:  # a slot that is not set
                continue
    return _short(holder)


def leak_report(trace: Any, leaks: list[tuple[Any, list[str]]],
                describe: Callable[[Any], list[str]]) -> str:
    """JAX's "Leaked trace" message: each leaked tracer, where it was made, who holds it."""
    parts = [f"Leaked trace {type(trace).__name__}. Leaked tracer(s):\n"]
    for tracer, chain in leaks:
        parts.append("\n".join([repr(tracer), *describe(tracer), *chain]) + "\n")
    parts.append("A value computed inside a transformation outlived it. Transformations "
                 "require functions to return their outputs explicitly: return the value "
                 "instead of saving it in a global variable, an attribute or a closure.")
    return "\n".join(parts)
