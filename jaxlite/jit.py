"""`jaxlite.jit`: trace once per abstract signature, then run the cached program.

Mirrors `jax.jit`. A call flattens its arguments, abstracts them (shape, dtype, weak type),
and looks the signature up in the function's cache; on a miss it traces the function to a
jaxpr. The call itself is the `jit` primitive applied to the leaves, so that `jit` inside
other transformations (grad, vmap, an outer jit) is just one more equation.
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from jaxlite import _api_util
from jaxlite.config import config
from jaxlite.core.avals import ShapedArray
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.trace import Tracer
from jaxlite.interpreters.staging import DebugInfo, hoist_tracer_consts, trace_to_jaxpr
from jaxlite.lax.higher_order import jit_p
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_unflatten


@dataclass
class _Traced:
    """A traced function: its jaxpr, the tracers it closes over (passed as its leading
    inputs), and its output tree."""

    jaxpr: ClosedJaxpr
    consts: list[Any]
    out_tree: PyTreeDef


class JitFunction:
    """The callable that `jit` returns (mirrors JAX's jitted function object)."""

    def __init__(self, fun: Callable[..., Any], static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...], donate_argnums: tuple[int, ...]) -> None:
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static_argnums = static_argnums
        self._static_argnames = static_argnames
        self._donate_argnums = donate_argnums
        self._cache: dict[Any, _Traced] = {}

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

    def _trace(self, args: tuple, kwargs: dict) -> tuple[_Traced, list[Any]]:
        dynamic_args, dynamic_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((tuple(dynamic_args), dynamic_kwargs))
        names = self._leaf_names(args, dynamic_kwargs)
        _api_util.check_array_leaves(leaves, names, f"jit of {self.__name__}")
        avals = tuple(_api_util.abstractify(x) for x in leaves)
        key = (in_tree, avals, statics, config.read("jax_enable_x64"))
        traced = self._cache.get(key)
        if traced is None:
            traced = self._trace_new(in_tree, avals, statics, names)
            if not any(isinstance(c, Tracer) for c in traced.consts):
                self._cache[key] = traced
        return traced, leaves

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
            out_trees.append(out_tree)
            return out_leaves
        debug = DebugInfo("jit", _api_util.function_name(self._fun), tuple(names))
        closed = trace_to_jaxpr(flat_fun, avals, debug)
        closed, consts = hoist_tracer_consts(closed)
        return _Traced(closed, consts, out_trees[0])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if config.read("jax_disable_jit"):
            return self._fun(*args, **kwargs)
        traced, leaves = self._trace(args, kwargs)
        outs = jit_p.bind(*traced.consts, *leaves, jaxpr=traced.jaxpr,
                          name=_api_util.function_name(self._fun))
        return tree_unflatten(traced.out_tree, outs)

    def trace(self, *args: Any, **kwargs: Any) -> "Traced":
        """Trace without running (mirrors `jax.jit(f).trace`)."""
        traced, _ = self._trace(args, kwargs)
        return Traced(traced.jaxpr, traced.out_tree)

    def _cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # Decorated methods bind `self` like plain functions do.
        return self if obj is None else functools.partial(self, obj)


@dataclass
class Traced:
    """The result of `jit(f).trace(...)`: the jaxpr and the output structure."""

    jaxpr: ClosedJaxpr
    out_tree: PyTreeDef


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


def jit(fun: Callable[..., Any] | None = None, *, static_argnums: Any = None,
        static_argnames: Any = None, donate_argnums: Any = None, donate_argnames: Any = None,
        keep_unused: bool = False, device: Any = None, backend: Any = None,
        inline: bool = False) -> Any:
    """Compile `fun` for each abstract signature of its arguments (mirrors `jax.jit`).

    Parameters
    ----------
    fun : the function to compile; its array arguments may be pytrees.
    static_argnums, static_argnames : arguments treated as compile-time constants; they must
        be hashable, and each distinct value traces anew.
    donate_argnums, donate_argnames : accepted for compatibility (buffers are not reused yet).

    Returns
    -------
    A callable with the same signature; `.trace(*args)` gives the traced jaxpr.

    Differences from JAX: until the compiler lands, the traced program runs eagerly.
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, keep_unused=keep_unused,
                                 device=device, backend=backend, inline=inline)
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {fun!r} of type {type(fun).__name__}")
    nums, names = _static_positions(fun, static_argnums, static_argnames)
    donated = () if donate_argnums is None else (
        (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums))
    return JitFunction(fun, nums, names, donated)
