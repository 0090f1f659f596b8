"""The eager fast path: what eager dispatch remembers, and jnp's common elementwise calls
without the general promotion machinery (mirrors the C++ fast path of JAX's dispatch).

Outside every transformation a `jnp` function promotes its operands (one
`convert_element_type` per operand, a `broadcast_in_dim` per scalar), then binds its
primitive, and each bind runs the primitive's shape rule. For the common calls, Arrays of
one dtype and shape, or an Array and a Python scalar of a kind the Array's dtype holds,
all of that is a function of the operands' dtypes and weak types. `binary` and `unary`
compute it once per such signature (with the general machinery itself: `result_type`, the
primitive's `abstract_eval`), remember it, and afterwards call the primitive's numpy
`reference` with exactly the arrays the general path would hand it (a scalar converted as
`convert_element_type` converts it and broadcast to a zero-stride view), so that values,
dtypes and weak types are the general path's bit for bit. Whatever the remembered
signature does not cover (a transformation is active, other operand types, dtypes that
differ, broadcasting between arrays, value checks under `jax_debug_nans`, a promotion or
shape rule that raises) returns None, and the caller takes the general path, which also
raises the general path's errors.

What is remembered depends on the options that change dtypes and checks, so it is kept
per value of `config.trace_context()` (`EagerState`); `shape_rule` serves
`eager.apply_primitive` from the same state.
"""
from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np

from jaxlite.backends.registry import started_default
from jaxlite.config import config
from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import check_extended_operands
from jaxlite.core.trace import TRACE_VAR, root_trace
from jaxlite.lax.selection import select_n_p
from jaxlite.runtime.allocation import MEMORY_BYTES, allocation_error
from jaxlite.runtime.array import ArrayImpl, fresh_array
from jaxlite.runtime.device_values import default_client, memory_device_of

__all__ = ["EagerState", "eager_state", "shape_rule", "plain_output", "binary", "unary",
           "select", "ignoring_fp_errors", "restoring_fp_errors"]

_ROOT = root_trace()

# numpy keeps its floating-point error modes in a context variable; setting it to one
# prepared "ignore all" state costs a tenth of entering `np.errstate(all="ignore")`.
try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _IGNORE_ALL = _make_extobj(all="ignore")
except ImportError:  # another numpy layout: the public (slower) context manager
    _extobj_contextvar = None


def ignoring_fp_errors() -> Any:
    """Start ignoring floating-point errors in numpy (as `np.errstate(all="ignore")`);
    returns the token for `restoring_fp_errors`."""
    if _extobj_contextvar is None:
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    return _extobj_contextvar.set(_IGNORE_ALL)


def restoring_fp_errors(token: Any) -> None:
    """End what `ignoring_fp_errors` started."""
    if _extobj_contextvar is None:
        token.__exit__(None, None, None)
    else:
        _extobj_contextvar.reset(token)


# Python scalars that promote as weak types (a bool is strong: it goes the general way).
_WEAK_SCALARS = (int, float, complex)
_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1
_NO_PLAN = False  # a signature the fast path leaves to the general path


class EagerState:
    """What eager dispatch remembers under one setting of the tracing options.

    context : the `config.trace_context()` tuple it belongs to.
    checking : whether `jax_debug_nans` / `jax_debug_infs` is on (the fast path then
        steps aside, so that each intermediate is checked where the general path checks).
    out_avals : (primitive, parameters, argument signature) -> (input avals, output
        avals), the shape rules' answers for `eager.apply_primitive`.
    plans : the fast path's plans by operand signature (see `_binary_plan`).
    client, memory_device : the default client last seen, and its device when that
        keeps memory apart from the host (see `default_memory_device`).
    """

    __slots__ = ("context", "checking", "out_avals", "plans", "scalar_dtypes", "client",
                 "memory_device")

    def __init__(self, context: tuple) -> None:
        self.context = context
        self.checking = bool(config.read("jax_debug_nans") or config.read("jax_debug_infs"))
        self.out_avals: dict[Hashable, Any] = {}
        self.plans: dict[Hashable, Any] = {}
        self.scalar_dtypes = {t: dtypes.dtype(t(0)) for t in _WEAK_SCALARS}
        self.client: Any = None
        self.memory_device: Any = None


