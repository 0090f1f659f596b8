"""Why a jitted function traced again (mirrors JAX's `jax_explain_cache_misses`).

With the option on, every tracing cache miss of `jit` logs a WARNING on the logger JAX uses
(`jax._src.interpreters.partial_eval`), in JAX's layout, so that log filters written for
JAX match:

    TRACING CACHE MISS at /path/train.py:41 (step):
      for loss defined at /path/train.py:12
      all previously seen cache keys differ. For the closest previous key:
      different input types:
      * at params['w'], now f32[4,3] and before f32[3,3]

A jit cache key is (input pytree, input types, static arguments, tracing options, named
axes in scope); the explanation compares the new key with each key the function traced
before and reports the closest one's differences, by category: the tracing context
(options such as `jax_enable_x64`, named axes), the input pytree (structure and static
argument values) and, when the structures agree, the input types (shape, dtype, weak type)
of each argument, named by its path (`x`, `params['w']`).

Nothing here runs unless the option is on: `jit` reads it only on a miss.
"""
from __future__ import annotations

import logging
import weakref
from typing import Any, Callable, Sequence

from jaxlite import _jax_options  # noqa: F401  (defines jax_explain_cache_misses)
from jaxlite.config import config
from jaxlite.core.avals import ShapedArray
from jaxlite.core.leaks import defined_at, where_created
from jaxlite.runtime.call_cache import LRUCache
from jaxlite.transforms import api_util as _api_util
from jaxlite.tree_util import PyTreeDef

# The logger JAX writes these explanations to.
LOGGER = logging.getLogger("jax._src.interpreters.partial_eval")
enabled = config.reader("jax_explain_cache_misses")

_WEAK_TYPES_DOC = "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
# The keys traced while the option was on, by function (any jit of it; by the jit itself
# for a function that takes no weak reference), beyond what a jit's cache still holds:
# key -> (the leaves' names, a weak reference to the jit that traced it).
_HISTORY: "weakref.WeakKeyDictionary[Any, LRUCache]" = weakref.WeakKeyDictionary()
_HISTORY_SIZE = 64

# (in_tree, avals, statics, trace context, named axes, typed shardings), as `jit` builds it
Key = tuple


def _history_owner(jitted: Any, fun: Callable[..., Any]) -> Any:
    try:
        weakref.ref(fun)
        return fun
    except TypeError:
        return jitted


def remember(jitted: Any, fun: Callable[..., Any], key: Key, names: Sequence[str]) -> None:
    """Note that `jitted`, the jit of `fun`, traced `key` (whose leaves are `names`)."""
    owner = _history_owner(jitted, fun)
    history = _HISTORY.get(owner)
    if history is None:
        history = _HISTORY[owner] = LRUCache(_HISTORY_SIZE)
    history[key] = (tuple(names), weakref.ref(jitted))


def forget(jitted: Any, fun: Callable[..., Any]) -> None:
    """Forget what the jits of `fun` traced (`jitted`'s caches were cleared)."""
    _HISTORY.pop(_history_owner(jitted, fun), None)


def explain(jitted: Any, fun: Callable[..., Any], key: Key, names: Sequence[str],
            cached: Sequence[tuple[Key, Sequence[str]]]) -> None:
    """Log why `jitted` (the jit of `fun`) traces `key` now: its function was never traced,
    or how the closest of the keys traced before (`cached`, the ones in `jitted`'s cache,
    and those `remember`ed) differs."""
    where = where_created()
    lines = [f"TRACING CACHE MISS at {where.file}:{where.line} ({where.function}):"
             if where is not None else "TRACING CACHE MISS:"]
    name = _api_util.function_name(fun)
    place = defined_at(fun) or "an unknown place"
    history = _HISTORY.get(_history_owner(jitted, fun), {})
    seen = {k: (n, by()) for k, (n, by) in reversed(list(history.items()))}
    seen.update((k, (tuple(n), jitted)) for k, n in reversed(list(cached)))
    if not seen:
        lines += ["  never seen function:", f"    {name} id={id(fun)} defined at {place}"]
    elif key in seen:
        lines += [f"  for {name} defined at {place}", "  this cache key was seen before, "
                  + ("by another jit of this function: jaxlite keeps traces per jitted "
                     "function, so jit a function once and call the result"
                     if seen[key][1] is not jitted else
                     "but its trace is no longer cached (dropped as least recently used, "
                     "or not kept because the function closed over values of an outer "
                     "transformation)")]
    else:
        lines += [f"  for {name} defined at {place}",
                  "  all previously seen cache keys differ. For the closest previous key:"]
        labels = _Labels(fun)
        explanations = [_differences(key, names, old, old_names, labels)
                        for old, (old_names, _) in seen.items()]
        lines += min(explanations, key=len)  # the first (latest) of the closest on ties
    LOGGER.warning("\n".join(lines))


