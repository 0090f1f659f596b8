"""`dim_as_value`: a symbolic dimension used as a number (mirrors JAX's primitive of that
name, behind `core.dimension_as_value`).

Under shape polymorphism (`jaxlite.export` with `symbolic_shape`), `x.sum(0) / x.shape[0]`
or `jnp.mean` over a symbolic axis divide by a size that is only known when the exported
program is called. Such a size becomes this operand-less primitive, a weakly typed integer
scalar; lowering makes it a constant whose literal is the size's expression
(`s32[] constant(b)`), which takes its value when the module is specialized to the
arguments' sizes (`transforms/export/shape_refinement.py`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite.core import dtypes, shape_poly
from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.convert import convert_element_type
from jaxlite.xla.ir import HloInstruction

__all__ = ["dim_as_value_p", "dimension_as_value", "dimensions_as_values", "size_in_dtype"]

dim_as_value_p = Primitive("dim_as_value")


def _abstract_eval(*, dimension: Any) -> ShapedArray:
    return ShapedArray((), dtypes.default_int_dtype(), weak_type=True)


def _reference(*, dimension: Any) -> Any:
    raise NotImplementedError(
        "Evaluation rule for 'dim_as_value' is not implemented. It seems that you are using "
        "shape polymorphism outside jax.export.")


def _lower(ctx: LoweringContext, *, dimension: Any) -> HloInstruction:
    return hlo.constant(ctx, dimension, dtypes.default_int_dtype())


dim_as_value_p.abstract_eval = _abstract_eval
dim_as_value_p.reference = _reference
dim_as_value_p.lower = _lower
ad.defjvp_zero(dim_as_value_p)
# (no operands, so nothing to batch: a size is the same for every member)
dim_as_value_p.batch = lambda axis_size, args, dims, **params: (
    dim_as_value_p.bind(**params), None)


def dimension_as_value(dimension: Any) -> Any:
    """`dimension` as a number: itself if it is an int, else a traced integer scalar
    (mirrors `jax.core.dimension_as_value`)."""
    if not shape_poly.is_symbolic_dim(dimension):
        return dimension
    return dim_as_value_p.bind(dimension=dimension)


def size_in_dtype(size: Any, dtype: Any) -> Any:
    """The axis size `size` as a scalar of `dtype` (numpy's, or a traced one when the size
    is symbolic)."""
    if shape_poly.is_symbolic_dim(size):
        return convert_element_type(dim_as_value_p.bind(dimension=size), dtype)
    return np.asarray(size).astype(dtype)


def dimensions_as_values(args: Any) -> list[Any]:
    """`args` with each symbolic dimension among them made a traced scalar."""
    return [dimension_as_value(a) for a in args]


shape_poly.AS_VALUE.append(dimension_as_value)
