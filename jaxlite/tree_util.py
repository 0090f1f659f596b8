"""Pytrees: nested containers of leaves, flattened and rebuilt (mirrors `jax.tree_util`).

A pytree is a tuple, list, dict, `None`, namedtuple, `OrderedDict`, `defaultdict`, or an
instance of a type registered with `register_pytree_node` (or a variant); anything else is a
leaf. `tree_flatten` turns a tree into its leaves and a `PyTreeDef`, the hashable description
of its shape that `jit` uses in its cache key. Dict children come in sorted key order, and
`None` is a node with no children, not a leaf, as in JAX.

The implementation lives in the package `jaxlite.pytree`: `treedef` (registry, walkers,
`PyTreeDef`), `registry` (the `register_*` functions, `Partial`) and `paths` (key-path
entries, `keystr`).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Hashable, Iterable, TypeVar

from jaxlite.pytree.paths import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath,
                                  SequenceKey, keystr)
from jaxlite.pytree.registry import (Partial, register_dataclass, register_pytree_node,
                                     register_pytree_node_class, register_pytree_with_keys,
                                     register_pytree_with_keys_class, register_static)
from jaxlite.pytree.treedef import (PyTreeDef, PyTreeRegistry, _flatten, _flatten_keyed,
                                    _one_level, _one_level_keyed, _StructureError,
                                    default_registry)

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial", "PyTreeDef",
    "PyTreeRegistry", "SequenceKey", "all_leaves", "default_registry", "flatten_one_level",
    "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
    "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map",
    "tree_map_with_path", "tree_reduce", "tree_reduce_associative", "tree_structure",
    "tree_transpose", "tree_unflatten", "treedef_children", "treedef_is_leaf", "treedef_tuple",
]

T = TypeVar("T")


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


# Marks an omitted argument where None is a legitimate value.
_MISSING: Any = _Missing()

# ---------------------------------------------------------------------------------------------
# Flattening API.

def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """Flatten a pytree into its leaves and structure (mirrors `jax.tree_util.tree_flatten`).

    Parameters
    ----------
    tree : Any
        The pytree. Dict children come in sorted key order; `None` is a node with no leaves.
    is_leaf : callable, optional
        Called on every subtree; returning True makes that subtree a leaf.

    Returns
    -------
    leaves : list
    treedef : PyTreeDef
    """
    leaves: list[Any] = []
    root = _flatten(tree, is_leaf, leaves)
    return leaves, PyTreeDef(root, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from a treedef and leaves (mirrors `jax.tree_util.tree_unflatten`)."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of a pytree, in flattening order (mirrors `jax.tree_util.tree_leaves`)."""
    leaves: list[Any] = []
    _flatten(tree, is_leaf, leaves)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The treedef of a pytree (mirrors `jax.tree_util.tree_structure`)."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply `f` leafwise across trees (mirrors `jax.tree_util.tree_map`).

    Parameters
    ----------
    f : callable
        Called as `f(x, *ys)` with a leaf of `tree` and the matching subtrees of `rest`.
    tree : Any
        The pytree whose structure the result takes.
    *rest : Any
        Trees that have `tree`'s structure, or one that extends it below `tree`'s leaves.
    is_leaf : callable, optional
        As in `tree_flatten`, applied to `tree`.

    Returns
    -------
    Any
        A tree of `tree`'s structure holding the results of `f`.

    Raises
    ------
    ValueError
        If a tree of `rest` does not have `tree`'s structure.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    columns = [leaves]
    for i, other in enumerate(rest):
        try:
            columns.append(treedef.flatten_up_to(other))
        except _StructureError as e:
            raise ValueError(_map_mismatch("tree_map", i, e)) from None
    return treedef.unflatten([f(*xs) for xs in zip(*columns)])


