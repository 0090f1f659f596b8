"""The bytes of an `Exported`: a documented, versioned format without pickles.

Layout: the 8 bytes `JLEXPORT`, the format version as a 4-byte little-endian integer, then
one UTF-8 JSON object:

    fun_name, platforms, calling_convention_version : as on the Exported
    in_tree, out_tree : pytree structures (below)
    in_avals, out_avals : [shape list, dtype name ("float0" for the cotangents of
        integer outputs in a VJP), weak_type] per leaf; a symbolic
        dimension is its expression as a string (`"b"`, `"2*b + 1"`)
    symbolic_constraints : the constraints of the symbolic dimensions' scope (`"b >= 2"`)
    hlo : the program in jaxlite's HLO text (metadata included); with symbolic dimensions,
        its sizes are those expressions (`f32[b,4]`), evaluated when it is called
    vjp : the same object for the VJP's Exported, or null (`serialize(vjp_order=...)`)

Versions: 1 had no symbolic dimensions (no `symbolic_constraints`); 2 adds them. Both are
read.

A pytree structure is JSON: `"*"` for a leaf, `null` for None, `{"tuple": [...]}`,
`{"list": [...]}`, `{"dict": [[key, child], ...]}` (str or int keys, in the dict's sorted
order), and `{"node": name, "aux": ..., "children": [...]}` for a namedtuple or custom node
registered with `register_namedtuple_serialization` / `register_pytree_node_serialization`
(its aux data as the JSON its serializer gave). Reading a newer format raises ValueError.
"""
from __future__ import annotations

import json
import struct
from typing import Any, Callable

import numpy as np

from jaxlite.core import dtypes, shape_poly
from jaxlite.core.avals import ShapedArray
from jaxlite.core.shape_poly_parse import SymbolicScope, parse
from jaxlite.pytree.treedef import default_registry
from jaxlite.tree_util import PyTreeDef, tree_flatten

__all__ = ["FORMAT_VERSION", "MAGIC", "dumps", "loads", "register_namedtuple_serialization",
           "register_pytree_node_serialization"]

MAGIC = b"JLEXPORT"
FORMAT_VERSION = 2

# serialized name -> (node type, aux to JSON, JSON to aux); node type -> serialized name.
_BY_NAME: dict[str, tuple[type, Callable[[Any], Any], Callable[[Any], Any]]] = {}
_NAME_OF: dict[type, str] = {}


