"""Exceptions a user can act on (mirrors `jax.errors`)."""
from __future__ import annotations


class JaxliteTypeError(TypeError):
    """Base of jaxlite's type errors."""


class ConcretizationTypeError(JaxliteTypeError):
    """A traced value was used where a concrete Python value is needed.

    Raised, for example, by `bool(x)`, `int(x)` or `x.item()` on a value that `jit` traces.
    Fix it by marking the argument static (`static_argnums` / `static_argnames`), or by
    expressing the control flow with `lax.cond`, `lax.select` or `jnp.where`.
    """


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` of a traced value (an `if` or `while` on a traced value)."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """`int()` or `__index__` of a traced value."""


class TracerArrayConversionError(JaxliteTypeError):
    """`numpy.asarray` of a traced value."""


class UnexpectedTracerError(Exception):
    """A tracer escaped the transformation that made it and was used afterwards.

    Usually a traced value was stored in a global or an object attribute inside `jit`,
    `grad` or `vmap`, and read later. Return the value from the function instead.
    """


class JaxRuntimeError(RuntimeError):
    """A program failed while it ran: a host callback raised, or returned values of the
    wrong shape or dtype (mirrors `jax.errors.JaxRuntimeError`)."""


class NonConcreteBooleanIndexError(IndexError):
    """Boolean-mask indexing of a traced array: the result shape would depend on values."""
