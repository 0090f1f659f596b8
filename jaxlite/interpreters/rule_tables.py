"""JAX's rule tables (`ad.primitive_jvps`, `batching.primitive_batchers`, ...) as live views.

A library extends JAX by assigning into dicts keyed by primitive. In jaxlite a rule is a
slot of the `Primitive` itself, so each of JAX's tables is a view over one slot: reading
gives the primitive's rule in JAX's calling convention, assigning installs a rule (adapted
to jaxlite's convention when the two differ), deleting removes it. jaxlite's own
primitives appear in every table in which they have a rule.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from jaxlite.core.primitive import Primitive, _missing_rule, extension_primitives, registry

# adapt(primitive, rule in JAX's convention) -> rule in jaxlite's convention, and back.
Adapter = Callable[[Primitive, Callable[..., Any]], Callable[..., Any]]


def _same(prim: Primitive, rule: Callable[..., Any]) -> Callable[..., Any]:
    return rule


class RuleTable(MutableMapping):
    """The rules of one slot of every primitive, keyed by primitive.

    Parameters
    ----------
    slot : the `Primitive` attribute holding the rule ("jvp", "transpose", "batch", ...).
    to_internal : turns a rule written in JAX's convention into jaxlite's.
    to_jax : turns one of jaxlite's rules into JAX's convention, for reading.
    on_install : called with the primitive after a rule is installed.
    """

    def __init__(self, slot: str, to_internal: Adapter = _same, to_jax: Adapter = _same,
                 on_install: Callable[[Primitive], None] | None = None) -> None:
        self.slot = slot
        self._to_internal = to_internal
        self._to_jax = to_jax
        self._on_install = on_install

    def __getitem__(self, prim: Any) -> Callable[..., Any]:
        if not isinstance(prim, Primitive) or not prim.has_rule(self.slot):
            raise KeyError(prim)
        rule = getattr(prim, self.slot)
        if getattr(rule, "installed_by", None) is self:
            return rule.jax_rule
        return self._to_jax(prim, rule)

    def __setitem__(self, prim: Any, rule: Callable[..., Any]) -> None:
        if not isinstance(prim, Primitive):
            raise TypeError(f"rule tables are keyed by primitives, got {prim!r}")
        internal = self._to_internal(prim, rule)
        if internal is not rule:
            # Several tables may view one slot in different conventions (the three
            # batching tables): reading gives the rule back only to the table that took it.
            internal.jax_rule = rule  # type: ignore[attr-defined]
            internal.installed_by = self  # type: ignore[attr-defined]
        setattr(prim, self.slot, internal)
        if self._on_install is not None:
            self._on_install(prim)

    def __delitem__(self, prim: Any) -> None:
        if not isinstance(prim, Primitive) or not prim.has_rule(self.slot):
            raise KeyError(prim)
        setattr(prim, self.slot, _missing_rule(prim, self.slot))

    def __contains__(self, prim: object) -> bool:
        return isinstance(prim, Primitive) and prim.has_rule(self.slot)

    def __iter__(self) -> Iterator[Primitive]:
        for prim in [*registry.values(), *extension_primitives]:
            if prim.has_rule(self.slot):
                yield prim

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<rule table of the '{self.slot}' rules of {len(self)} primitives>"
