"""Events and durations for listeners to collect (mirrors `jax.monitoring`).

Code records an event (`record_event`), a duration (`record_event_duration_secs`), a time
span or a scalar under a name such as "/jax/core/compile/backend_compile_duration";
every registered listener of that kind is called with the name, the value and the keyword
metadata. jaxlite records its own compile durations under JAX's names, so tools written
for JAX's events see them.
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs",
           "record_event_time_span", "record_scalar", "register_event_duration_secs_listener",
           "register_event_listener", "register_event_time_span_listener",
           "register_scalar_listener", "unregister_event_duration_listener",
           "unregister_event_listener", "unregister_event_time_span_listener",
           "unregister_scalar_listener"]

# Listeners by kind: the only mutable state of this module.
_LISTENERS: dict[str, list[Callable[..., Any]]] = {
    "event": [], "duration": [], "time_span": [], "scalar": []}


def _check_metadata(kwargs: dict[str, Any]) -> None:
    for key, value in kwargs.items():
        if not isinstance(value, (str, int)):
            raise TypeError(f"monitoring metadata {key}={value!r} must be a str or an int.")


def _notify(kind: str, *args: Any, **kwargs: Any) -> None:
    _check_metadata(kwargs)
    for listener in list(_LISTENERS[kind]):
        listener(*args, **kwargs)


def record_event(event: str, **kwargs: str | int) -> None:
    """Record that `event` happened (mirrors `jax.monitoring.record_event`)."""
    _notify("event", event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Record that `event` took `duration` seconds."""
    _notify("duration", event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Record that `event` ran from `start_time` to `end_time` (seconds since the epoch)."""
    _notify("time_span", event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Record a scalar measurement under `event`."""
    _notify("scalar", event, value, **kwargs)


def _register(kind: str) -> Callable[[Callable[..., Any]], None]:
    def register(callback: Callable[..., Any]) -> None:
        _LISTENERS[kind].append(callback)
    register.__doc__ = f"Call `callback` on every recorded {kind.replace('_', ' ')}."
    return register


def _unregister(kind: str) -> Callable[[Callable[..., Any]], None]:
    def unregister(callback: Callable[..., Any]) -> None:
        try:
            _LISTENERS[kind].remove(callback)
        except ValueError:
            raise AssertionError(f"{callback!r} is not a registered {kind} listener") from None
    unregister.__doc__ = f"Stop calling `callback` on recorded {kind.replace('_', ' ')}s."
    return unregister


register_event_listener = _register("event")
register_event_duration_secs_listener = _register("duration")
register_event_time_span_listener = _register("time_span")
register_scalar_listener = _register("scalar")
unregister_event_listener = _unregister("event")
unregister_event_duration_listener = _unregister("duration")
unregister_event_time_span_listener = _unregister("time_span")
unregister_scalar_listener = _unregister("scalar")


def clear_event_listeners() -> None:
    """Remove every listener of every kind."""
    for listeners in _LISTENERS.values():
        listeners.clear()
