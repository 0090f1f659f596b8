"""High-level types in traced code (mirrors `jax.experimental.hijax`), as import-time names.

JAX's hijax lets a library define its own types that flow through `jit`, `grad` and `vmap`
(flax.nnx builds its opt-in "hijax Variables" on it, off by default). jaxlite's tracer has
no high-level types yet, so this module offers the classes and registries that such a
library defines itself with at import time, and using one raises `NotImplementedError`:
binding a `HiPrimitive`, or passing a registered high-level value to a transformation
(which finds no array type for it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from jaxlite.core.avals import AbstractValue, ShapedArray
from jaxlite.core.effects import control_flow_allowed_effects
from jaxlite.interpreters.ad import Zero, instantiate_zeros, is_undefined_primal
from jaxlite.ref import AbstractRef

__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive",
           "HiPspec", "HiType", "MutableHiType", "ShapedArray", "TransformedRef",
           "VJPHiPrimitive", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal",
           "register_hitype"]

_UNSUPPORTED = ("jaxlite does not support high-level types (jax.experimental.hijax) in "
                "traced code yet; flax.nnx uses them only with flax_hijax_variable=True.")


class HiPrimitive:
    """A primitive over high-level types (subclasses define impl, abstract_eval, ...)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.multiple_results = False

    def bind(self, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(f"{self.name}: {_UNSUPPORTED}")

    def __repr__(self) -> str:
        return self.name


class VJPHiPrimitive:
    """A high-level primitive defined by its forward and backward functions."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: {_UNSUPPORTED}")


class HiType(AbstractValue):
    """The abstract value of a high-level type."""


class MutableHiType(AbstractValue):
    """The abstract value of a mutable high-level type."""


class HiPspec:
    """A partition spec of a high-level type."""


@dataclass(frozen=True)
class AvalQDD:
    """An abstract value with its quasi-dynamic data."""

    aval: Any
    qdd: Any


@dataclass(frozen=True)
class AvalMutableQDD:
    """An abstract value with mutable quasi-dynamic data."""

    aval: Any
    mutable_qdd: Any


@dataclass(frozen=True)
class TransformedRef:
    """A ref seen through indexing transforms."""

    ref: Any
    transforms: tuple


class aval_method(tuple):  # noqa: N801  (JAX's name)
    """A method of a value's type that its abstract value also offers."""

    def __new__(cls, fun: Callable) -> "aval_method":
        return super().__new__(cls, (fun,))

    @property
    def fun(self) -> Callable:
        return self[0]


class aval_property(tuple):  # noqa: N801  (JAX's name)
    """A property of a value's type that its abstract value also offers."""

    def __new__(cls, fget: Callable) -> "aval_property":
        return super().__new__(cls, (fget,))

    @property
    def fget(self) -> Callable:
        return self[0]


# Value classes registered as high-level types, with their typeof functions.
HITYPES: dict[type, Callable[[Any], Any]] = {}


def register_hitype(val_cls: type, typeof_fn: Callable[[Any], Any]) -> None:
    """Register a high-level value class and the function giving its abstract value."""
    HITYPES[val_cls] = typeof_fn
