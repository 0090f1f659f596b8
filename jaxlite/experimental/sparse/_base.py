"""What every sparse format shares: the `JAXSparse` base class, the warning and error types,
and the helpers the formats' modules build on.

A sparse format's primitives (`bcoo_todense_p`, ...) are declared with `composed_primitive`:
a `Primitive` whose `bind` runs its decomposition into lax operations under the current
trace. So `jit`, `grad`, `vmap` and every backend see gathers, scatters and dots, which all
have their rules, and no new compiler kernel is needed (JAX's sparse primitives have their
own rules and GPU kernels; the values are the same).
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite import numpy as jnp
from jaxlite.extend.core._primitive import composed_primitive  # noqa: F401 (the formats')
from jaxlite.core.trace import Tracer
from jaxlite.transforms.vmap import vmap


class SparseEfficiencyError(ValueError):
    """An operation would make a sparse array inefficiently large
    (mirrors `jax.experimental.sparse.SparseEfficiencyError`)."""


class SparseEfficiencyWarning(UserWarning):
    """An operation makes a sparse array less efficient
    (mirrors `jax.experimental.sparse.SparseEfficiencyWarning`)."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """A cuSPARSE kernel was not used (mirrors
    `jax.experimental.sparse.CuSparseEfficiencyWarning`; jaxlite has no cuSPARSE)."""


class JAXSparse:
    """The base class of jaxlite's sparse arrays (mirrors
    `jax.experimental.sparse.JAXSparse`): a shape and a tuple of buffers."""

    data: Any
    shape: tuple[int, ...]
    __hash__ = None  # type: ignore[assignment]
    # numpy defers its binary operators to ours.
    __array_priority__ = 2000

    def __init__(self, args: tuple[Any, ...], *, shape: Sequence[int]):
        self.shape = canonical_shape(shape)

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def nse(self) -> int:
        raise NotImplementedError

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        name = type(self).__name__
        try:
            extra = f", nse={self.nse}"
            if getattr(self, "n_batch", 0):
                extra += f", n_batch={self.n_batch}"
            if getattr(self, "n_dense", 0):
                extra += f", n_dense={self.n_dense}"
            text = f"{name}({self.dtype}{list(self.shape)}{extra})"
        except Exception:  # a half-built array (as JAX prints it)
            text = f"{name}(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def tree_flatten(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        raise NotImplementedError

    @classmethod
    def tree_unflatten(cls, aux_data: dict[str, Any], children: Sequence[Any]) -> Any:
        obj = object.__new__(cls)
        obj.__dict__.update(aux_data)
        for name, value in zip(cls._buffer_names, children):
            setattr(obj, name, value)
        return obj

    _buffer_names: tuple[str, ...] = ()

    @property
    def _bufs(self) -> tuple[Any, ...]:
        """The buffers, in the order of the tree's leaves (JAX's attribute)."""
        return tuple(getattr(self, name) for name in self._buffer_names)

    def todense(self) -> Any:
        raise NotImplementedError

    def transpose(self, axes: Any = None) -> Any:
        raise NotImplementedError

    @property
    def T(self) -> Any:
        return self.transpose()

    def block_until_ready(self) -> "JAXSparse":
        for name in self._buffer_names:
            getattr(self, name).block_until_ready()
        return self


def canonical_shape(shape: Sequence[Any]) -> tuple[int, ...]:
    """`shape` as a tuple of Python ints (JAX's TypeError for anything else)."""
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None


def nfold_vmap(fun: Callable[..., Any], n: int, in_axes: Any = 0) -> Callable[..., Any]:
    """`fun` mapped over `n` leading axes of its arguments."""
    for _ in range(n):
        fun = vmap(fun, in_axes=in_axes)
    return fun


def broadcast_batch(data: Any, indices: Any, batch_shape: Sequence[int]) -> tuple[Any, Any]:
    """`data` and `indices` with their leading batch axes (of size 1 where broadcast, as
    JAX allows) expanded to `batch_shape`."""
    n = len(batch_shape)
    data = jnp.broadcast_to(data, tuple(batch_shape) + data.shape[n:])
    indices = jnp.broadcast_to(indices, tuple(batch_shape) + indices.shape[n:])
    return data, indices


def concrete_int(value: Any, what: str) -> int:
    """`value` as a Python int; JAX's ConcretizationTypeError-style message if traced."""
    if isinstance(value, Tracer):
        raise ValueError(f"{what} must be a concrete integer: when using sparse operations "
                         "within jit, vmap or other transformations, pass it explicitly "
                         "(nse must be specified when using the function within jit).")
    return operator.index(int(np.asarray(value)))
