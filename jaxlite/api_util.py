"""`jax.api_util`: helpers for writing transformations over pytrees and `WrappedFun`s
(mirrors JAX's public `jax.api_util`)."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, Sequence

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.linear_util import (DebugInfo, Store, WrappedFun, initial_result_paths,
                                      transformation2, transformation_with_aux2)
from jaxlite.transforms import api_util as _internal
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten

__all__ = ["argnums_partial", "debug_info", "donation_vector", "flatten_axes", "flatten_fun",
           "flatten_fun_nokwargs", "rebase_donate_argnums", "safe_map", "shaped_abstractify"]


def _flatten_fun(f: Callable[..., Any], store: Store, in_tree: PyTreeDef,
                 *args_flat: Any) -> list[Any]:
    args, kwargs = tree_unflatten(in_tree, args_flat)
    out, out_tree = tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return out


def _flatten_fun_nokwargs(f: Callable[..., Any], store: Store, in_tree: PyTreeDef,
                          *args_flat: Any) -> list[Any]:
    out, out_tree = tree_flatten(f(*tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return out


def flatten_fun(fun: WrappedFun, *gen_static_args: Any, use_eq_store: bool = False,
                unk_names: bool = False) -> tuple[WrappedFun, Callable[[], Any]]:
    """`flatten_fun(fun, in_tree)`: `fun(*args, **kwargs)` as a function of the leaves of
    `(args, kwargs)` (structure `in_tree`) returning the output's leaves; the thunk gives the
    output's structure (mirrors `jax.api_util.flatten_fun`)."""
    return transformation_with_aux2(_flatten_fun, fun, *gen_static_args,
                                    use_eq_store=use_eq_store, unk_names=unk_names)


def flatten_fun_nokwargs(fun: WrappedFun, *gen_static_args: Any, use_eq_store: bool = False,
                         unk_names: bool = False) -> tuple[WrappedFun, Callable[[], Any]]:
    """`flatten_fun_nokwargs(fun, in_tree)`: `flatten_fun` for a function of positional
    arguments (`in_tree` is the arguments')."""
    return transformation_with_aux2(_flatten_fun_nokwargs, fun, *gen_static_args,
                                    use_eq_store=use_eq_store, unk_names=unk_names)


def _argnums_partial(f: Callable[..., Any], dyn_argnums: tuple[int, ...], fixed: tuple,
                     *dyn_args: Any, **kwargs: Any) -> Any:
    args, given, kept = [], iter(dyn_args), iter(fixed)
    for i in range(len(dyn_argnums) + len(fixed)):
        args.append(next(given) if i in dyn_argnums else next(kept).value)
    return f(*args, **kwargs)


class _Fixed:
    """A fixed argument, hashed by value when it can be (JAX keys caches on them)."""

    def __init__(self, value: Any, hashable: bool) -> None:
        self.value, self.hashable = value, hashable

    def __hash__(self) -> int:
        return hash((type(self.value), self.value)) if self.hashable else id(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Fixed):
            return False
        if self.hashable and other.hashable:
            return type(self.value) is type(other.value) and bool(self.value == other.value)
        return self is other


def argnums_partial(f: WrappedFun, dyn_argnums: int | Sequence[int], args: Sequence[Any],
                    require_static_args_hashable: bool = True) -> tuple[WrappedFun, tuple]:
    """`f` as a function of the arguments at `dyn_argnums` only, the others fixed to their
    values in `args`; returns it and those dynamic arguments (JAX's)."""
    nums = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    nums = tuple(n % len(args) if -len(args) <= n < len(args) else n for n in nums)
    fixed = []
    for i, arg in enumerate(args):
        if i in nums:
            continue
        if require_static_args_hashable:
            try:
                hash(arg)
            except TypeError:
                raise ValueError(
                    "Non-hashable static arguments are not supported. An error occurred "
                    f"while trying to hash an object of type {type(arg)}, {arg}.") from None
        fixed.append(_Fixed(arg, require_static_args_hashable))
    return (transformation2(_argnums_partial, f, nums, tuple(fixed)),
            tuple(args[i] for i in nums))


