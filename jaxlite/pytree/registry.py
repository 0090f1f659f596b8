"""Registering custom pytree node types, and `Partial` (the `register_*` part of `tree_util`).

Private to `jaxlite.tree_util`, which re-exports these names.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from typing import Any, Callable, Hashable, Iterable, Sequence, TypeVar

from jaxlite.pytree.paths import DictKey, GetAttrKey
from jaxlite.pytree.treedef import _sorted_keys, default_registry

Typ = TypeVar("Typ", bound=type)

_Flatten = Callable[[Any], tuple[Iterable[Any], Hashable]]
_FlattenWithKeys = Callable[[Any], tuple[Iterable[tuple[Any, Any]], Hashable]]
_Unflatten = Callable[[Any, Iterable[Any]], Any]


def register_pytree_node(nodetype: type, flatten_func: _Flatten, unflatten_func: _Unflatten,
                         flatten_with_keys_func: _FlattenWithKeys | None = None) -> None:
    """Make instances of `nodetype` pytree nodes (mirrors `jax.tree_util.register_pytree_node`).

    Parameters
    ----------
    nodetype : type
        The class to register; exact type match, subclasses are not covered.
    flatten_func : callable
        `flatten_func(x) -> (children, aux_data)`; `aux_data` must be hashable and comparable
        with `==`, since it becomes part of the treedef (and of `jit` cache keys).
    unflatten_func : callable
        `unflatten_func(aux_data, children) -> x`, children given as a tuple.
    flatten_with_keys_func : callable, optional
        `flatten_with_keys_func(x) -> (((key, child), ...), aux_data)`, for key paths;
        without it children are named `FlattenedIndexKey(i)`.

    Raises
    ------
    ValueError
        If `nodetype` is already registered (built-in containers included).
    """
    default_registry.register_node(nodetype, flatten_func, unflatten_func,
                                   flatten_with_keys_func)


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: register `cls` using its `tree_flatten` / `tree_unflatten` methods.

    Mirrors `jax.tree_util.register_pytree_node_class`. `tree_flatten(self)` returns
    `(children, aux_data)`; the classmethod `tree_unflatten(aux_data, children)` rebuilds.

    Returns
    -------
    type
        `cls`, unchanged.
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"),
                         cls.tree_unflatten)  # type: ignore[attr-defined]
    return cls


def register_pytree_with_keys(nodetype: type, flatten_with_keys: _FlattenWithKeys,
                              unflatten_func: _Unflatten,
                              flatten_func: _Flatten | None = None) -> None:
    """Register a node type whose flattening names its children with keys.

    Mirrors `jax.tree_util.register_pytree_with_keys`.

    Parameters
    ----------
    nodetype : type
        The class to register.
    flatten_with_keys : callable
        `flatten_with_keys(x) -> (((key, child), ...), aux_data)`.
    unflatten_func : callable
        `unflatten_func(aux_data, children) -> x`.
    flatten_func : callable, optional
        A faster `flatten_func(x) -> (children, aux_data)` giving the same children in the
        same order; derived from `flatten_with_keys` when omitted.
    """
    if flatten_func is None:
        def flatten_func(x: Any) -> tuple[list[Any], Hashable]:
            pairs, aux = flatten_with_keys(x)
            return [child for _, child in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: register `cls` through its `tree_flatten_with_keys` method.

    Mirrors `jax.tree_util.register_pytree_with_keys_class`. The class defines
    `tree_flatten_with_keys(self)`, the classmethod `tree_unflatten(aux_data, children)` and
    optionally `tree_flatten(self)`.

    Returns
    -------
    type
        `cls`, unchanged.
    """
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten)  # type: ignore[attr-defined]
    return cls


