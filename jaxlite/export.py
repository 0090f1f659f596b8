"""Exporting jitted functions as portable programs (mirrors `jax.export`).

`export(jit(f))(*args)` gives an `Exported`: the program for those argument types, with its
pytree structures and avals, callable (`call`, under jit and grad), printable as StableHLO
(`mlir_module()`), and serializable to bytes (`serialize` / `deserialize`, a versioned
format without pickles, see `jaxlite.transforms.export.serialization`).
`from_stablehlo(text)` (jaxlite's own) makes an `Exported` of StableHLO text that
`jax.jit(f).lower(*args).as_text()` printed. Implemented in `jaxlite.transforms.export`.

Shape polymorphism: `symbolic_shape("b, ...", like=...)` gives shapes with symbolic
dimensions (`jaxlite.core.shape_poly.DimExpr`); a function exported for them runs at every
size that fits. Not yet: shardings over several devices.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import shape_poly
from jaxlite.core.shape_poly_parse import SymbolicScope, parse
from jaxlite.transforms.export.exported import (CALLING_CONVENTION_VERSION, Exported,
                                                default_export_platform, deserialize, export)
from jaxlite.transforms.export.from_stablehlo import from_stablehlo
from jaxlite.transforms.export.serialization import (register_namedtuple_serialization,
                                                     register_pytree_node_serialization)
from jaxlite.transforms.tracing import ShapeDtypeStruct
from jaxlite.tree_util import tree_flatten, tree_unflatten

__all__ = ["DisabledSafetyCheck", "Exported", "SymbolicScope", "default_export_platform",
           "deserialize", "export", "from_stablehlo", "is_symbolic_dim",
           "maximum_supported_calling_convention_version",
           "minimum_supported_calling_convention_version", "register_namedtuple_serialization",
           "register_pytree_node_serialization", "symbolic_args_specs", "symbolic_shape"]

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = CALLING_CONVENTION_VERSION


class DisabledSafetyCheck:
    """A safety check that `export` may skip (mirrors `jax.export.DisabledSafetyCheck`)."""

    def __init__(self, name: str) -> None:
        self._name = name

    @classmethod
    def platform(cls) -> "DisabledSafetyCheck":
        """Allow calling on a platform the function was not exported for."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> "DisabledSafetyCheck":
        """Allow a custom call to `target_name` that is not known to be stable."""
        return cls(f"custom_call:{target_name}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f"DisabledSafetyCheck({self._name!r})"


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None,
                   like: Sequence[int | None] | None = None) -> tuple:
    """The shape that `shape_spec` spells, with symbolic dimensions (mirrors
    `jax.export.symbolic_shape`): `"b"`, `"b, 4"`, `"(b, 2*b + 1)"`, and with `like` (a
    concrete shape, None where unknown) `"b, ..."` and `"_, b"` take the known sizes."""
    if constraints and scope is not None:
        raise ValueError("Cannot specify both a `scope` and `constraints`")
    scope = scope if scope is not None else SymbolicScope(constraints)
    text = "..." if shape_spec is None else shape_spec.strip()  # None: all of `like`
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    pieces = [p.strip() for p in text.split(",")] if text.strip() else []
    if pieces and pieces[-1] == "":
        pieces.pop()  # "b," is a one-dimensional shape
    if pieces and pieces[-1] == "...":
        if like is None:
            raise ValueError(f"syntax error in symbolic shape {shape_spec!r} in dimension "
                             f"{len(pieces) - 1}: spec contains ... but no 'like' shape was "
                             "given (the shape whose remaining dimensions it stands for).")
        pieces = pieces[:-1] + ["_"] * (len(like) - len(pieces) + 1)
    if like is not None and len(like) != len(pieces):
        raise ValueError(f"syntax error in symbolic shape '{shape_spec}': it has "
                         f"{len(pieces)} dimensions but like={tuple(like)} has {len(like)}")
    dims = []
    for i, piece in enumerate(pieces):
        known = None if like is None else like[i]
        dims.append(_dimension(shape_spec, i, piece, known, like, scope))
    return tuple(dims)


def _dimension(spec: Any, i: int, piece: str, known: int | None, like: Any,
               scope: SymbolicScope) -> Any:
    if piece == "_":
        if known is None:
            raise ValueError(f"syntax error in symbolic shape '{spec}' in dimension {i}: "
                             "'_' needs a known size in `like`")
        return int(known)
    dim = parse(piece, scope)
    if known is not None and not shape_poly.is_symbolic_dim(dim) and dim != known:
        raise ValueError(f"syntax error in symbolic shape '{spec}' in dimension {i}: "
                         f"different size {dim} for known dimension; like={tuple(like)}")
    return dim


def symbolic_args_specs(args: Any, shapes_specs: Any, constraints: Sequence[str] = (),
                        scope: SymbolicScope | None = None) -> Any:
    """`ShapeDtypeStruct`s like `args` with the shapes of `shapes_specs` (one
    specification for all, or a pytree of them; mirrors `jax.export.symbolic_args_specs`)."""
    if constraints and scope is not None:
        raise ValueError("Cannot specify both a `scope` and `constraints`")
    scope = scope if scope is not None else SymbolicScope(constraints)
    leaves, tree = tree_flatten(args)
    if isinstance(shapes_specs, (str, type(None))):
        specs = [shapes_specs] * len(leaves)
    else:
        specs = tree_flatten(shapes_specs, is_leaf=lambda s: s is None)[0]
    structs = [ShapeDtypeStruct(symbolic_shape(spec, scope=scope, like=np.shape(x)),
                                x.dtype) for x, spec in zip(leaves, specs)]
    return tree_unflatten(tree, structs)


def is_symbolic_dim(p: Any) -> bool:
    """Whether `p` is a symbolic dimension (mirrors `jax.export.is_symbolic_dim`)."""
    return shape_poly.is_symbolic_dim(p)