def donation_vector(donate_argnums: Iterable[int], donate_argnames: Iterable[str],
                    in_tree: PyTreeDef, kws: bool = True) -> tuple[bool, ...]:
    """One bool per leaf of `in_tree` (the tree of `(args, kwargs)`, or of `args` without
    `kws`): whether the leaf belongs to a donated argument (mirrors JAX's)."""
    donate_argnums, donate_argnames = set(donate_argnums), set(donate_argnames)
    value = tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
    args, kwargs = value if kws else (value, {})
    flags: list[bool] = []
    for i, arg in enumerate(args):
        flags += [i in donate_argnums] * len(tree_flatten(arg)[0])
    for name in sorted(kwargs):
        flags += [name in donate_argnames] * len(tree_flatten(kwargs[name])[0])
    return tuple(flags)


def rebase_donate_argnums(donate_argnums: Iterable[int], static_argnums: Iterable[int]
                          ) -> tuple[int, ...]:
    """Donated argument numbers counted without the static arguments (JAX's)."""
    static = sorted(set(static_argnums))
    donated = sorted(set(donate_argnums) - set(static))
    return tuple(i - sum(1 for s in static if s < i) for i in donated)


def flatten_axes(name: str, treedef: PyTreeDef, axis_tree: Any, *, kws: bool = False,
                 tupled_args: bool = False) -> list[Any]:
    """`axis_tree`, a prefix of the structure `treedef` (None leaves allowed), broadcast to
    one entry per leaf of `treedef` (mirrors `jax.api_util.flatten_axes`)."""
    full = tree_unflatten(treedef, list(range(treedef.num_leaves)))
    try:
        spread = tree_map(lambda axis, sub: [(i, axis) for i in tree_flatten(sub)[0]],
                          axis_tree, full, is_leaf=lambda x: x is None)
    except (ValueError, TypeError):
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                         f"value, got specification {axis_tree} for value tree "
                         f"{treedef}.") from None
    pairs = [p for group in tree_flatten(spread, is_leaf=lambda x: isinstance(x, list))[0]
             for p in group]
    return [axis for _, axis in sorted(pairs, key=lambda p: p[0])]


def shaped_abstractify(x: Any) -> ShapedArray:
    """The abstract value of an array-like (mirrors `jax.api_util.shaped_abstractify`)."""
    return get_aval(x)


def safe_map(f: Callable[..., Any], *args: Sequence[Any]) -> list[Any]:
    """`map` that insists on equal lengths and returns a list (JAX's)."""
    lists = [list(a) for a in args]
    for other in lists[1:]:
        if len(other) != len(lists[0]):
            raise ValueError(f"length mismatch: {[len(a) for a in lists]}")
    return list(map(f, *lists))


def _source_info(fun: Callable[..., Any]) -> str:
    while hasattr(fun, "func"):  # functools.partial
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", None)
    if code is None or name is None:
        return "<unknown>" if name is None else name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def debug_info(traced_for: str, fun: Callable[..., Any], args: Sequence[Any],
               kwargs: dict[str, Any], *, static_argnums: Sequence[int] = (),
               static_argnames: Sequence[str] = (),
               result_paths_thunk: Any = initial_result_paths, sourceinfo: str | None = None,
               signature: inspect.Signature | None = None) -> DebugInfo:
    """What a traced function is: the API, its name and place, its non-static arguments'
    names (mirrors `jax.api_util.debug_info`)."""
    known = getattr(fun, "__fun_debug_info__", None)
    if known is not None:
        return known
    dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
    params = [n for i, n in enumerate(_internal.parameter_names(fun, len(args)))
              if i not in static_argnums]
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
    names = tuple(_internal.leaf_names(dynamic, params, dyn_kwargs))
    return DebugInfo(traced_for, sourceinfo or _source_info(fun), names, result_paths_thunk)