_STATES: dict[tuple, EagerState] = {}
_LATEST: list[EagerState] = []  # the state of the context used last (one slot)


def eager_state() -> EagerState:
    """The `EagerState` of the current tracing options."""
    context = config.trace_context()
    if _LATEST:
        state = _LATEST[0]
        if state.context is context:
            return state
    state = _STATES.get(context)
    if state is None:
        state = _STATES.setdefault(context, EagerState(context))
    _LATEST[:] = [state]
    return state


def default_memory_device(state: EagerState) -> Any:
    """The default device when its memory is not the host's (a GPU through CuPy), else
    None: eager work with no placed operand runs there, as JAX's runs on its default
    device. Asked on every eager operation, so the answer is kept per default client."""
    client = started_default()
    if client is None:  # (nothing chose the default yet: see `default_client`)
        client = default_client()
    if client is not state.client:
        state.client = client
        state.memory_device = memory_device_of(client)
    return state.memory_device


def clear() -> None:
    """Forget every remembered signature (for `jax.clear_caches`)."""
    _STATES.clear()
    _LATEST.clear()


# ---------------------------------------------------------------- shape rules

# The most signatures one state remembers for `shape_rule` (then it starts again: eager
# code with ever new shapes or parameters must not grow memory without end).
MAX_SHAPE_RULES = 4096


