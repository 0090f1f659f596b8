"""Small helpers of JAX's `jax._src.util` (`safe_map`, `safe_zip`, `unzip2`,
`weakref_lru_cache`): JAX's experimental modules and example libraries export them as
module attributes, and programs written against JAX sometimes import them from there."""
from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from typing import Any, Callable, Iterable, Sequence


__all__ = ["safe_map", "safe_zip", "unzip2", "weakref_lru_cache"]


def safe_map(f: Callable[..., Any], *args: Sequence[Any]) -> list[Any]:
    """`map` that insists on equal lengths and returns a list (JAX's `util.safe_map`)."""
    lists = [list(a) for a in args]
    _check_lengths(lists)
    return list(map(f, *lists))


def safe_zip(*args: Sequence[Any]) -> list[tuple]:
    """`zip` that insists on equal lengths and returns a list (JAX's `util.safe_zip`)."""
    lists = [list(a) for a in args]
    _check_lengths(lists)
    return list(zip(*lists))


def _check_lengths(lists: list[list]) -> None:
    if any(len(other) != len(lists[0]) for other in lists[1:]):
        raise ValueError(f"length mismatch: {[len(a) for a in lists]}")


def unzip2(xys: Iterable[tuple[Any, Any]]) -> tuple[tuple, tuple]:
    """Pairs to a pair of tuples (JAX's `util.unzip2`)."""
    xs, ys = [], []
    for x, y in xys:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def weakref_lru_cache(f: Callable[..., Any] | None = None, *, maxsize: int | None = 2048,
                      trace_context_in_key: bool = True, explain: Callable | None = None
                      ) -> Any:
    """Memoize `f(obj, *args)` on the first argument by weak reference and the others by
    value, keeping at most `maxsize` entries per object (JAX's `util.weakref_lru_cache`)."""
    if f is None:
        return functools.partial(weakref_lru_cache, maxsize=maxsize,
                                 trace_context_in_key=trace_context_in_key, explain=explain)
    tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(f)
    def cached(obj: Any, *args: Any, **kwargs: Any) -> Any:
        table = tables.setdefault(obj, OrderedDict())
        key = (args, tuple(sorted(kwargs.items())))
        if key in table:
            table.move_to_end(key)
            return table[key]
        value = table[key] = f(obj, *args, **kwargs)
        if maxsize is not None and len(table) > maxsize:
            table.popitem(last=False)
        return value
    cached.cache_clear = tables.clear  # type: ignore[attr-defined]
    return cached
