"""`jaxlite.jit`: trace once per abstract signature, compile once per backend, then run the
compiled program.

Mirrors `jax.jit` and `jax.stages`. A call flattens its arguments, abstracts them (shape,
dtype, weak type), and looks the signature up in the function's cache; on a miss it traces
the function to a jaxpr. Outside every transformation the call then runs the jaxpr compiled
by the chosen backend (lowered to HLO, optimized, compiled; cached per jaxpr and backend,
see `jaxlite.dispatch`). Under a transformation (grad, vmap, an outer jit) the call is the
`jit` primitive applied to the leaves, one more equation, compiled when the outer program
is. Ahead of time, `jit(f).lower(*args)` gives a `Lowered` and `.compile()` a `Compiled`.
"""
from __future__ import annotations

import functools
import inspect
import operator
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from jaxlite.runtime import dispatch
from jaxlite.runtime.call_cache import LRUCache, SharedBudget, SingleFlight
from jaxlite.runtime.collector import collection_paused
from jaxlite.transforms import api_util as _api_util
from jaxlite.transforms import cache_misses
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.placement import constraint_mesh, on_device, place_jit_outputs
from jaxlite.runtime.spmd_call import SpmdCall, flat_out_shardings, spmd_call, spmd_mesh
from jaxlite.runtime import environment
from jaxlite.runtime.device import device_put
from jaxlite.backends.base import Client, Device
from jaxlite.backends.registry import get_backend
from jaxlite.config import config
from jaxlite.core.avals import ShapedArray, is_array_like
from jaxlite.core.sharding_rules import jit_key
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.leaks import defined_at
from jaxlite.core.trace import EvalTrace, Tracer, current_trace
from jaxlite.core.traceback_filter import filter_traceback
from jaxlite.interpreters.lowering import lower_jaxpr
from jaxlite.interpreters.named_axes import axis_env
from jaxlite.interpreters.staging import DebugInfo, hoist_tracer_consts, trace_to_jaxpr
from jaxlite.lax.higher_order import jit_p
from jaxlite.transforms.stages import Lowered, Traced, Wrapped
from jaxlite.transforms.tracing import ShapeDtypeStruct
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_leaves, tree_unflatten
from jaxlite.xla import compile_progress


@dataclass
class _Traced:
    """A traced function: its jaxpr, the tracers it closes over (passed as its leading
    inputs), and its output tree."""

    jaxpr: ClosedJaxpr
    consts: list[Any]
    out_tree: PyTreeDef
    in_tree: PyTreeDef
    donated_invars: tuple[int, ...] = ()
    names: tuple[str, ...] = ()


# Every jitted function still alive, so that `clear_caches` can empty their caches.
# Options a jit call reads every time, read through their variables (see `config.reader`).
_DISABLE_JIT = config.reader("jax_disable_jit")
_SPMD_PARTITIONER = config.reader("jaxlite_spmd_partitioner")
_TRACE_CONTEXT = config.trace_context

LIVE_JIT_FUNCTIONS: "weakref.WeakSet[PjitFunction]" = weakref.WeakSet()

# The most signatures one jitted function keeps traced and compiled (least recently used
# dropped beyond it, and traced again when called again). JAX bounds its jit caches too
# (8192 compiled entries shared by all functions); a function's caches live and die with it,
# and so do the executables only they hold.
MAX_SIGNATURES = 1024
# All functions together keep at most 8192 traces and 8192 call plans, the oldest dropped
# first (hits record nothing: recording costs the calls 15%; a dropped signature that is
# still in use is traced again once).
ALL_TRACES = SharedBudget(8192)
ALL_PLANS = SharedBudget(8192)

# Traces in progress, by (function, signature): threads calling a function with a signature
# another thread is tracing wait for that trace (see `call_cache.SingleFlight`; tracing runs
# user code, which may block on the waiter: a trace stuck for 2 s is not waited for).
_TRACING = SingleFlight(stall_seconds=2.0)


