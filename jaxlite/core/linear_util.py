"""Wrapped functions with stacked transformations (mirrors `jax.extend.linear_util`).

JAX's internal APIs, which libraries reach through `jax.extend.linear_util` and
`jax.api_util`, pass functions around as `WrappedFun`s: a function plus a stack of
transformations (each a callable taking the function below it first) and the stores in
which transformations leave auxiliary outputs, such as the output tree of `flatten_fun`.
A `WrappedFun` hashes by what it computes, so it can key caches (`cache`).
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Hashable, NamedTuple, Sequence


class StoreException(Exception):
    """A store was read while empty or written twice (mirrors JAX's)."""


_EMPTY = object()


class Store:
    """A box a transformation writes its auxiliary output into, once."""

    __slots__ = ("_val",)

    def __init__(self) -> None:
        self._val: Any = _EMPTY

    def store(self, val: Any) -> None:
        if self._val is not _EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self) -> None:
        self._val = _EMPTY

    @property
    def val(self) -> Any:
        if self._val is _EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not _EMPTY


class EqualStore(Store):
    """A store that may be written again with an equal value (a retraced function)."""

    __slots__ = ()

    def store(self, val: Any) -> None:
        if self._val is _EMPTY:
            self._val = val
            return
        try:
            same = bool(self._val == val)
        except Exception:
            same = False
        if not same:
            raise StoreException("Store occupied with not-equal value")


class InitialResultPaths:
    """The placeholder for result paths not known before tracing (JAX's)."""


initial_result_paths = InitialResultPaths()


class DebugInfo(NamedTuple):
    """What a traced function was (mirrors `jax.extend.core.DebugInfo`).

    traced_for : the API that traced it ("jit", "scan", ...).
    func_src_info : "name at file:line", or just the name; the first word is the name.
    arg_names : the names of the flattened non-static arguments, or None.
    result_paths : the paths of the flattened results, a thunk giving them, or None.
    """

    traced_for: str
    func_src_info: str
    arg_names: tuple[str, ...] | None
    result_paths: Any

    @property
    def func_name(self) -> str:
        return self.func_src_info.split(" ")[0]

    def resolve_result_paths(self) -> "DebugInfo":
        if callable(self.result_paths):
            return self._replace(result_paths=tuple(self.result_paths()))
        return self

    def replace_func_name(self, name: str) -> "DebugInfo":
        rest = self.func_src_info.split(" ")[1:]
        return self._replace(func_src_info=" ".join([name, *rest]))

    def safe_arg_names(self, expected_count: int) -> tuple[str, ...]:
        if self.arg_names is not None and len(self.arg_names) == expected_count:
            return self.arg_names
        return ("",) * expected_count

    def with_unknown_names(self) -> "DebugInfo":
        return self._replace(arg_names=None, result_paths=None)


def _name_of(f: Any) -> str:
    while isinstance(f, functools.partial):
        f = f.func
    return getattr(f, "__name__", None) or type(f).__name__


class WrappedFun:
    """A function `f` with the transformations to apply to it (mirrors JAX's).

    f : the function itself.
    f_transformed : `f` with every transformation applied; `call_wrapped` calls it.
    transforms : one `(transformation, static_args)` per transformation, newest first.
    stores : the auxiliary-output store of each transformation (or None).
    params : keyword arguments bound to `f`, as `(name, value)` pairs.
    """

    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type",
                 "debug_info")

    def __init__(self, f: Callable[..., Any], f_transformed: Callable[..., Any],
                 transforms: tuple, stores: tuple, params: tuple, in_type: Any,
                 debug_info: DebugInfo | None) -> None:
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self) -> str:
        return _name_of(self.f)

    def wrap(self, gen: Callable[..., Any], gen_static_args: tuple,
             out_store: Store | None) -> "WrappedFun":
        """Add a transformation: `gen(f_below, [store,] *static_args, *args)`."""
        extra = () if out_store is None else (out_store,)
        transformed = functools.partial(gen, self.f_transformed, *extra, *gen_static_args)
        return WrappedFun(self.f, transformed, ((gen, gen_static_args),) + self.transforms,
                          (out_store,) + self.stores, self.params, None, self.debug_info)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function with its transformations."""
        return self.f_transformed(*args, **kwargs)

    def populate_stores(self, stores: Sequence[Store | None]) -> None:
        """Copy the values of `stores` (of an earlier call) into this function's stores."""
        for mine, other in zip(self.stores, stores):
            if mine is not None:
                mine.store(other.val)

    def replace_debug_info(self, dbg: DebugInfo) -> "WrappedFun":
        return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores,
                          self.params, self.in_type, dbg)

    def with_unknown_names(self) -> "WrappedFun":
        dbg = self.debug_info
        return self if dbg is None else self.replace_debug_info(dbg.with_unknown_names())

    def __hash__(self) -> int:
        return hash((self.f, self.transforms, self.params, self.in_type))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, WrappedFun) and self.f == other.f
                and self.transforms == other.transforms and self.params == other.params
                and self.in_type == other.in_type)

    def __repr__(self) -> str:
        stack = "".join(f"{i}   : {_name_of(gen)}   {args}\n"
                        for i, (gen, args) in enumerate(self.transforms))
        return f"Wrapped function:\n{stack}Core: {_name_of(self.f)}\n"


