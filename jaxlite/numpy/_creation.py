"""Array creation: array/asarray, filled arrays, ranges, identity matrices, astype.

Mirrors `jax.numpy.array`, `asarray`, `zeros`, `ones`, `full`, `empty`, the `*_like`
functions, `arange`, `linspace`, `eye`, `identity` and `astype`. Host data enters through
`host_to_array`; everything built from shapes alone (ranges, identities) uses `lax.iota`,
so that it stages as a single equation under `jit`. Dtypes follow JAX: Python scalars give
weak-typed arrays, lists give strong ones, and 64-bit host data is narrowed when x64 is off.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import jaxlite.lax as lax
from jaxlite.numpy._placement import accepts_placement, placed_like
from jaxlite.core import dtypes
from jaxlite.core.avals import check_byte_order
from jaxlite.core.shape_poly import is_symbolic_dim
from jaxlite.core.trace import Tracer
from jaxlite.errors import ConcretizationTypeError, warn_at_user
from jaxlite.numpy._promotion import (broadcast_shapes, broadcast_to_shape, canonicalize_axis,
                                      canonicalize_shape, check_arraylike, concrete_int,
                                      convert, ensure_array, host_to_array, is_arraylike,
                                      is_jax_array, user_dtype)
from jaxlite.numpy._shape import broadcast_to, stack

__all__ = [
    "array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "full_like", "empty_like", "arange", "linspace", "eye", "identity", "astype", "copy",
]


# ------------------------------------------------------------------------ array, asarray

def _leaves(obj: Any) -> list[Any]:
    """The non-sequence entries of nested lists and tuples."""
    if isinstance(obj, (list, tuple)):
        return [leaf for item in obj for leaf in _leaves(item)]
    return [obj]


def _stack_nested(obj: Any, dtype: np.dtype) -> Any:
    """Nested lists holding traced or device values, stacked with lax operations."""
    if isinstance(obj, (list, tuple)):
        if not obj:
            raise ValueError("jnp.array cannot stack an empty list next to arrays.")
        return stack([_stack_nested(item, dtype) for item in obj])
    return convert(obj, dtype)


def _from_sequence(obj: Any, dtype: np.dtype | None) -> Any:
    leaves = _leaves(obj)
    for leaf in leaves:
        if leaf is None or not (is_jax_array(leaf) or isinstance(leaf, (np.ndarray, np.generic))
                                or dtypes.is_python_scalar(leaf)):
            raise TypeError(f"jnp.array: unsupported list entry {leaf!r} of type "
                            f"{type(leaf).__name__}; entries must be numbers or arrays.")
        if isinstance(leaf, np.ndarray):
            check_byte_order(leaf)  # JAX's TypeError for a big-endian entry
    explicit = dtype is not None
    if dtype is None:
        # Lists are strong-typed as a whole: [1, 2] is int32, not weak.
        dtype = dtypes.result_type(*leaves) if leaves else dtypes.default_float_dtype()
    if any(is_jax_array(leaf) for leaf in leaves):
        return _stack_nested(obj, dtype)
    # numpy's own checks: ragged nesting raises ValueError; and with a dtype, numpy converts
    # (NaN to an int raises ValueError, complex to a real type TypeError), as in JAX.
    host = _numpy_converted(obj, dtype) if explicit else np.array(obj)
    return host_to_array(host, dtype)


def _real_python_scalar(value: Any, target: Any) -> Any:
    """A Python complex fill for a non-complex dtype, converted as JAX does it, by the
    dtype's scalar type: to bool it is `value != 0`; to numbers Python's int() and float()
    refuse it with TypeError. Anything else is returned as it is."""
    if isinstance(value, complex) and target is not None and np.dtype(target).kind in "biuf":
        return np.dtype(target).type(value)
    return value


def _numpy_converted(value: Any, target: np.dtype) -> np.ndarray:
    """`value` converted to `target` by numpy, as JAX converts host data with a dtype:
    numpy's errors (NaN or inf to an int, a complex to a real type, a Python int out of
    range) and numpy's values (a NaN float32 array to int32 gives the int's minimum)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's invalid-cast warning
        return np.asarray(value, dtype=target)