class PjitFunction(Wrapped):
    """The callable that `jit` returns (mirrors JAX's jitted function object, whose type
    is named `PjitFunction`: chex's `is_traceable` recognizes jitted functions by it)."""

    def __init__(self, fun: Callable[..., Any], static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...], donate_argnums: tuple[int, ...],
                 donate_argnames: tuple[str, ...] = (), device: Device | None = None,
                 backend: str | None = None, in_shardings: Any = None,
                 out_shardings: Any = None) -> None:
        functools.update_wrapper(self, fun)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._fun = fun
        self._static_argnums = static_argnums
        self._static_argnames = static_argnames
        self._donate_argnums = donate_argnums
        self._donate_argnames = donate_argnames
        self._device = device
        self._backend = backend
        self._cache: LRUCache = LRUCache(MAX_SIGNATURES)  # signature -> _Traced
        # Calls whose arguments are all Arrays, passed by position, skip flattening and the
        # caches above: (client, x64 flag, then shape, dtype, weak type of each argument)
        # -> the compiled call and the output tree, as the general path found them.
        self._plans: LRUCache = LRUCache(MAX_SIGNATURES)
        self._plain = not static_argnums and not static_argnames and \
            in_shardings is None and out_shardings is None
        LIVE_JIT_FUNCTIONS.add(self)

    def _client(self) -> Client:
        """The backend to compile for: the jit's device's, its named backend, or the
        default one."""
        if self._device is not None:
            return self._device.client
        return get_backend(self._backend)

    def _static_indices(self, num_args: int) -> set[int]:
        # Negative numbers the signature could not resolve (a `*args` function) count from
        # the end of this call's positional arguments.
        return {n % num_args if n < 0 else n for n in self._static_argnums} if num_args \
            else set()

    def _split(self, args: tuple, kwargs: dict) -> tuple[list, dict, tuple]:
        """Separate static arguments (part of the cache key) from dynamic ones."""
        statics = []
        dynamic_args = []
        static_indices = self._static_indices(len(args))
        for i, arg in enumerate(args):
            if i in static_indices:
                statics.append((i, _hashable_static(arg, f"argument {i}")))
            else:
                dynamic_args.append(arg)
        dynamic_kwargs = {}
        for key, value in kwargs.items():
            if key in self._static_argnames:
                statics.append((key, _hashable_static(value, f"argument '{key}'")))
            else:
                dynamic_kwargs[key] = value
        return dynamic_args, dynamic_kwargs, tuple(statics)

    def _rebuild(self, dynamic_args: Sequence[Any], dynamic_kwargs: dict,
                 statics: tuple) -> tuple[list, dict]:
        args = list(dynamic_args)
        kwargs = dict(dynamic_kwargs)
        for key, wrapped in statics:
            if isinstance(key, int):
                args.insert(key, wrapped.value)
            else:
                kwargs[key] = wrapped.value
        return args, kwargs

    def _trace(self, args: tuple, kwargs: dict, abstract: bool = False
               ) -> tuple[_Traced, list[Any]]:
        """The trace of this signature; `abstract` (trace, lower, export) also accepts
        `ShapeDtypeStruct`s standing for arguments."""
        dynamic_args, dynamic_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((tuple(dynamic_args), dynamic_kwargs))
        if not all(is_array_like(x) or (abstract and isinstance(x, ShapeDtypeStruct))
                   for x in leaves):
            # Naming the arguments reads the signature: only worth it for an error or a miss.
            _api_util.check_array_leaves(leaves, self._leaf_names(args, dynamic_kwargs),
                                         f"jit of {self.__name__}")
        try:
            avals = tuple(_api_util.abstractify(x) for x in leaves)
        except TypeError as error:
            raise _api_util.abstract_argument_error(
                error, self._fun, leaves, self._leaf_names(args, dynamic_kwargs)) from None
        # The named axes in scope decide how collectives trace (all_gather's shape).
        key = (in_tree, avals, statics, config.trace_context(), axis_env(), jit_key(avals))
        traced = self._cache.lookup(key)
        if traced is None:
            def trace() -> _Traced:
                # Another thread may have finished this signature since the lookup.
                return self._cache.lookup(key) or self._trace_and_keep(
                    key, args, dynamic_kwargs, in_tree, avals, statics)
            traced = _TRACING.run((id(self), key), trace, _without_tracers)
        return traced, leaves

    def _trace_and_keep(self, key: Any, args: tuple, dynamic_kwargs: dict,
                        in_tree: PyTreeDef, avals: tuple[ShapedArray, ...],
                        statics: tuple) -> _Traced:
        """Trace a new signature; keep it unless it holds an outer transformation's
        tracers (which belong to that one call)."""
        names = self._leaf_names(args, dynamic_kwargs)
        explaining = cache_misses.enabled()
        if explaining:
            self._explain_miss(key, names)
        program = f"jit({_api_util.function_name(self._fun)})"
        # (tracing makes short-lived objects in bursts too)
        with collection_paused(), compile_progress.phase("tracing", program):
            traced = self._trace_new(in_tree, avals, statics, names)
        traced.donated_invars = tuple(len(traced.consts) + i for i in
                                      self._donated_leaves(args, dynamic_kwargs))
        if _without_tracers(traced):
            self._cache[key] = traced
            ALL_TRACES.use(self._cache, key)
        if explaining:
            cache_misses.remember(self, self._fun, key, names)
        return traced

    def _explain_miss(self, key: Any, names: list[str]) -> None:
        """Log why this call traces (`jax_explain_cache_misses`)."""
        cached = [(k, t.names) for k, t in list(self._cache.items())]
        cache_misses.explain(self, self._fun, key, names, cached)

    def _donated_leaves(self, args: tuple, dynamic_kwargs: dict) -> list[int]:
        """Positions among the leaves of the arguments that `donate_argnums` /
        `donate_argnames` give up (static arguments are never donated)."""
        static_indices = self._static_indices(len(args))
        donated = {n % len(args) if n < 0 else n for n in self._donate_argnums} if args \
            else set()
        positions: list[int] = []
        start = 0
        for i, arg in enumerate(args):
            if i in static_indices:
                continue
            count = len(tree_leaves(arg))
            if i in donated:
                positions.extend(range(start, start + count))
            start += count
        for key in sorted(dynamic_kwargs):  # the order in which dicts flatten
            count = len(tree_leaves(dynamic_kwargs[key]))
            if key in self._donate_argnames:
                positions.extend(range(start, start + count))
            start += count
        return positions

    def _leaf_names(self, args: tuple, dynamic_kwargs: dict) -> list[str]:
        names = _api_util.parameter_names(self._fun, len(args))
        static_indices = self._static_indices(len(args))
        dynamic = [(a, n) for i, (a, n) in enumerate(zip(args, names))
                   if i not in static_indices]
        return _api_util.leaf_names([a for a, _ in dynamic], [n for _, n in dynamic],
                                    dynamic_kwargs)

    def _trace_new(self, in_tree: PyTreeDef, avals: tuple[ShapedArray, ...], statics: tuple,
                   names: list[str]) -> _Traced:
        out_trees: list[PyTreeDef] = []

        def flat_fun(*leaves: Any) -> list[Any]:
            dynamic_args, dynamic_kwargs = tree_unflatten(in_tree, leaves)
            args, kwargs = self._rebuild(dynamic_args, dynamic_kwargs, statics)
            out_leaves, out_tree = tree_flatten(self._fun(*args, **kwargs))
            if not all(map(is_array_like, out_leaves)):
                _api_util.check_output_leaves(out_leaves, self._fun, "jit")
            out_trees.append(out_tree)
            return out_leaves
        debug = DebugInfo("jit", _api_util.function_name(self._fun), tuple(names),
                          defined_at(self._fun))
        try:
            closed = trace_to_jaxpr(flat_fun, avals, debug)
        except RecursionError as error:
            said = _api_util.recursion_error(error, self._fun)
            if said is error:  # a nested jit said it already
                raise
            raise said from error  # (the cause keeps the frames of a recursive function)
        closed, consts = hoist_tracer_consts(closed)
        return _Traced(closed, consts, out_trees[0], in_tree, names=tuple(names))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (a try costs nothing until something raises: the call path stays as lean)
        try:
            if _DISABLE_JIT():
                return self._fun(*args, **kwargs)
            key = None
            if self._plain and type(current_trace()) is EvalTrace:
                client = self._client()
                key = None if kwargs else _plan_key(client, args)
                if key is not None:
                    plan = self._plans.lookup(key)
                    if plan is not None:
                        return plan[1](plan[0](args))
                else:
                    # Pytrees of Arrays: the plan is found by the tree and the leaves.
                    leaves, in_tree = tree_flatten((args, kwargs))
                    key = _plan_key(client, leaves, in_tree)
                    plan = self._plans.lookup(key) if key is not None else None
                    if plan is not None:
                        return plan[1](plan[0](leaves))
            if self._in_shardings is not None:
                args = self._placed_arguments(args)
            traced, leaves = self._trace(args, kwargs)
            name = _api_util.function_name(self._fun)
            if _runs_eagerly(traced.consts, leaves):
                spmd = self._partitioned(traced, leaves, name)
                if spmd is not None:
                    run = compiled = spmd
                else:
                    compiled = dispatch.compiled_call(traced.jaxpr, name, self._client(),
                                                      traced.donated_invars)
                    run = _placing(compiled, traced.jaxpr, name, self._device)
                outs = run(leaves)
                if key is not None and not traced.consts:
                    placed = self._device is not None or any(
                        type(x) is ArrayImpl and x._sharding is not None for x in leaves) \
                        or constraint_mesh(traced.jaxpr.jaxpr) is not None
                    run = run if placed else compiled
                    self._plans[key] = (run, _rebuilder(traced.out_tree))
                    ALL_PLANS.use(self._plans, key)
            else:
                outs = jit_p.bind(*traced.consts, *leaves, jaxpr=traced.jaxpr, name=name)
            result = tree_unflatten(traced.out_tree, outs)
            if self._out_shardings is not None:
                # The results computed whole, then split as out_shardings says.
                result = device_put(result, self._out_shardings)
            return result
        except Exception as error:
            filter_traceback(error)  # the user's frames only (JAX's traceback filtering)
            raise

    def _partitioned(self, traced: _Traced, leaves: Sequence[Any], name: str
                     ) -> SpmdCall | None:
        """The per-device program of a call whose arguments are placed on a mesh of several
        devices (see `runtime.spmd_call`), or None: the call then computes global values."""
        if self._device is not None or traced.donated_invars or \
                not _SPMD_PARTITIONER():
            return None
        mesh = spmd_mesh(traced.jaxpr, leaves)
        if mesh is None:
            return None
        return spmd_call(traced.jaxpr, name, self._client(), mesh, leaves,
                         flat_out_shardings(self._out_shardings, traced.out_tree))

    def _placed_arguments(self, args: tuple) -> tuple:
        """The positional arguments with the dynamic ones put where in_shardings (a prefix
        of them, static ones left out) says, as device_put puts them: the results are then
        placed from there (see `runtime.placement`)."""
        statics = self._static_indices(len(args))
        dynamic = tuple(a for i, a in enumerate(args) if i not in statics)
        shardings = self._in_shardings
        if isinstance(shardings, (list, tuple)) and len(shardings) != len(dynamic):
            raise ValueError(f"jit of {self.__name__}: in_shardings has {len(shardings)} "
                             f"entries for {len(dynamic)} positional (non-static) arguments.")
        placed = device_put(dynamic, tuple(shardings) if isinstance(shardings, list)
                            else shardings)
        for given, put in zip(tree_leaves(dynamic), tree_leaves(placed)):
            if type(given) is ArrayImpl and given._sharding is not None and \
                    not given._sharding.is_equivalent_to(put._sharding, given.ndim):
                raise ValueError(
                    "Sharding passed to jit does not match the sharding on the respective "
                    f"arg. Got jit sharding: {put._sharding},\narg sharding: "
                    f"{given._sharding} for arg type: {given.dtype.name}"
                    f"[{','.join(map(str, given.shape))}]")
        placed_at = iter(placed)
        return tuple(a if i in statics else next(placed_at) for i, a in enumerate(args))

    def trace(self, *args: Any, **kwargs: Any) -> "Traced":
        """Trace without running (mirrors `jax.jit(f).trace`)."""
        traced, leaves = self._trace(args, kwargs, abstract=True)
        return Traced(traced.jaxpr, traced.out_tree,
                      functools.partial(self._lower_traced, traced, leaves))

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        """Trace and lower to HLO for these arguments' signature (mirrors
        `jax.jit(f).lower`); `.compile()` on the result compiles it."""
        traced, leaves = self._trace(args, kwargs, abstract=True)
        return self._lower_traced(traced, leaves)

    def _lower_traced(self, traced: _Traced, leaves: Sequence[Any] = ()) -> "Lowered":
        if traced.consts:
            raise TypeError(f"lower: {self.__name__} closes over values traced by an outer "
                            "transformation; ahead-of-time lowering needs a function of its "
                            "arguments only. Pass those values as arguments.")
        name = _api_util.function_name(self._fun)
        start = time.perf_counter()
        with collection_paused(), compile_progress.phase("lowering", f"jit({name})"):
            lowered = lower_jaxpr(traced.jaxpr, dispatch.module_name(name), f"jit({name})")
        # Arguments placed over a mesh: `compile()` partitions the program per device.
        partitioned = functools.partial(self._partitioned, traced, leaves, name)
        return Lowered(lowered, traced, name, self._client(), self._donate_argnums,
                       time.perf_counter() - start, partitioned)

    def _cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._plans.clear()
        cache_misses.forget(self, self._fun)

    def __repr__(self) -> str:
        # JAX's text for a jitted function.
        return f"<PjitFunction of {self._fun!r}>"

    @property
    def __signature__(self) -> inspect.Signature:
        # JAX's jitted functions report the wrapped function's signature, so that
        # `inspect.signature(f, follow_wrapped=False)` works (chex's fake_pmap asks so);
        # without it inspect takes this object, which has `__get__`, for a builtin.
        # Kept once found: inspect asks a wrapper's `__signature__` more than once per
        # level, so nested jits recomputing it took time exponential in the depth.
        known = self.__dict__.get("_signature")
        if known is None:
            known = self.__dict__["_signature"] = inspect.signature(self._fun)
        return known

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # Decorated methods bind `self` like plain functions do.
        return self if obj is None else functools.partial(self, obj)


