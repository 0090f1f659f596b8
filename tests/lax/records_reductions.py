"""Test records of reductions.py, cumulative.py and dot.py.

The references are written independently of the primitives' numpy rules: max and min (plain
and cumulative) and argmax/argmin loop over the elements with XLA's scalar semantics
(NaN propagates, -0.0 below +0.0, the first NaN or first extremum wins); sums, products and
contractions are computed in 64-bit types and rounded once. Values for the value checks are
drawn to contain ties, zeros, NaN and infinities; for the derivative checks (float64) they
are distinct, so that max and min are differentiable where they are evaluated. Float values
for the sums and contractions are small multiples of 1/4, whose sums are exact in every
float type, so the order of accumulation cannot change a result.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import ml_dtypes
import numpy as np

from jaxlite import lax
from records import Case, Record, standard_values

BF16 = np.dtype(ml_dtypes.bfloat16)
ALL = (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint32, np.float16, BF16,
       np.float32, np.complex64)
INTEGERS = (np.int8, np.int16, np.int32, np.uint8, np.uint32)
REAL = tuple(d for d in ALL if d is not np.complex64)
NUMERIC = tuple(d for d in ALL if d is not np.bool_)
FLOATS = (np.float16, BF16, np.float32)


def _kind(dtype: Any) -> str:
    dtype = np.dtype(dtype)
    return "f" if dtype == BF16 else dtype.kind


def _wide(dtype: Any) -> np.dtype:
    """The 64-bit type a reference computes in before rounding to `dtype`."""
    return np.dtype({"b": np.int64, "i": np.int64, "u": np.uint64, "f": np.float64,
                     "c": np.complex128}[_kind(dtype)])


def _shape(rng: np.random.Generator, min_ndim: int = 0, max_ndim: int = 3,
           allow_empty: bool = True) -> tuple[int, ...]:
    ndim = int(rng.integers(min_ndim, max_ndim + 1))
    sizes = rng.integers(1, 5, ndim)
    if allow_empty and ndim and rng.random() < 0.15:
        sizes[rng.integers(ndim)] = 0
    return tuple(int(s) for s in sizes)


def _axes(rng: np.random.Generator, ndim: int) -> tuple[int, ...]:
    chosen = [d for d in range(ndim) if rng.random() < 0.5]
    rng.shuffle(chosen)  # the primitive takes axes in any order
    return tuple(chosen)


# ------------------------------------------------------------------------------ values

def _tie_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Few distinct values, so that ties occur, with NaN, infinities and -0.0 for floats.

    float64 (the derivative checks) gets distinct normal values instead.
    """
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return rng.permutation(np.linspace(-2, 2, int(np.prod(shape)))).reshape(shape) \
            + rng.uniform(-0.05, 0.05, shape)
    if _kind(dtype) in "biu":
        return standard_values(rng, shape, dtype)
    pool = np.array([-1.0, -0.0, 0.0, 1.0, 2.0, np.nan, np.inf, -np.inf])
    if _kind(dtype) == "c":  # lexicographic order: ties in the real part, no NaN
        return (rng.choice(pool[[0, 1, 3, 4]], shape)
                + 1j * rng.choice(pool[[0, 2, 3]], shape)).astype(dtype)
    return rng.choice(pool, shape).astype(dtype)


def _quarter_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Multiples of 1/4 in [-2, 2] for floats: exact sums and products in every float type."""
    if _kind(dtype) in "biu":
        return standard_values(rng, shape, dtype)
    values = rng.integers(-8, 9, shape) / 4
    if _kind(dtype) == "c":
        values = values + 1j * rng.integers(-8, 9, shape) / 4
    return values.astype(dtype)


def _product_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Powers of two with signs and some zeros: products are exact in every float type."""
    if _kind(dtype) in "iu":
        low = 0 if _kind(dtype) == "u" else -3
        return rng.integers(low, 4, shape).astype(dtype)
    if _kind(dtype) == "c":  # products of these stay of the form +-2**k or +-2**k * 1j
        return rng.choice([1, -1, 1j, -1j, 0, 0.5, 2], shape).astype(dtype)
    values = rng.choice([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], shape)
    if np.dtype(dtype) == np.float64:
        values = values + rng.uniform(-0.2, 0.2, shape)  # derivative checks: generic point
    return values.astype(dtype)


