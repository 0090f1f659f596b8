"""Host callbacks: Python functions that a program calls while it runs (mirrors JAX's
`pure_callback_p`, `io_callback_p` and `debug_callback_p`).

Three primitives, one per kind of callback:

- `pure_callback`: a function of its arguments only. Under `jit` it may be called fewer
  times than the program mentions it (the compiler drops a call whose results nobody
  reads, and merges identical calls), and under `vmap` it is called as `vmap_method` says.
- `io_callback`: a function with side effects. Never dropped or merged; calls keep the
  program's order; under `vmap` it is called once per batch element, in order.
- `debug_callback`: a function with no results (`jax.debug.print` and friends). Under
  `jvp` it sees the primal values, under `vmap` it runs once per batch element, and it
  vanishes from the transposed (backward) program, as in JAX.

Neither `pure_callback` nor `io_callback` can be differentiated (JAX's ValueErrors).

The Python function travels in the equation's parameters as a `HostCallback`, which
carries a process-unique integer key. Lowering turns the equation into a custom-call to the
target `jaxlite_host_callback` whose first operand is that key as an s64 constant, so that
one custom-call signature (and, on the cpu backend, one trampoline) serves every callback
of the same operand and result shapes. The target finds the function through a registry
that holds it weakly: the function lives as long as a jaxpr refers to its `HostCallback`,
and every compiled program runs through a jaxpr (jit's caches keep it), so the registry
never leaks. The pure callback's custom-call carries `custom_call_has_side_effect=false`,
which lets the compiler's dead-code and common-subexpression passes treat it as pure.

Values reach the function as numpy arrays (copies, never views of a program's buffers)
and its results are checked against the declared shapes and dtypes after the dtype
canonicalization JAX applies (float64 results become float32 without `jax_enable_x64`);
a mismatch or an exception in the function raises `JaxRuntimeError`, as JAX does. The
public functions (`jaxlite.pure_callback`, `jaxlite.experimental.io_callback`,
`jaxlite.debug`) wrap the user's function so that it receives `Array`s and pytrees.
"""
from __future__ import annotations

import itertools
import logging
import threading
import traceback
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.effects import Effect
from jaxlite.core.primitive import Primitive
from jaxlite.errors import JaxRuntimeError
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax.broadcast import broadcast
from jaxlite.lax.scan import scan
from jaxlite.lax.slicing import index_in_dim
from jaxlite.tree_util import tree_leaves
from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["HostCallback", "Effect", "DebugEffect", "OrderedDebugEffect", "debug_effect",
           "ordered_debug_effect", "pure_callback_p", "io_callback_p", "debug_callback_p",
           "VMAP_METHODS"]

# JAX's logger names: libraries filter these records (equinox drops "jax.pure_callback
# failed" from "jax._src.callback" while it reports its own runtime errors).
_CALLBACK_LOGGER = logging.getLogger("jax._src.callback")
_DEBUG_LOGGER = logging.getLogger("jax._src.debugging")

CUSTOM_CALL_TARGET = "jaxlite_host_callback"
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


# --------------------------------------------------------------------------- effects

class DebugEffect(Effect):
    """The effect of a debug callback whose calls may be reordered (mirrors
    `jax.debug.DebugEffect`)."""

    def __str__(self) -> str:
        return "Debug"

    __repr__ = __str__


class OrderedDebugEffect(Effect):
    """The effect of a debug callback whose calls keep program order (mirrors
    `jax.debug.OrderedDebugEffect`)."""

    def __str__(self) -> str:
        return "OrderedDebug"

    __repr__ = __str__


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()


# ------------------------------------------------------------------- the callables

_CALLBACKS: "weakref.WeakValueDictionary[int, HostCallback]" = weakref.WeakValueDictionary()
_KEYS = itertools.count(1)
_KEYS_LOCK = threading.Lock()


class HostCallback:
    """A Python function of flat numpy arrays that a program calls, with the key that the
    compiled program names it by.

    `function(*arrays)` returns anything whose pytree leaves are the results. `name` is
    the public function it came through, as JAX's failure log names it
    ("jax.pure_callback", "jax.io_callback", "jax.debug.callback").
    """

    __slots__ = ("function", "name", "key", "__weakref__")

    def __init__(self, function: Callable[..., Any], name: str) -> None:
        self.function = function
        self.name = name
        with _KEYS_LOCK:
            self.key = next(_KEYS)
        _CALLBACKS[self.key] = self

    def __repr__(self) -> str:
        inner = getattr(self.function, "__qualname__", type(self.function).__name__)
        return f"HostCallback({inner}, key={self.key})"


def _lookup(key: int) -> HostCallback:
    callback = _CALLBACKS.get(key)
    if callback is None:
        raise JaxRuntimeError(
            f"INTERNAL: host callback {key} no longer exists: the program that calls it "
            "outlived every jaxpr that refers to it. Keep the jitted function (or the "
            "Compiled object) alive while you call its executable.")
    return callback


