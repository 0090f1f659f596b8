"""Mutable array references (mirrors `jax.ref`: `new_ref`, `Ref`, `get`, `set`, ...).

A `Ref` holds an array that `ref[idx] = value` (or `set`, `swap`, `addupdate`) replaces in
place, read back with `ref[idx]` (`get`). jaxlite supports refs in eager code only: JAX
threads them through `jit`, `grad` and `vmap` as state effects, which jaxlite's tracer
does not model yet, so creating, reading or writing a ref while a transformation traces
raises `NotImplementedError` rather than baking a stale value into the program.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jaxlite import numpy as jnp
from jaxlite.core.avals import AbstractValue, ShapedArray, get_aval
from jaxlite.core.trace import EvalTrace, Tracer, current_trace

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
           "new_ref", "set", "swap"]


class AbstractRef(AbstractValue):
    """The abstract value of a ref: the aval of the array it holds (mirrors
    `jax.ref.AbstractRef`; printed `Ref{float32[3]}`)."""

    def __init__(self, inner_aval: ShapedArray, memory_space: Any = None,
                 kind: Any = None) -> None:
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractRef) and other.inner_aval == self.inner_aval

    def __hash__(self) -> int:
        return hash(("ref", self.inner_aval))

    def __repr__(self) -> str:
        return f"Ref{{{self.inner_aval.str_long()}}}"


def _eager_only(what: str) -> None:
    if not isinstance(current_trace(), EvalTrace):
        raise NotImplementedError(
            f"{what} under a transformation (jit, grad, vmap, ...): jaxlite supports "
            "mutable refs (jax.new_ref) in eager code only. Pass the array as an argument "
            "and return its new value instead.")


class Ref:
    """A mutable reference to an array (mirrors `jax.Ref`)."""

    def __init__(self, aval: AbstractRef, refs: Any = None) -> None:
        self.aval = aval
        self._value: Any = refs

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    def __getitem__(self, idx: Any) -> Any:
        return get(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        set(self, idx, value)

    def __repr__(self) -> str:
        return "Ref" + repr(self._value)[len("Array"):]


def _index(idx: Any) -> Any:
    if idx is None or idx is Ellipsis:
        return ()
    parts = idx if isinstance(idx, tuple) else (idx,)
    parts = tuple(p.as_slice() if isinstance(p, Slice) else p for p in parts)
    return parts if isinstance(idx, tuple) else parts[0]


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A new ref holding `init_val` (mirrors `jax.new_ref`)."""
    _eager_only("jax.new_ref")
    if isinstance(init_val, Tracer):
        _eager_only("jax.new_ref of a traced value")
    value = jnp.asarray(init_val)
    return Ref(AbstractRef(get_aval(value).strip_weak_type(), memory_space, kind), value)


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A new ref of `ty`'s shape and dtype (zeros, where JAX leaves it uninitialized)."""
    return new_ref(jnp.zeros(ty.shape, ty.dtype), memory_space=memory_space)


def get(ref: Ref, idx: Any = None) -> Any:
    """`ref[idx]` (mirrors `jax.ref.get`)."""
    _eager_only("Reading a ref")
    return ref._value[_index(idx)]


def swap(ref: Ref, idx: Any, value: Any, _function_name: str = "ref_swap") -> Any:
    """Write `value` at `ref[idx]` and return what was there (mirrors `jax.ref.swap`)."""
    _eager_only("Writing a ref")
    index = _index(idx)
    old = ref._value[index]
    new = jnp.asarray(value, dtype=ref.dtype)
    if new.shape != old.shape:
        raise ValueError(f"Ref write of shape {new.shape} into a slice of shape "
                         f"{old.shape}: the shapes must match.")
    ref._value = ref._value.at[index].set(new) if index != () else new
    return old


def set(ref: Ref, idx: Any, value: Any) -> None:  # noqa: A001  (JAX's name)
    """`ref[idx] = value` (mirrors `jax.ref.set`)."""
    swap(ref, idx, value)


def addupdate(ref: Ref, idx: Any, x: Any) -> None:
    """`ref[idx] += x` (mirrors `jax.ref.addupdate`)."""
    _eager_only("Writing a ref")
    index = _index(idx)
    ref._value = ref._value.at[index].add(jnp.asarray(x, dtype=ref.dtype))


def freeze(ref: Ref) -> Any:
    """The ref's current value as an array (mirrors `jax.ref.freeze`)."""
    return get(ref)


def free_ref(ref: Ref) -> None:
    """Release the ref's value (mirrors `jax.ref.free_ref`)."""
    ref._value = None


@dataclass(frozen=True)
class Slice:
    """A strided window `start : start + size * stride : stride` for indexing refs and
    arrays (mirrors what `jax.ds` returns)."""

    start: Any
    size: Any
    stride: int = 1

    def as_slice(self) -> slice:
        return slice(self.start, self.start + self.size * self.stride, self.stride)


def ds(start: Any, size: Any = None, stride: int | None = None) -> Any:
    """A dynamic slice of `size` elements from `start` (mirrors `jax.ds`); with only
    `start`, the Python slice `slice(start)`."""
    if size is None:
        return slice(start)
    return Slice(start, size, 1 if stride is None else stride)