# ------------------------------------------------------------ XLA's scalar semantics

def _is_nan(x: Any) -> bool:
    return bool(x != x)


def _exact(x: np.ndarray) -> np.ndarray:
    """`x` in a 64-bit type that holds every value exactly (bfloat16 scalars lack numpy's
    float interface)."""
    return x.astype(_wide(x.dtype)) if _kind(x.dtype) in "fc" else x


def _greater(a: Any, b: Any) -> bool:
    """a > b in XLA's order for max and min: -0.0 < +0.0, complex numbers lexicographic."""
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        return (np.real(a), np.imag(a)) > (np.real(b), np.imag(b))
    if a == 0 and b == 0 and isinstance(a, np.floating):
        return not np.signbit(a) and bool(np.signbit(b))
    return bool(a > b)


def _xla_max(a: Any, b: Any) -> Any:
    if _is_nan(a) or _is_nan(b):
        return np.nan
    return b if _greater(b, a) else a


def _xla_min(a: Any, b: Any) -> Any:
    if _is_nan(a) or _is_nan(b):
        return np.nan
    return b if _greater(a, b) else a


def _rows(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """`x` as a 2-d array (kept elements, reduced elements) and the kept shape."""
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + list(axes))
    kept_shape = tuple(x.shape[d] for d in kept)
    reduced = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    return moved.reshape(int(np.prod(kept_shape, dtype=np.int64)), reduced), kept_shape


