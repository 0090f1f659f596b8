"""Name stacks and source locations (mirrors `jax.extend.source_info_util`).

JAX records, for each traced operation, the stack of scope names it was traced under
(`named_scope`, transformation names) and where in the user's code it came from. jaxlite
keeps the name stack as a context variable with JAX's API, so libraries that push scopes
or register their files as library code (flax, equinox) work. Staging gives each equation
a `SourceInfo` holding the user's innermost frame (`core.leaks.where_created`) and the name
stack; `jax_debug_nans` names that frame, and lowering makes both the HLO instructions'
metadata. Work replayed from an equation later (transposition, re-tracing a jaxpr) is
traced `attributed_to` that equation's source, so it keeps the user's line and scopes.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import traceback as _traceback
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple

from jaxlite.core.leaks import ATTRIBUTED_LOCATION, Location


@dataclass(frozen=True)
class Scope:
    """A `named_scope` entry of a name stack."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Transform:
    """A transformation entry of a name stack (printed `jvp(...)` around what follows)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class NameStack:
    """The scopes an operation is traced under (mirrors `source_info_util.NameStack`)."""

    stack: tuple[Scope | Transform, ...] = ()

    def extend(self, name: str | tuple[str, ...]) -> "NameStack":
        names = (name,) if isinstance(name, str) else tuple(name)
        return NameStack(self.stack + tuple(Scope(n) for n in names))

    def wrap_name(self, name: str) -> str:
        return f"{self}/{name}" if self.stack else name

    def transform(self, transform_name: str) -> "NameStack":
        return NameStack(self.stack + (Transform(transform_name),))

    def __add__(self, other: "NameStack") -> "NameStack":
        return NameStack(self.stack + other.stack)

    def __len__(self) -> int:
        return len(self.stack)

    def __str__(self) -> str:
        text = ""
        for entry in self.stack:
            if isinstance(entry, Transform):
                text = f"{entry.name}({text})" if text else entry.name
            else:
                text = f"{text}/{entry.name}" if text else entry.name
        return text


class SourceInfo(NamedTuple):
    """Where an operation was traced: the user's frames and the name stack (JAX's)."""

    traceback: Any
    name_stack: NameStack

    def replace(self, *, traceback: Any = None, name_stack: NameStack | None = None
                ) -> "SourceInfo":
        return SourceInfo(self.traceback if traceback is None else traceback,
                          self.name_stack if name_stack is None else name_stack)


_name_stack: contextvars.ContextVar[NameStack] = contextvars.ContextVar(
    "jaxlite_name_stack", default=NameStack())
# Files whose frames are library code, skipped when naming the user's line.
_excluded_paths: list[str] = []


def register_exclusion(path: str) -> None:
    """Treat frames from files under `path` as library code (mirrors JAX's)."""
    _excluded_paths.append(path)


def current_name_stack() -> NameStack:
    """The name stack in effect now."""
    return _name_stack.get()


def new_name_stack(name: str = "") -> NameStack:
    """A name stack holding `name` alone (empty for "")."""
    return NameStack().extend(name) if name else NameStack()


def new_source_info() -> SourceInfo:
    """Source information with no frames and an empty name stack."""
    return SourceInfo(None, NameStack())


def _user_frames() -> list[_traceback.FrameSummary]:
    frames = _traceback.extract_stack()[:-2]
    return [f for f in frames if not any(f.filename.startswith(p) for p in _excluded_paths)
            and "/jaxlite/" not in f.filename]


def current() -> SourceInfo:
    """The user's frames and the name stack now (mirrors `source_info_util.current`)."""
    return SourceInfo(_user_frames(), current_name_stack())


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """"file:line (function)" of the innermost user frames, innermost first."""
    frames = list(source_info.traceback or [])[::-1][:num_frames]
    if not frames:
        return "unknown"
    return "\n".join(f"{f.filename}:{f.lineno} ({f.name})" for f in frames)


class _NameStackBlock(contextlib.ContextDecorator):
    """A block traced under another name stack; subclasses say which. Also a decorator
    (`@jax.named_scope("layer")`), so it may be entered again before it is left."""

    def new_stack(self) -> NameStack:
        raise NotImplementedError

    def __enter__(self) -> NameStack:
        stack = self.new_stack()
        self.__dict__.setdefault("_tokens", []).append(_name_stack.set(stack))
        return stack

    def __exit__(self, *exc: Any) -> None:
        _name_stack.reset(self._tokens.pop())


class extend_name_stack(_NameStackBlock):
    """A block whose operations are traced under the extra scope `name` (JAX's)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def new_stack(self) -> NameStack:
        return current_name_stack().extend(self.name)


class set_name_stack(_NameStackBlock):
    """A block traced under `name_stack` in place of the current one (JAX's)."""

    def __init__(self, name_stack: NameStack) -> None:
        self.name_stack = name_stack

    def new_stack(self) -> NameStack:
        return self.name_stack


class transform_name_stack(_NameStackBlock):
    """A block traced under the transformation `name`: `jvp`, `transpose`, ... (JAX's)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def new_stack(self) -> NameStack:
        return current_name_stack().transform(self.name)


class user_context(_NameStackBlock):
    """A block attributed to the frames `traceback` and traced under `name_stack` (JAX's)."""

    def __init__(self, traceback: Any, *, name_stack: NameStack | None = None) -> None:
        self.traceback = traceback
        self.name_stack = name_stack

    def new_stack(self) -> NameStack:
        return current_name_stack() if self.name_stack is None else self.name_stack


@contextlib.contextmanager
def attributed_to(source_info: Any) -> Iterator[None]:
    """A block whose staged operations get `source_info`'s user line and name stack (as
    JAX's eval_jaxpr propagates them); a block without it (None, or no frames) runs as is."""
    frames = getattr(source_info, "traceback", None)
    if not frames:
        yield
        return
    frame = frames[-1]  # staging's Location, or a FrameSummary from `current()`
    location = frame if isinstance(frame, Location) else Location(
        frame.filename, frame.lineno or 0, frame.name)
    location_token = ATTRIBUTED_LOCATION.set(location)
    stack_token = _name_stack.set(source_info.name_stack)
    try:
        yield
    finally:
        _name_stack.reset(stack_token)
        ATTRIBUTED_LOCATION.reset(location_token)


@contextlib.contextmanager
def reset_name_stack() -> Iterator[None]:
    """A block traced with an empty name stack (mirrors JAX's)."""
    with set_name_stack(NameStack()):
        yield


def named_scope(name: str) -> extend_name_stack:
    """A block whose operations are traced under the scope `name` (mirrors
    `jax.named_scope`)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return extend_name_stack(name)


def named_call(fun: Any, *, name: str | None = None) -> Any:
    """`fun`, traced under a scope named `name` (its own name by default) (mirrors
    `jax.named_call`)."""
    scope = name if name is not None else getattr(fun, "__name__", "named_call")

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        with extend_name_stack(scope):
            return fun(*args, **kwargs)
    return named
