"""Typed PRNG keys: implementations, the key dtype and the concrete key array.

Mirrors JAX's `jax._src.prng`. A PRNG implementation (`PRNGImpl`) gives the shape of one
key's uint32 data and four functions on that data: seed, split, fold_in and random bits.
`KeyTy(impl)` is the extended dtype of typed keys of that implementation (`key<fry>` for
threefry2x32): an array of keys of shape S is stored as its *physical data*, uint32 of shape
S + impl.key_shape.

Keys flow through every transformation as values of the key dtype. Two primitives convert:
`random_wrap` (data to keys) and `random_unwrap` (keys to data); both lower to nothing, since
lowering sees physical values only (`jaxlite.core.avals.physical_aval`). Structural
primitives applied to keys (reshape, slice, gather, select_n, concatenate, ...) are rewritten
on the physical data by `_key_rules`. Eagerly, a key array is a `PRNGKeyArray` over its data.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.basearray import Array
from jaxlite.core.primitive import Primitive
from jaxlite import lax
from jaxlite.lax.ad_util import zeros_like_tangent
from jaxlite.random import _threefry
from jaxlite.runtime.array import ArrayImpl

__all__ = ["PRNGImpl", "KeyTy", "PRNGKeyArray", "random_wrap", "random_unwrap",
           "random_wrap_p", "random_unwrap_p", "threefry_prng_impl", "is_typed_key",
           "prngs", "register_prng"]

UINT32 = np.dtype(np.uint32)


class PRNGImpl(NamedTuple):
    """A PRNG implementation: its key data shape and operations (mirrors JAX's `PRNGImpl`).

    On uint32 key data K of shape `key_shape`: `seed(int[]) -> K`,
    `split(K, shape) -> K[*shape]`, `random_bits(K, bit_width, shape) -> uint[*shape]`,
    `fold_in(K, uint32[]) -> K`.
    """

    key_shape: tuple[int, ...]
    seed: Callable[..., Any]
    split: Callable[..., Any]
    random_bits: Callable[..., Any]
    fold_in: Callable[..., Any]
    name: str = "<unnamed>"
    tag: str = "?"

    def __hash__(self) -> int:
        return hash(self.tag)

    def __str__(self) -> str:
        return self.tag


prngs: dict[str, PRNGImpl] = {}


def register_prng(impl: PRNGImpl) -> None:
    """Make `impl` selectable by name (`jax.random.key(..., impl=name)`)."""
    if impl.name in prngs:
        raise ValueError(f"PRNG with name {impl.name} already registered: {impl}")
    prngs[impl.name] = impl


threefry_prng_impl = PRNGImpl(
    key_shape=(2,), seed=_threefry.threefry_seed, split=_threefry.threefry_split,
    random_bits=_threefry.threefry_random_bits, fold_in=_threefry.threefry_fold_in,
    name="threefry2x32", tag="fry")
register_prng(threefry_prng_impl)


class KeyTy(dtypes.ExtendedDType):
    """The dtype of typed keys of one implementation, `key<tag>` (mirrors JAX's `KeyTy`)."""

    type = dtypes.prng_key
    physical_dtype = UINT32

    def __init__(self, impl: PRNGImpl) -> None:
        self._impl = impl

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self) -> int:  # type: ignore[override]
        return math.prod(self._impl.key_shape) * UINT32.itemsize

    @property
    def physical_shape(self) -> tuple[int, ...]:  # type: ignore[override]
        return tuple(self._impl.key_shape)

    @property
    def impl(self) -> PRNGImpl:
        return self._impl

    def to_physical(self, value: Any) -> Any:
        # References and jit calls hand typed keys as their data; data passes through.
        return value._base if isinstance(value, PRNGKeyArray) else value

    def from_physical(self, data: Any) -> "PRNGKeyArray":
        return PRNGKeyArray(self._impl, data)

    def full(self, shape: tuple[int, ...], fill_value: Any) -> Any:
        # Filled with a key, or with a uint32 value in every word of the key data.
        physical = tuple(shape) + self.physical_shape
        if is_typed_key(fill_value):
            data = lax.broadcast_in_dim(random_unwrap(fill_value), physical,
                                        tuple(range(len(shape), len(physical))))
        else:
            data = lax.full(physical, fill_value, UINT32)
        return random_wrap(data, impl=self._impl)

    def __eq__(self, other: Any) -> bool:
        return type(other) is KeyTy and self._impl == other._impl

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((KeyTy, self._impl))


def is_typed_key(value: Any) -> bool:
    """Whether `value` is an array of typed keys (concrete or traced)."""
    return isinstance(getattr(value, "dtype", None), KeyTy)


class PRNGKeyArray(Array):
    """A concrete array of typed PRNG keys over uint32 key data (mirrors JAX's
    `PRNGKeyArray`, the arrays `jax.random.key` returns).

    Its shape leaves out the key data's trailing `impl.key_shape`; indexing, reshaping,
    `==`, `jnp.where`, `jnp.stack` and the other structural operations work on keys as on
    arrays. Arithmetic does not, and numpy conversion raises (use `jax.random.key_data`).
    """

    __slots__ = ("_impl", "_base")

    def __init__(self, impl: PRNGImpl, key_data: Any) -> None:
        if not isinstance(key_data, Array):
            key_data = ArrayImpl(np.asarray(key_data, UINT32))
        self._impl = impl
        self._base = key_data

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, KeyTy(self._impl))

    @property
    def dtype(self) -> KeyTy:
        return KeyTy(self._impl)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._base.shape)[:self._base.ndim - len(self._impl.key_shape)]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    weak_type = False

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jax.random.key_data(arr) if you wish to extract the underlying "
                        "integer array.")

    def __getitem__(self, index: Any) -> "PRNGKeyArray":
        # Concrete keys index their data directly; the key data axes stay whole.
        index = index if isinstance(index, tuple) else (index,)
        whole = (slice(None),) * len(self._impl.key_shape)
        return PRNGKeyArray(self._impl, self._base[index + whole])

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._base}"

    __str__ = __repr__

    def block_until_ready(self) -> "PRNGKeyArray":
        self._base.block_until_ready()
        return self

    def is_deleted(self) -> bool:
        return self._base.is_deleted()

    def delete(self) -> None:
        self._base.delete()

    @property
    def device(self) -> Any:
        return self._base.device

    def devices(self) -> set[Any]:
        return self._base.devices()

    def copy_to_host_async(self) -> None:
        """Nothing to do: host arrays are there already."""

    def __reduce__(self) -> tuple:
        return (PRNGKeyArray, (self._impl, self._base))

    def __copy__(self) -> "PRNGKeyArray":
        return self

    def __deepcopy__(self, memo: Any) -> "PRNGKeyArray":
        return self


