"""Primitives: the operations every transformation understands (mirrors `jax.core.Primitive`).

A primitive is one object with one slot per rule: `abstract_eval` (shapes and dtypes),
`reference` (eager execution with numpy), `jvp`, `transpose`, `batch` and `lower`. `bind` hands the primitive
to the current trace, which decides what applying it means. The registry of all primitives
is one of the few global tables.
"""
from __future__ import annotations

from typing import Any, Callable

from jaxlite.core.trace import current_trace

RULE_SLOTS = ("abstract_eval", "reference", "jvp", "transpose", "batch", "lower")

_TRANSFORMATION_OF_SLOT = {
    "abstract_eval": "shape inference (abstract evaluation)",
    "reference": "eager execution (reference implementation)",
    "jvp": "forward-mode differentiation (jvp / grad)",
    "transpose": "reverse-mode differentiation (transpose / grad)",
    "batch": "vmap (batching)",
    "lower": "lowering to HLO (jit)",
}

# Every primitive ever declared, by name.
registry: dict[str, "Primitive"] = {}


class MissingRuleError(NotImplementedError):
    """A primitive was used under a transformation it has no rule for."""


def _missing_rule(prim: "Primitive", slot: str) -> Callable[..., Any]:
    def fail(*args: Any, **params: Any) -> Any:
        raise MissingRuleError(
            f"Primitive '{prim.name}' has no rule for {_TRANSFORMATION_OF_SLOT[slot]}.")
    fail.missing = True  # type: ignore[attr-defined]
    return fail


class Primitive:
    """An operation with its rules (mirrors `jax.core.Primitive`).

    Parameters
    ----------
    name : str
        The name jaxprs print.
    multiple_results : bool
        Whether `bind` returns a list of outputs rather than one.
    """

    def __init__(self, name: str, multiple_results: bool = False) -> None:
        self.name = name
        self.multiple_results = multiple_results
        for slot in RULE_SLOTS:
            setattr(self, slot, _missing_rule(self, slot))
        # Eager execution; None means "through the eager dispatch hook, with `reference`".
        # Higher-order primitives (jit, custom derivatives) set it to evaluate their jaxpr.
        self.impl: Callable[..., Any] | None = None
        if name in registry:
            raise ValueError(f"A primitive named '{name}' is already declared.")
        registry[name] = self

    def has_rule(self, slot: str) -> bool:
        return not getattr(getattr(self, slot), "missing", False)

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive under the current trace."""
        return current_trace().process_primitive(self, args, params)

    def __repr__(self) -> str:
        return self.name
