"""Primitives: the operations every transformation understands (mirrors `jax.core.Primitive`).

A primitive is one object with one slot per rule: `abstract_eval` (shapes and dtypes),
`reference` (eager execution with numpy), `jvp`, `transpose`, `batch` and `lower`. `bind` hands the primitive
to the current trace, which decides what applying it means. The registry of all primitives
is one of the few global tables.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

from jaxlite.core.dtypes import ExtendedDType
from jaxlite.core.avals import ShapedArray
from jaxlite.core.trace import Trace, current_trace

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
# Primitives that libraries declared through `jax.extend.core.Primitive`: JAX lets several
# share a name, so they stay out of `registry` (whose names are jaxlite's own).
extension_primitives: "weakref.WeakSet[Primitive]" = weakref.WeakSet()


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

    # Class attributes, as in JAX, so that subclasses may set them.
    multiple_results = False
    call_primitive = False
    map_primitive = False
    ref_primitive = False

    def __init__(self, name: str, multiple_results: bool = False, *,
                 register: bool = True) -> None:
        self.name = name
        if multiple_results:
            self.multiple_results = True
        for slot in RULE_SLOTS:
            setattr(self, slot, _missing_rule(self, slot))
        # Eager execution; None means "through the eager dispatch hook, with `reference`".
        # Higher-order primitives (jit, custom derivatives) set it to evaluate their jaxpr.
        self.impl: Callable[..., Any] | None = None
        if not register:
            extension_primitives.add(self)
            return
        if name in registry:
            raise ValueError(f"A primitive named '{name}' is already declared.")
        registry[name] = self

    def has_rule(self, slot: str) -> bool:
        return not getattr(getattr(self, slot), "missing", False)

    # How a structural primitive (reshape, slice, select_n, ...) applies to values of an
    # extended dtype (typed PRNG keys): set by the library that defines the dtype, it
    # rewrites the operation on the values' physical data, so that no other rule sees them.
    extended_rule: Callable[..., Any] | None = None
    # Whether values of extended dtypes may reach the primitive's other rules as they are
    # (higher-order primitives pass them on to their jaxprs).
    takes_extended = False

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive under the current trace."""
        if self.extended_rule is not None and any(map(_has_extended_dtype, args)):
            return self.extended_rule(*args, **params)
        return current_trace().process_primitive(self, args, params)

    def bind_with_trace(self, trace: Trace, args: Any, params: dict[str, Any]) -> Any:
        """Apply the primitive under `trace` (mirrors `Primitive.bind_with_trace`)."""
        return trace.process_primitive(self, tuple(args), dict(params))

    def get_bind_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The parameters to bind again with, given an equation's (JAX's method)."""
        return dict(params)

    # JAX's way of giving rules: each returns its argument, so it can decorate.

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """Eager evaluation: `impl(*arrays, **params)` (mirrors `Primitive.def_impl`)."""
        self.impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval: Callable[..., Any]) -> Callable[..., Any]:
        """Shape rule: `abstract_eval(*avals, **params)` returns ShapedArray(s)."""
        self.abstract_eval = _normalized_abstract_eval(self, abstract_eval, False)
        return abstract_eval

    def def_effectful_abstract_eval(self, abstract_eval: Callable[..., Any]
                                    ) -> Callable[..., Any]:
        """Shape rule returning `(avals, effects)`; jaxlite keeps no effects in jaxprs, so
        the effects are dropped (mirrors `Primitive.def_effectful_abstract_eval`)."""
        self.abstract_eval = _normalized_abstract_eval(self, abstract_eval, True)
        return abstract_eval

    def def_bind_with_trace(self, bind_with_trace: Callable[..., Any]) -> Callable[..., Any]:
        """Replace how `bind` hands the primitive to the current trace."""
        def bind(*args: Any, **params: Any) -> Any:
            return bind_with_trace(current_trace(), args, params)
        self.bind = bind  # type: ignore[method-assign]
        return bind_with_trace

    def __repr__(self) -> str:
        return self.name


def _has_extended_dtype(value: Any) -> bool:
    return isinstance(getattr(value, "dtype", None), ExtendedDType)


def check_extended_operands(primitive: Primitive, avals: Any) -> None:
    """JAX's TypeError when values of an extended dtype (typed PRNG keys) reach a primitive
    that cannot take them, such as arithmetic on keys."""
    if not primitive.takes_extended and any(isinstance(a.dtype, ExtendedDType) for a in avals):
        names = ", ".join(str(a.dtype) for a in avals)
        raise TypeError(f"{primitive.name} does not accept dtypes {names}.")


def _normalized_abstract_eval(prim: Primitive, rule: Callable[..., Any],
                              effectful: bool) -> Callable[..., Any]:
    """A user's shape rule, with its results turned into jaxlite's `ShapedArray`s."""
    def abstract_eval(*avals: Any, **params: Any) -> Any:
        out = rule(*avals, **params)
        if effectful:
            out, _effects = out
        if prim.multiple_results:
            return [as_shaped_array(a) for a in out]
        return as_shaped_array(out)
    abstract_eval.jax_rule = rule  # type: ignore[attr-defined]
    return abstract_eval


def as_shaped_array(aval: Any) -> ShapedArray:
    """An abstract value given by a rule (ShapedArray or anything with shape and dtype)."""
    if isinstance(aval, ShapedArray):
        return aval
    if hasattr(aval, "shape") and hasattr(aval, "dtype"):
        return ShapedArray(tuple(aval.shape), aval.dtype, bool(getattr(aval, "weak_type", False)))
    raise TypeError(f"An abstract evaluation rule returned {aval!r}; it must return "
                    "jax.core.ShapedArray values (one per output).")