def _signature(primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """What the shape rule's answer depends on: each argument's type, shape, dtype and
    weak type, and the parameters (with their types, so that 1, 1.0 and True differ);
    None when an argument or parameter is of a kind not remembered."""
    parts: list[Any] = [primitive]
    for arg in args:
        kind = type(arg)
        if kind is ArrayImpl:
            value = arg._value
            parts += (value.shape, value.dtype, arg.weak_type)
        elif kind is np.ndarray:
            parts += (kind, arg.shape, arg.dtype)
        elif kind is float or kind is int or kind is complex or kind is bool:
            parts.append(kind)
        else:
            return None
    if params:
        parts += (tuple(params.items()), tuple(map(type, params.values())))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:  # an array or a list among the parameters
        return None
    return key


def _plain(avals: Sequence[ShapedArray]) -> bool:
    return not any(dtypes.is_extended(a.dtype) for a in avals)


def shape_rule(state: EagerState, primitive: Any, args: Sequence[Any],
               params: dict[str, Any]) -> tuple[list[ShapedArray], Any, bool]:
    """(input avals, output aval(s), whether the outputs are plain numpy dtypes) of
    `primitive` on `args`: its shape rule run once per signature (see `_signature`), with
    JAX's errors for operands of extended dtypes and for results that cannot be
    allocated. Errors are not remembered: they are raised again on each call."""
    key = _signature(primitive, args, params)
    if key is not None:
        known = state.out_avals.get(key)
        if known is not None:
            return known
    in_avals = [get_aval(a) for a in args]
    check_extended_operands(primitive, in_avals)
    out_avals = primitive.abstract_eval(*in_avals, **params)
    outs = out_avals if primitive.multiple_results else [out_avals]
    too_large = allocation_error(outs)
    if too_large is not None:
        raise too_large
    answer = (in_avals, out_avals, _plain(outs))
    if key is not None:
        if len(state.out_avals) >= MAX_SHAPE_RULES:
            state.out_avals.clear()
        state.out_avals[key] = answer
    return answer


def plain_output(value: Any, aval: ShapedArray) -> ArrayImpl:
    """A reference's result as the Array of `aval` (a plain numpy dtype): converted to
    its dtype where numpy gave another, its shape checked."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    if value.shape != aval.shape:
        raise AssertionError(f"reference produced shape {value.shape}, expected {aval.shape}")
    return fresh_array(value, aval.weak_type)


# ---------------------------------------------------------------- plans


def _join(operands: Sequence[Any], inexact: bool) -> tuple[np.dtype, bool]:
    """The dtype and weak type that jnp's promotion gives `operands` (`promote_dtypes`,
    or `promote_dtypes_inexact` when `inexact`)."""
    dtype, weak = dtypes.promotion_type(*operands)
    if inexact:
        dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
    return np.dtype(dtype), weak


def _out_aval(primitive: Any, dtype: np.dtype, weak: bool, arity: int,
              selecting: bool = False) -> ShapedArray | None:
    """The primitive's result for 0-d operands of `dtype` (elementwise primitives keep
    the operands' shape), after a bool one when `selecting` (`select_n`), or None when its
    shape rule refuses them."""
    operand = ShapedArray((), dtype, weak)
    condition = [ShapedArray((), np.dtype(np.bool_), False)] if selecting else []
    try:
        out = primitive.abstract_eval(*condition, *[operand] * arity)
    except Exception:  # the general path raises it, where the user expects it
        return None
    return out if isinstance(out, ShapedArray) and out.shape == () else None


def _scalar_range(dtype: np.dtype) -> tuple[int, int]:
    """The Python ints that convert to `dtype` directly as the general path converts them
    (in the default int32's range, which needs no overflow check, and in `dtype`'s)."""
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return max(info.min, _INT32_MIN), min(info.max, _INT32_MAX)
    return _INT32_MIN, _INT32_MAX


def _binary_plan(state: EagerState, primitive: Any, inexact: bool, real_only: bool,
                 selecting: bool, x_kind: Any, y_kind: Any) -> Any:
    """How to run `primitive` on operands of these kinds: (operand dtype, output dtype,
    output weak type, the scalar's default dtype, the range of int scalars), or
    `_NO_PLAN`. A kind is (dtype, weak) for an Array, the Python type for a scalar."""
    scalar = x_kind if isinstance(x_kind, type) else y_kind
    scalar = scalar if isinstance(scalar, type) else None
    operands = [kind if isinstance(kind, type) else ShapedArray((), *kind)
                for kind in (x_kind, y_kind)]
    try:
        dtype, weak = _join(operands, inexact)
    except Exception:  # (strict promotion, say) the general path raises it
        return _NO_PLAN
    arrays = [kind[0] for kind in (x_kind, y_kind) if not isinstance(kind, type)]
    if any(a != dtype for a in arrays) or dtype == np.bool_ or dtypes.is_extended(dtype) \
            or (real_only and dtypes.is_complex(dtype)):
        return _NO_PLAN  # a conversion of an array, or jnp picks another operation
    out = _out_aval(primitive, dtype, weak, 2, selecting)
    if out is None:
        return _NO_PLAN
    default = state.scalar_dtypes[scalar] if scalar is not None else None
    if scalar is complex and not dtypes.is_complex(dtype) or \
            scalar is float and not dtypes.is_inexact(dtype):
        return _NO_PLAN
    return (dtype, np.dtype(out.dtype), out.weak_type, default, _scalar_range(dtype))


def _unary_plan(primitive: Any, inexact: bool, dtype: np.dtype, weak: bool) -> Any:
    """(output dtype, output weak type) of `primitive` on an Array that jnp's promotion
    leaves as it is, or `_NO_PLAN`."""
    try:
        joined = _join([ShapedArray((), dtype, weak)], inexact)
    except Exception:
        return _NO_PLAN
    if joined != (dtype, weak) or dtype == np.bool_:
        return _NO_PLAN
    out = _out_aval(primitive, dtype, weak, 1)
    return _NO_PLAN if out is None else (np.dtype(out.dtype), out.weak_type)


# ---------------------------------------------------------------- the fast calls


def _scalar_operand(value: Any, plan: tuple, shape: tuple) -> np.ndarray | None:
    """A Python scalar as the general path hands it to the primitive: converted to the
    operands' dtype (through its default dtype, as `convert_element_type` converts it)
    and broadcast to `shape` as a zero-stride view. None for an int outside the range
    whose conversion is direct."""
    dtype, default = plan[0], plan[3]
    if type(value) is int:
        low, high = plan[4]
        if not low <= value <= high:
            return None
        array = np.array(value, dtype)
    else:
        array = np.array(value, default)
        if default != dtype:  # as convert_element_type's reference: overflow is silent
            token = ignoring_fp_errors()
            try:
                array = array.astype(dtype)
            finally:
                restoring_fp_errors(token)
    if not shape:
        return array
    return np.ndarray(shape, dtype, array, 0, (0,) * len(shape))


def _run(primitive: Any, operands: Sequence[np.ndarray], shape: tuple, out_dtype: np.dtype,
         out_weak: bool) -> ArrayImpl:
    """The primitive's reference on `operands`, made an Array as `wrap_output` makes it."""
    token = ignoring_fp_errors()
    try:
        out = primitive.reference(*operands)
    finally:
        restoring_fp_errors(token)
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype != out_dtype:
        out = out.astype(out_dtype)
    if out.shape != shape:
        raise AssertionError(f"reference produced shape {out.shape}, expected {shape}")
    return fresh_array(out, out_weak)


def binary(primitive: Any, x: Any, y: Any, inexact: bool = False,
           real_only: bool = False, condition: np.ndarray | None = None) -> ArrayImpl | None:
    """`primitive` (elementwise, two operands) applied eagerly to `x` and `y` after jnp's
    promotion (`promote_args`, or `promote_args_inexact` when `inexact`), or None where
    the general path must run. `real_only` leaves complex operands to the general path
    (jnp orders complex numbers with other operations)."""
    if TRACE_VAR.get() is not _ROOT:
        return None
    state = eager_state()
    if state.checking or default_memory_device(state) is not None:
        return None  # (the general path checks each value, or runs on the device)
    tx, ty = type(x), type(y)
    if (tx is ArrayImpl and x._sharding is not None) or (
            ty is ArrayImpl and y._sharding is not None):
        return None  # placed operands: the general path places the result
    if tx is ArrayImpl:
        xv = x._value
        shape = xv.shape
        if ty is ArrayImpl:
            yv = y._value
            if yv.shape != shape:
                return None
            key = (primitive, inexact, real_only, xv.dtype, x.weak_type, yv.dtype,
                   y.weak_type)
        elif ty is float or ty is int or ty is complex:
            key = (primitive, inexact, real_only, xv.dtype, x.weak_type, ty)
        else:
            return None
    elif ty is ArrayImpl and (tx is float or tx is int or tx is complex):
        yv = y._value
        shape = yv.shape
        key = (primitive, inexact, real_only, tx, yv.dtype, y.weak_type)
    else:
        return None
    plan = state.plans.get(key)
    if plan is None:
        kinds = [t if t is not ArrayImpl else (v.dtype, v.weak_type)
                 for t, v in ((tx, x), (ty, y))]
        plan = state.plans[key] = _binary_plan(state, primitive, inexact, real_only,
                                               condition is not None, *kinds)
    if plan is _NO_PLAN:
        return None
    if tx is not ArrayImpl:
        xv = _scalar_operand(x, plan, shape)
        if xv is None:
            return None
    elif ty is not ArrayImpl:
        yv = _scalar_operand(y, plan, shape)
        if yv is None:
            return None
    if xv.nbytes > MEMORY_BYTES or yv.nbytes > MEMORY_BYTES:
        return None  # (an Array larger than memory: the general path's error)
    if condition is None:
        return _run(primitive, (xv, yv), shape, plan[1], plan[2])
    if condition.shape != shape:
        return None
    return _run(primitive, (condition, yv, xv), shape, plan[1], plan[2])


def select(condition: Any, x: Any, y: Any) -> ArrayImpl | None:
    """`jnp.where(condition, x, y)` eagerly (`select_n(condition, y, x)` after jnp's
    promotion of x and y), when `condition` is a strong bool Array of the shape the
    operands have (see `binary`); else None."""
    if type(condition) is not ArrayImpl or condition.weak_type:
        return None
    value = condition._value
    if value.dtype != np.bool_:
        return None
    return binary(select_n_p, x, y, condition=value)


def unary(primitive: Any, x: Any, inexact: bool = False) -> ArrayImpl | None:
    """`primitive` (elementwise, one operand) applied eagerly to the Array `x` when jnp's
    promotion (`promote_args`, or `promote_args_inexact`) leaves it as it is; else None."""
    if type(x) is not ArrayImpl or TRACE_VAR.get() is not _ROOT or x._sharding is not None:
        return None
    state = eager_state()
    if state.checking or default_memory_device(state) is not None:
        return None
    xv = x._value
    key = (primitive, inexact, xv.dtype, x.weak_type)
    plan = state.plans.get(key)
    if plan is None:
        plan = state.plans[key] = _unary_plan(primitive, inexact, xv.dtype, x.weak_type)
    if plan is _NO_PLAN or xv.nbytes > MEMORY_BYTES:
        return None
    return _run(primitive, (xv,), xv.shape, plan[0], plan[1])
