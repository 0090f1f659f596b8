"""`jax._src.traceback_util` under the hook. Needed by flax (its traceback_util), equinox,
diffrax and jaxtyping, which register their files for exclusion from tracebacks and wrap
their entry points.

jaxlite does not filter tracebacks yet (the debugging-tools issue): exclusions are recorded
and `include_frame` answers from them, but `api_boundary` leaves exceptions as they are.
"""
from __future__ import annotations

import types
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

# Path prefixes whose frames are library internals (flax edits this list directly).
_exclude_paths: list[str] = []


def register_exclusion(path: str) -> None:
    """Mark frames from files under `path` as internal."""
    if path not in _exclude_paths:
        _exclude_paths.append(path)


def include_frame(frame: types.FrameType) -> bool:
    """Whether `frame` is user code (not under a registered exclusion)."""
    return not any(frame.f_code.co_filename.startswith(p) for p in _exclude_paths)


def api_boundary(fun: F) -> F:
    """Mark `fun` as an entry point whose exceptions would be filtered (a no-op here)."""
    return fun