def register_pytree_node_serialization(nodetype: type, *, serialized_name: str,
                                       serialize_auxdata: Callable[[Any], bytes],
                                       deserialize_auxdata: Callable[[bytes], Any]) -> type:
    """Let Exported structures hold `nodetype` nodes, under `serialized_name` (mirrors
    `jax.export.register_pytree_node_serialization`); its aux data goes through the two
    functions (bytes, stored as hex)."""
    _register(nodetype, serialized_name, lambda aux: serialize_auxdata(aux).hex(),
              lambda text: deserialize_auxdata(bytes.fromhex(text)))
    return nodetype


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Let Exported structures hold the namedtuple class `nodetype` (mirrors
    `jax.export.register_namedtuple_serialization`)."""
    if not (issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        raise ValueError(f"Cannot register {nodetype} as a namedtuple: it is not one.")
    _register(nodetype, serialized_name, lambda aux: None, lambda text: None)
    return nodetype


def _register(nodetype: type, name: str, to_json: Callable, from_json: Callable) -> None:
    if name in _BY_NAME:
        raise ValueError(f"Duplicate serialization registration for serialized_name "
                         f"'{name}' (already {_BY_NAME[name][0]}).")
    if nodetype in _NAME_OF:
        raise ValueError(f"Duplicate serialization registration for type {nodetype}.")
    _BY_NAME[name] = (nodetype, to_json, from_json)
    _NAME_OF[nodetype] = name


# ------------------------------------------------------------------------------ structures

def _tree_to_json(tree: PyTreeDef) -> Any:
    data = tree.node_data()
    if data is None:
        return "*"
    kind, aux = data
    children = [_tree_to_json(c) for c in tree.children()]
    if kind is type(None):
        return None
    if kind is tuple:
        return {"tuple": children}
    if kind is list:
        return {"list": children}
    if kind is dict:
        if not all(isinstance(k, (str, int)) for k in aux):
            raise ValueError(f"Cannot serialize a dict with keys {list(aux)}: only str and "
                             "int keys can be serialized.")
        return {"dict": [[k, c] for k, c in zip(aux, children)]}
    name = _NAME_OF.get(kind)
    if name is None:
        raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type "
                         f"{kind}. Use `export.register_pytree_node_serialization` or "
                         "`export.register_namedtuple_serialization`.")
    return {"node": name, "aux": _BY_NAME[name][1](aux), "children": children}


def _example_from_json(node: Any, leaf: object) -> Any:
    """A tree of the structure `node` with `leaf` at every leaf."""
    if node == "*":
        return leaf
    if node is None:
        return None
    if "tuple" in node:
        return tuple(_example_from_json(c, leaf) for c in node["tuple"])
    if "list" in node:
        return [_example_from_json(c, leaf) for c in node["list"]]
    if "dict" in node:
        return {k: _example_from_json(c, leaf) for k, c in node["dict"]}
    name = node["node"]
    if name not in _BY_NAME:
        raise ValueError(f"Cannot deserialize a PyTreeDef with the node '{name}', which is "
                         "not registered here: register it with "
                         "`export.register_pytree_node_serialization` first.")
    nodetype, _, from_json = _BY_NAME[name]
    children = [_example_from_json(c, leaf) for c in node["children"]]
    if issubclass(nodetype, tuple) and hasattr(nodetype, "_fields"):
        return nodetype(*children)
    return _unflatten_custom(nodetype, from_json(node["aux"]), children)


def _unflatten_custom(nodetype: type, aux: Any, children: list) -> Any:
    spec = default_registry.nodes.get(nodetype)
    if spec is None:
        raise ValueError(f"Cannot deserialize {nodetype}: it is registered for serialization "
                         "but not as a pytree node type (register_pytree_node).")
    return spec.unflatten(aux, children)


def _tree_from_json(node: Any) -> PyTreeDef:
    return tree_flatten(_example_from_json(node, object()))[1]


# --------------------------------------------------------------------------- avals, bytes

def _aval_to_json(aval: ShapedArray) -> list:
    shape = [str(d) if shape_poly.is_symbolic_dim(d) else int(d) for d in aval.shape]
    dtype = "float0" if aval.dtype == dtypes.float0 else np.dtype(aval.dtype).name
    return [shape, dtype, bool(aval.weak_type)]


def _aval_from_json(item: list, scope: SymbolicScope) -> ShapedArray:
    shape, dtype, weak = item
    dims = tuple(parse(d, scope) if isinstance(d, str) else d for d in shape)
    dtype = dtypes.float0 if dtype == "float0" else np.dtype(dtype)
    return ShapedArray(dims, dtype, weak_type=weak)


def _scope_of(avals: Any) -> SymbolicScope | None:
    for aval in avals:
        for d in aval.shape:
            if shape_poly.is_symbolic_dim(d):
                return d.scope
    return None


def to_json(fields: dict[str, Any]) -> dict[str, Any]:
    """An Exported's fields (`in_tree` ..., `hlo`, `vjp`) as a JSON-able object."""
    out = dict(fields)
    out["in_tree"] = _tree_to_json(fields["in_tree"])
    out["out_tree"] = _tree_to_json(fields["out_tree"])
    out["in_avals"] = [_aval_to_json(a) for a in fields["in_avals"]]
    out["out_avals"] = [_aval_to_json(a) for a in fields["out_avals"]]
    scope = _scope_of(fields["in_avals"])
    out["symbolic_constraints"] = list(scope.constraints_str) if scope is not None else []
    return out


def from_json(data: dict[str, Any]) -> dict[str, Any]:
    """The inverse of `to_json` (the `vjp` entry left as JSON)."""
    out = dict(data)
    out["in_tree"] = _tree_from_json(data["in_tree"])
    out["out_tree"] = _tree_from_json(data["out_tree"])
    # One scope for the dimensions of one Exported, as `symbolic_shape` made them.
    scope = SymbolicScope(out.pop("symbolic_constraints", ()))
    out["in_avals"] = tuple(_aval_from_json(a, scope) for a in data["in_avals"])
    out["out_avals"] = tuple(_aval_from_json(a, scope) for a in data["out_avals"])
    out["platforms"] = tuple(data["platforms"])
    return out


def dumps(data: dict[str, Any]) -> bytearray:
    """The bytes of a JSON-able Exported (see the module's docstring)."""
    payload = json.dumps(data, separators=(",", ":")).encode()
    return bytearray(MAGIC + struct.pack("<I", FORMAT_VERSION) + payload)


def loads(blob: bytes | bytearray) -> dict[str, Any]:
    """The JSON object of serialized bytes; ValueError for anything else."""
    blob = bytes(blob)
    if len(blob) < 12 or blob[:8] != MAGIC:
        raise ValueError("deserialize: these bytes are not an Exported serialized by "
                         "jaxlite (they do not start with b'JLEXPORT').")
    (version,) = struct.unpack("<I", blob[8:12])
    if version > FORMAT_VERSION:
        raise ValueError(f"deserialize: the Exported was serialized in format version "
                         f"{version} by a newer jaxlite; this jaxlite reads versions up to "
                         f"{FORMAT_VERSION}. Upgrade jaxlite to load it.")
    try:
        return json.loads(blob[12:].decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"deserialize: the serialized Exported is damaged ({error}).") \
            from None
