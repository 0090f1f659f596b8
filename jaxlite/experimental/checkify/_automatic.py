"""The automatic checks: NaNs produced by a primitive (`nan_checks`), division by zero
(`div_checks`) and out-of-bounds indices in gather, dynamic slices and scatters
(`index_checks`), on the primitives JAX checks, with JAX's tests and messages.

Each rule binds the primitive as it is (the checks never change a result) and adds a test
of its operands or result to the threaded error.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.core.primitive import Primitive
from jaxlite.experimental.checkify._error_value import Error, assert_func
from jaxlite.experimental.checkify._errors import DivisionByZeroError, NaNError, OOBError
from jaxlite.experimental.checkify._interpreter import RULES_BY_NAME

# The primitives that can turn non-NaN operands into a NaN (JAX's list; the names of those
# jaxlite does not have yet match when they are declared).
NAN_PRIMITIVES = (
    "acos", "acosh", "add", "asin", "asinh", "atan2", "atan", "atanh", "bessel_i0e",
    "bessel_i1e", "cbrt", "conv_general_dilated", "cos", "cosh", "cumlogsumexp", "cummax",
    "cummin", "cumprod", "cumsum", "digamma", "dot_general", "erf_inv", "erf", "erfc", "exp",
    "expm1", "fft", "igamma_grad_a", "igamma", "igammac", "integer_pow", "lgamma",
    "custom_linear_solve", "log1p", "log", "logistic", "mul", "pad", "pow", "psum", "reduce",
    "reduce_prod", "reduce_sum", "reduce_window", "reduce_window_sum",
    "regularized_incomplete_beta", "rem", "rng_uniform", "rsqrt", "sin", "sinh", "sqrt",
    "sub", "tan", "tanh")

# Scatters whose indices JAX checks (not scatter-sub, as in JAX 0.10.2).
CHECKED_SCATTERS = ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max")


def _has_nan(x: Any) -> Any:
    if isinstance(getattr(x, "dtype", None), dtypes.ExtendedDType):
        return False  # typed PRNG keys
    return jnp.any(jnp.isnan(x))


def check_nans(primitive: Primitive, error: Error, enabled_errors: frozenset,
               out: Any) -> Error:
    """`error` with a NaNError where an output of `primitive` holds a NaN."""
    if NaNError not in enabled_errors:
        return error
    if primitive.multiple_results:
        any_nan = jnp.any(jnp.array([_has_nan(x) for x in out]))
    else:
        any_nan = _has_nan(out)
    return assert_func(error, any_nan, NaNError(None, primitive.name))


def _nan_rule(primitive: Primitive, error: Error, enabled_errors: frozenset, *args: Any,
              **params: Any) -> tuple[Error, Any]:
    out = primitive.bind(*args, **params)
    return check_nans(primitive, error, enabled_errors, out), out


def _div_rule(primitive: Primitive, error: Error, enabled_errors: frozenset, x: Any, y: Any
              ) -> tuple[Error, Any]:
    # Any division by zero counts, floating-point ones too, as in JAX.
    if DivisionByZeroError in enabled_errors:
        error = assert_func(error, jnp.any(jnp.equal(y, 0)), DivisionByZeroError(None))
    return _nan_rule(primitive, error, enabled_errors, x, y)


def oob_payload(oob_mask: Any, indices: Any, dims_map: Sequence[int],
                operand_shape: Sequence[int]) -> Any:
    """(index, axis, axis size) of the first out-of-bounds index, for the message."""
    flat = jnp.argmin(jnp.logical_not(oob_mask))
    position = jnp.unravel_index(flat, np.shape(indices))
    axis = jnp.array(list(dims_map))[position[-1]]
    axis_size = jnp.array(operand_shape)[axis]
    index = jnp.ravel(indices)[flat]
    return jnp.array([index, axis, axis_size], dtype=np.int32)


def _assert_in_bounds(error: Error, name: str, operand_shape: tuple, oob_mask: Any,
                      indices: Any, dims_map: Sequence[int]) -> Error:
    payload = oob_payload(oob_mask, indices, dims_map, operand_shape)
    return assert_func(error, jnp.any(oob_mask),
                       OOBError(None, name, operand_shape, payload))


def _dynamic_slice_rule(primitive: Primitive, error: Error, enabled_errors: frozenset,
                        operand: Any, *starts: Any, slice_sizes: tuple) -> tuple[Error, Any]:
    out = primitive.bind(operand, *starts, slice_sizes=slice_sizes)
    if OOBError not in enabled_errors:
        return error, out
    starts = jnp.array(starts)
    dims = np.array(np.shape(operand), dtype=starts.dtype)
    sizes = np.array(slice_sizes, dtype=starts.dtype)
    oob = (starts < 0) | (starts + sizes > dims)
    shape = tuple(np.shape(operand))
    return _assert_in_bounds(error, "dynamic_slice", shape, oob, starts,
                             range(len(shape))), out


def _dynamic_update_slice_rule(primitive: Primitive, error: Error, enabled_errors: frozenset,
                               operand: Any, update: Any, *starts: Any) -> tuple[Error, Any]:
    out = primitive.bind(operand, update, *starts)
    if OOBError not in enabled_errors:
        return error, out
    starts = jnp.array(starts)
    oob = (starts < 0) | (starts + np.array(np.shape(update)) > np.array(np.shape(operand)))
    shape = tuple(np.shape(operand))
    return _assert_in_bounds(error, "dynamic_update_slice", shape, oob, starts,
                             range(len(shape))), out


def _gather_rule(primitive: Primitive, error: Error, enabled_errors: frozenset, operand: Any,
                 indices: Any, **params: Any) -> tuple[Error, Any]:
    out = primitive.bind(operand, indices, **params)
    if OOBError not in enabled_errors:
        return error, out
    dnums = params["dimension_numbers"]
    index_map = np.array(dnums.start_index_map, dtype=np.int64)
    upper = (np.array(np.shape(operand), dtype=np.int64)[index_map]
             - np.array(params["slice_sizes"], dtype=np.int64)[index_map])
    upper = upper.reshape((1,) * (np.ndim(indices) - 1) + upper.shape)
    oob = (indices < 0) | (indices > upper.astype(indices.dtype))
    return _assert_in_bounds(error, "gather", tuple(np.shape(operand)), oob, indices,
                             dnums.start_index_map), out


def _scatter_window_sizes(operand_shape: tuple, updates_shape: tuple, dnums: Any) -> list:
    sizes, window = [], iter(dnums.update_window_dims)
    for axis in range(len(operand_shape)):
        sizes.append(1 if axis in dnums.inserted_window_dims
                     else updates_shape[next(window)])
    return sizes


def _scatter_rule(primitive: Primitive, error: Error, enabled_errors: frozenset, operand: Any,
                  indices: Any, updates: Any, **params: Any) -> tuple[Error, Any]:
    out = primitive.bind(operand, indices, updates, **params)
    if OOBError not in enabled_errors:
        return error, out  # JAX checks a scatter's NaNs only with its indices
    dnums = params["dimension_numbers"]
    shape = tuple(np.shape(operand))
    sizes = _scatter_window_sizes(shape, tuple(np.shape(updates)), dnums)
    upper = np.array([shape[i] - sizes[i] for i in dnums.scatter_dims_to_operand_dims],
                     np.int64)
    upper = np.minimum(upper, np.iinfo(indices.dtype).max).astype(indices.dtype)
    upper = upper.reshape((1,) * (np.ndim(indices) - 1) + upper.shape)
    oob = (indices < 0) | (indices > upper)
    error = _assert_in_bounds(error, primitive.name, shape, oob, indices,
                              dnums.scatter_dims_to_operand_dims)
    return check_nans(primitive, error, enabled_errors, out), out


for _name in NAN_PRIMITIVES:
    RULES_BY_NAME[_name] = _nan_rule
RULES_BY_NAME["div"] = _div_rule
RULES_BY_NAME["dynamic_slice"] = _dynamic_slice_rule
RULES_BY_NAME["dynamic_update_slice"] = _dynamic_update_slice_rule
RULES_BY_NAME["gather"] = _gather_rule
for _name in CHECKED_SCATTERS:
    RULES_BY_NAME[_name] = _scatter_rule