def _fold_reference(combine: Callable[[Any, Any], Any], identity: Callable[[Any], Any],
                    axes: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    def reference(x: np.ndarray) -> np.ndarray:
        rows, kept_shape = _rows(_exact(np.asarray(x)), axes)
        out = [functools.reduce(combine, list(row), identity(x.dtype)) for row in rows]
        return np.array(out, dtype=rows.dtype).reshape(kept_shape).astype(x.dtype)
    return reference


def _lowest(dtype: Any) -> Any:
    kind = _kind(dtype)
    if kind in "fc":
        return np.float64(-np.inf) if kind == "f" else np.complex128(complex(-np.inf, 0))
    return np.False_ if kind == "b" else np.iinfo(dtype).min


def _highest(dtype: Any) -> Any:
    kind = _kind(dtype)
    if kind in "fc":
        return np.float64(np.inf) if kind == "f" else np.complex128(complex(np.inf, 0))
    return np.True_ if kind == "b" else np.iinfo(dtype).max


# -------------------------------------------------------------------------- reductions

def _chooser_record(name: str, combine: Callable[[Any, Any], Any],
                    identity: Callable[[Any], Any]) -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        # An empty max is -inf, whose derivative finite differences cannot check.
        shape = _shape(rng, allow_empty=np.dtype(dtype) != np.float64)
        axes = _axes(rng, len(shape))
        return Case(lambda x: getattr(lax, name)(x, axes),
                    _fold_reference(combine, identity, axes),
                    [_tie_values(rng, shape, dtype)], values=_tie_values)
    return Record(name, make_case, dtypes=ALL)


def _prod_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    axes = _axes(rng, len(shape))

    def reference(x: np.ndarray) -> np.ndarray:
        wide = x.astype(_wide(dtype))
        with np.errstate(over="ignore"):
            return np.asarray(np.prod(wide, axis=axes)).astype(x.dtype)
    return Case(lambda x: lax.reduce_prod(x, axes), reference,
                [_product_values(rng, shape, dtype)], values=_product_values)


def _bitwise_record(name: str, ufunc: np.ufunc) -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        axes = _axes(rng, len(shape))

        def reference(x: np.ndarray) -> np.ndarray:
            rows, kept_shape = _rows(x, axes)
            out = [functools.reduce(ufunc, list(row), ~np.zeros((), x.dtype)
                                    if ufunc is np.bitwise_and else np.zeros((), x.dtype))
                   for row in rows]
            return np.array(out, dtype=x.dtype).reshape(kept_shape)

        def values(rng: np.random.Generator, shape: tuple, dt: Any) -> np.ndarray:
            if np.dtype(dt) == np.bool_:  # mostly True, so that an AND can come out True
                return rng.random(shape) < 0.8
            info = np.iinfo(dt)
            return rng.integers(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(dt)
        return Case(lambda x: getattr(lax, name)(x, axes), reference,
                    [values(rng, shape, dtype)], values=values)
    return Record(name, make_case, dtypes=(np.bool_, *INTEGERS), grad=False)


def _arg_record(name: str, better: Callable[[Any, Any], bool]) -> Record:
    """argmax/argmin: the first NaN, else the first element no other element beats."""
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng, min_ndim=1, allow_empty=False)
        if rng.random() < 0.2:  # size-0 dimensions other than the reduced one are fine
            shape = shape + (0,)
        axis = int(rng.integers(0, len(shape) if shape[-1] else len(shape) - 1))
        index_dtype = (np.int32, np.int16, np.uint8)[int(rng.integers(0, 3))]

        def reference(x: np.ndarray) -> np.ndarray:
            rows, kept_shape = _rows(_exact(x), (axis,))
            out = []
            for row in rows:
                best = 0
                for i, v in enumerate(row):
                    if _is_nan(v):
                        best = i
                        break
                    if better(v, row[best]):
                        best = i
                out.append(best)
            return np.array(out, dtype=index_dtype).reshape(kept_shape)
        return Case(lambda x: getattr(lax, name)(x, axis, index_dtype), reference,
                    [_tie_values(rng, shape, dtype)], values=_tie_values)
    return Record(name, make_case, dtypes=REAL, grad=False)


REDUCTIONS = [
    _chooser_record("reduce_max", _xla_max, _lowest),
    _chooser_record("reduce_min", _xla_min, _highest),
    Record("reduce_prod", _prod_case, dtypes=NUMERIC),
    _bitwise_record("reduce_and", np.bitwise_and),
    _bitwise_record("reduce_or", np.bitwise_or),
    _bitwise_record("reduce_xor", np.bitwise_xor),
    # -0.0 and +0.0 compare equal here: ties, the first one wins.
    _arg_record("argmax", lambda v, best: v > best),
    _arg_record("argmin", lambda v, best: v < best),
]


# --------------------------------------------------------------------------- cumulative

def _scan_reference(step: Callable[[Any, Any], Any], axis: int,
                    reverse: bool) -> Callable[[np.ndarray], np.ndarray]:
    """Running `step` along `axis` in Python, one element after the other, on 64-bit values
    (integers wrap to the operand's type at the end, as they do modulo 2**bits in XLA)."""
    def reference(x: np.ndarray) -> np.ndarray:
        wide = np.moveaxis(x.astype(_wide(x.dtype)), axis, -1)
        out = np.empty_like(wide)
        for index in np.ndindex(wide.shape[:-1]):
            n = wide.shape[-1]
            acc = None
            for i in (range(n - 1, -1, -1) if reverse else range(n)):
                acc = wide[index + (i,)] if acc is None else step(acc, wide[index + (i,)])
                out[index + (i,)] = acc
        with np.errstate(all="ignore"):
            return np.moveaxis(out, -1, axis).astype(x.dtype)
    return reference


def _cumulative_record(name: str, step: Callable[[Any, Any], Any],
                       values: Callable[..., np.ndarray], dtypes: tuple) -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng, min_ndim=1)
        axis = int(rng.integers(0, len(shape)))
        reverse = bool(rng.random() < 0.5)
        return Case(lambda x: getattr(lax, name)(x, axis, reverse),
                    _scan_reference(step, axis, reverse), [values(rng, shape, dtype)],
                    values=values)
    return Record(name, make_case, dtypes=dtypes)


def _logaddexp_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    if np.dtype(dtype) == np.float64:
        return rng.uniform(-3, 3, shape)
    pool = np.array([-np.inf, -2.0, -0.5, 0.0, 1.0, 3.0])
    return (rng.choice(pool, shape) + rng.uniform(0, 0.25, shape)).astype(dtype)


