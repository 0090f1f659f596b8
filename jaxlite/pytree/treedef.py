"""The pytree core: node registry, flatten/unflatten walkers and `PyTreeDef`.

Private to `jaxlite.tree_util`, which is the public face; split out only to keep modules small.

A treedef is held as a nested Python tuple: `_LEAF` for a leaf and
`(node_type, aux_data, children)` for a node, so that structural `==` and `hash` run in
CPython's tuple code. Dict nodes keep their keys, sorted, as aux data; a namedtuple node
(one not registered explicitly) has its class as aux data.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, NamedTuple

from jaxlite.pytree.paths import (DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey,
                                  keystr)

_NoneType = type(None)
# `None` (not a fresh object) marks a leaf so that treedef hashes are stable across processes.
_LEAF = None
_NONE_NODE = (_NoneType, None, ())



class _NodeSpec(NamedTuple):
    flatten: Callable[[Any], tuple[Iterable[Any], Any]]
    unflatten: Callable[[Any, Iterable[Any]], Any]
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None


class PyTreeRegistry:
    """The table of pytree node types (mirrors the type of `jax.tree_util.default_registry`)."""

    def __init__(self) -> None:
        self.nodes: dict[type, _NodeSpec] = {}

    def register_node(self, nodetype: type, flatten: Callable, unflatten: Callable,
                      flatten_with_keys: Callable | None = None) -> None:
        """Add a node type; `ValueError` if it is already registered."""
        if not isinstance(nodetype, type):
            raise TypeError(f"a pytree node type must be a class, got {nodetype!r}")
        if nodetype in self.nodes:
            raise ValueError(f"{nodetype!r} is already registered as a pytree node type; a "
                             f"type can be registered only once")
        self.nodes[nodetype] = _NodeSpec(flatten, unflatten, flatten_with_keys)

    def is_node(self, typ: type) -> bool:
        """True if instances of `typ` are pytree nodes: registered, built in, or namedtuples."""
        return typ in self.nodes or _is_namedtuple_type(typ)


default_registry = PyTreeRegistry()
_NODES = default_registry.nodes   # the only mutable global state of the pytree modules


def _is_namedtuple_type(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


# Specs of the built-in containers. The walkers below special-case these exact types without
# consulting them; they serve the generic paths (flatten_one_level, key paths, diagnostics)
# and make re-registering a built-in an error.
def _seq_keys(xs: Any) -> tuple[tuple[tuple[Any, Any], ...], None]:
    return tuple([(SequenceKey(i), x) for i, x in enumerate(xs)]), None


def _dict_flatten(d: dict) -> tuple[tuple, tuple]:
    keys = _sorted_keys(d)
    return tuple([d[k] for k in keys]), keys


def _dict_keys(d: dict) -> tuple[tuple[tuple[Any, Any], ...], tuple]:
    keys = _sorted_keys(d)
    return tuple([(DictKey(k), d[k]) for k in keys]), keys


default_registry.register_node(tuple, lambda xs: (xs, None), lambda _, xs: tuple(xs), _seq_keys)
default_registry.register_node(list, lambda xs: (xs, None), lambda _, xs: list(xs), _seq_keys)
default_registry.register_node(dict, _dict_flatten, lambda keys, xs: dict(zip(keys, xs)),
                               _dict_keys)
default_registry.register_node(_NoneType, lambda _: ((), None), lambda _, __: None,
                               lambda _: ((), None))


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as e:
        raise ValueError(f"cannot sort the keys {list(d)!r} of a dict pytree node: dict keys "
                         f"must be mutually comparable ({e})") from None


def _short(x: Any) -> str:
    # Leaves can be large arrays; keep error messages readable.
    text = repr(x)
    return text if len(text) <= 200 else text[:197] + "..."


# ---------------------------------------------------------------------------------------------
# One level of a node: used by the generic (non hot) paths and by flatten_one_level*.

def _one_level(tree: Any) -> tuple[type, Any, list[Any]] | None:
    """(type, aux, children) for a node, None for a leaf."""
    t = type(tree)
    spec = _NODES.get(t)
    if spec is not None:
        children, aux = spec.flatten(tree)
        if not isinstance(children, (list, tuple)):
            children = list(children)
        return t, aux, children
    if _is_namedtuple_type(t):
        return t, t, list(tree)
    return None


def _one_level_keyed(tree: Any) -> tuple[type, Any, list[tuple[Any, Any]]] | None:
    """(type, aux, [(key, child), ...]) for a node, None for a leaf."""
    t = type(tree)
    spec = _NODES.get(t)
    if spec is not None:
        if spec.flatten_with_keys is not None:
            pairs, aux = spec.flatten_with_keys(tree)
            return t, aux, pairs if isinstance(pairs, (list, tuple)) else list(pairs)
        children, aux = spec.flatten(tree)
        return t, aux, [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]
    if _is_namedtuple_type(t):
        return t, t, [(GetAttrKey(f), c) for f, c in zip(t._fields, tree)]
    return None


# ---------------------------------------------------------------------------------------------
# Hot paths: flatten and unflatten. Exact built-in types are tested first, without a registry
# lookup, because a tuple/dict of arrays is what every jit call flattens.

def _flatten(tree: Any, is_leaf: Callable[[Any], bool] | None, leaves: list) -> Any:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    t = type(tree)
    if t is tuple or t is list:
        return (t, None, _flatten_each(tree, is_leaf, leaves))
    if t is dict:
        keys = _sorted_keys(tree)
        return (dict, keys, _flatten_each([tree[k] for k in keys], is_leaf, leaves))
    if t is _NoneType:
        return _NONE_NODE
    spec = _NODES.get(t)
    if spec is not None:
        children, aux = spec.flatten(tree)
    elif _is_namedtuple_type(t):
        children, aux = tree, t   # JAX's aux data for a namedtuple is its class
    else:
        leaves.append(tree)
        return _LEAF
    return (t, aux, _flatten_each(children, is_leaf, leaves))


def _flatten_each(children: Iterable[Any], is_leaf: Callable[[Any], bool] | None,
                  leaves: list) -> tuple:
    kids = []
    for child in children:
        ct = type(child)
        # Settle plain leaves (arrays, scalars) here: a call per leaf is most of the cost.
        if is_leaf is None and ct not in _NODES and not issubclass(ct, tuple):
            leaves.append(child)
            kids.append(_LEAF)
        else:
            kids.append(_flatten(child, is_leaf, leaves))
    return tuple(kids)


def _flatten_keyed(tree: Any, is_leaf: Callable[[Any, Any], bool] | None, path: tuple,
                   out: list) -> Any:
    """`_flatten` that records `(key path, leaf)` pairs; `is_leaf` takes (path, subtree)."""
    if is_leaf is not None and is_leaf(path, tree):
        out.append((path, tree))
        return _LEAF
    level = _one_level_keyed(tree)
    if level is None:
        out.append((path, tree))
        return _LEAF
    t, aux, pairs = level
    return (t, aux, tuple([_flatten_keyed(c, is_leaf, path + (k,), out) for k, c in pairs]))


def _build(node: Any, it: Any) -> Any:
    t, aux, kids = node
    vals = []
    for k in kids:
        vals.append(next(it) if k is _LEAF else _build(k, it))
    if t is tuple:
        return tuple(vals)
    if t is list:
        return vals
    if t is dict:
        return dict(zip(aux, vals))
    if t is _NoneType:
        return None
    spec = _NODES.get(t)
    if spec is not None:
        return spec.unflatten(aux, tuple(vals))
    return t(*vals)   # namedtuple


class _StructureError(ValueError):
    """Raised by `flatten_up_to`; callers that add context catch only this, not user errors.

    `kind` and `key_path` let `tree_map` word the error as JAX's does."""

    def __init__(self, message: str, kind: str = "", key_path: str = "") -> None:
        super().__init__(message)
        self.kind, self.key_path = kind, key_path