def register_dataclass(nodetype: Typ, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Typ:
    """Register a dataclass-like type by field names (mirrors `jax.tree_util.register_dataclass`).

    Usable as a bare class decorator on a dataclass: fields then default to data fields
    (children), and a field declared with `field(metadata=dict(static=True))` is a meta field
    (part of the treedef, so static under `jit`).

    Parameters
    ----------
    nodetype : type
        The class; rebuilt as `nodetype(**fields)`.
    data_fields : sequence of str, optional
        Attributes that are children. Required, with `meta_fields`, for a non-dataclass.
    meta_fields : sequence of str, optional
        Attributes stored as aux data; they must be hashable.
    drop_fields : sequence of str
        Dataclass `init` fields to leave out of the pytree.

    Returns
    -------
    type
        `nodetype`, unchanged.

    Raises
    ------
    TypeError
        If only one of `data_fields` / `meta_fields` is given, or neither for a non-dataclass.
    ValueError
        If the fields given do not cover exactly the dataclass `init` fields not dropped, or
        a field is both data and meta.
    """
    is_dc = dataclasses.is_dataclass(nodetype)
    if (data_fields is None) != (meta_fields is None):
        raise TypeError(f"register_dataclass: give both data_fields and meta_fields or neither; "
                        f"got data_fields={data_fields!r}, meta_fields={meta_fields!r}")
    if data_fields is None:
        if not is_dc:
            raise TypeError(f"register_dataclass: {nodetype!r} is not a dataclass, so "
                            f"data_fields and meta_fields are required")
        fields = [f for f in dataclasses.fields(nodetype)
                  if f.init and f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    # Tuples, so later mutation of the caller's lists cannot change the registration.
    data = tuple(data_fields)
    meta = tuple(meta_fields)  # type: ignore[arg-type]
    if is_dc:
        expected = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = set(data) | set(meta)
        if given != expected:
            raise ValueError(f"register_dataclass: data_fields and meta_fields must name "
                             f"exactly the init fields of {nodetype.__name__} not in "
                             f"drop_fields; missing {sorted(expected - given)}, unexpected "
                             f"{sorted(given - expected)}")
    if overlap := set(data) & set(meta):
        raise ValueError(f"register_dataclass: fields {sorted(overlap)} are listed in both "
                         f"data_fields and meta_fields")

    def flatten(x: Any) -> tuple[tuple, tuple]:
        return tuple([getattr(x, n) for n in data]), tuple([getattr(x, n) for n in meta])

    def flatten_with_keys(x: Any) -> tuple[tuple, tuple]:
        return (tuple([(GetAttrKey(n), getattr(x, n)) for n in data]),
                tuple([getattr(x, n) for n in meta]))

    def unflatten(aux: tuple, children: Iterable[Any]) -> Any:
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def _static_flatten(x: Any) -> tuple[tuple, Any]:
    return (), x


def _static_unflatten(aux: Any, _: Iterable[Any]) -> Any:
    return aux


def register_static(cls: Typ) -> Typ:
    """Register `cls` as a node with no children: the whole object is treedef data.

    Mirrors `jax.tree_util.register_static`; instances must be hashable, and are static
    under `jit` without `static_argnums`.

    Returns
    -------
    type
        `cls`, unchanged.
    """
    register_pytree_node(cls, _static_flatten, _static_unflatten, _static_flatten)
    return cls


class _PartialFunc:
    """Holds a `functools.partial` as `Partial.func`.

    `functools.partial.__new__` merges a partial argument into the new object, which would
    make the inner partial's arguments pytree children; boxing it keeps them static.
    """

    __slots__ = ("partial",)

    def __init__(self, partial: functools.partial) -> None:
        self.partial = partial

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.partial(*args, **kwargs)

    # Introspection of `Partial(p).func` still reaches the wrapped partial's parts.
    @property
    def func(self) -> Callable[..., Any]:
        return self.partial.func

    @property
    def args(self) -> tuple:
        return self.partial.args

    @property
    def keywords(self) -> dict:
        return self.partial.keywords

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _PartialFunc):
            return self.partial == other.partial
        return self.partial == other

    def __hash__(self) -> int:
        return hash(self.partial)

    def __repr__(self) -> str:
        return repr(self.partial)


class Partial(functools.partial):
    """A `functools.partial` that is a pytree (mirrors `jax.tree_util.Partial`).

    The bound positional and keyword arguments are children; the function is treedef data,
    so a `Partial` can be passed into and returned from `jit`-compiled functions.
    """

    def __new__(cls, func: Callable[..., Any], /, *args: Any, **keywords: Any) -> Partial:
        if isinstance(func, functools.partial):
            func = _PartialFunc(func)
        return super().__new__(cls, func, *args, **keywords)


def _partial_flatten(p: Partial) -> tuple[tuple[tuple, dict], Any]:
    return (p.args, p.keywords), p.func


def _partial_unflatten(func: Any, children: Sequence[Any]) -> Partial:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)


# OrderedDict keeps insertion order (and the order is part of the structure); defaultdict
# sorts its keys like dict and keeps its default_factory as data.
def _odict_flatten_keys(d: collections.OrderedDict) -> tuple[list[tuple[Any, Any]], tuple]:
    return [(DictKey(k), v) for k, v in d.items()], tuple(d)


register_pytree_with_keys(
    collections.OrderedDict, _odict_flatten_keys,
    lambda keys, values: collections.OrderedDict(zip(keys, values)),
    lambda d: (list(d.values()), tuple(d)))


def _ddict_flatten_keys(d: collections.defaultdict) -> tuple[list[tuple[Any, Any]], tuple]:
    keys = _sorted_keys(d)
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, keys)


def _ddict_flatten(d: collections.defaultdict) -> tuple[list[Any], tuple]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict, _ddict_flatten_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
    _ddict_flatten)