@accepts_placement("device", "out_sharding")
def array(object: Any, dtype: Any = None, *args: Any, copy: bool = True,
          order: str | None = "K", ndmin: int = 0) -> Any:
    """Create an array from array-like data (mirrors `jax.numpy.array`).

    Python scalars give weak-typed arrays unless `dtype` is given; nested lists of numbers
    and arrays (traced ones included) are stacked into one strong-typed array whose dtype
    is the promotion of the entries. With x64 off, 64-bit data becomes 32-bit. `copy`,
    `order` and `ndmin` may still come positionally, with JAX's DeprecationWarning.
    """
    if args:
        warn_at_user("Passing the copy, order, and ndmin arguments to jnp.array positionally "
                      "is deprecated. Use keyword arguments instead.", DeprecationWarning)
        if len(args) > 3:
            raise TypeError(f"jnp.array takes at most 5 positional arguments, got "
                            f"{2 + len(args)}.")
        copy, order, ndmin = (*args, *(copy, order, ndmin)[len(args):])
    if order not in (None, "K", "C", "A"):
        raise NotImplementedError(f"jnp.array: order={order!r} is not supported; jaxlite "
                                  "arrays are always row-major (order='C').")
    if object is None:
        raise ValueError("None is not a valid value for jnp.array")
    target = None if dtype is None else user_dtype(dtype, "array")
    if is_jax_array(object):
        weak = object.weak_type if target is None else False
        out = convert(object, object.dtype if target is None else target, weak)
        if copy and out is object and not isinstance(object, Tracer):
            # A distinct Array object, as JAX returns; the buffer itself is immutable.
            out = lax.convert_element_type_p.bind(object, new_dtype=object.dtype,
                                                  weak_type=object.weak_type)
    elif isinstance(object, (list, tuple)):
        out = _from_sequence(object, target)
    elif dtypes.is_python_scalar(object) or isinstance(object, (np.ndarray, np.generic)):
        weak = target is None and dtypes.is_weakly_typed(object)
        if target is not None:
            object = _numpy_converted(object, target)
        out = host_to_array(object, target, weak)
    elif hasattr(object, "__array__") or isinstance(object, memoryview):
        out = host_to_array(np.asarray(object), target)
    else:
        raise TypeError(f"jnp.array: cannot convert {object!r} of type "
                        f"{type(object).__name__} to an array.")
    ndmin = concrete_int(ndmin, "array: ndmin")
    if out.ndim < ndmin:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


@accepts_placement("device", "out_sharding")
def asarray(a: Any, dtype: Any = None, order: str | None = None, *,
            copy: bool | None = None) -> Any:
    """Convert `a` to an array without copying when it already is one (`jnp.asarray`)."""
    return array(a, dtype=dtype, copy=bool(copy), order=order)


def copy(a: Any, order: str | None = None) -> Any:
    """A copy of `a` (mirrors `jax.numpy.copy`)."""
    check_arraylike("copy", a)
    return array(a, copy=True, order=order)


@accepts_placement("device")
def astype(x: Any, dtype: Any, /, *, copy: bool = False) -> Any:
    """`x` converted to `dtype` (mirrors `jax.numpy.astype` and `Array.astype`).

    Floats convert to integers by truncation, saturating at the integer range (NaN gives
    0); anything converts to bool as `x != 0`; `dtype=None` means the default float type.
    The result is never weak-typed.
    """
    check_arraylike("astype", x)
    x = ensure_array(x)
    if dtypes.is_extended(x.dtype) or dtypes.is_extended(dtype):
        # Typed PRNG keys convert only to their own dtype (a no-op), as in JAX.
        if dtype == x.dtype:
            return x
        name = dtype if dtypes.is_extended(dtype) else np.dtype(getattr(dtype, "dtype", dtype))
        raise ValueError(f"Cannot convert_element_type from {x.dtype} to {name}")
    target = _default_dtype(dtype, "astype")
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(target) and target != np.bool_:
        warn_at_user("Casting from complex to real dtypes will soon raise a ValueError; take "
                      "the part you want first with jnp.real or jnp.imag.",
                      DeprecationWarning)
    if target == np.bool_ and x.dtype != np.bool_:
        return lax.ne(x, lax._convert_element_type(0, x.dtype, weak_type=True))
    return lax._convert_element_type(x, target, weak_type=False)