class _Mismatch(ValueError):
    """A tree does not match a treedef; `where` collects (parent value, child index) pairs.

    `phrase` is what JAX's `flatten_up_to` says ("Dict key mismatch; ..."), `kind` what its
    `tree_map` names the difference ("different types", ...); `hint` is our advice.
    """

    def __init__(self, phrase: str, kind: str, hint: str = "") -> None:
        super().__init__(phrase)
        self.phrase, self.kind, self.hint = phrase, kind, hint
        self.where: list[tuple[Any, int]] = []


_NONE_HINT = (" None is a pytree node with no children, not a leaf (pass "
              "is_leaf=lambda x: x is None to treat it as one).")


def _up_to(node: Any, tree: Any, out: list) -> None:
    t, aux, kids = node
    tt = type(tree)
    if tt is not t:
        hint = _NONE_HINT if t is _NoneType or tt is _NoneType else ""
        expected = "named tuple" if _is_namedtuple_type(t) and t not in _NODES else \
            _type_name(t)
        raise _Mismatch(f"Expected {expected}, got {_short(tree)}.", "different types", hint)
    if t is tuple or t is list:
        children = tree
    elif t is dict:
        keys = _sorted_keys(tree)
        if keys != aux:
            kind = ("different numbers of pytree children" if len(keys) != len(aux)
                    else "different pytree metadata")
            raise _Mismatch(f"Dict key mismatch; expected keys: {list(aux)!r}; present keys: "
                            f"{list(keys)!r}.", kind)
        children = [tree[k] for k in keys]
    elif t is _NoneType:
        return
    else:
        _, aux2, children = _one_level(tree)
        # The 1-tuples compare by identity first, and coerce the result to bool.
        if (aux2,) != (aux,):
            raise _Mismatch(f"Mismatch custom node data: {aux!r} != {aux2!r}; value: "
                            f"{_short(tree)}.", "different pytree metadata")
    if len(children) != len(kids):
        name = t.__name__ if t in (tuple, list) else "Custom node"
        kind = (f"different lengths of {t.__name__}" if t in (tuple, list)
                else "different numbers of pytree children")
        raise _Mismatch(f"{name.capitalize()} arity mismatch: {len(children)} != {len(kids)}; "
                        f"{t.__name__}: {_short(tree)}.", kind)
    for i in range(len(kids)):
        k = kids[i]
        if k is _LEAF:
            out.append(children[i])
            continue
        try:
            _up_to(k, children[i], out)
        except _Mismatch as e:
            e.where.append((tree, i))
            raise


