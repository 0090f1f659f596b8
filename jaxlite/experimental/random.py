"""`jax.experimental.random`: a stateful generator over JAX's stateless keys.

A `StatefulPRNG` holds a typed base key and a counter in a `Ref`; each draw folds the
counter into the base key (`fold_in(base_key, counter)`) and then increments it, so its
numbers are exactly JAX's. jaxlite's refs live in eager code only (see `jaxlite.ref`):
drawing inside `jit`, `vmap` or `grad` raises NotImplementedError, where JAX threads the
counter through the transformation as state.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Sequence

import numpy as np

from jaxlite import numpy as jnp
from jaxlite import random
from jaxlite import ref
from jaxlite.core.trace import EvalTrace, current_trace
from jaxlite.random._prng import is_typed_key
from jaxlite.tree_util import register_dataclass

__all__ = ["StatefulPRNG", "stateful_rng"]


def _size_to_shape(size: Any, *args: Any) -> tuple[int, ...]:
    """numpy's `size` argument as a shape; None broadcasts the arguments' shapes."""
    if size is None:
        return np.broadcast_shapes(*(np.shape(arg) for arg in args))
    if isinstance(size, (int, np.integer)):
        return (operator.index(size),)
    return tuple(operator.index(n) for n in size)


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class StatefulPRNG:
    """A random generator that updates its own state (mirrors
    `jax.experimental.random.StatefulPRNG`); made by `stateful_rng`.

    `_base_key` is a typed PRNG key, `_counter` an integer `Ref` counting the draws."""

    _base_key: Any
    _counter: Any

    def __post_init__(self) -> None:
        if not is_typed_key(self._base_key):
            raise ValueError(f"Expected base_key to be a typed PRNG key; got {self._base_key}")
        if not isinstance(self._counter, ref.Ref):
            raise ValueError(
                f"Expected counter to be a scalar integer ref; got {self._counter}")

    def key(self, shape: int | Sequence[int] = ()) -> Any:
        """A new key (or an array of keys of `shape`) independent of earlier ones; the
        generator's counter advances by one."""
        if self._base_key.shape:
            raise ValueError("cannot operate on split stateful generator")
        key = random.fold_in(self._base_key, ref.get(self._counter))
        ref.addupdate(self._counter, ..., 1)
        shape = _size_to_shape(shape)
        return random.split(key, shape) if shape else key

    def random(self, size: int | Sequence[int] | None = None, dtype: Any = float) -> Any:
        """Floats uniform in [0, 1) (as `numpy.random.Generator.random`)."""
        return random.uniform(self.key(), shape=_size_to_shape(size), dtype=dtype)

    def uniform(self, low: Any = 0, high: Any = 1, size: int | Sequence[int] | None = None,
                *, dtype: Any = float) -> Any:
        """Floats uniform in [low, high)."""
        return random.uniform(self.key(), _size_to_shape(size, low, high), minval=low,
                              maxval=high, dtype=dtype)

    def normal(self, loc: Any = 0, scale: Any = 1, size: int | Sequence[int] | None = None,
               *, dtype: Any = float) -> Any:
        """Normal variates of mean `loc` and standard deviation `scale`."""
        standard = random.normal(self.key(), _size_to_shape(size, loc, scale), dtype)
        return (jnp.asarray(loc) + jnp.asarray(scale) * standard).astype(dtype)

    def integers(self, low: Any, high: Any = None, size: int | Sequence[int] | None = None,
                 *, dtype: Any = int) -> Any:
        """Integers in [low, high), or in [0, low) when `high` is None."""
        if high is None:
            low, high = 0, low
        return random.randint(self.key(), _size_to_shape(size, low, high), minval=low,
                              maxval=high, dtype=dtype)

    def split(self, num: int | Sequence[int]) -> "StatefulPRNG":
        """One generator holding `num` independent children, to map over with `vmap`."""
        return StatefulPRNG(self.key(num), ref.new_ref(jnp.zeros(num, dtype=int)))

    def spawn(self, n_children: int) -> list["StatefulPRNG"]:
        """A list of `n_children` independent generators."""
        return [type(self)(key, ref.new_ref(0)) for key in self.key(n_children)]


def stateful_rng(seed: Any = None, *, impl: Any = None) -> StatefulPRNG:
    """A new stateful generator seeded with `seed` (mirrors
    `jax.experimental.random.stateful_rng`); without a seed, one from numpy's entropy
    source, which is allowed only outside transformations."""
    if seed is None:
        if not isinstance(current_trace(), EvalTrace):
            raise TypeError(
                "When used within transformed code, jax.experimental.random.stateful_rng() "
                "requires an explicit seed to be set.")
        seed = np.int64(np.random.SeedSequence().entropy & np.iinfo(np.int64).max)
    return StatefulPRNG(random.key(seed, impl=impl), ref.new_ref(0))