CUMULATIVE = [
    _cumulative_record("cumsum", np.add, _quarter_values, NUMERIC),
    _cumulative_record("cumprod", np.multiply, _product_values, NUMERIC),
    _cumulative_record("cummax", _xla_max, _tie_values, NUMERIC),
    _cumulative_record("cummin", _xla_min, _tie_values, NUMERIC),
    _cumulative_record("cumlogsumexp", np.logaddexp, _logaddexp_values, FLOATS),
]


# ---------------------------------------------------------------------------- dot_general

def _dot_layout(rng: np.random.Generator) -> tuple[tuple, tuple, tuple]:
    """Random operand shapes and dimension numbers, with batch dims, any contracting order."""
    n_batch, n_contract = int(rng.integers(0, 3)), int(rng.integers(0, 3))
    n_lhs_free, n_rhs_free = int(rng.integers(0, 3)), int(rng.integers(0, 3))
    batch = [int(s) for s in rng.integers(1, 4, n_batch)]
    contract = [int(s) for s in rng.integers(1, 4, n_contract)]
    if contract and rng.random() < 0.1:
        contract[0] = 0  # an empty contraction gives zeros
    lhs_kinds = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)] \
        + [("f", i) for i in range(n_lhs_free)]
    rhs_kinds = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)] \
        + [("f", i) for i in range(n_rhs_free)]
    rng.shuffle(lhs_kinds)
    rng.shuffle(rhs_kinds)
    lhs_free_sizes = [int(s) for s in rng.integers(0, 4, n_lhs_free)]
    rhs_free_sizes = [int(s) for s in rng.integers(1, 4, n_rhs_free)]

    def shape(kinds: list, free: list) -> tuple:
        sizes = {"b": batch, "c": contract, "f": free}
        return tuple(sizes[k][i] for k, i in kinds)

    def positions(kinds: list, kind: str, count: int) -> tuple:
        return tuple(kinds.index((kind, i)) for i in range(count))

    dims = ((positions(lhs_kinds, "c", n_contract), positions(rhs_kinds, "c", n_contract)),
            (positions(lhs_kinds, "b", n_batch), positions(rhs_kinds, "b", n_batch)))
    return shape(lhs_kinds, lhs_free_sizes), shape(rhs_kinds, rhs_free_sizes), dims


def _einsum_reference(dims: tuple, preferred: Any) -> Callable[..., np.ndarray]:
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dims

    def reference(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        lhs_names = [next(letters) for _ in range(lhs.ndim)]
        rhs_names = [next(letters) for _ in range(rhs.ndim)]
        for left, right in zip(lhs_contract + lhs_batch, rhs_contract + rhs_batch):
            rhs_names[right] = lhs_names[left]
        out = ([lhs_names[d] for d in lhs_batch]
               + [n for d, n in enumerate(lhs_names) if d not in lhs_contract + lhs_batch]
               + [n for d, n in enumerate(rhs_names) if d not in rhs_contract + rhs_batch])
        spec = f"{''.join(lhs_names)},{''.join(rhs_names)}->{''.join(out)}"
        wide = _wide(lhs.dtype)
        result = np.einsum(spec, lhs.astype(wide), rhs.astype(wide))
        target = np.dtype(preferred or lhs.dtype)
        return (result != 0) if target == np.bool_ else result.astype(target)
    return reference


def _dot_general_case(rng: np.random.Generator, dtype: Any) -> Case:
    lhs_shape, rhs_shape, dims = _dot_layout(rng)
    preferred = None
    if rng.random() < 0.4:
        preferred = {"b": np.int32, "i": np.int32, "u": np.uint32, "f": np.float32,
                     "c": np.complex64}[_kind(dtype)]
        if np.dtype(dtype) == np.float64:
            preferred = np.float64
    args = [_quarter_values(rng, lhs_shape, dtype), _quarter_values(rng, rhs_shape, dtype)]
    return Case(lambda a, b: lax.dot_general(a, b, dims, preferred_element_type=preferred),
                _einsum_reference(dims, preferred), args, values=_quarter_values)


DOT = [Record("dot_general", _dot_general_case, dtypes=ALL)]

RECORDS: list[Record] = REDUCTIONS + CUMULATIVE + DOT
