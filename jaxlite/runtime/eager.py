"""Eager execution: single primitives op by op (mirrors JAX's `apply_primitive`).

Outside every transformation, `bind` ends here. A primitive's arguments become numpy arrays,
its `reference` rule computes the result, and the result becomes an `Array` with the dtype
and weak type that the primitive's abstract evaluation gives (`fast_path` does the same for
the commonest elementwise operations with less work). Operands placed by `device_put`, or
in a GPU's memory, and every operation while the default device is a GPU, go through
`_apply_placed`: the device's rule where it has one (`device_eager`), the placement of the
results by JAX's rules (`placement`). Importing this module installs `apply_primitive` as
the eager hook of the core.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.config import config
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.trace import EVAL_HOOKS
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.device_eager import apply_on_device, host_operands
from jaxlite.runtime.device_values import DeviceValue
from jaxlite.runtime.fast_path import (default_memory_device, eager_state,
                                       ignoring_fp_errors, plain_output,
                                       restoring_fp_errors, shape_rule)
from jaxlite.runtime.placement import place_eager

__all__ = ["apply_primitive", "check_values", "checking_values", "invalid_kind", "to_numpy",
           "wrap_output"]


def to_numpy(value: Any, aval: ShapedArray) -> np.ndarray:
    """The numpy value behind an eager argument, in its canonical dtype."""
    if type(value) is ArrayImpl:
        return value._value
    if dtypes.is_extended(aval.dtype):
        # Typed keys reach only higher-order primitives, whose jaxprs take them as keys.
        return aval.dtype.from_physical(aval.dtype.to_physical(value))
    if type(value) is int and aval.dtype.kind in "iu" and not (
            np.iinfo(aval.dtype).min <= value <= np.iinfo(aval.dtype).max):
        # JAX's words, not numpy's "too large to convert to C long" / "out of bounds".
        raise OverflowError(f"Python int {value} too large to convert to {aval.dtype.name}")
    # A copy, so that an output which is a view of a user's numpy array stays immutable.
    return np.array(value, dtype=aval.dtype)


def wrap_output(value: Any, aval: ShapedArray) -> Any:
    """An eager result as an Array (a typed key for an extended dtype)."""
    if dtypes.is_extended(aval.dtype):  # a typed key already, or its physical data
        if getattr(value, "dtype", None) == aval.dtype:
            return value
        return aval.dtype.from_physical(ArrayImpl(np.asarray(value)))
    return plain_output(value, aval)


def apply_primitive(primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Run one primitive eagerly with its numpy reference rule (its shape rule's answer
    remembered per signature, see `fast_path.shape_rule`); on placed operands, see
    `_apply_placed`."""
    state = eager_state()
    in_avals, out_avals, plain = shape_rule(state, primitive, args, params)
    for arg in args:  # (a loop, not any(): this runs for every eager operation)
        if type(arg) is ArrayImpl and (arg._sharding is not None
                                       or type(arg._value) is DeviceValue):
            return _apply_placed(primitive, args, params, in_avals, out_avals, plain)
    if default_memory_device(state) is not None:
        return _apply_placed(primitive, args, params, in_avals, out_avals, plain)
    return _evaluate(primitive, args, params, in_avals, out_avals, plain, state.checking)


def _evaluate(primitive: Any, args: Sequence[Any], params: dict[str, Any],
              in_avals: Sequence[ShapedArray], out_avals: Any, plain: bool,
              checking: bool) -> Any:
    """The primitive's numpy reference rule on host arguments, its results as Arrays."""
    np_args = [to_numpy(a, aval) for a, aval in zip(args, in_avals)]
    token = ignoring_fp_errors()
    try:
        outs = primitive.reference(*np_args, **params)
    finally:
        restoring_fp_errors(token)
    wrap = plain_output if plain else wrap_output
    if primitive.multiple_results:
        results = [wrap(o, aval) for o, aval in zip(outs, out_avals)]
    else:
        results = wrap(outs, out_avals)
    if checking:
        check_values(results if primitive.multiple_results else [results], primitive.name)
    return results


def _apply_placed(primitive: Any, args: Sequence[Any], params: dict[str, Any],
                  in_avals: Sequence[ShapedArray], out_avals: Any, plain: bool) -> Any:
    """A primitive on committed operands, operands in a GPU's memory, or any operands
    when the default device is a GPU: in the GPU's memory where the primitive has a
    device rule (`device_eager`), else the reference on the host (device operands copied
    over once); the results placed as JAX places them (`placement`), which sends host
    results to a committed operand's GPU."""
    state = eager_state()
    checking = state.checking
    results = apply_on_device(primitive, args, params, in_avals, out_avals,
                              default_memory_device(state))
    if results is None:
        results = _evaluate(primitive, host_operands(args), params, in_avals, out_avals,
                            plain, checking)
    elif checking:
        check_values(results if primitive.multiple_results else [results], primitive.name)
    return place_eager(primitive, args, results, params)


def checking_values() -> bool:
    return config.read("jax_debug_nans") or config.read("jax_debug_infs")


def invalid_kind(values: Sequence[Any]) -> str | None:
    """'nan' or 'inf' if a value holds one that `jax_debug_nans` / `jax_debug_infs` asks to
    catch, else None."""
    nans, infs = config.read("jax_debug_nans"), config.read("jax_debug_infs")
    for value in values:
        if not dtypes.issubdtype(getattr(value, "dtype", np.float32), np.inexact):
            continue  # integers, bools, and typed keys (which have no numpy form)
        array = np.asarray(value)
        if nans and np.isnan(array).any():
            return "nan"
        if infs and np.isinf(array).any():
            return "inf"
    return None


def check_values(values: Sequence[Any], where: str) -> None:
    """Raise FloatingPointError, as JAX does under `jax_debug_nans` / `jax_debug_infs`, if
    `values` (the outputs of `where`) hold a NaN or an infinity."""
    kind = invalid_kind(values)
    if kind is not None:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {where}")


EVAL_HOOKS["apply_primitive"] = apply_primitive
