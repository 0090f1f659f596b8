"""Effects: what an operation does besides computing its outputs (mirrors JAX's effects).

Libraries declare effect types (subclasses of `Effect`) and register them as allowed in
control flow, lowering or custom derivatives by adding them to `EffectTypeSet`s. jaxlite's
jaxprs do not carry effects (every equation runs, none is removed for being unused before
lowering), so these sets only record what libraries register.
"""
from __future__ import annotations

from typing import AbstractSet, Any, Iterable


class Effect:
    """The base class of effect types (mirrors `jax.extend.core.Effect`)."""


Effects = AbstractSet[Effect]
no_effects: frozenset = frozenset()


class EffectTypeSet:
    """A set of effect types (mirrors JAX's `effects.EffectTypeSet`)."""

    def __init__(self) -> None:
        self._types: set[type] = set()

    def add_type(self, effect_type: type) -> None:
        self._types.add(effect_type)

    def contains(self, eff: Any) -> bool:
        return any(isinstance(eff, t) for t in self._types)

    def filter_in(self, effs: Iterable[Any]) -> list[Any]:
        return [e for e in effs if self.contains(e)]

    def filter_not_in(self, effs: Iterable[Any]) -> list[Any]:
        return [e for e in effs if not self.contains(e)]

    def __repr__(self) -> str:
        return f"EffectTypeSet({self._types})"


lowerable_effects = EffectTypeSet()
ordered_effects = EffectTypeSet()
control_flow_allowed_effects = EffectTypeSet()
custom_derivatives_allowed_effects = EffectTypeSet()
remat_allowed_effects = EffectTypeSet()
