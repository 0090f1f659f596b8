"""Elementwise comparisons: eq, ne, lt, le, gt, ge (XLA's Compare with a direction).

Mirrors `jax.lax.eq` and its siblings. Results are bool arrays; NaN compares unequal to
everything (so `ne` is its only true comparison) and -0.0 equals +0.0, as IEEE 754 and XLA
say. Complex operands may be tested for equality but not ordered, as in JAX. The outputs do
not change smoothly with the inputs, so their tangents are symbolic zeros.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import ANY, BOOL, FLOATING, INTEGER, elementwise
from jaxlite.lax.arithmetic import elementwise_operands
from jaxlite.xla.ir import HloInstruction

__all__ = ["eq", "ne", "lt", "le", "gt", "ge",
           "eq_p", "ne_p", "lt_p", "le_p", "gt_p", "ge_p"]

# Ordering needs a total order on the values, which complex numbers lack.
_ORDERED = (BOOL, *INTEGER, FLOATING)


def _bool_result(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.bool_)


def _comparison(name: str, reference: Callable[..., Any], kinds: tuple[str, ...],
                direction: str) -> Primitive:
    """Declare a comparison: an elementwise binary primitive with a bool result, lowered to
    XLA's compare with `direction`."""
    primitive = elementwise(name, reference, kinds=kinds, num_args=2,
                            result_dtype=_bool_result)
    checked_eval = primitive.abstract_eval

    def abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        # JAX keeps the weak flag when both operands are weak (`lax.eq(1, 2)` is a weak bool).
        return checked_eval(x, y).update(weak_type=x.weak_type and y.weak_type)

    def lower(ctx: LoweringContext, x: HloInstruction, y: HloInstruction) -> HloInstruction:
        return hlo.compare(ctx, x, y, direction)

    primitive.abstract_eval = abstract_eval
    primitive.lower = lower
    ad.defjvp_zero(primitive)
    return primitive


eq_p = _comparison("eq", np.equal, ANY, "EQ")
ne_p = _comparison("ne", np.not_equal, ANY, "NE")
lt_p = _comparison("lt", np.less, _ORDERED, "LT")
le_p = _comparison("le", np.less_equal, _ORDERED, "LE")
gt_p = _comparison("gt", np.greater, _ORDERED, "GT")
ge_p = _comparison("ge", np.greater_equal, _ORDERED, "GE")


def eq(x: Any, y: Any) -> Any:
    """Elementwise `x == y` (mirrors `jax.lax.eq`).

    Differences from JAX: Python scalars take the other operand's dtype and operands are
    broadcast numpy-style (see `elementwise_operands`).
    """
    return eq_p.bind(*elementwise_operands("eq", x, y))


def ne(x: Any, y: Any) -> Any:
    """Elementwise `x != y` (mirrors `jax.lax.ne`); true wherever either operand is NaN."""
    return ne_p.bind(*elementwise_operands("ne", x, y))


def lt(x: Any, y: Any) -> Any:
    """Elementwise `x < y` (mirrors `jax.lax.lt`); complex operands are rejected."""
    return lt_p.bind(*elementwise_operands("lt", x, y))


def le(x: Any, y: Any) -> Any:
    """Elementwise `x <= y` (mirrors `jax.lax.le`); complex operands are rejected."""
    return le_p.bind(*elementwise_operands("le", x, y))


def gt(x: Any, y: Any) -> Any:
    """Elementwise `x > y` (mirrors `jax.lax.gt`); complex operands are rejected."""
    return gt_p.bind(*elementwise_operands("gt", x, y))


def ge(x: Any, y: Any) -> Any:
    """Elementwise `x >= y` (mirrors `jax.lax.ge`); complex operands are rejected."""
    return ge_p.bind(*elementwise_operands("ge", x, y))
