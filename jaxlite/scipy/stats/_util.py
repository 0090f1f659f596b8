"""Small helpers shared by the distributions of `jaxlite.scipy.stats`."""
from __future__ import annotations

from typing import Any

from jaxlite.lax.convert import _convert_element_type
from jaxlite.numpy._promotion import promote_args_inexact

__all__ = ["const", "promote"]


def const(x: Any, value: float) -> Any:
    """`value` as a weakly typed scalar of x's dtype (JAX's `lax._const`): it takes part in
    x's arithmetic without making a weakly typed result strong."""
    return _convert_element_type(value, x.dtype, weak_type=True)


def promote(name: str, *args: Any) -> list[Any]:
    """The arguments promoted to one inexact dtype and broadcast (JAX's
    `promote_args_inexact`)."""
    return promote_args_inexact(name, *args)
