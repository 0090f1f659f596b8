"""Primitives of differentiation: `add_any` (sum of tangents) and `stop_gradient`.

Mirrors `jax._src.ad_util`. It is separate from `add` so that transposition can tell the
sums AD introduced apart from the user's additions; it is linear in both operands.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import ANY, elementwise
from jaxlite.lax.broadcast import broadcast_in_dim_p
from jaxlite.lax.convert import convert_element_type_p
from jaxlite.tree_util import tree_map
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

add_any_p = elementwise("add_any", np.add, kinds=ANY, num_args=2)
ad.deflinear(add_any_p)


def _add_any_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [ct if is_undefined(x) else None, ct if is_undefined(y) else None]


def _add_any_lower(ctx: LoweringContext, x: HloInstruction, y: HloInstruction) -> HloInstruction:
    # A bool sum (numpy's, and float0 tangents' as bool) is a logical or.
    return hlo.binary(ctx, Opcode.OR if x.shape.dtype == np.bool_ else Opcode.ADD, x, y)


add_any_p.transpose = _add_any_transpose
add_any_p.lower = _add_any_lower


def add_any(x: Any, y: Any) -> Any:
    """Sum two tangents (or cotangents) of the same shape and dtype."""
    return add_any_p.bind(x, y)


# ------------------------------------------------------------------------- stop_gradient

stop_gradient_p = Primitive("stop_gradient")


def _stop_gradient_abstract_eval(operand: ShapedArray) -> ShapedArray:
    return operand


def _stop_gradient_reference(operand: np.ndarray) -> np.ndarray:
    return operand


def _stop_gradient_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    out = stop_gradient_p.bind(primals[0])
    return out, ad.Zero(ad.tangent_aval(get_aval(out)))


def _stop_gradient_lower(ctx: LoweringContext, operand: HloInstruction) -> HloInstruction:
    return operand


def _stop_gradient_batch(axis_size: int, args: Sequence[Any],
                         dims: Sequence[Any]) -> tuple[Any, Any]:
    return stop_gradient_p.bind(args[0]), dims[0]


stop_gradient_p.abstract_eval = _stop_gradient_abstract_eval
stop_gradient_p.reference = _stop_gradient_reference
stop_gradient_p.jvp = _stop_gradient_jvp
stop_gradient_p.batch = _stop_gradient_batch
stop_gradient_p.lower = _stop_gradient_lower


def stop_gradient(x: Any) -> Any:
    """The value of `x` (a pytree of arrays), with zero derivative (`jax.lax.stop_gradient`)."""
    return tree_map(_stop_one, x)


def _stop_one(leaf: Any) -> Any:
    if not dtypes.is_inexact(get_aval(leaf).dtype):
        return leaf
    return stop_gradient_p.bind(leaf)


def zeros(aval: ShapedArray) -> Any:
    """An array of zeros shaped like `aval`, weak type included: a broadcast scalar."""
    scalar = convert_element_type_p.bind(np.zeros((), aval.dtype), new_dtype=aval.dtype,
                                         weak_type=aval.weak_type)
    return broadcast_in_dim_p.bind(scalar, shape=tuple(aval.shape), broadcast_dimensions=())


def is_symbolic_zero(tangent: Any) -> bool:
    """Whether a tangent handed to a jvp rule is a symbolic zero (for rules written in the
    libraries, which do not import the interpreters)."""
    return isinstance(tangent, ad.Zero)


def zeros_like_tangent(aval: ShapedArray) -> Any:
    """Concrete zeros for a tangent or cotangent (float0 for integer values, as JAX gives)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return zeros(aval)
