"""XLA's random-number operations: `rng_bit_generator` and `rng_uniform`.

Mirrors `jax.lax.rng_bit_generator`, `jax.lax.rng_uniform` and `jax.lax.RandomAlgorithm`.
`rng_bit_generator` computes XLA's counter-based generators bit for bit, as the CPU does:

- the key is uint32[4] (or uint64[2]): words (k0, k1, c0, c1); the 64-bit number c1:c0
  counts the blocks drawn so far, and the new key returned has it advanced by the blocks
  used (k0, k1 unchanged).
- PHILOX (also RNG_DEFAULT on the CPU): Philox-4x32 with 10 rounds, key (k0, k1), block i
  at the 128-bit counter (c0, c1, k0, k1) + i; four words per block, in order.
- THREE_FRY: Threefry-2x32 with 20 rounds, key (k0, k1), block i at the 64-bit counter
  c1:c0 + i, giving a pair (x, y) of words. As XLA does, the pairs fill the output by
  splitting one dimension in halves (the first even one, else the longest): element j of
  that dimension takes x of pair j // 2 when j is even, y when odd.
- uint8 and uint16 results are the low bits of these words; uint64 results join two words
  (the first low) from consecutive Philox words or from one Threefry pair.

`rng_uniform` is XLA's stateful RngUniform. Its values depend on a seed XLA draws for each
compiled instruction, which JAX does not expose; jaxlite draws its own seeds, so the numbers
(uniform in [a, b)) differ from JAX's.
"""
from __future__ import annotations

import enum
import itertools
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.lax import _rng_bits as bits
from jaxlite.lax._composed import batch_by_expansion, lower_by_expansion

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_bit_generator_p", "rng_uniform",
           "rng_uniform_p"]


class RandomAlgorithm(enum.IntEnum):
    """The generator of `rng_bit_generator` (mirrors `jax.lax.RandomAlgorithm`)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


_BIT_DTYPES = tuple(np.dtype(d) for d in (np.uint8, np.uint16, np.uint32, np.uint64))

rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True)


def _check_key(key: ShapedArray) -> None:
    good = ((key.shape == (4,) and key.dtype == np.uint32)
            or (key.shape == (2,) and key.dtype == np.uint64))
    if not good:
        raise TypeError(f"rng_bit_generator: the key must be uint32[4] or uint64[2], got "
                        f"{key.str_short()} (JAX fails with an AssertionError here).")


def _bit_generator_abstract_eval(key: ShapedArray, *, shape: tuple, dtype: np.dtype,
                                 algorithm: RandomAlgorithm,
                                 out_sharding: Any) -> list[ShapedArray]:
    _check_key(key)
    if np.dtype(dtype) not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype)}")
    return [key.update(weak_type=False), ShapedArray(tuple(shape), np.dtype(dtype))]


def _generate(key: Any, shape: tuple, dtype: np.dtype, algorithm: RandomAlgorithm,
              ops: Any) -> list[Any]:
    """(new key, bits) with the word operations `ops` (numpy's or lax's)."""
    words = ops.key_words(key)
    if algorithm == RandomAlgorithm.RNG_THREE_FRY:
        out, blocks = bits.threefry_output(words, shape, dtype, ops)
    else:
        out, blocks = bits.philox_output(words, shape, dtype, ops)
    return [ops.new_key(key, words, blocks), out]


def _bit_generator_reference(key: np.ndarray, *, shape: tuple, dtype: np.dtype,
                             algorithm: RandomAlgorithm, out_sharding: Any) -> list[np.ndarray]:
    with np.errstate(over="ignore"):
        new_key, out = _generate(np.asarray(key), tuple(shape), np.dtype(dtype), algorithm,
                                 bits.NumpyWords)
    return [np.asarray(new_key, key.dtype), np.asarray(out, dtype)]


def _bit_generator_expansion(key: Any, *, shape: tuple, dtype: np.dtype,
                             algorithm: RandomAlgorithm, out_sharding: Any) -> list[Any]:
    return _generate(key, tuple(shape), np.dtype(dtype), algorithm, bits.LaxWords)


rng_bit_generator_p.abstract_eval = _bit_generator_abstract_eval
rng_bit_generator_p.reference = _bit_generator_reference
rng_bit_generator_p.batch = batch_by_expansion(rng_bit_generator_p, _bit_generator_expansion)
rng_bit_generator_p.lower = lower_by_expansion(rng_bit_generator_p, _bit_generator_expansion)
ad.defjvp_zero(rng_bit_generator_p)


def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any = np.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding: Any = None) -> tuple[Any, Any]:
    """(new key, random bits of `shape` and unsigned `dtype`) from XLA's counter-based
    generators (mirrors `jax.lax.rng_bit_generator`); see the module docstring."""
    shape = tuple(operator.index(d) for d in np.reshape(shape, -1))
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "rng_bit_generator")
    if np.dtype(dtype) not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype)}")
    return tuple(rng_bit_generator_p.bind(key, shape=shape, dtype=np.dtype(dtype),
                                          algorithm=RandomAlgorithm(algorithm),
                                          out_sharding=out_sharding))


# ----------------------------------------------------------------------------- rng_uniform

rng_uniform_p = Primitive("rng_uniform")
# Seeds for rng_uniform: one per evaluation, or per lowered instruction, as XLA's are.
_SEEDS = itertools.count(1)


def _uniform_abstract_eval(a: ShapedArray, b: ShapedArray, *, shape: tuple) -> ShapedArray:
    if a.dtype != b.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got "
                         f"{np.dtype(a.dtype).name} and {np.dtype(b.dtype).name}.")
    if a.shape != () or b.shape != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} "
                         f"and {b.shape}.")
    if not (dtypes.is_floating(a.dtype) or dtypes.is_integer(a.dtype)):
        raise TypeError(f"rng_uniform does not accept dtype {np.dtype(a.dtype).name}.")
    return ShapedArray(tuple(shape), a.dtype)


def _uniform(a: Any, b: Any, shape: tuple, seed: int, ops: Any) -> Any:
    key = ops.constant_key(seed)
    _, words = _generate(key, shape, np.dtype(np.uint32), RandomAlgorithm.RNG_PHILOX, ops)
    return ops.uniform(words, a, b)


def _uniform_reference(a: np.ndarray, b: np.ndarray, *, shape: tuple) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.asarray(_uniform(a, b, tuple(shape), next(_SEEDS), bits.NumpyWords),
                          a.dtype)


def _uniform_expansion(a: Any, b: Any, *, shape: tuple) -> Any:
    return _uniform(a, b, tuple(shape), next(_SEEDS), bits.LaxWords)


def _uniform_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *,
                   shape: tuple) -> tuple[Any, int]:
    raise NotImplementedError("rng_uniform has no batching rule (JAX neither): a batched "
                              "bound would need one generator per member.")


rng_uniform_p.abstract_eval = _uniform_abstract_eval
rng_uniform_p.reference = _uniform_reference
rng_uniform_p.batch = _uniform_batch
rng_uniform_p.lower = lower_by_expansion(rng_uniform_p, _uniform_expansion)
ad.defjvp_zero(rng_uniform_p)


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """Stateful pseudo-random numbers uniform in [a, b) (mirrors `jax.lax.rng_uniform`).

    Differences from JAX: the numbers come from jaxlite's own seeds, not XLA's.
    """
    return rng_uniform_p.bind(a, b, shape=tuple(operator.index(d) for d in shape))

