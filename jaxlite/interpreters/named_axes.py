"""Named axes in scope: the axis environment that collectives consult (mirrors JAX's
`core.get_axis_env` and `core.extend_axis_env_nd`).

`vmap(f, axis_name="i")` (and `pmap`, and `make_jaxpr(..., axis_env=...)`) binds the name
`"i"` to the mapped size while `f` runs. The environment is dynamically scoped, like JAX's:
a collective such as `psum(x, "i")` looks the name up to learn the axis size, and raises
`NameError` when no enclosing map binds it. The innermost binding of a name wins.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Iterator, Sequence


@dataclass(frozen=True)
class AxisFrame:
    """One named axis in scope: its name and its size."""

    name: Any
    size: int


_frames: contextvars.ContextVar[tuple[AxisFrame, ...]] = contextvars.ContextVar(
    "jaxlite_axis_env", default=())


def axis_env() -> tuple[AxisFrame, ...]:
    """The named axes in scope, outermost first (part of jit's cache key)."""
    return _frames.get()


@contextlib.contextmanager
def extend_axis_env(frames: Sequence[tuple[Any, int]]) -> Iterator[None]:
    """Bind each `(name, size)` of `frames` for the duration of a block."""
    new = tuple(AxisFrame(name, int(size)) for name, size in frames)
    token = _frames.set(_frames.get() + new)
    try:
        yield
    finally:
        _frames.reset(token)


def _lookup(name: Any) -> AxisFrame | None:
    for frame in reversed(_frames.get()):
        if _same_name(frame.name, name):
            return frame
    return None


def _same_name(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # names are any hashable; an odd __eq__ must not crash a lookup
        return a is b


def axis_size(name: Any) -> int:
    """The size of the named axis `name` (NameError, as in JAX, when none is bound)."""
    frame = _lookup(name)
    if frame is None:
        raise NameError(f"unbound axis name: {name}")
    return frame.size


def check_axis_names(names: Sequence[Any], api_name: str) -> None:
    """Raise JAX's NameError for the first name of `names` (ints excepted: positional axes)
    that no enclosing map binds."""
    for name in names:
        if isinstance(name, int):
            continue
        if _lookup(name) is None:
            bound = [f.name for f in _frames.get()]
            raise NameError(
                f"Found an unbound axis name: {name}. To fix this, please call {api_name} "
                f"under `jax.shard_map`. (Axis names are bound by vmap(..., axis_name=...), "
                f"pmap or shard_map; bound here: {bound}.)")


def in_binding_order(names: Sequence[Any]) -> tuple:
    """`names` sorted outermost binding first: the order of the axes of a device mesh, which
    orders the members of some collectives over several names (JAX's ppermute)."""
    frames = _frames.get()

    def depth(name: Any) -> int:
        return max(i for i, f in enumerate(frames) if _same_name(f.name, name))
    return tuple(sorted(names, key=depth))


def is_bound(name: Any) -> bool:
    return _lookup(name) is not None