def wrap_init(f: Callable[..., Any], params: dict[str, Any] | None = None, *,
              debug_info: DebugInfo | None = None) -> WrappedFun:
    """Wrap a Python function, with keyword arguments `params` bound (mirrors JAX's)."""
    bound = tuple(sorted((params or {}).items()))
    transformed = functools.partial(f, **params) if params else f
    return WrappedFun(f, transformed, (), (), bound, None, debug_info)


def transformation2(gen: Callable[..., Any], fun: WrappedFun | None = None,
                    *gen_static_args: Any) -> Any:
    """Stack `gen(f, *static_args, *args)` on `fun` (mirrors `linear_util.transformation2`;
    called with `gen` alone, it returns the transformation as a function of `fun`)."""
    if fun is None:
        return functools.partial(transformation2, gen)
    return fun.wrap(gen, gen_static_args, None)


def transformation_with_aux2(gen: Callable[..., Any], fun: WrappedFun | None = None,
                             *gen_static_args: Any, use_eq_store: bool = False,
                             unk_names: bool = False) -> Any:
    """Stack `gen(f, store, *static_args, *args)` on `fun`; returns the new function and a
    thunk that reads what `gen` put in the store (mirrors JAX's)."""
    if fun is None:
        return functools.partial(transformation_with_aux2, gen, use_eq_store=use_eq_store,
                                 unk_names=unk_names)
    store = EqualStore() if use_eq_store else Store()
    fun = fun.wrap(gen, gen_static_args, store)
    if unk_names:
        fun = fun.with_unknown_names()
    return fun, lambda: store.val


def _run_generator(gen: Callable[..., Any], f: Callable[..., Any], *args: Any,
                   **kwargs: Any) -> tuple[Any, Any]:
    # Old-style transformations are generators: they yield the arguments for the function
    # below, receive its result, and yield theirs.
    instance = gen(*args, **kwargs)
    call_args, call_kwargs = next(instance)
    return instance, instance.send(f(*call_args, **call_kwargs))


def transformation(gen: Callable[..., Any], fun: WrappedFun | None = None,
                   *gen_static_args: Any) -> Any:
    """Stack a generator-style transformation on `fun` (mirrors `linear_util.transformation`)."""
    if fun is None:
        return functools.partial(transformation, gen)

    def run(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return _run_generator(gen, f, *args, **kwargs)[1]
    run.__name__ = _name_of(gen)
    return transformation2(run, fun, *gen_static_args)


def transformation_with_aux(gen: Callable[..., Any], fun: WrappedFun | None = None,
                            *gen_static_args: Any) -> Any:
    """A generator-style transformation whose last yield is `(result, aux)`; returns the
    new function and a thunk for `aux` (mirrors `linear_util.transformation_with_aux`)."""
    if fun is None:
        return functools.partial(transformation_with_aux, gen)

    def run(f: Callable[..., Any], store: Store, *args: Any, **kwargs: Any) -> Any:
        ans, aux = _run_generator(gen, f, *args, **kwargs)[1]
        store.store(aux)
        return ans
    run.__name__ = _name_of(gen)
    return transformation_with_aux2(run, fun, *gen_static_args)


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """Of two store thunks exactly one of which is filled: (whether it is the first, its
    value) (mirrors `linear_util.merge_linear_aux`)."""
    try:
        first = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, first
    raise StoreException("both stores occupied")


def cache(call: Callable[..., Any], *, explain: Callable[..., None] | None = None
          ) -> Callable[..., Any]:
    """Memoize `call(fun: WrappedFun, *args)` on what `fun` computes and on `args`; a hit
    refills `fun`'s stores from the first call (mirrors `linear_util.cache`)."""
    caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def memoized(fun: WrappedFun, *args: Hashable) -> Any:
        table = caches.setdefault(fun.f, {})
        key = (fun.transforms, fun.params, fun.in_type, args)
        hit = table.get(key)
        if hit is not None:
            ans, stores = hit
            fun.populate_stores(stores)
            return ans
        ans = call(fun, *args)
        table[key] = (ans, fun.stores)
        return ans

    memoized.cache_clear = caches.clear  # type: ignore[attr-defined]
    memoized.evict_function = lambda f: caches.pop(f, None)  # type: ignore[attr-defined]
    return memoized
