"""Exceptions a user can act on (mirrors `jax.errors`), in JAX's class hierarchy, so that
code catching `TypeError`, `IndexError` or JAX's own classes catches the same errors."""
from __future__ import annotations

import os
import sys
import warnings


class JAXTypeError(TypeError):
    """Base of the type errors jaxlite raises about traced values (mirrors
    `jax.errors.JAXTypeError`)."""


class JAXIndexError(IndexError):
    """Base of the indexing errors about traced values (mirrors `jax.errors.JAXIndexError`)."""


class ConcretizationTypeError(JAXTypeError):
    """A traced value was used where a concrete Python value is needed.

    Raised, for example, by `bool(x)`, `int(x)` or `x.item()` on a value that `jit` traces.
    Fix it by marking the argument static (`static_argnums` / `static_argnames`), or by
    expressing the control flow with `lax.cond`, `lax.select` or `jnp.where`.
    """


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` of a traced value (an `if` or `while` on a traced value)."""


class TracerIntegerConversionError(JAXTypeError):
    """`int()` or `__index__` of a traced value."""


class TracerArrayConversionError(JAXTypeError):
    """`numpy.asarray` of a traced value."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that made it and was used afterwards.

    Usually a traced value was stored in a global or an object attribute inside `jit`,
    `grad` or `vmap`, and read later. Return the value from the function instead.
    """


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice under `jax_debug_key_reuse` (mirrors
    `jax.errors.KeyReuseError`)."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing of a traced array: the result shape would depend on values."""


class JaxRuntimeError(RuntimeError):
    """A program failed while it ran: a host callback raised, or returned values of the
    wrong shape or dtype (mirrors `jax.errors.JaxRuntimeError`)."""


class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed: an equation's inputs do not have the types its primitive needs
    (mirrors `jax.errors.JaxprTypeError`)."""


class InconclusiveDimensionOperation(Exception):
    """A comparison of symbolic dimensions has no definite answer (mirrors
    `jax.errors.InconclusiveDimensionOperation`; jaxlite has no symbolic shapes yet)."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_user(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn`, pointed at the user's line: the first frame outside jaxlite, however
    deep inside jaxlite the warning was raised (JAX's warnings point at user code too)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