def _plan_key(client: Client, leaves: Sequence[Any],
              in_tree: PyTreeDef | None = None) -> tuple | None:
    """The key of a call plan: the client, the options that change tracing, the input
    tree (None for positional Arrays, each one leaf), and each leaf's shape, dtype, weak
    type and placement (None unless committed), when every leaf is an Array; else None."""
    key: list[Any] = [client, _TRACE_CONTEXT(), in_tree]
    for a in leaves:
        if type(a) is not ArrayImpl:
            return None
        value = a._value
        key += (value.shape, value.dtype, a.weak_type, a._sharding)
    return tuple(key)


def _placing(compiled: Callable[[Sequence[Any]], list], jaxpr: ClosedJaxpr,
             name: str, device: Device | None) -> Callable[[Sequence[Any]], list]:
    """The compiled call with its results placed: from the arguments' placements, or on
    jit's `device` (committed there, as JAX's)."""
    def call(leaves: Sequence[Any]) -> list:
        outs = place_jit_outputs(jaxpr, leaves, compiled(leaves), name)
        return outs if device is None else on_device(outs, device)
    return call


def _rebuilder(out_tree: PyTreeDef) -> Callable[[list], Any]:
    """The function that makes a call's result from its output leaves: the one leaf
    itself for a function returning one array (the common case, without unflattening)."""
    if out_tree.num_leaves == 1 and out_tree.num_nodes == 1:
        return operator.itemgetter(0)
    return out_tree.unflatten