def _map_mismatch(name: str, index: int, error: Any) -> str:
    """JAX's header for a tree of `rest` that does not match the first tree, then ours."""
    return (f"pytree structure error: {error.kind} at key path\n    tree_map tree"
            f"{error.key_path}\n{name}: tree argument {index + 1} does not have the first "
            f"tree's structure there. {error}")


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Swap the outer and inner levels of a tree of trees (mirrors `jax.tree_util.tree_transpose`).

    Parameters
    ----------
    outer_treedef : PyTreeDef
        Structure of the outer level.
    inner_treedef : PyTreeDef or None
        Structure of each inner tree; None infers it from the first inner tree.
    pytree_to_transpose : Any
        A tree of `outer_treedef` structure whose leaves are trees of `inner_treedef` structure.

    Returns
    -------
    Any
        A tree of `inner_treedef` structure whose leaves are trees of `outer_treedef` structure.
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    n_inner, n_outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_inner * n_outer:
        raise TypeError(f"tree_transpose: expected a tree of structure "
                        f"{outer_treedef.compose(inner_treedef)}, got {treedef}")
    rows = [flat[i * n_inner:(i + 1) * n_inner] for i in range(n_outer)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every leaf is truthy (mirrors `jax.tree_util.tree_all`)."""
    return all(tree_leaves(tree, is_leaf))


def tree_reduce(function: Callable[[T, Any], T], tree: Any, initializer: Any = _MISSING,
                is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Fold the leaves left to right with `function` (mirrors `jax.tree_util.tree_reduce`).

    Without `initializer`, a tree with no leaves raises `TypeError`, as `functools.reduce`.
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def _halving_reduce(op: Callable[[T, T], T], xs: list, lo: int, hi: int) -> T:
    if hi - lo == 1:
        return xs[lo]
    mid = (lo + hi) // 2
    return op(_halving_reduce(op, xs, lo, mid), _halving_reduce(op, xs, mid, hi))


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: Any = _MISSING,
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduce the leaves as a balanced binary tree (mirrors `tree_reduce_associative`).

    `operation` must be associative; the pairing is `op(reduce(first half), reduce(second))`.
    `identity` is returned for a tree with no leaves, which raises `TypeError` without it.
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _MISSING:
            raise TypeError("tree_reduce_associative: the tree has no leaves and no identity "
                            "was given")
        return identity
    return _halving_reduce(operation, leaves, 0, len(leaves))


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Repeat each leaf of a prefix tree over the matching subtree of a full tree.

    Mirrors `jax.tree_util.tree_broadcast`; `is_leaf` applies to `prefix_tree` only.

    Returns
    -------
    Any
        A tree of `full_tree`'s structure.
    """
    leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except _StructureError as e:
        raise ValueError(f"tree_broadcast: prefix_tree is not a prefix of full_tree: {e}"
                         ) from None
    out: list[Any] = []
    for leaf, sub in zip(leaves, subtrees):
        out.extend([leaf] * len(tree_leaves(sub)))
    return tree_structure(full_tree).unflatten(out)


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if no element of `iterable` is a pytree node (mirrors `jax.tree_util.all_leaves`).

    `None` is a node, so `all_leaves([None])` is False.
    """
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if default_registry.is_node(type(x)):
            return False
    return True


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """Treedefs of the root's children (mirrors `jax.tree_util.treedef_children`)."""
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True for a single-node treedef: a leaf, `None` or an empty container.

    Mirrors `jax.tree_util.treedef_is_leaf`.
    """
    return treedef.num_nodes == 1


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple of the given subtrees (mirrors `jax.tree_util.treedef_tuple`)."""
    return PyTreeDef((tuple, None, tuple(td._root for td in treedefs)))


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """Children and aux data of a node (mirrors `jax.tree_util.flatten_one_level`).

    Raises
    ------
    ValueError
        If `tree` is a leaf.
    """
    level = _one_level(tree)
    if level is None:
        raise ValueError(f"flatten_one_level: expected a pytree node, got a leaf of type "
                         f"{type(tree)}")
    return level[2], level[1]


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """`(key, child)` pairs and aux data of a node.

    Mirrors `jax.tree_util.flatten_one_level_with_keys`; raises `ValueError` for a leaf.
    """
    level = _one_level_keyed(tree)
    if level is None:
        raise ValueError(f"flatten_one_level_with_keys: expected a pytree node, got a leaf "
                         f"of type {type(tree)}")
    return level[2], level[1]


def is_tree_node(typ: type) -> bool:
    """True if instances of `typ` are pytree nodes (mirrors `jax.tree_util.is_tree_node`)."""
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node expects a type, got {typ!r}")
    return default_registry.is_node(typ)



# ---------------------------------------------------------------------------------------------
# Key paths.

def _path_pred(is_leaf: Callable[..., bool] | None, takes_path: bool
               ) -> Callable[[Any, Any], bool] | None:
    # The keyed walker always passes (path, subtree); adapt a one-argument predicate.
    if is_leaf is None or takes_path:
        return is_leaf
    return lambda _, x: is_leaf(x)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Flatten a pytree, pairing each leaf with its key path.

    Mirrors `jax.tree_util.tree_flatten_with_path`.

    Parameters
    ----------
    tree : Any
        The pytree.
    is_leaf : callable, optional
        As in `tree_flatten`; called as `is_leaf(path, x)` if `is_leaf_takes_path`.
    is_leaf_takes_path : bool
        Whether `is_leaf` receives the key path too.

    Returns
    -------
    pairs : list of (tuple, Any)
        `(key path, leaf)` in flattening order, e.g. `((SequenceKey(1), DictKey('a')), x)`.
    treedef : PyTreeDef
    """
    pairs: list[tuple[KeyPath, Any]] = []
    root = _flatten_keyed(tree, _path_pred(is_leaf, is_leaf_takes_path), (), pairs)
    return pairs, PyTreeDef(root, len(pairs))


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """`(key path, leaf)` pairs of a pytree (mirrors `jax.tree_util.tree_leaves_with_path`)."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """`tree_map` where `f` also receives the key path (mirrors `tree_map_with_path`).

    `f` is called as `f(path, x, *ys)`; `rest` must match `tree`'s structure as in
    `tree_map`.
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    columns = [[p for p, _ in pairs], [x for _, x in pairs]]
    for i, other in enumerate(rest):
        try:
            columns.append(treedef.flatten_up_to(other))
        except _StructureError as e:
            raise ValueError(_map_mismatch("tree_map_with_path", i, e)) from None
    return treedef.unflatten([f(*xs) for xs in zip(*columns)])