def _placements(placed: Any) -> str:
    if placed is None:
        return "none"
    shardings, mesh = placed
    specs = ", ".join("unplaced" if s is None else str(s.spec) for s in shardings)
    return f"({specs}) under {'no mesh' if mesh is None else mesh}"


def _differences(new: Key, names: Sequence[str], old: Key, old_names: Sequence[str],
                 labels: "_Labels") -> list[str]:
    """The explanation's lines for one previous key, by category (JAX's headers)."""
    new_tree, new_avals, new_statics, new_context, new_axes, new_placed = new
    old_tree, old_avals, old_statics, old_context, old_axes, old_placed = old
    lines: list[str] = []
    context = _context_differences(new_context, old_context)
    if new_axes != old_axes:
        context.append(f"  * the named axes in scope differ: now {_axes(new_axes)} and "
                       f"before {_axes(old_axes)}")
    if new_placed != old_placed:
        # (`core.sharding_rules.jit_key`: typed shardings over Explicit meshes, the context
        # mesh)
        context.append("  * the arguments' shardings or the context mesh differ: now "
                       f"{_placements(new_placed)} and before {_placements(old_placed)}")
    if context:
        lines += ["  Tracing context doesn't match, e.g. due to config or context manager.",
                  *context]
    tree = _tree_differences(new_tree, old_tree, labels.arguments(new_tree, new_statics))
    tree += _static_differences(new_statics, old_statics, labels)
    if tree:
        lines += ["  different input pytree:", *tree]
    elif new_avals != old_avals:
        lines += ["  different input types:",
                  *_type_differences(new_avals, old_avals, names)]
    return lines or ["  explanation unavailable: the keys differ in a way this report does "
                     "not cover"]


def _context_differences(new: tuple, old: tuple) -> list[str]:
    # config keeps the names of the options in `trace_context()` in this private tuple.
    option_names = config._trace_options
    return [f"  * {name} differs: now {now!r} and before {before!r}"
            for name, now, before in zip(option_names, new, old) if now != before]


def _axes(frames: Any) -> str:
    return repr(tuple(frames)) if frames else "none"


def _type_differences(new: Sequence[ShapedArray], old: Sequence[ShapedArray],
                      names: Sequence[str]) -> list[str]:
    lines = []
    for name, now, before in zip(names, new, old):
        if now == before:
            continue
        now_text, before_text = now.str_short(), before.str_short()
        note = ""
        if now.weak_type != before.weak_type:
            now_text += f"{{weak_type={now.weak_type}}}"
            before_text += f"{{weak_type={before.weak_type}}}"
            note = f" (see {_WEAK_TYPES_DOC})"
        lines.append(f"  * at {name}, now {now_text} and before {before_text}{note}")
    return lines


# ------------------------------------------------------------------------- pytrees

