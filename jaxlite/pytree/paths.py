"""Key-path entries for pytrees (the key classes of `jax.tree_util`).

A key path is a tuple of entries, one per level, naming how to reach a leaf from the root:
`SequenceKey` for tuple/list positions, `DictKey` for mapping keys, `GetAttrKey` for
attributes (namedtuples, dataclasses) and `FlattenedIndexKey` for custom nodes registered
without a key-aware flatten function. `jaxlite.tree_util` re-exports everything here.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Hashable, TypeVar

__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath",
           "SequenceKey", "keystr"]

# Any object may serve as a key entry (custom flatten functions choose their own), so these
# are only names for documentation, as in JAX.
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]


# Frozen dataclasses give immutability, structural equality restricted to the same class,
# hashing and `__match_args__`; their generated repr is already the `Name(field=value)` form.
@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Position `idx` in a tuple or list (mirrors `jax.tree_util.SequenceKey`)."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Key `key` of a dict-like node (mirrors `jax.tree_util.DictKey`)."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Attribute `name` of a namedtuple or dataclass (mirrors `jax.tree_util.GetAttrKey`)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Child number `key` of a custom node that has no key-aware flattening.

    Mirrors `jax.tree_util.FlattenedIndexKey`.
    """

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _simple_str(entry: Any) -> str:
    # The compact form drops the brackets and quotes, keeping only the payload.
    if isinstance(entry, SequenceKey):
        return str(entry.idx)
    if isinstance(entry, DictKey):
        return str(entry.key)
    if isinstance(entry, GetAttrKey):
        return str(entry.name)
    if isinstance(entry, FlattenedIndexKey):
        return str(entry.key)
    return str(entry)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str | None = None) -> str:
    """Render a key path as a string (mirrors `jax.tree_util.keystr`).

    Parameters
    ----------
    keys : tuple
        Key entries, as produced by `tree_flatten_with_path`; any object with a `str` works.
    simple : bool
        If True, render each entry without brackets or quotes (`0`, `a`, `name`), which is
        shorter but ambiguous (`0` may be a position or a dict key).
    separator : str or None
        Text placed between entries; None means no separator.

    Returns
    -------
    str
        For example `"[1]['a'].x"`, or `"1/a/x"` with `simple=True, separator='/'`.
    """
    render = _simple_str if simple else str
    return ("" if separator is None else separator).join(render(k) for k in keys)
