"""Argument handling shared by the numpy layer: type promotion, broadcasting, host data, axes.

Mirrors `jax._src.numpy.util` (promote_args, promote_dtypes, check_arraylike). Promotion
follows JAX's lattice (`jaxlite.core.dtypes.result_type`), where Python scalars are weak and
take the dtype of the arrays they meet; broadcasting follows numpy's rules. Host values (numpy
arrays and scalars, Python scalars) enter the array world in exactly one place,
`host_to_array`, which binds `convert_element_type` so that it yields an `Array` eagerly and a
staged constant under tracing.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.errors import warn_at_user
from jaxlite.config import config
from jaxlite.core import dtypes
from jaxlite.core.avals import check_byte_order, get_aval
from jaxlite.core.operators import ArrayOperators
from jaxlite.core.shape_poly import is_symbolic_dim
from jaxlite.lax.dimension_value import dimensions_as_values
from jaxlite.runtime.device import start_default_backend


def is_jax_array(x: Any) -> bool:
    """Whether `x` is an `Array` or a tracer (the values jaxlite computes with)."""
    return isinstance(x, ArrayOperators)


def is_arraylike(x: Any) -> bool:
    """Whether `x` may stand as an array argument: arrays, tracers, numpy values, scalars."""
    return (is_jax_array(x) or isinstance(x, (np.ndarray, np.generic))
            or dtypes.is_python_scalar(x))


def check_arraylike(fun_name: str, *args: Any) -> None:
    """Raise TypeError, as JAX does, when an argument is a list, tuple or other non-array."""
    for position, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            check_byte_order(arg)
        if not is_arraylike(arg):
            hint = (" Convert it with jnp.asarray(...) first; lists are not accepted, since "
                    "converting them silently is slow and hides bugs."
                    if isinstance(arg, (list, tuple)) else "")
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got "
                            f"{type(arg)} at position {position}.{hint}")


def user_dtype(dtype: Any, fun_name: str) -> np.dtype:
    """A dtype the user asked for, canonicalized (warns when x64 being off narrows it)."""
    return dtypes.check_and_canonicalize_user_dtype(dtype, fun_name)


# ------------------------------------------------------------------------ host values

def host_to_array(value: Any, dtype: Any = None, weak_type: bool = False) -> Any:
    """Turn host data (numpy value or Python scalar) into an array of `dtype`.

    The one entry point for host data: it binds `convert_element_type` directly (the lax
    wrapper would hand an unchanged numpy value back), which gives an `Array` eagerly and a
    constant under tracing. 64-bit host data is narrowed on the host first when x64 is off,
    wrapping integers as JAX does.
    """
    if dtypes.is_python_scalar(value):
        source = value  # dispatch range-checks Python ints against the canonical int type
        if dtype is not None and type(value) is int and _fits(value, dtype):
            # An int beyond int32 (2**31 for uint32) that its dtype holds converts there
            # directly, not through the int32 a Python int stands for.
            source = np.array(value, dtype=dtypes.canonicalize_dtype(dtype))
    else:
        start_default_backend()
        host = np.asarray(value)
        check_byte_order(host)
        canonical = dtypes.dtype(host)  # rejects strings and objects with a clear TypeError
        with np.errstate(over="ignore"):
            source = host.astype(canonical) if host.dtype != canonical else host
    target = get_aval(source).dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
    return lax.convert_element_type_p.bind(source, new_dtype=np.dtype(target),
                                           weak_type=bool(weak_type))


def _fits(value: int, dtype: Any) -> bool:
    target = dtypes.canonicalize_dtype(dtype)
    if not dtypes.is_integer(target):
        return True
    info = np.iinfo(target)
    return info.min <= value <= info.max


def ensure_array(x: Any) -> Any:
    """`x` as an array or tracer: arrays pass through, host values are converted.

    Python scalars become weak-typed arrays of their default dtype, numpy values strong
    arrays of their canonical dtype, as `jnp.asarray` makes them.
    """
    if is_jax_array(x):
        return x
    if not is_arraylike(x):
        raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid jaxlite "
                        "array: pass an Array, a numpy array or a Python scalar.")
    return host_to_array(x, weak_type=dtypes.is_weakly_typed(x))


def convert(x: Any, dtype: Any, weak_type: bool = False) -> Any:
    """`x` converted to `dtype` with the given weak flag; host values become arrays."""
    dtype = dtypes.canonicalize_dtype(dtype)
    if not is_jax_array(x):
        return host_to_array(x, dtype, weak_type)
    return lax._convert_element_type(x, dtype, weak_type=weak_type)


def weak_only_when_0d(out: Any, promoted: Any) -> Any:
    """`out` weak-typed as JAX 0.10.2's hypot and logaddexp2 give it: weak only
    when `out` is 0-d and the promoted operand `promoted` is weak (checked against JAX)."""
    return convert(out, out.dtype, np.ndim(out) == 0 and dtypes.is_weakly_typed(promoted))


# ------------------------------------------------------------------------ promotion

def promote_dtypes(*args: Any) -> list[Any]:
    """Convert all arguments to their common dtype on JAX's lattice (no broadcasting).

    The result is weak-typed only when the join is a weak type (all inputs weak).
    """
    if len(args) == 1:
        return [ensure_array(args[0])]
    dtype, weak = dtypes.promotion_type(*args)
    return [convert(x, dtype, weak) for x in args]


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """Like `promote_dtypes`, then integers and bool go to floats (int32 -> float32)."""
    dtype, weak = dtypes.promotion_type(*args)
    dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
    return [convert(x, dtype, weak) for x in args]


def promote_dtypes_numeric(*args: Any) -> list[Any]:
    """Like `promote_dtypes`, then bool goes to the default integer type."""
    dtype, weak = dtypes.promotion_type(*args)
    dtype = dtypes.canonicalize_dtype(dtypes.to_numeric_dtype(dtype))
    return [convert(x, dtype, weak) for x in args]


def _numpy_broadcast_shapes(*shapes: tuple) -> tuple:
    # numpy's own cannot hold symbolic dimensions (shape polymorphism).
    try:
        return np.broadcast_shapes(*shapes)
    except TypeError:
        return _symbolic_broadcast_shapes(*shapes)


def _symbolic_broadcast_shapes(*shapes: tuple) -> tuple:
    """numpy's broadcast of shapes holding symbolic dimensions: the sizes of a dimension
    must be equal or 1 (numpy's ValueError otherwise)."""
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for sizes in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        wide = []
        for d in sizes:
            if not (d == 1 or any(d == w for w in wide)):
                wide.append(d)
        if len(wide) > 1:
            raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape: "
                             f"{list(shapes)}")
        result.append(wide[0] if wide else 1)
    return tuple(result)