def _check_results(values: Any, result_avals: Sequence[ShapedArray]) -> list[np.ndarray]:
    """The callback's results as arrays of the declared shapes and dtypes (JAX's checks,
    after JAX's dtype canonicalization), else RuntimeError with JAX's wording."""
    leaves = tree_leaves(values)
    if len(leaves) != len(result_avals):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(result_avals)}, Actual: {len(leaves)}")
    results = []
    for i, (leaf, aval) in enumerate(zip(leaves, result_avals)):
        array = np.asarray(leaf)
        canonical = dtypes.canonicalize_dtype(array.dtype)
        if canonical != array.dtype:
            array = array.astype(canonical)
        if array.shape != tuple(aval.shape):
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {tuple(aval.shape)}, Actual: {array.shape}")
        expected = np.dtype(np.bool_) if aval.dtype == dtypes.float0 else np.dtype(aval.dtype)
        if array.dtype != expected:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {expected}, Actual: {array.dtype}")
        results.append(array)
    return results


def run_callback(callback: HostCallback, args: Sequence[Any],
                 result_avals: Sequence[ShapedArray], wrap_errors: bool = True
                 ) -> list[np.ndarray]:
    """Call `callback` on `args`; its checked results. Anything that goes wrong is logged
    and raised as JaxRuntimeError with JAX's key phrase and the original traceback, as a
    compiled program reports it (or as it is, without `wrap_errors`: an eager debug
    callback, which JAX calls directly)."""
    try:
        return _check_results(callback.function(*args), result_avals)
    except BaseException as error:  # noqa: BLE001 (re-raised, as JAX reports it)
        logger = _DEBUG_LOGGER if callback.name.startswith("jax.debug") else _CALLBACK_LOGGER
        logger.exception("%s failed", callback.name)
        if not wrap_errors:
            raise
        text = "".join(traceback.format_exception(error))
        raise JaxRuntimeError(f"INTERNAL: CpuCallback error calling callback: {text}") \
            from error


# ------------------------------------------------------------------------ lowering

def _avals_of_shape(shape: Shape) -> list[ShapedArray]:
    return [ShapedArray(s.dims, s.dtype) for s in shape.tuple_shapes or ()]


def _run_from_program(inst: HloInstruction, key: np.ndarray, *operands: np.ndarray) -> tuple:
    """The custom-call target: the callback named by `key`, on copies of the operands (they
    may be views of the program's buffers, which the program reuses); its results as the
    tuple the instruction's shape describes."""
    callback = _lookup(int(key))
    copies = [np.array(x) for x in operands]
    return tuple(run_callback(callback, copies, _avals_of_shape(inst.shape)))


CUSTOM_CALL_TARGETS[CUSTOM_CALL_TARGET] = _run_from_program


def _lowering(kind: str, side_effect: bool) -> Callable[..., list[HloInstruction]]:
    """The lowering rule of a callback primitive: a custom-call with the key first and a
    tuple of the results (possibly empty)."""
    def lower(ctx: LoweringContext, *operands: HloInstruction, callback: HostCallback,
              **params: Any) -> list[HloInstruction]:
        key = hlo.constant(ctx, callback.key, np.int64)
        shape = Shape.tuple([ctx.shape(a) for a in ctx.avals_out])
        call = ctx.builder.add(Opcode.CUSTOM_CALL, shape, (key, *operands),
                               {"target": CUSTOM_CALL_TARGET, "backend_config": kind,
                                "custom_call_has_side_effect": side_effect})
        return [hlo.get_tuple_element(ctx, call, i) for i in range(len(ctx.avals_out))]
    lower.__name__ = f"lower_{kind}"
    return lower


# ------------------------------------------------------------------ pure_callback

pure_callback_p = Primitive("pure_callback", multiple_results=True)


def _result_avals_rule(*avals: ShapedArray, result_avals: tuple[ShapedArray, ...],
                       **params: Any) -> list[ShapedArray]:
    return list(result_avals)


def _callback_reference(*args: np.ndarray, callback: HostCallback,
                        result_avals: tuple[ShapedArray, ...], **params: Any) -> list:
    return run_callback(callback, args, result_avals)


def _pure_callback_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any):
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _pure_callback_transpose(cts: Any, *args: Any, **params: Any):
    raise ValueError("Pure callbacks do not support transpose. Please use `jax.custom_vjp` "
                     "to use callbacks while taking gradients.")


def _batched(aval: ShapedArray, axis_size: int) -> ShapedArray:
    return ShapedArray((axis_size, *aval.shape), aval.dtype, aval.weak_type)


def _sequential(primitive: Primitive, axis_size: int, args: list[Any],
                dims: Sequence[int | None], unroll: bool, **params: Any) -> list[Any]:
    """One call per batch element, in order, through a scan over the batched arguments."""
    mapped = [i for i, d in enumerate(dims) if d is not None]

    def body(carry: tuple, xs: list[Any]) -> tuple[tuple, list[Any]]:
        call_args = list(args)
        for i, x in zip(mapped, xs):
            call_args[i] = x
        return carry, primitive.bind(*call_args, **params)
    _, outs = scan(body, (), [args[i] for i in mapped], length=axis_size, unroll=unroll)
    return list(outs)