def _without_tracers(traced: _Traced) -> bool:
    """Whether a trace may be kept and shared: it closes over no tracer of an outer
    transformation (those belong to one call, on one thread)."""
    return not any(isinstance(c, Tracer) for c in traced.consts)


def _runs_eagerly(consts: Sequence[Any], leaves: Sequence[Any]) -> bool:
    """Whether a call runs now on concrete values, rather than being traced."""
    return isinstance(current_trace(), EvalTrace) and not any(
        isinstance(x, Tracer) for x in (*consts, *leaves))


@dataclass(frozen=True)
class _Static:
    """A static argument compared by equality and hash, as the cache key needs."""

    value: Any

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Static) and type(self.value) is type(other.value) \
            and bool(self.value == other.value)


def _hashable_static(value: Any, what: str) -> _Static:
    try:
        hash(value)
    except TypeError as error:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(value)}, {value!r}, passed as {what}. The error "
            f"was: {error}. Pass a hashable value (a tuple instead of a list), or do not mark "
            "the argument static.") from None
    return _Static(value)


def clear_caches() -> None:
    """Forget every traced and compiled program, so the next calls trace and compile again
    (mirrors `jax.clear_caches`)."""
    environment.clear_caches(LIVE_JIT_FUNCTIONS)


def _static_positions(fun: Callable[..., Any], static_argnums: Any,
                      static_argnames: Any) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Complete static_argnums from static_argnames and back, as `jax.jit` does."""
    nums = () if static_argnums is None else (
        (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums))
    names = () if static_argnames is None else (
        (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames))
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return tuple(n for n in nums), names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    fixed_arity = not any(p.kind == p.VAR_POSITIONAL for p in params)
    _check_argnums_in_range(nums, len(positional), fixed_arity, "static_argnums")
    takes_any_keyword = any(p.kind == p.VAR_KEYWORD for p in params)
    known = {p.name for p in params if p.kind != p.POSITIONAL_ONLY}
    invalid = set(names) - known
    if invalid and not takes_any_keyword:
        raise ValueError(f"Jitted function has invalid argnames {invalid} in static_argnames. "
                         f"Function {_api_util.function_name(fun)} does not take these args.")
    nums = tuple(n % len(positional) if n < 0 and positional and fixed_arity else n
                 for n in nums)
    all_nums = set(nums) | {positional.index(n) for n in names if n in positional}
    all_names = set(names) | {positional[n] for n in nums if 0 <= n < len(positional)}
    return tuple(sorted(all_nums)), tuple(sorted(all_names))


def jit(fun: Callable[..., Any] | None = None, /, *, in_shardings: Any = None,
        out_shardings: Any = None, static_argnums: Any = None, static_argnames: Any = None,
        donate_argnums: Any = None, donate_argnames: Any = None, keep_unused: bool = False,
        device: Any = None, backend: Any = None, inline: bool = False,
        compiler_options: dict[str, Any] | None = None) -> Any:
    """Compile `fun` for each abstract signature of its arguments (mirrors `jax.jit`).

    Parameters
    ----------
    fun : the function to compile; its array arguments may be pytrees.
    static_argnums, static_argnames : arguments treated as compile-time constants; they must
        be hashable, and each distinct value traces anew.
    donate_argnums, donate_argnames : arguments whose buffers the call gives up: a result
        of the same shape and dtype may be written into a donated Array's memory, and the
        Array is deleted by the call (later uses raise `RuntimeError`). Donated arguments
        no result matches are kept, with a warning.
    device, backend : where to compile and run (a `Device`, or a backend name); the default
        backend when both are None.
    in_shardings, out_shardings : placements of the positional arguments and of the results
        (a Sharding, a PartitionSpec over the current mesh, or a pytree prefix of them); on
        jaxlite's single device they are checked, and the results carry out_shardings.
    compiler_options : XLA flags; accepted, and none changes what jaxlite computes.

    Returns
    -------
    A callable with the same signature; `.trace(*args)` gives the traced jaxpr,
    `.lower(*args)` the `Lowered` HLO, and `.lower(*args).compile()` the `Compiled` program.

    Differences from JAX: a donated Array whose memory something else holds (a numpy
    view, another Array) is copied for the call, not refused; the same Array given to a
    donated and another parameter raises JAX's `JaxRuntimeError`, as in JAX.
    `keep_unused` and `inline` are accepted and ignored.
    """
    if fun is None:
        return functools.partial(jit, in_shardings=in_shardings, out_shardings=out_shardings,
                                 static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, keep_unused=keep_unused,
                                 device=device, backend=backend, inline=inline,
                                 compiler_options=compiler_options)
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {fun!r} of type {type(fun).__name__}")
    if device is not None and backend is not None:
        raise ValueError("jit: pass either device or backend, not both.")
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"jit: device must be a jaxlite Device (from jaxlite.devices()), got "
                        f"{device!r}.")
    nums, names = _static_positions(fun, static_argnums, static_argnames)
    donated, donated_names = _donate_positions(fun, donate_argnums, donate_argnames)
    if (in_shardings is not None or out_shardings is not None) and (
            device is not None or backend is not None):
        raise ValueError("jit: pass in_shardings/out_shardings or device/backend, not both.")
    return PjitFunction(fun, nums, names, donated, donated_names, device, backend,
                        in_shardings, out_shardings)


def _donate_positions(fun: Callable[..., Any], donate_argnums: Any,
                      donate_argnames: Any) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Complete donate_argnums from donate_argnames and back (through the signature)."""
    nums = () if donate_argnums is None else (
        (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums))
    names = () if donate_argnames is None else (
        (donate_argnames,) if isinstance(donate_argnames, str) else tuple(donate_argnames))
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    _check_argnums_in_range(nums, len(positional),
                            not any(p.kind == p.VAR_POSITIONAL for p in params),
                            "donate_argnums")
    all_nums = set(nums) | {positional.index(n) for n in names if n in positional}
    all_names = set(names) | {positional[n] for n in nums if 0 <= n < len(positional)}
    return tuple(sorted(all_nums)), tuple(sorted(all_names))


def _check_argnums_in_range(nums: tuple[int, ...], num_positional: int, fixed_arity: bool,
                            label: str) -> None:
    """JAX's ValueError, raised by `jit` itself, for an argnum beyond a fixed arity."""
    if fixed_arity and any(not -num_positional <= n < num_positional for n in nums):
        raise ValueError(f"Jitted function has {label}={nums}, but only accepts "
                         f"{num_positional} positional arguments.")
