"""`jax._src.traceback_util` under the hook. Needed by flax (its traceback_util), equinox,
diffrax and jaxtyping, which register their files for exclusion from tracebacks and wrap
their entry points: both feed jaxlite's own filtering (`jaxlite.core.traceback_filter`).
"""
from __future__ import annotations

import types
from typing import Callable, TypeVar

from jaxlite.core import traceback_filter

F = TypeVar("F", bound=Callable)

# Path prefixes whose frames are library internals (flax edits this list directly): the
# filter's own registry.
_exclude_paths: list[str] = traceback_filter.EXCLUDED_PATHS


def register_exclusion(path: str) -> None:
    """Mark frames from files under `path` as internal."""
    if path not in _exclude_paths:
        _exclude_paths.append(path)


def include_frame(frame: types.FrameType) -> bool:
    """Whether `frame` is shown in filtered tracebacks (not jaxlite's, not excluded)."""
    return not traceback_filter.is_machinery(frame.f_code.co_filename)


def api_boundary(fun: F) -> F:
    """`fun` with the tracebacks of its errors filtered, as jaxlite's own entry points."""
    return traceback_filter.api_boundary(fun)  # type: ignore[return-value]