# ------------------------------------------------------------------------ filled arrays

def _default_dtype(dtype: Any, fun_name: str) -> np.dtype:
    return dtypes.default_float_dtype() if dtype is None else user_dtype(dtype, fun_name)


@accepts_placement("device", "out_sharding")
def zeros(shape: Any, dtype: Any = None) -> Any:
    """An array of zeros (mirrors `jax.numpy.zeros`); float32 by default."""
    return lax.full(canonicalize_shape(shape, "zeros"), 0, _default_dtype(dtype, "zeros"))


@accepts_placement("device", "out_sharding")
def ones(shape: Any, dtype: Any = None) -> Any:
    """An array of ones (mirrors `jax.numpy.ones`); float32 by default."""
    return lax.full(canonicalize_shape(shape, "ones"), 1, _default_dtype(dtype, "ones"))


@accepts_placement("device", "out_sharding")
def empty(shape: Any, dtype: Any = None) -> Any:
    """An array to be overwritten (mirrors `jax.numpy.empty`): zeros, as in JAX."""
    return zeros(shape, dtype)


@accepts_placement("device", "out_sharding")
def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """An array of `shape` filled with `fill_value` (mirrors `jax.numpy.full`).

    Without `dtype` the fill value's dtype and weak type are kept (`full(3, 2)` is a weak
    int32 array). An array-valued fill is broadcast to `shape`.
    """
    check_arraylike("full", fill_value)
    shape = canonicalize_shape(shape, "full")
    target = None if dtype is None else user_dtype(dtype, "full")
    if np.ndim(fill_value) == 0:
        fill_value = _real_python_scalar(fill_value, target)
        return lax.full(shape, ensure_array(fill_value), target)
    return broadcast_to(asarray(fill_value, dtype=target), shape)


def _like(fun_name: str, a: Any, fill_value: Any, dtype: Any, shape: Any) -> Any:
    return placed_like(a, shape, _filled_like(fun_name, a, fill_value, dtype, shape))


def _filled_like(fun_name: str, a: Any, fill_value: Any, dtype: Any, shape: Any) -> Any:
    target = None if dtype is None else user_dtype(dtype, fun_name)
    out_shape = None if shape is None else canonicalize_shape(shape, fun_name)
    if _is_shape_dtype_struct(a):
        # A ShapeDtypeStruct stands for an array of its shape and (strong) dtype, as in JAX.
        return full(a.shape if out_shape is None else out_shape, fill_value,
                    dtypes.canonicalize_dtype(a.dtype) if target is None else target)
    check_arraylike(fun_name, a)
    if np.ndim(fill_value) == 0:
        if target is not None or not dtypes.is_weakly_typed(a):
            # (JAX converts a fill for a weak prototype's dtype as an array: real part.)
            fill_value = _real_python_scalar(
                fill_value, dtypes.dtype(a) if target is None else target)
        # ensure_array: lax hands a numpy fill that needs no change back unconverted.
        return ensure_array(lax.full_like(a, fill_value, target, out_shape))
    a = ensure_array(a)
    value = asarray(fill_value, dtype=a.dtype if target is None else target)
    return broadcast_to(value, a.shape if out_shape is None else out_shape)


def _is_shape_dtype_struct(a: Any) -> bool:
    return (not is_arraylike(a) and isinstance(getattr(a, "dtype", None), np.dtype)
            and isinstance(getattr(a, "shape", None), tuple))


