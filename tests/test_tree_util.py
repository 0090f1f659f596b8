"""Tests of `jaxlite.tree_util`.

Expected reprs, key strings and orderings were taken from jax 0.10.2 (`jax.tree_util`) by
running the same calls there; error messages are jaxlite's own.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxlite import tree_util as tu
from jaxlite.tree_util import (DictKey, FlattenedIndexKey, GetAttrKey, Partial, PyTreeDef,
                               SequenceKey)


class Point(NamedTuple):
    x: object
    y: object


Pair = collections.namedtuple("Pair", "a b")


# ---------------------------------------------------------------------------------------------
# Built-in nodes, flatten / unflatten, reprs.

def test_flatten_builtin_nodes_matches_jax():
    tree = (1, {"b": 2, "a": [3, None]}, Point(4, 5),
            collections.OrderedDict([("z", 6), ("y", 7)]),
            collections.defaultdict(list, {"q": 8, "p": 9}))
    leaves, td = tu.tree_flatten(tree)
    assert leaves == [1, 3, 2, 4, 5, 6, 7, 9, 8]
    assert repr(td) == (
        "PyTreeDef((*, {'a': [*, None], 'b': *}, CustomNode(namedtuple[Point], [*, *]), "
        "CustomNode(OrderedDict[('z', 'y')], [*, *]), "
        "CustomNode(defaultdict[(<class 'list'>, ('p', 'q'))], [*, *])))")
    assert str(td) == repr(td)
    assert (td.num_leaves, td.num_nodes) == (9, 16)
    rebuilt = tu.tree_unflatten(td, leaves)
    assert rebuilt == tree
    assert list(rebuilt[1]) == ["a", "b"]           # dicts come back in sorted key order
    assert list(rebuilt[3]) == ["z", "y"]           # OrderedDict keeps insertion order
    assert rebuilt[4].default_factory is list
    assert type(rebuilt[2]) is Point


@pytest.mark.parametrize("tree, text", [
    (1, "PyTreeDef(*)"),
    (None, "PyTreeDef(None)"),
    ((), "PyTreeDef(())"),
    ([], "PyTreeDef([])"),
    ({}, "PyTreeDef({})"),
    ((1,), "PyTreeDef((*,))"),
    ({(1, "a"): 0}, "PyTreeDef({(1, 'a'): *})"),
    ({2: 1, 1.5: 2, 1: 3}, "PyTreeDef({1: *, 1.5: *, 2: *})"),
    ([{}, (), None, [], collections.OrderedDict()],
     "PyTreeDef([{}, (), None, [], CustomNode(OrderedDict[()], [])])"),
    ({"a": {"b": (1,), "c": None}}, "PyTreeDef({'a': {'b': (*,), 'c': None}})"),
])
def test_treedef_repr(tree, text):
    assert repr(tu.tree_structure(tree)) == text


def test_none_is_a_node_without_children():
    assert tu.tree_leaves(None) == []
    td = tu.tree_structure(None)
    assert (td.num_leaves, td.num_nodes) == (0, 1)
    assert td.unflatten([]) is None
    assert tu.tree_leaves([1, None, (2,)]) == [1, 2]
    assert tu.tree_map(lambda x: x * 10, [1, None]) == [10, None]
    as_leaf = tu.tree_structure([1, None, (2,)], is_leaf=lambda x: x is None)
    assert repr(as_leaf) == "PyTreeDef([*, *, (*,)])"


def test_subclasses_of_builtin_containers_are_leaves():
    class T(tuple):
        pass

    class L(list):
        pass

    class D(dict):
        pass

    for x in (T((1, 2)), L([1, 2]), D(a=1)):
        leaves, td = tu.tree_flatten(x)
        assert leaves == [x] and repr(td) == "PyTreeDef(*)"


def test_is_leaf_stops_recursion_and_sees_root():
    tree = [1, None, (2, 3)]
    assert repr(tu.tree_structure(tree, is_leaf=lambda x: isinstance(x, tuple))) == \
        "PyTreeDef([*, None, *])"
    assert repr(tu.tree_structure(tree, is_leaf=lambda x: True)) == "PyTreeDef(*)"
    assert tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple)) == [1, (2, 3)]


def test_dict_keys_must_be_sortable():
    with pytest.raises(ValueError, match="mutually comparable"):
        tu.tree_flatten({1: 2, "a": 3})


def test_unflatten_leaf_treedef_and_generator_leaves():
    assert tu.tree_structure(5).unflatten(["x"]) == "x"
    assert tu.tree_unflatten(tu.tree_structure(1), [(1, 2)]) == (1, 2)
    td = tu.tree_structure((1, [2, 3]))
    assert td.unflatten(iter([7, 8, 9])) == (7, [8, 9])
    empty = tu.tree_structure(((), [None], {"a": ()}))
    assert empty.num_leaves == 0
    assert empty.unflatten([]) == ((), [None], {"a": ()})


def test_unflatten_wrong_leaf_count_names_both_counts():
    td = tu.tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match=r"Too few leaves .*expected 3, got 2"):
        td.unflatten([1, 2])
    with pytest.raises(ValueError, match=r"Too many leaves .*expected 3, got 4"):
        tu.tree_unflatten(td, [1, 2, 3, 4])


# ---------------------------------------------------------------------------------------------
# PyTreeDef methods, equality and hashing.

def test_treedef_equality_is_structural():
    s = tu.tree_structure
    assert s({"a": 1, "b": 2}) == s({"b": "x", "a": "y"})
    assert hash(s({"a": 1, "b": 2})) == hash(s({"b": 3, "a": 4}))
    assert s({"a": 1}) != s({"b": 1})
    assert s((1,)) != s([1])
    assert s(collections.OrderedDict(a=1, b=2)) != s(collections.OrderedDict(b=1, a=2))
    assert s(collections.OrderedDict(a=1, b=2)) != s({"a": 1, "b": 2})
    assert s(collections.defaultdict(list, a=1)) != s(collections.defaultdict(dict, a=1))
    other = collections.namedtuple("Point", "x y")
    assert s(Point(1, 2)) != s(other(1, 2))           # same name, different class
    assert s(Point(1, 2)) != s((1, 2))
    assert s((1, 2)) != 5
    assert len({s((1, [2])), s((3, [4])), s((1, 2))}) == 2


def test_treedef_hash_survives_unhashable_aux_data():
    class Box:
        def __init__(self, a, meta):
            self.a, self.meta = a, meta

    tu.register_pytree_node(Box, lambda b: ((b.a,), b.meta), lambda m, c: Box(c[0], m))
    t1, t2 = tu.tree_structure(Box(1, [1])), tu.tree_structure(Box(2, [1]))
    assert t1 == t2 and hash(t1) == hash(t2)
    assert t1 != tu.tree_structure(Box(1, [2]))
    assert repr(t1) == "PyTreeDef(CustomNode(Box[[1]], [*]))"


def test_treedef_children_counts_and_node_data():
    td = tu.tree_structure((1, [2, {"a": 3}]))
    kids = td.children()
    assert [repr(k) for k in kids] == ["PyTreeDef(*)", "PyTreeDef([*, {'a': *}])"]
    assert (kids[1].num_leaves, kids[1].num_nodes) == (2, 4)
    assert tu.treedef_children(td) == kids
    assert tu.tree_structure(1).children() == []
    assert tu.tree_structure(None).children() == []
    assert td.node_data() == (tuple, None)
    assert tu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ("a", "b"))
    assert tu.tree_structure(1).node_data() is None


def test_treedef_is_leaf_and_tuple():
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert tu.treedef_is_leaf(tu.tree_structure(()))
    assert not tu.treedef_is_leaf(tu.tree_structure((1,)))
    pair = tu.treedef_tuple([tu.tree_structure((1, [2, 3])), tu.tree_structure(1)])
    assert repr(pair) == "PyTreeDef(((*, [*, *]), *))"
    assert pair == tu.tree_structure(((0, [0, 0]), 0)) and pair.num_leaves == 4
    assert repr(tu.treedef_tuple([])) == "PyTreeDef(())"
    mixed = tu.treedef_tuple([tu.tree_structure([0]), tu.tree_structure(None)])
    assert mixed.unflatten([7]) == ([7], None)


def test_compose():
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, {"k": 0}))
    assert repr(outer.compose(inner)) == "PyTreeDef([(*, {'k': *}), (*, {'k': *})])"
    assert outer.compose(inner).num_leaves == 4


def test_flatten_up_to():
    td = tu.tree_structure((1, [2, 3]))
    assert td.flatten_up_to((1, [2, 3])) == [1, 2, 3]
    assert td.flatten_up_to(([1], [{"a": 2}, 3])) == [[1], {"a": 2}, 3]
    assert tu.tree_structure(None).flatten_up_to(None) == []
    assert tu.tree_structure(1).flatten_up_to(None) == [None]
    assert tu.tree_structure({"a": 1, "b": 2}).flatten_up_to({"b": [3], "a": 4}) == [4, [3]]


# The first sentence is JAX 0.10.2's (`tree_structure(prefix).flatten_up_to(tree)`), then
# the key path and both structures.
@pytest.mark.parametrize("prefix, tree, jax_says, path", [
    ((1, [2, 3]), (1, [2]), "List arity mismatch: 1 != 2; list: [2].", "[1]"),
    ((1, [2, 3]), (1, (2, 3)), "Expected list, got (2, 3).", "[1]"),
    ((1, [2, 3]), [1, [2, 3]], "Expected tuple, got [1, [2, 3]].", "<root>"),
    ({"a": 1}, {"b": 1}, "Dict key mismatch; expected keys: ['a']; present keys: ['b'].",
     "<root>"),
    (None, 1, "Expected None, got 1.", "<root>"),
    ((None,), (1,), "Expected None, got 1.", "[0]"),
    ({"a": 1}, collections.defaultdict(int, a=1),
     "Expected dict, got defaultdict(<class 'int'>, {'a': 1}).", "<root>"),
    ((1, 2), Point(1, 2), "Expected tuple, got Point(x=1, y=2).", "<root>"),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2).", "<root>"),
    (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=1, a=2),
     # (the value's repr is Python's: OrderedDict({...}) from Python 3.12 on)
     "Mismatch custom node data: ('a', 'b') != ('b', 'a'); value: "
     f"{collections.OrderedDict(b=1, a=2)!r}.", "<root>"),
    ({"x": [Point(1, [2])]}, {"x": [Point(1, (2,))]}, "Expected list, got (2,).",
     "['x'][0].y"),
])
def test_flatten_up_to_mismatch_names_path_and_structures(prefix, tree, jax_says, path):
    td = tu.tree_structure(prefix)
    with pytest.raises(ValueError) as info:
        td.flatten_up_to(tree)
    msg = str(info.value)
    assert msg.startswith(jax_says + " ")
    assert f"At key path {path}: {td} is not a prefix of the tree's structure " \
        f"{tu.tree_structure(tree)}" in msg
    if prefix is None or prefix == (None,):
        assert "None is a pytree node with no children" in msg


def test_tree_map_mismatch_begins_as_jax_says():
    # JAX 0.10.2: jax.tree.map(f, a, b) for these pairs.
    cases = [({"a": 1, "b": 2}, {"a": 1, "c": 2}, "different pytree metadata", ""),
             ({"a": 1}, {"a": 1, "b": 2}, "different numbers of pytree children", ""),
             ([1, 2], [1, 2, 3], "different lengths of list", ""),
             ({"a": (1, 2)}, {"a": (1,)}, "different lengths of tuple", "['a']"),
             ({"layer1": [True]}, {"layer1": {"w": 1}}, "different types", "['layer1']")]
    for a, b, kind, path in cases:
        with pytest.raises(ValueError) as info:
            tu.tree_map(lambda x, y: x, a, b)
        assert str(info.value).startswith(
            f"pytree structure error: {kind} at key path\n    tree_map tree{path}\n")


# ---------------------------------------------------------------------------------------------
# tree_map and friends.

def test_tree_map_multiple_trees_and_prefix():
    assert tu.tree_map(lambda a: a + 1, 1) == 2
    assert tu.tree_map(lambda *a: a, [1], [2], [3]) == [(1, 2, 3)]
    assert tu.tree_map(lambda x, y: x + y, {"a": 1, "b": 2}, {"b": 10, "a": 20}) == \
        {"a": 21, "b": 12}
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), ([3], {"x": 4})) == \
        ((1, [3]), (2, {"x": 4}))
    assert tu.tree_map(lambda a, b: (a, b), (1, None), (2, None)) == ((1, 2), None)
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), (2, None)) == ((1, 2), (2, None))
    assert tu.tree_map(lambda x: x, collections.defaultdict(int, {"b": 1, "a": 2})) == \
        collections.defaultdict(int, {"a": 2, "b": 1})
    doubled = tu.tree_map(lambda x: x * 2, [1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))
    assert doubled == [2, (2, 3, 2, 3)]


def test_tree_map_mismatch_names_both_structures():
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda a, b: a, (1, 2), [1, 2])
    msg = str(info.value)
    assert msg.startswith("pytree structure error: different types at key path\n")
    assert "tree_map: tree argument 1 does not have the first tree's structure" in msg
    assert "PyTreeDef((*, *))" in msg and "PyTreeDef([*, *])" in msg
    with pytest.raises(ValueError, match=r"tree argument 2 .*Tuple arity mismatch: 3 != 2"):
        tu.tree_map(lambda *a: a, (1, 2), (1, (2, 3)), (4, 5, 6))
    with pytest.raises(ValueError, match=r"None is a pytree node"):
        tu.tree_map(lambda a, b: a, (1, None), (2, 3))


def test_tree_map_does_not_relabel_errors_from_user_code():
    class Fussy:
        def __init__(self, v):
            self.v = v

    def flatten(x):
        if x.v < 0:
            raise ValueError("negative Fussy")
        return (x.v,), None

    tu.register_pytree_node(Fussy, flatten, lambda aux, ch: Fussy(*ch))
    with pytest.raises(ValueError, match="^negative Fussy$"):
        tu.tree_map(lambda a, b: a, [Fussy(1)], [Fussy(-1)])
    with pytest.raises(ZeroDivisionError):
        tu.tree_map(lambda a: 1 / a, [0])


def test_tree_transpose():
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    tree = [(1, 2, 3), (4, 5, 6)]
    assert tu.tree_transpose(outer, inner, tree) == ([1, 4], [2, 5], [3, 6])
    assert tu.tree_transpose(outer, None, tree) == ([1, 4], [2, 5], [3, 6])
    by_key = tu.tree_transpose(tu.tree_structure({"a": 0, "b": 0}), tu.tree_structure([0, 0]),
                               {"a": [1, 2], "b": [3, 4]})
    assert by_key == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    with pytest.raises(TypeError, match=r"expected a tree of structure "
                                        r"PyTreeDef\(\[\(\*, \*\), \(\*, \*\)\]\), got"):
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), tree)


def test_tree_all_and_reductions():
    assert tu.tree_all([True, (1, None)]) is True
    assert tu.tree_all([True, (0, None)]) is False
    assert tu.tree_all([]) is True
    assert tu.tree_all([True, None], is_leaf=lambda x: x is None) is False
    assert tu.tree_reduce(operator.add, [1, (2, 3)]) == 6
    assert tu.tree_reduce(operator.add, [1, (2, 3)], 10) == 16
    assert tu.tree_reduce(operator.add, [], 0) == 0
    assert tu.tree_reduce(lambda a, b: a + [b], [1, (2,)], []) == [1, 2]
    with pytest.raises(TypeError):
        tu.tree_reduce(operator.add, [])
    with pytest.raises(TypeError):                     # None is a real initializer
        tu.tree_reduce(operator.add, [1], None)
    int_list = lambda x: isinstance(x, list) and all(type(i) is int for i in x)  # noqa: E731
    assert tu.tree_reduce(operator.add, [[1], ([2], [3])], is_leaf=int_list) == [1, 2, 3]


def test_tree_reduce_associative_pairs_halves():
    show = lambda a, b: f"({a}+{b})"  # noqa: E731
    assert tu.tree_reduce_associative(show, [1, 2, 3, 4, 5]) == "((1+2)+(3+(4+5)))"
    assert tu.tree_reduce_associative(operator.add, (7,)) == 7
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="no identity"):
        tu.tree_reduce_associative(operator.add, [])


def test_tree_broadcast():
    assert tu.tree_broadcast((1, 2), ([3], {"a": 4})) == ([1], {"a": 2})
    assert tu.tree_broadcast({"a": 1, "b": 2}, {"a": (0, 0), "b": [0, {"x": 0}]}) == \
        {"a": (1, 1), "b": [2, {"x": 2}]}
    assert tu.tree_broadcast([(1, 2)], [[5, 6, 7]], is_leaf=lambda x: isinstance(x, tuple)) \
        == [[(1, 2), (1, 2), (1, 2)]]
    with pytest.raises(ValueError, match=r"not a prefix .*Expected list, got .*key path \[1\]"):
        tu.tree_broadcast((1, [2, 3]), ([3], {"a": 4}))
    with pytest.raises(ValueError, match=r"not a prefix"):
        tu.tree_broadcast((1, None), ([3], {"a": 4}))


def test_all_leaves():
    assert tu.all_leaves([1, 2, 3])
    assert tu.all_leaves(tu.tree_leaves({"a": [1, (2, None)]}))
    assert not tu.all_leaves([1, 2, (3,)])
    assert not tu.all_leaves([1, None])
    assert tu.all_leaves([None, 1], is_leaf=lambda x: x is None)
    assert tu.all_leaves([(1,)], is_leaf=lambda x: isinstance(x, tuple))


def test_flatten_one_level():
    assert tu.flatten_one_level((1, [2])) == ((1, [2]), None)
    assert tu.flatten_one_level([1, 2]) == ([1, 2], None)
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(collections.OrderedDict(b=1, a=2)) == ([1, 2], ("b", "a"))
    assert tu.flatten_one_level(collections.defaultdict(int, b=1, a=2)) == \
        ([2, 1], (int, ("a", "b")))
    assert tu.flatten_one_level(Pair(1, 2)) == ([1, 2], Pair)
    with pytest.raises(ValueError, match="got a leaf of type <class 'int'>"):
        tu.flatten_one_level(1)


def test_flatten_one_level_with_keys():
    assert tu.flatten_one_level_with_keys((1, [2])) == \
        (((SequenceKey(0), 1), (SequenceKey(1), [2])), None)
    assert tu.flatten_one_level_with_keys({"b": 1, "a": 2}) == \
        (((DictKey("a"), 2), (DictKey("b"), 1)), ("a", "b"))
    assert tu.flatten_one_level_with_keys(None) == ((), None)
    # jax 0.10.2 names both children GetAttrKey('x') here; the field names are meant.
    assert tu.flatten_one_level_with_keys(Point(1, 2)) == \
        ([(GetAttrKey("x"), 1), (GetAttrKey("y"), 2)], Point)
    with pytest.raises(ValueError):
        tu.flatten_one_level_with_keys(1.5)


def test_is_tree_node():
    assert tu.is_tree_node(tuple) and tu.is_tree_node(type(None))
    assert tu.is_tree_node(Point) and tu.is_tree_node(collections.OrderedDict)
    assert tu.is_tree_node(Partial)
    assert not tu.is_tree_node(int) and not tu.is_tree_node(np.ndarray)

    class T(tuple):
        pass
    assert not tu.is_tree_node(T)
    with pytest.raises(TypeError, match="expects a type"):
        tu.is_tree_node(None)  # type: ignore[arg-type]


def test_numpy_arrays_are_leaves():
    a, b = np.arange(3), np.ones((2, 2))
    leaves, td = tu.tree_flatten({"w": a, "b": (b,)})
    assert leaves[0] is b and leaves[1] is a
    assert repr(td) == "PyTreeDef({'b': (*,), 'w': *})"
    out = tu.tree_map(lambda x: x * 2, {"w": a, "b": (b,)})
    np.testing.assert_array_equal(out["w"], [0, 2, 4])


# ---------------------------------------------------------------------------------------------
# Key paths.

def test_key_entry_reprs_and_equality():
    assert (repr(SequenceKey(0)), str(SequenceKey(0))) == ("SequenceKey(idx=0)", "[0]")
    assert (repr(DictKey("a")), str(DictKey("a"))) == ("DictKey(key='a')", "['a']")
    assert (repr(DictKey(1)), str(DictKey(1))) == ("DictKey(key=1)", "[1]")
    assert (repr(GetAttrKey("n")), str(GetAttrKey("n"))) == ("GetAttrKey(name='n')", ".n")
    assert (repr(FlattenedIndexKey(0)), str(FlattenedIndexKey(0))) == \
        ("FlattenedIndexKey(key=0)", "[<flat index 0>]")
    assert SequenceKey(0) == SequenceKey(idx=0)
    assert hash(SequenceKey(0)) == hash(SequenceKey(0))
    assert SequenceKey(0) != FlattenedIndexKey(0)
    assert (SequenceKey(3).idx, DictKey("a").key, GetAttrKey("n").name,
            FlattenedIndexKey(2).key) == (3, "a", "n", 2)
    match DictKey("k"):
        case DictKey(key=k):
            assert k == "k"
    with pytest.raises(dataclasses.FrozenInstanceError):
        SequenceKey(0).idx = 1  # type: ignore[misc]


def test_keystr_forms():
    path = (GetAttrKey("a"), DictKey(1), FlattenedIndexKey(2), SequenceKey(3), "raw")
    assert tu.keystr(path) == ".a[1][<flat index 2>][3]raw"
    assert tu.keystr(path[:4], simple=True) == "a123"
    assert tu.keystr((GetAttrKey("a"), DictKey("x"), DictKey(1)), simple=True,
                     separator=", ") == "a, x, 1"
    assert tu.keystr((DictKey(("t", 1)),)) == "[('t', 1)]"
    assert tu.keystr((DictKey(("t", 1)),), simple=True) == "('t', 1)"
    assert tu.keystr((DictKey("a"), SequenceKey(0)), separator="/") == "['a']/[0]"
    assert tu.keystr(()) == "" and tu.keystr((), simple=True) == ""


def test_tree_flatten_with_path_builtins():
    tree = (1, {"b": 2, "a": [3, None]}, Point(4, 5),
            collections.OrderedDict([("z", 6), ("y", 7)]),
            collections.defaultdict(list, {"q": 8, "p": 9}))
    pairs, td = tu.tree_flatten_with_path(tree)
    assert td == tu.tree_structure(tree)
    assert [x for _, x in pairs] == tu.tree_leaves(tree)
    assert pairs[1][0] == (SequenceKey(1), DictKey("a"), SequenceKey(0))
    assert [tu.keystr(p) for p, _ in pairs] == [
        "[0]", "[1]['a'][0]", "[1]['b']", "[2].x", "[2].y", "[3]['z']", "[3]['y']",
        "[4]['p']", "[4]['q']"]
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in pairs] == [
        "0", "1/a/0", "1/b", "2/x", "2/y", "3/z", "3/y", "4/p", "4/q"]
    assert tu.tree_leaves_with_path({2: "x", 1: "y"}) == \
        [((DictKey(1),), "y"), ((DictKey(2),), "x")]
    as_leaf = tu.tree_flatten_with_path([1, None, {"a": 2}], is_leaf=lambda x: x is None)
    assert [tu.keystr(p) for p, _ in as_leaf[0]] == ["[0]", "[1]", "[2]['a']"]
    assert repr(as_leaf[1]) == "PyTreeDef([*, *, {'a': *}])"


def test_tree_map_with_path():
    out = tu.tree_map_with_path(lambda p, x: tu.keystr(p), [1, None, {"a": 2}])
    assert out == ["[0]", None, {"a": "[2]['a']"}]
    assert tu.tree_map_with_path(lambda p, x, y: (x, y), [1, {"a": 2}], [3, {"a": 4}]) == \
        [(1, 3), {"a": (2, 4)}]
    by_path = tu.tree_map_with_path(lambda p, x: tu.keystr(p), [1, (2, 3)],
                                    is_leaf=lambda p, x: len(p) == 1, is_leaf_takes_path=True)
    assert by_path == ["[0]", "[1]"]
    pairs, td = tu.tree_flatten_with_path([1, (2, 3)], is_leaf=lambda p, x: len(p) == 1,
                                          is_leaf_takes_path=True)
    assert pairs == [((SequenceKey(0),), 1), ((SequenceKey(1),), (2, 3))]
    with pytest.raises(ValueError, match="tree_map_with_path: tree argument 1"):
        tu.tree_map_with_path(lambda p, x, y: x, [1, 2], [1])


# ---------------------------------------------------------------------------------------------
# Registration.

@tu.register_pytree_with_keys_class
class Keyed:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten_with_keys(self):
        return ((GetAttrKey("a"), self.a), (DictKey("bee"), self.b)), "K!"

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tu.register_pytree_node_class
class Plain:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __eq__(self, other):
        return type(other) is Plain and (self.a, self.b) == (other.a, other.b)


def test_registered_classes_match_jax_paths_and_reprs():
    tree = {"k": Keyed(1, [2]), "n": Plain(3, (4,)),
            "od": collections.OrderedDict([("z", 5), ("a", 6)]),
            "dd": collections.defaultdict(int, {2: 7, 1: 8}),
            "p": Partial(operator.mul, 9, w=10)}
    td = tu.tree_structure(tree)
    assert repr(td) == (
        "PyTreeDef({'dd': CustomNode(defaultdict[(<class 'int'>, (1, 2))], [*, *]), "
        "'k': CustomNode(Keyed[K!], [*, [*]]), 'n': CustomNode(Plain[None], [*, (*,)]), "
        "'od': CustomNode(OrderedDict[('z', 'a')], [*, *]), "
        "'p': CustomNode(Partial[<built-in function mul>], [(*,), {'w': *}])})")
    assert (td.num_nodes, td.num_leaves) == (20, 10)
    assert tu.tree_leaves(tree) == [8, 7, 1, 2, 3, 4, 5, 6, 9, 10]
    paths = [p for p, _ in tu.tree_leaves_with_path(tree)]
    assert [tu.keystr(p) for p in paths] == [
        "['dd'][1]", "['dd'][2]", "['k'].a", "['k']['bee'][0]", "['n'][<flat index 0>]",
        "['n'][<flat index 1>][0]", "['od']['z']", "['od']['a']", "['p'][<flat index 0>][0]",
        "['p'][<flat index 1>]['w']"]
    assert [tu.keystr(p, simple=True, separator="/") for p in paths] == [
        "dd/1", "dd/2", "k/a", "k/bee/0", "n/0", "n/1/0", "od/z", "od/a", "p/0/0", "p/1/w"]
    rebuilt = tu.tree_unflatten(td, tu.tree_leaves(tree))
    assert rebuilt["n"] == Plain(3, (4,)) and rebuilt["k"].b == [2]
    assert tu.tree_structure(Keyed(1, 2)) == tu.tree_structure(Keyed(3, 4))
    assert tu.tree_map_with_path(lambda p, x: len(p), tree)["n"] == Plain(2, (3,))


def test_register_pytree_node_functions_and_duplicates():
    class Box:
        def __init__(self, a, b, meta):
            self.a, self.b, self.meta = a, b, meta

    seen = []

    def unflatten(meta, children):
        seen.append(type(children))
        return Box(*children, meta)

    tu.register_pytree_node(Box, lambda x: ([x.a, x.b], x.meta), unflatten)
    td = tu.tree_structure(Box(1, [2], "m"))
    assert repr(td) == "PyTreeDef(CustomNode(Box[m], [*, [*]]))"
    out = td.unflatten([5, 6])
    assert (out.a, out.b, out.meta) == (5, [6], "m") and seen == [tuple]
    assert tu.flatten_one_level(Box(1, [2], "m")) == ([1, [2]], "m")
    assert tu.flatten_one_level_with_keys(Box(1, [2], "m")) == \
        ([(FlattenedIndexKey(0), 1), (FlattenedIndexKey(1), [2])], "m")
    with pytest.raises(ValueError, match=r"Mismatch custom node data: 'm' != 'n'"):
        td.flatten_up_to(Box(1, [2], "n"))
    assert td.flatten_up_to(Box((1, 2), [{"x": 3}], "m")) == [(1, 2), {"x": 3}]
    for typ in (Box, tuple, dict, type(None), collections.OrderedDict, Partial):
        with pytest.raises(ValueError, match="already registered"):
            tu.register_pytree_node(typ, lambda x: ((), None), lambda a, c: None)
    with pytest.raises(TypeError, match="must be a class"):
        tu.register_pytree_node("Box", lambda x: ((), None), lambda a, c: None)


def test_register_pytree_with_keys_derives_flatten():
    class Two:
        def __init__(self, p, q):
            self.p, self.q = p, q

    tu.register_pytree_with_keys(
        Two, lambda t: (((GetAttrKey("p"), t.p), (GetAttrKey("q"), t.q)), None),
        lambda aux, ch: Two(*ch))
    assert tu.tree_leaves(Two(1, (2, 3))) == [1, 2, 3]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Two(1, (2, 3)))] == \
        [".p", ".q[0]", ".q[1]"]


def test_register_dataclass_decorator_infers_static_fields():
    @tu.register_dataclass
    @dataclasses.dataclass
    class DC:
        x: object
        y: object
        op: str = dataclasses.field(metadata=dict(static=True), default="add")

    td = tu.tree_structure(DC(1, [2, 3]))
    assert repr(td) == "PyTreeDef(CustomNode(DC[('add',)], [*, [*, *]]))"
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(DC(1, [2, 3]))] == \
        [".x", ".y[0]", ".y[1]"]
    assert td.unflatten([5, 6, 7]) == DC(5, [6, 7], "add")
    assert td != tu.tree_structure(DC(1, [2, 3], "sub"))
    assert tu.flatten_one_level(DC(1, [2, 3])) == ((1, [2, 3]), ("add",))


def test_register_dataclass_explicit_fields_and_drop():
    @functools.partial(tu.register_dataclass, data_fields=["y", "x"], meta_fields=[])
    @dataclasses.dataclass
    class DC2:
        x: int
        y: int

    leaves, td = tu.tree_flatten(DC2(1, 2))
    assert leaves == [2, 1] and repr(td) == "PyTreeDef(CustomNode(DC2[()], [*, *]))"

    @dataclasses.dataclass
    class DC4:
        x: int
        y: int = 0

    tu.register_dataclass(DC4, data_fields=["x"], meta_fields=[], drop_fields=["y"])
    assert tu.tree_leaves(DC4(1, 2)) == [1]
    assert tu.tree_structure(DC4(1, 2)).unflatten([3]) == DC4(3, 0)

    class NotDC:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_dataclass(NotDC, data_fields=["a"], meta_fields=["b"])
    assert repr(tu.tree_structure(NotDC(1, 2))) == "PyTreeDef(CustomNode(NotDC[(2,)], [*]))"
    assert tu.tree_leaves_with_path(NotDC(1, 2)) == [((GetAttrKey("a"),), 1)]


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class DC3:
        x: int
        y: int
        z: int = dataclasses.field(init=False, default=0)

    with pytest.raises(ValueError, match=r"missing \['y'\], unexpected \[\]"):
        tu.register_dataclass(DC3, data_fields=["x"], meta_fields=[])
    with pytest.raises(ValueError, match=r"unexpected \['q'\]"):
        tu.register_dataclass(DC3, data_fields=["x", "y", "q"], meta_fields=[])
    with pytest.raises(ValueError, match=r"fields \['x'\] are listed in both"):
        tu.register_dataclass(DC3, data_fields=["x"], meta_fields=["x", "y"])
    with pytest.raises(TypeError, match="both data_fields and meta_fields or neither"):
        tu.register_dataclass(DC3, data_fields=["x"])

    class NotDC:
        pass

    with pytest.raises(TypeError, match="is not a dataclass"):
        tu.register_dataclass(NotDC)
    # Inference skips init=False fields; the registration then succeeds.
    tu.register_dataclass(DC3)
    assert tu.tree_leaves(DC3(1, 2)) == [1, 2]


def test_register_static():
    @tu.register_static
    class S:
        def __init__(self, v):
            self.v = v

        def __eq__(self, other):
            return isinstance(other, S) and self.v == other.v

        def __hash__(self):
            return hash(self.v)

        def __repr__(self):
            return f"S({self.v})"

    leaves, td = tu.tree_flatten([S(1), 2])
    assert leaves == [2]
    assert repr(td) == "PyTreeDef([CustomNode(S[S(1)], []), *])"
    assert tu.tree_structure([S(1)]) == tu.tree_structure([S(1)])
    assert tu.tree_structure([S(1)]) != tu.tree_structure([S(2)])
    assert tu.tree_unflatten(tu.tree_structure([S(1)]), []) == [S(1)]
    assert tu.tree_leaves_with_path([S(1)]) == []


# ---------------------------------------------------------------------------------------------
# Partial.

def test_partial_is_a_pytree():
    p = Partial(operator.add, 1)
    assert p(2) == 3 and repr(p) == "Partial(<built-in function add>, 1)"
    leaves, td = tu.tree_flatten(Partial(operator.add, 1, k=[2]))
    assert leaves == [1, 2]
    assert repr(td) == \
        "PyTreeDef(CustomNode(Partial[<built-in function add>], [(*,), {'k': [*]}]))"
    assert tu.tree_map(lambda x: x * 10, Partial(operator.add, 1))(2) == 12
    assert tu.tree_structure(Partial(operator.add, 1)) == \
        tu.tree_structure(Partial(operator.add, 2))
    assert tu.tree_structure(Partial(operator.add, 1)) != \
        tu.tree_structure(Partial(operator.mul, 2))
    assert hash(tu.tree_structure(Partial(operator.add, 1))) == \
        hash(tu.tree_structure(Partial(operator.add, 5)))
    rebuilt = tu.tree_unflatten(td, [3, 4])
    assert isinstance(rebuilt, Partial) and rebuilt.args == (3,) and rebuilt.keywords == {"k": [4]}


def test_partial_of_partial_keeps_inner_arguments_static():
    inner = functools.partial(operator.mul, 2)
    p = Partial(inner, 3)
    assert p() == 6
    assert p.args == (3,)
    assert (p.func.func, p.func.args) == (operator.mul, (2,))
    assert tu.tree_leaves(p) == [3]
    assert tu.tree_unflatten(tu.tree_structure(p), [5])() == 10
    assert tu.tree_structure(p) == tu.tree_structure(Partial(inner, 4))


# ---------------------------------------------------------------------------------------------
# Property tests on random nested trees.

_leaf = st.one_of(st.integers(-5, 5), st.text(max_size=2), st.floats(allow_nan=False))
_key = st.text(alphabet="abcde", min_size=1, max_size=2)


def _extend(children):
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(_key, children, max_size=4),
        st.dictionaries(_key, children, max_size=4).map(
            lambda d: collections.OrderedDict(reversed(list(d.items())))),
        st.tuples(children, children).map(lambda t: Point(*t)),
        st.tuples(children, children).map(lambda t: Pair(*t)),
        st.dictionaries(_key, children, max_size=3).map(
            lambda d: collections.defaultdict(list, d)),
    )


trees = st.recursive(st.one_of(_leaf, st.none()), _extend, max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(trees)
def test_property_roundtrip_and_identity_map(tree):
    leaves, td = tu.tree_flatten(tree)
    assert td.num_leaves == len(leaves)
    assert tu.tree_unflatten(td, leaves) == tree
    assert tu.tree_map(lambda x: x, tree) == tree
    assert tu.tree_structure(tu.tree_map(lambda x: 0, tree)) == td
    assert td.flatten_up_to(tree) == leaves
    pairs, td2 = tu.tree_flatten_with_path(tree)
    assert td2 == td and [x for _, x in pairs] == leaves
    assert len({p for p, _ in pairs}) == len(pairs)
    assert len({tu.keystr(p) for p, _ in pairs}) == len(pairs)
    assert sum(c.num_nodes for c in td.children()) + 1 == td.num_nodes


@settings(max_examples=150, deadline=None)
@given(trees, trees)
def test_property_equality_and_hash_consistency(a, b):
    ta, tb = tu.tree_structure(a), tu.tree_structure(b)
    assert ta == tu.tree_structure(a) and hash(ta) == hash(tu.tree_structure(a))
    if ta == tb:
        assert hash(ta) == hash(tb)
        assert repr(ta) == repr(tb)
    # Equal reprs with only built-in, namedtuple and sortable keys imply equal structures.
    assert (repr(ta) == repr(tb)) == (ta == tb)