def _count(node: Any) -> tuple[int, int]:
    """(num_leaves, num_nodes) of a node."""
    if node is _LEAF:
        return 1, 1
    leaves, nodes = 0, 1
    for k in node[2]:
        kl, kn = _count(k)
        leaves += kl
        nodes += kn
    return leaves, nodes


def _type_name(t: type) -> str:
    if t is _NoneType:
        return "None"
    if t in (tuple, list, dict):
        return t.__name__
    return ("namedtuple " if _is_namedtuple_type(t) and t not in _NODES else "") + t.__name__


def _node_str(node: Any) -> str:
    if node is _LEAF:
        return "*"
    t, aux, kids = node
    parts = [_node_str(k) for k in kids]
    if t is tuple:
        return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    if t is list:
        return "[" + ", ".join(parts) + "]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts)) + "}"
    if t is _NoneType:
        return "None"
    label = f"namedtuple[{t.__name__}]" if t not in _NODES else f"{t.__name__}[{aux}]"
    return f"CustomNode({label}, [{', '.join(parts)}])"


def _skeleton(node: Any) -> Any:
    # Treedef with the aux data left out, for hashing when aux data is unhashable.
    if node is _LEAF:
        return node
    return (node[0], tuple(_skeleton(k) for k in node[2]))


class PyTreeDef:
    """The structure of a pytree, without its leaves (mirrors `jax.tree_util.PyTreeDef`).

    Equality is structural (node types, dict keys, custom aux data); hashing is cached so that
    a treedef is cheap to use in cache keys.
    """

    __slots__ = ("_root", "_leaves", "_nodes", "_hash")

    def __init__(self, root: Any, num_leaves: int | None = None) -> None:
        self._root = root
        self._leaves = num_leaves
        self._nodes: int | None = None
        self._hash: int | None = None

    def _counts(self) -> None:
        self._leaves, self._nodes = _count(self._root)

    @property
    def num_leaves(self) -> int:
        """Number of leaves in the structure."""
        if self._leaves is None:
            self._counts()
        return self._leaves  # type: ignore[return-value]

    @property
    def num_nodes(self) -> int:
        """Number of nodes, leaves included (`None`, `()` and a leaf each count 1)."""
        if self._nodes is None:
            self._counts()
        return self._nodes  # type: ignore[return-value]

    def children(self) -> list[PyTreeDef]:
        """Treedefs of the root's children; `[]` for a leaf (mirrors `PyTreeDef.children`)."""
        if self._root is _LEAF:
            return []
        return [PyTreeDef(k) for k in self._root[2]]

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build a tree of this structure from `leaves` (mirrors `PyTreeDef.unflatten`)."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        expected = self.num_leaves
        if len(leaves) != expected:
            which = "few" if len(leaves) < expected else "many"
            raise ValueError(f"Too {which} leaves for {self}; expected {expected}, got "
                             f"{len(leaves)}")
        if self._root is _LEAF:
            return leaves[0]
        return _build(self._root, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten `tree` only as deep as this structure goes (mirrors `flatten_up_to`).

        Each leaf of this treedef receives the whole subtree of `tree` at its position.
        Raises `ValueError`, naming the key path, if `tree` does not have this structure as a
        prefix.
        """
        out: list[Any] = []
        if self._root is _LEAF:
            return [tree]
        try:
            _up_to(self._root, tree, out)
        except _Mismatch as e:
            path = []
            for parent, i in reversed(e.where):
                path.append(_one_level_keyed(parent)[2][i][0])
            where = keystr(tuple(path))
            raise _StructureError(
                f"{e.phrase} At key path {where or '<root>'}: {self} is not a prefix of the "
                f"tree's structure {PyTreeDef(_flatten(tree, None, []))}.{e.hint}",
                e.kind, where) from None
        return out

    def node_data(self) -> tuple[type, Any] | None:
        """`(node type, aux data)` of the root; None for a leaf (mirrors `node_data`)."""
        if self._root is _LEAF:
            return None
        return self._root[0], self._root[1]

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The treedef with every leaf of `self` replaced by `inner`."""
        def sub(node: Any) -> Any:
            if node is _LEAF:
                return inner._root
            return (node[0], node[1], tuple(sub(k) for k in node[2]))
        return PyTreeDef(sub(self._root))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self is other or self._root == other._root

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            try:
                h = hash(self._root)
            except TypeError:
                h = hash(_skeleton(self._root))
            self._hash = h
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({_node_str(self._root)})"

    __str__ = __repr__