# ------------------------------------------------------------------------- the primitives

random_wrap_p = Primitive("random_wrap")
random_unwrap_p = Primitive("random_unwrap")
random_wrap_p.takes_extended = random_unwrap_p.takes_extended = True


def check_key_data(impl: PRNGImpl, data_aval: ShapedArray) -> None:
    """JAX's TypeError unless `data_aval` can hold keys of `impl` (uint32, (..., key_shape))."""
    key_shape = tuple(impl.key_shape)
    if data_aval.dtype != UINT32:
        name = getattr(data_aval.dtype, "name", data_aval.dtype)
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={name}")
    if tuple(data_aval.shape)[len(data_aval.shape) - len(key_shape):] != key_shape \
            or len(data_aval.shape) < len(key_shape):
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with {key_shape}; got shape={tuple(data_aval.shape)} for "
                        f"impl={impl.name}")


def _wrap_abstract_eval(data: ShapedArray, *, impl: PRNGImpl) -> ShapedArray:
    check_key_data(impl, data)
    return ShapedArray(tuple(data.shape)[:data.ndim - len(impl.key_shape)], KeyTy(impl))


def _unwrap_abstract_eval(keys: ShapedArray) -> ShapedArray:
    if not isinstance(keys.dtype, KeyTy):
        raise TypeError(f"random_unwrap takes typed keys, got {keys.str_short()}.")
    return ShapedArray(tuple(keys.shape) + keys.dtype.physical_shape, UINT32)


def _wrap_batch(axis_size: int, args: Sequence[Any], dims: Sequence[int | None], *,
                impl: PRNGImpl) -> tuple[Any, int]:
    (data,), (dim,) = args, dims
    if dim >= np.ndim(data) - len(impl.key_shape):  # mapped over a key data axis
        data = lax.moveaxis(data, dim, 0)
        dim = 0
    return random_wrap_p.bind(data, impl=impl), dim


def _unwrap_batch(axis_size: int, args: Sequence[Any],
                  dims: Sequence[int | None]) -> tuple[Any, int]:
    return random_unwrap_p.bind(args[0]), dims[0]


def _identity_lower(ctx: Any, x: Any, **params: Any) -> Any:
    return x  # the physical data is the value


def _zero_jvp(primitive: Primitive) -> Any:
    # Keys and their bits do not change smoothly: float0 tangents, as JAX gives.
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = primitive.bind(*primals, **params)
        return out, zeros_like_tangent(ShapedArray(np.shape(out), dtypes.float0))
    return jvp


random_wrap_p.abstract_eval = _wrap_abstract_eval
random_wrap_p.impl = lambda data, *, impl: PRNGKeyArray(impl, data)
random_wrap_p.batch = _wrap_batch
random_wrap_p.lower = _identity_lower
random_wrap_p.jvp = _zero_jvp(random_wrap_p)

random_unwrap_p.abstract_eval = _unwrap_abstract_eval
random_unwrap_p.impl = lambda keys: keys._base if isinstance(keys, PRNGKeyArray) else keys
random_unwrap_p.batch = _unwrap_batch
random_unwrap_p.lower = _identity_lower
random_unwrap_p.jvp = _zero_jvp(random_unwrap_p)


def random_wrap(data: Any, *, impl: PRNGImpl) -> Any:
    """Typed keys over uint32 key data of shape (..., *impl.key_shape); JAX's TypeError for
    anything else."""
    if not (hasattr(data, "shape") and hasattr(data, "dtype")):
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {data!r}")
    check_key_data(impl, get_aval(data))
    return random_wrap_p.bind(data, impl=impl)


def random_unwrap(keys: Any) -> Any:
    """The uint32 data of typed keys (shape keys.shape + impl.key_shape)."""
    if isinstance(keys, PRNGKeyArray):
        return keys._base  # no equation to stage: the data is a constant like any other
    return random_unwrap_p.bind(keys)
