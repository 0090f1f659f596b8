"""Primitives that differentiation itself emits: `add_any` (sum of tangents or cotangents).

Mirrors `jax._src.ad_util`. It is separate from `add` so that transposition can tell the
sums AD introduced apart from the user's additions; it is linear in both operands.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.interpreters import ad
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax._declare import ANY, elementwise

add_any_p = elementwise("add_any", np.add, kinds=ANY, num_args=2)
ad.deflinear(add_any_p)


def _add_any_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [ct if is_undefined(x) else None, ct if is_undefined(y) else None]


add_any_p.transpose = _add_any_transpose


def add_any(x: Any, y: Any) -> Any:
    """Sum two tangents (or cotangents) of the same shape and dtype."""
    return add_any_p.bind(x, y)