class _Labels:
    """Names of a jitted function's arguments: a positional argument by its parameter's
    name, a keyword argument by its keyword."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun

    def positional(self, count: int) -> list[str]:
        return _api_util.parameter_names(self.fun, count)

    def arguments(self, in_tree: PyTreeDef, statics: tuple) -> list[str]:
        """Labels of the children of `in_tree`'s (dynamic args, dynamic kwargs) root: the
        positional arguments left once the static ones are taken out."""
        args = in_tree.children()[0]
        static_positions = {k for k, _ in statics if isinstance(k, int)}
        count = len(args.children()) + len(static_positions)
        return [n for i, n in enumerate(self.positional(count)) if i not in static_positions]

    def static(self, where: int | str) -> str:
        if isinstance(where, str):
            return where
        return self.positional(where + 1)[where]


def _tree_differences(new: PyTreeDef, old: PyTreeDef, arg_labels: list[str]) -> list[str]:
    """Where the (args, kwargs) structures differ: one line per first difference on a path."""
    if new == old:
        return []
    new_args, new_kwargs = new.children()
    old_args, old_kwargs = old.children()
    lines: list[str] = []
    if len(new_args.children()) != len(old_args.children()):
        lines.append(f"  * now {len(new_args.children())} and before "
                     f"{len(old_args.children())} positional arguments (not static), so the "
                     "numbers of arguments do not match")
    else:
        for label, now, before in zip(arg_labels, new_args.children(), old_args.children()):
            lines += _node_differences(now, before, label)
    now_keys, before_keys = _dict_keys(new_kwargs), _dict_keys(old_kwargs)
    if now_keys != before_keys:
        lines.append(f"  * at the keyword arguments, now {sorted(now_keys)} and before "
                     f"{sorted(before_keys)}, so the keywords passed do not match")
    else:
        for key, now, before in zip(now_keys, new_kwargs.children(), old_kwargs.children()):
            lines += _node_differences(now, before, key)
    return lines


def _dict_keys(tree: PyTreeDef) -> list:
    return list(tree.node_data()[1])


def _node_differences(new: PyTreeDef, old: PyTreeDef, path: str) -> list[str]:
    if new == old:
        return []
    new_data, old_data = new.node_data(), old.node_data()
    if new_data is None or old_data is None or new_data[0] is not old_data[0]:
        return [f"  * at {path}, now {_node_kind(new_data)} and before "
                f"{_node_kind(old_data)}, so their Python types differ"]
    kind, new_aux = new_data
    old_aux = old_data[1]
    new_kids, old_kids = new.children(), old.children()
    if len(new_kids) != len(old_kids):
        line = (f"  * at {path}, now {kind} with {_count(len(new_kids))} and before {kind} "
                f"with {_count(len(old_kids))}, so the numbers of children do not match")
        if kind is dict:
            line += (", with the symmetric difference of key sets: "
                     f"{set(new_aux) ^ set(old_aux)}")
        return [line]
    if new_aux != old_aux:
        return [f"  * at {path}, now {kind} with pytree metadata {new_aux!r} and before "
                f"{kind} with pytree metadata {old_aux!r}, so the pytree node metadata does "
                "not match"]
    steps = ([f"[{k!r}]" for k in new_aux] if kind is dict else
             [f"[{i}]" for i in range(len(new_kids))])
    lines = []
    for step, now, before in zip(steps, new_kids, old_kids):
        lines += _node_differences(now, before, path + step)
    return lines


def _node_kind(data: tuple | None) -> str:
    return "an array (a leaf)" if data is None else str(data[0])


def _count(children: int) -> str:
    return "1 child" if children == 1 else f"{children} children"


def _static_differences(new: tuple, old: tuple, labels: _Labels) -> list[str]:
    new_values = {where: wrapped.value for where, wrapped in new}
    old_values = {where: wrapped.value for where, wrapped in old}
    lines = []
    for where in sorted(set(new_values) | set(old_values), key=str):
        label = labels.static(where)
        if where not in old_values or where not in new_values:
            now = "passed" if where in new_values else "not passed"
            before = "passed" if where in old_values else "not passed"
            lines.append(f"  * at {label} (static argument), now {now} and before {before}")
            continue
        now, before = new_values[where], old_values[where]
        if type(now) is not type(before) or not bool(now == before):
            lines.append(f"  * at {label} (static argument), now {now!r} and before "
                         f"{before!r}, so the static argument values differ")
    return lines
