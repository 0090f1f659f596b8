"""Eager execution of single primitives (mirrors JAX's op-by-op dispatch).

Outside every transformation, `bind` ends here: the arguments become numpy arrays, the
primitive's `reference` rule computes the result, and the result becomes an `Array` with the
dtype and weak type that the primitive's abstract evaluation gives. Importing this module
installs `apply_primitive` as the eager hook of the core.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.array import Array
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.trace import EVAL_HOOKS


def to_numpy(value: Any, aval: ShapedArray) -> np.ndarray:
    """The numpy value behind an eager argument, in its canonical dtype."""
    if type(value) is Array:
        return value._value
    # A copy, so that an output which is a view of a user's numpy array stays immutable.
    return np.array(value, dtype=aval.dtype)


def wrap_output(value: Any, aval: ShapedArray) -> Array:
    array = np.asarray(value)
    if array.dtype != aval.dtype:
        array = array.astype(aval.dtype)
    if array.shape != aval.shape:
        raise AssertionError(f"reference produced shape {array.shape}, expected {aval.shape}")
    return Array(array, aval.weak_type)


def apply_primitive(primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Run one primitive eagerly with its numpy reference rule."""
    in_avals = [get_aval(a) for a in args]
    out_avals = primitive.abstract_eval(*in_avals, **params)
    np_args = [to_numpy(a, aval) for a, aval in zip(args, in_avals)]
    with np.errstate(all="ignore"):
        outs = primitive.reference(*np_args, **params)
    if primitive.multiple_results:
        return [wrap_output(o, aval) for o, aval in zip(outs, out_avals)]
    return wrap_output(outs, out_avals)


EVAL_HOOKS["apply_primitive"] = apply_primitive
