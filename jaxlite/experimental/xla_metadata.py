"""`jax.experimental.xla_metadata`: attach key-value metadata to the operations XLA
compiles (scheduling hints that XLA's passes read).

jaxlite's compiler reads no such hints, so the metadata is kept (`current_xla_metadata`)
and changes nothing: values pass through unchanged, under every transformation.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from jaxlite import numpy as jnp
from jaxlite.tree_util import tree_map

__all__ = ["set_xla_metadata"]

_state = threading.local()


def current_xla_metadata() -> dict[str, Any]:
    """The metadata of the enclosing `set_xla_metadata` blocks, inner keys winning."""
    return dict(getattr(_state, "metadata", {}))


class XlaMetadataContextManager:
    """The object `set_xla_metadata(**kwargs)` returns: a context manager, and a decorator
    that runs the function (and its callable attributes, like `.lower`) inside it."""

    def __init__(self, updates: dict[str, Any]) -> None:
        self.updates = updates
        self._previous: list[dict[str, Any]] = []

    def __enter__(self) -> None:
        previous = current_xla_metadata()
        self._previous.append(previous)
        _state.metadata = {**previous, **self.updates}

    def __exit__(self, *exc_info: Any) -> None:
        _state.metadata = self._previous.pop()

    def __call__(self, f: Callable[..., Any]) -> Any:
        return _XlaMetadataWrapper(f, self)


class _XlaMetadataWrapper:
    """A function decorated with `set_xla_metadata(...)`: called inside the context."""

    def __init__(self, f: Callable[..., Any], context: XlaMetadataContextManager) -> None:
        self._f = f
        self._context = context
        functools.update_wrapper(self, f)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._context:
            return self._f(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._f, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        def in_context(*args: Any, **kwargs: Any) -> Any:
            with self._context:
                return attr(*args, **kwargs)
        return in_context


def set_xla_metadata(x: Any = None, **kwargs: Any) -> Any:
    """Attach metadata to operations (mirrors
    `jax.experimental.xla_metadata.set_xla_metadata`).

    Without `x`, a context manager (or decorator) for the operations inside it; with `x`,
    `x`'s leaves tagged with the metadata: returned as arrays with their values unchanged.
    """
    if x is None:
        return XlaMetadataContextManager(kwargs)
    return tree_map(jnp.asarray, x)