def broadcast_shapes(fun_name: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """numpy's broadcast of `shapes`; JAX's ValueError when they do not broadcast."""
    try:
        return tuple(_numpy_broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        listed = [tuple(s) for s in shapes]
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={listed} (in "
                         f"{fun_name}: trailing dimensions must be equal or 1).") from None


def broadcast_to_shape(x: Any, shape: Sequence[int]) -> Any:
    """`x` broadcast numpy-style to `shape` (which must be a valid broadcast target)."""
    shape = tuple(shape)
    x_shape = tuple(np.shape(x))
    if x_shape == shape:
        return x
    lead = len(shape) - len(x_shape)
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def promote_shapes(fun_name: str, *args: Any) -> list[Any]:
    """Broadcast the arguments numpy-style to one shape (rank promotion included)."""
    shapes = [tuple(np.shape(a)) for a in args]
    if all(s == shapes[0] for s in shapes):
        return list(args)
    if len({len(s) for s in shapes if s}) > 1:
        _rank_promotion(fun_name, shapes)
    try:
        shape = tuple(_numpy_broadcast_shapes(*shapes))
    except ValueError:
        listed = ", ".join(str(s) for s in shapes)
        if len({len(s) for s in shapes if s}) > 1:
            # JAX broadcasts operands of different ranks up front, with broadcast_shapes's
            # ValueError; equal ranks reach the lax operation and its TypeError.
            raise ValueError("Incompatible shapes for broadcasting: "
                             f"shapes={[tuple(s) for s in shapes]}") from None
        raise TypeError(f"{fun_name} got incompatible shapes for broadcasting: {listed}. "
                        "Trailing dimensions must be equal or 1.") from None
    return [broadcast_to_shape(a, shape) for a in args]


def _rank_promotion(fun_name: str, shapes: list[tuple[int, ...]]) -> None:
    """Apply `jax_numpy_rank_promotion` to an implicit broadcast between different ranks
    (scalars aside): allow it, warn, or raise ValueError, as JAX does."""
    mode = config.read("jax_numpy_rank_promotion")
    if mode == "allow":
        return
    listed = " ".join(str(s) for s in shapes)
    message = (f"Operands could not be broadcast together for {fun_name} on shapes {listed} "
               f"and with the config option jax_numpy_rank_promotion='{mode}': their ranks "
               "differ. Add the missing leading axes explicitly (x[None], jnp.expand_dims, "
               "jnp.broadcast_to), or set jax_numpy_rank_promotion='allow'.")
    if mode == "raise":
        raise ValueError(message)
    warn_at_user(message)


def check_python_ints(fun_name: str, *args: Any) -> None:
    """Refuse a Python int operand beyond the default integer type (int32, int64 under
    x64) with JAX's OverflowError, whatever the other operands' dtypes: JAX's `jnp`
    functions are jitted, and parsing their arguments converts a Python int to that type."""
    for position, arg in enumerate(args):
        if type(arg) is int and not -2**31 <= arg < 2**31:
            info = np.iinfo(dtypes.default_int_dtype())
            if not info.min <= arg <= info.max:
                raise OverflowError(
                    "An overflow was encountered while parsing an argument to a jitted "
                    f"computation, whose argument path is {fun_name}[{position}]. Got "
                    f"{type(arg)} with value {arg} (a Python int operand must fit "
                    f"{info.dtype.name}; pass it as a float or as an array of a wider "
                    "dtype).")


def promote_args(fun_name: str, *args: Any) -> list[Any]:
    """Check, promote to a common dtype and broadcast to a common shape (`jnp` ufuncs)."""
    args = tuple(dimensions_as_values(args))  # sizes under shape polymorphism
    check_arraylike(fun_name, *args)
    check_python_ints(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args: Any) -> list[Any]:
    """`promote_args`, with integer and bool results computed in floating point."""
    args = tuple(dimensions_as_values(args))  # sizes under shape polymorphism
    check_arraylike(fun_name, *args)
    check_python_ints(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args: Any) -> list[Any]:
    """`promote_args`, with bool results computed in the default integer type."""
    args = tuple(dimensions_as_values(args))  # sizes under shape polymorphism
    check_arraylike(fun_name, *args)
    check_python_ints(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


# ------------------------------------------------------------------------ axes

def canonicalize_axis(axis: Any, ndim: int) -> int:
    """A nonnegative axis; ValueError (numpy's wording) when out of range."""
    try:
        axis = operator.index(axis)
    except TypeError as e:  # Python's words first, as in JAX
        raise TypeError(f"{e} (axis must be an integer, got {axis!r})") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def canonicalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """`axis` (None, an int or a sequence) as a tuple of distinct nonnegative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis: {axis}")
    return axes


def concrete_int(value: Any, what: str) -> int:
    """A Python int from a static argument (a shape entry, a count), else a clear error;
    a symbolic dimension (shape polymorphism) stays as it is."""
    if is_symbolic_dim(value):
        return value
    try:
        return operator.index(value)
    except TypeError as error:
        if isinstance(value, (float, np.floating)):
            raise TypeError(f"{what} must be an integer, got the float {value!r}.") from None
        raise TypeError(f"{what} must be a concrete integer, got {value!r} ({error}).") \
            from None


def canonicalize_shape(shape: Any, fun_name: str) -> tuple[int, ...]:
    """A shape argument (an int or a sequence of ints) as a tuple of nonnegative ints."""
    entries = shape if isinstance(shape, (list, tuple)) else (shape,)
    if isinstance(shape, np.ndarray) or (is_jax_array(shape) and np.ndim(shape) == 1):
        entries = list(shape)
    out = []
    for entry in entries:
        if isinstance(entry, (float, np.floating)):
            raise TypeError(f"{fun_name}: shapes must be sequences of concrete integers, "
                            f"got {tuple(entries)}.")
        size = concrete_int(entry, f"{fun_name}: a shape entry")
        if size < 0:
            raise _negative_shape(fun_name, tuple(entries))
        out.append(size)
    return tuple(out)


# JAX's error for a negative shape entry: the one of the lax operation the function
# builds on (broadcast_in_dim for the creation functions), except where JAX checks first.
_NEGATIVE_SHAPE = {
    "indices": (TypeError, "iota shape must have every element be nonnegative, got {}."),
    "resize": (ValueError, "all elements of `new_shape` must be non-negative, got {}."),
    "tile": (ValueError, "tile: invalid tensor dimension size in reps {}."),
    "fromfunction": (ValueError, "negative dimensions are not allowed, got {}."),
}


def _negative_shape(fun_name: str, entries: tuple) -> Exception:
    kind, phrase = _NEGATIVE_SHAPE.get(
        fun_name, (TypeError, "broadcast_in_dim shape must have every element be nonnegative, "
                              "got {}."))
    return kind(phrase.format(entries) + f" ({fun_name}: shape entries must be nonnegative.)")