def batch_by_vmap_method(primitive: Primitive, axis_size: int, args: Sequence[Any],
                         dims: Sequence[int | None], *, vmap_method: str | None,
                         result_avals: tuple[ShapedArray, ...],
                         vectorized_params: Callable[[dict, Sequence[int | None], str], dict]
                         | None = None, **params: Any) -> tuple[list[Any], list[int]]:
    """JAX's `vmap_method` rules, shared by pure_callback and ffi_call: "sequential" and
    "sequential_unrolled" call once per element (a scan); "expand_dims", "broadcast_all" and
    "legacy_vectorized" call once on the batched operands (unbatched ones given a leading
    axis of 1, of the batch size, or left alone), `vectorized_params(params, dims,
    vmap_method)` adjusting the params of that call. The results are batched along axis 0."""
    moved = [x if d is None else move_batch_axis(x, d, axis_size, 0) for x, d in zip(args, dims)]
    if vmap_method in ("sequential", "sequential_unrolled"):
        outs = _sequential(primitive, axis_size, moved, dims,
                           vmap_method == "sequential_unrolled", vmap_method=vmap_method,
                           result_avals=result_avals, **params)
    elif vmap_method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        if vmap_method != "legacy_vectorized":
            size = axis_size if vmap_method == "broadcast_all" else 1
            moved = [broadcast(x, (size,)) if d is None else x for x, d in zip(moved, dims)]
        if vectorized_params is not None:
            params = vectorized_params(params, dims, vmap_method)
        outs = primitive.bind(*moved, vmap_method=vmap_method,
                              result_avals=tuple(_batched(a, axis_size) for a in result_avals),
                              **params)
    else:
        raise NotImplementedError(
            f"vmap is only supported for the {primitive.name} primitive when vmap_method is "
            "one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    return list(outs), [0] * len(outs)


def _pure_callback_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None],
                         **params: Any) -> tuple[list[Any], list[int]]:
    return batch_by_vmap_method(pure_callback_p, axis_size, args, dims, **params)


pure_callback_p.abstract_eval = _result_avals_rule
pure_callback_p.reference = _callback_reference
pure_callback_p.jvp = _pure_callback_jvp
pure_callback_p.transpose = _pure_callback_transpose
pure_callback_p.batch = _pure_callback_batch
pure_callback_p.lower = _lowering("pure_callback", side_effect=False)


# -------------------------------------------------------------------- io_callback

io_callback_p = Primitive("io_callback", multiple_results=True)


def _io_callback_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any):
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_transpose(cts: Any, *args: Any, **params: Any):
    raise ValueError("IO callbacks do not support transpose.")


def _io_callback_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                       ordered: bool, **params: Any) -> tuple[list[Any], list[int]]:
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    moved = [x if d is None else move_batch_axis(x, d, axis_size, 0) for x, d in zip(args, dims)]
    outs = _sequential(io_callback_p, axis_size, moved, dims, False, ordered=False, **params)
    return outs, [0] * len(outs)


io_callback_p.abstract_eval = _result_avals_rule
io_callback_p.reference = _callback_reference
io_callback_p.jvp = _io_callback_jvp
io_callback_p.transpose = _io_callback_transpose
io_callback_p.batch = _io_callback_batch
io_callback_p.lower = _lowering("io_callback", side_effect=True)


# ----------------------------------------------------------------- debug_callback

debug_callback_p = Primitive("debug_callback", multiple_results=True)


def _debug_callback_abstract_eval(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
    return []


def _debug_callback_impl(*args: Any, callback: HostCallback, **params: Any) -> list:
    # Eagerly the function gets the values as they are (weak types kept, as in JAX), and
    # its exceptions propagate unwrapped.
    return run_callback(callback, args, (), wrap_errors=False)


def _debug_callback_jvp(primals: Sequence[Any], tangents: Sequence[Any],
                        **params: Any) -> tuple[list, list]:
    # The callback sees the primal values; tangents are not shown (JAX's rule).
    return debug_callback_p.bind(*primals, **params), []


def _debug_callback_transpose(cts: Any, *args: Any, **params: Any) -> list[None]:
    # Nothing flows back through a callback, and it is not called again backwards.
    return [None] * len(args)


def _debug_callback_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None],
                          **params: Any) -> tuple[list, list]:
    """One call per batch element, in order, each with that element's values."""
    for i in range(axis_size):
        debug_callback_p.bind(*[x if d is None else index_in_dim(x, i, d, keepdims=False)
                                for x, d in zip(args, dims)], **params)
    return [], []


debug_callback_p.abstract_eval = _debug_callback_abstract_eval
debug_callback_p.impl = _debug_callback_impl
debug_callback_p.jvp = _debug_callback_jvp
debug_callback_p.transpose = _debug_callback_transpose
debug_callback_p.batch = _debug_callback_batch
debug_callback_p.lower = _lowering("debug_callback", side_effect=True)