@accepts_placement("device", "out_sharding")
def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with the shape and dtype (weak type included) of `a` (`jnp.zeros_like`)."""
    return _like("zeros_like", a, 0, dtype, shape)


@accepts_placement("device", "out_sharding")
def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Ones with the shape and dtype (weak type included) of `a` (`jnp.ones_like`)."""
    return _like("ones_like", a, 1, dtype, shape)


@accepts_placement("device")
def empty_like(prototype: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Like `zeros_like`, as in JAX (`jnp.empty_like`)."""
    return _like("empty_like", prototype, 0, dtype, shape)


@accepts_placement("device", "out_sharding")
def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """`fill_value` in the shape and dtype of `a` (mirrors `jax.numpy.full_like`)."""
    check_arraylike("full_like", fill_value)
    return _like("full_like", a, fill_value, dtype, shape)


# ------------------------------------------------------------------------ ranges

def _concrete_scalar(value: Any, fun_name: str, arg_name: str) -> Any:
    """A host scalar from a static argument; traced values raise ConcretizationTypeError."""
    if isinstance(value, Tracer):
        known = value.concrete_value()
        if known is None:
            raise ConcretizationTypeError(
                f"{fun_name} needs a concrete value for its argument '{arg_name}', which is "
                f"traced here ({value.aval.str_short()}): the output shape depends on it. "
                "Pass a Python number, or mark the argument static (jit's static_argnums).")
        value = known
    if is_jax_array(value) or isinstance(value, np.ndarray):
        if np.ndim(value) != 0:
            raise ValueError(f"{fun_name}: argument '{arg_name}' must be a scalar, got shape "
                             f"{np.shape(value)}.")
        value = np.asarray(value)[()]
    return value


@accepts_placement("device", "out_sharding")
def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Evenly spaced values in [start, stop) (mirrors `jax.numpy.arange`).

    The arguments must be concrete. Without `dtype`, the dtype is the promotion of the
    arguments (`arange(3)` is int32, `arange(3.)` float32, `arange(np.int8(3))` int8).
    """
    if is_symbolic_dim(start) and stop is None and step is None:
        # `arange(x.shape[0])` under shape polymorphism: an iota of symbolic length.
        return lax.iota(dtypes.default_int_dtype() if dtype is None
                        else user_dtype(dtype, "arange"), start)
    args = {"start": start, "stop": stop, "step": step}
    given = {k: _concrete_scalar(v, "jnp.arange", k) for k, v in args.items() if v is not None}
    check_arraylike("arange", *given.values())
    if dtype is None:
        target = dtypes.result_type(*given.values())
    else:
        target = user_dtype(dtype, "arange")
    if target == np.bool_:
        raise TypeError("iota does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    start_v = given["start"]
    if stop is None and step is None and isinstance(start_v, (int, np.integer)) \
            and not isinstance(start_v, (bool, np.bool_)):
        return lax.iota(target, max(int(start_v), 0))
    if any(np.iscomplexobj(v) for v in given.values()):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer "
                         "supported starting in JAX v0.10.0.")
    if step is not None and given["step"] == 0:
        raise ZeroDivisionError("division by zero: jnp.arange got step=0")
    # arange(stop, step=s): numpy reads a lone value as stop, so start must be explicit
    # (0) once a step is given.
    start_h, stop_h = (0, start_v) if "stop" not in given else (start_v, given["stop"])
    step_h = given.get("step", 1)
    # As JAX: the length is ceil((stop - start) / step) in Python arithmetic (an underflow
    # to 0 gives an empty array), and element i is start + i * step in the result's type
    # (float32 for narrower floats), not a running sum.
    size = max(0, int(np.ceil((stop_h - start_h) / step_h)))
    work = np.dtype(np.float32) if target.kind == "f" and target.itemsize < 4 else target
    with np.errstate(over="ignore"):
        host = np.asarray(start_h).astype(work) + \
            np.asarray(step_h).astype(work) * np.arange(size, dtype=work)
    return host_to_array(host, target)


@accepts_placement("device")
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """`num` evenly spaced samples from `start` to `stop` (mirrors `jax.numpy.linspace`).

    `start` and `stop` may be arrays (traced ones included); the samples then run along a
    new axis `axis`. Floats are computed in their own dtype, integers in the default float
    dtype and floored, as in JAX.
    """
    num = concrete_int(num, "linspace: num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    if dtype is None:
        target = dtypes.canonicalize_dtype(
            dtypes.to_inexact_dtype(dtypes.result_type(start, stop)))
    else:
        target = user_dtype(dtype, "linspace")
    # As JAX, float16 and bfloat16 samples are computed in their own dtype, integers in
    # the default float dtype.
    compute = target if dtypes.is_inexact(target) else dtypes.default_float_dtype()
    start_a, stop_a = convert(start, compute), convert(stop, compute)
    bounds = broadcast_shapes("linspace", np.shape(start_a), np.shape(stop_a))
    axis = canonicalize_axis(axis, len(bounds) + 1)
    out_shape = bounds[:axis] + (num,) + bounds[axis:]
    kept = tuple(d for d in range(len(out_shape)) if d != axis)
    start_b = lax.broadcast_in_dim(broadcast_to_shape(start_a, bounds), out_shape, kept)
    stop_b = lax.broadcast_in_dim(broadcast_to_shape(stop_a, bounds), out_shape, kept)
    divisions = num - 1 if endpoint else num
    span = lax.sub(broadcast_to_shape(stop_a, bounds), broadcast_to_shape(start_a, bounds))
    if num == 1:
        # One sample is `start` even when `stop` is not finite, as in JAX.
        step = span if not endpoint else lax.full(bounds, np.nan, compute)
        out = start_b
    elif divisions > 0:
        step = lax.div(span, float(divisions))
        # JAX interpolates between the bounds in the computation dtype, with the fractions
        # t = i * r, r = 1 / divisions (XLA turns the division by a constant into a product),
        # and stop * t evaluated as i * (stop * r) (XLA reassociates the constant): the
        # roundings differ from start + i * step (linspace(-2., 3., 6)[3] is 1.0000001).
        inverse = lax.full(out_shape, np.asarray(1.0 / divisions, dtype=compute), compute)
        positions = lax.broadcasted_iota(compute, out_shape, axis)
        remainder = lax.sub(lax.full(out_shape, 1, compute), lax.mul(positions, inverse))
        out = lax.add(lax.mul(start_b, remainder),
                      lax.mul(positions, lax.mul(stop_b, inverse)))
        if endpoint:
            # The last sample is exactly `stop`, whatever the rounding of the steps.
            last = lax.eq(lax.broadcasted_iota(np.dtype(np.int32), out_shape, axis), num - 1)
            out = lax.select(last, stop_b, out)
    else:
        step = lax.full(bounds, np.nan, compute)
        out = start_b
    if dtypes.is_integer(target):
        out = lax.floor(out)
    out = astype(out, target)
    if retstep:
        return out, astype(step, target)
    return out


@accepts_placement("device")
def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """A 2-d array with ones on diagonal `k` and zeros elsewhere (`jax.numpy.eye`)."""
    rows = concrete_int(N, "eye: N")
    cols = rows if M is None else concrete_int(M, "eye: M")
    offset = concrete_int(_concrete_scalar(k, "jnp.eye", "k"), "eye: k")
    if rows < 0 or cols < 0:
        raise ValueError(f"negative dimensions are not allowed, got N={rows}, M={cols}")
    target = _default_dtype(dtype, "eye")
    shape = (rows, cols)
    if offset >= cols or -offset >= rows:
        # The diagonal lies outside the matrix (and k may not even fit an int32).
        return lax.full(shape, 0, target)
    row_ids = lax.broadcasted_iota(np.dtype(np.int32), shape, 0)
    col_ids = lax.broadcasted_iota(np.dtype(np.int32), shape, 1)
    on_diagonal = lax.eq(lax.sub(col_ids, row_ids), offset)
    return lax.convert_element_type(on_diagonal, target)


def identity(n: int, dtype: Any = None) -> Any:
    """The n x n identity matrix (mirrors `jax.numpy.identity`)."""
    return eye(n, dtype=dtype)

