"""Test records of the comparison, bitwise, selection, shape, slicing and movement primitives.

Covers comparisons.py, bitwise.py, selection.py, shape_ops.py, slicing.py, `bitcast_convert_type`
and the primitives declared with the core (broadcast_in_dim, transpose, reshape, reduce_sum,
convert_element_type, add_any). The numpy references here are written independently of the
primitives' own reference rules where the semantics are subtle (shifts, popcount, pad).
"""
from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np

from jaxlite import lax
from jaxlite.lax.convert import bitcast_convert_type
from records import Case, Record, standard_values

BF16 = np.dtype(ml_dtypes.bfloat16)
ALL = (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint32, np.float16, BF16,
       np.float32, np.complex64)
INTEGERS = (np.int8, np.int16, np.int32, np.uint8, np.uint32)
REAL = tuple(d for d in ALL if d is not np.complex64)
NUMERIC = tuple(d for d in ALL if d is not np.bool_)


def _is_float(dtype: Any) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16


def _shape(rng: np.random.Generator, min_ndim: int = 0, max_ndim: int = 3,
           min_size: int = 0) -> tuple[int, ...]:
    """A random shape; a size of 0 now and then where `min_size` allows."""
    ndim = int(rng.integers(min_ndim, max_ndim + 1))
    sizes = rng.integers(max(min_size, 1), 5, ndim)
    if min_size == 0 and ndim and rng.random() < 0.15:
        sizes[rng.integers(ndim)] = 0
    return tuple(int(s) for s in sizes)


def _subset(rng: np.random.Generator, items: list[int]) -> list[int]:
    return [i for i in items if rng.random() < 0.5]


# --------------------------------------------------------------------------- comparisons

def _tie_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Few distinct values (so that equal pairs occur), with NaN, inf and -0.0 for floats."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return standard_values(rng, shape, dtype)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -2, 3, shape).astype(dtype)
    pool = np.array([-1.0, -0.0, 0.0, 1.0, 2.0, np.nan, np.inf, -np.inf])
    real = rng.choice(pool, shape)
    if dtype.kind == "c":
        real = real + 1j * rng.choice(pool[[1, 3, 5]], shape)
    return real.astype(dtype)


def _comparison_record(name: str, numpy_fn: Callable[..., Any], dtypes: tuple) -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        # Now and then a 0-d second operand, or one with some dimensions of size 1: lax
        # broadcasts those (but not operands of another rank), as JAX does.
        draw = rng.random()
        other = (shape if draw < 0.7 else () if draw < 0.85
                 else tuple(1 if rng.random() < 0.5 else d for d in shape))
        args = [_tie_values(rng, shape, dtype), _tie_values(rng, other, dtype)]
        return Case(getattr(lax, name), numpy_fn, args, values=_tie_values)
    return Record(name, make_case, dtypes=dtypes, grad=False)


COMPARISONS = [
    _comparison_record("eq", np.equal, ALL), _comparison_record("ne", np.not_equal, ALL),
    _comparison_record("lt", np.less, REAL), _comparison_record("le", np.less_equal, REAL),
    _comparison_record("gt", np.greater, REAL), _comparison_record("ge", np.greater_equal, REAL),
]


# ------------------------------------------------------------------------------ bitwise

def _bit_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Random bit patterns mixed with small numbers, which as shift amounts include negative
    ones and ones at or past the bit width."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return standard_values(rng, shape, dtype)
    bits = dtype.itemsize * 8
    pattern = rng.integers(0, 2**bits, shape, dtype=np.uint64).astype(f"u{dtype.itemsize}")
    small = rng.integers(-2, bits + 3, shape).astype(dtype)
    return np.where(rng.random(shape) < 0.5, pattern.view(dtype), small)


def _as_unsigned(x: np.ndarray) -> np.ndarray:
    """Each element's bit pattern as a Python-sized nonnegative integer (int64 holds 32 bits)."""
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}").astype(np.int64)


def _from_pattern(pattern: np.ndarray, dtype: np.dtype) -> np.ndarray:
    bits = np.dtype(dtype).itemsize * 8
    return (pattern & ((1 << bits) - 1)).astype(f"u{np.dtype(dtype).itemsize}").view(dtype)


def _ref_shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    amount = _as_unsigned(y)
    out = np.where(amount < bits, _as_unsigned(x) << np.minimum(amount, bits - 1), 0)
    return _from_pattern(out, x.dtype)


def _ref_shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    amount = _as_unsigned(y)
    out = np.where(amount < bits, _as_unsigned(x) >> np.minimum(amount, bits - 1), 0)
    return _from_pattern(out, x.dtype)


def _ref_shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    pattern = _as_unsigned(x)
    signed = np.where(pattern >= 1 << (bits - 1), pattern - (1 << bits), pattern)
    out = signed >> np.minimum(_as_unsigned(y), bits - 1)  # int64 >> keeps the sign
    return _from_pattern(out, x.dtype)


def _ref_population_count(x: np.ndarray) -> np.ndarray:
    x = np.array(x, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    as_bytes = x.reshape(x.shape + (1,)).view(np.uint8)
    return np.unpackbits(as_bytes, axis=-1).sum(axis=-1).astype(x.dtype)


def _bitwise_record(name: str, fun: Callable[..., Any], reference: Callable[..., Any],
                    num_args: int, dtypes: tuple) -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _shape(rng)
        args = [_bit_values(rng, shape, dtype) for _ in range(num_args)]
        return Case(fun, reference, args, values=_bit_values)
    return Record(name, make_case, dtypes=dtypes, grad=False)


BITWISE = [
    _bitwise_record("and", lax.bitwise_and, np.bitwise_and, 2, (np.bool_, *INTEGERS)),
    _bitwise_record("or", lax.bitwise_or, np.bitwise_or, 2, (np.bool_, *INTEGERS)),
    _bitwise_record("xor", lax.bitwise_xor, np.bitwise_xor, 2, (np.bool_, *INTEGERS)),
    _bitwise_record("not", lax.bitwise_not, np.invert, 1, (np.bool_, *INTEGERS)),
    _bitwise_record("shift_left", lax.shift_left, _ref_shift_left, 2, INTEGERS),
    _bitwise_record("shift_right_logical", lax.shift_right_logical,
                    _ref_shift_right_logical, 2, INTEGERS),
    _bitwise_record("shift_right_arithmetic", lax.shift_right_arithmetic,
                    _ref_shift_right_arithmetic, 2, INTEGERS),
    _bitwise_record("population_count", lax.population_count, _ref_population_count, 1,
                    INTEGERS),
]


# ---------------------------------------------------------------------------- selection

def _select_n_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    boolean = rng.random() < 0.5
    n = 2 if boolean else int(rng.integers(1, 5))
    which_shape = () if rng.random() < 0.3 else shape

    def values(rng: np.random.Generator, shape: tuple[int, ...], dt: Any) -> np.ndarray:
        # Integer arguments stay within the case indices (out of range is unspecified).
        if np.dtype(dt).kind in "iu":
            return rng.integers(0, n, shape).astype(dt)
        return standard_values(rng, shape, dt)

    which = values(rng, which_shape, np.bool_ if boolean else np.int32)
    cases = [values(rng, shape, dtype) for _ in range(n)]
    return Case(lambda w, *cs: lax.select_n(w, *cs),
                lambda w, *cs: np.choose(np.asarray(w, np.int64), cs), [which, *cases],
                values=values)


def _grid_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Odd multiples of 1/8: at least 1/8 away from the clamp bounds, which are quarters."""
    if np.dtype(dtype) == np.bool_ or np.dtype(dtype).kind in "iu":
        return standard_values(rng, shape, dtype)
    values = (2 * rng.integers(-12, 12, shape) + 1) / 8
    if np.dtype(dtype).kind == "c":
        values = values + 1j * (2 * rng.integers(-4, 4, shape) + 1) / 8
    return values.astype(dtype)


def _clamp_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    x = _grid_values(rng, shape, dtype)
    kind = np.dtype(dtype).kind
    bounds = []
    for low, high in ((-6, 0), (1, 7)):  # min < max
        bound_shape = () if rng.random() < 0.5 else shape
        if kind == "b":
            bounds.append(np.full(bound_shape, low > 0))
        elif kind in "iu":
            bounds.append(rng.integers(low + 6 if kind == "u" else low, high + 6,
                                       bound_shape).astype(dtype))
        else:  # multiples of 1/4, away from the values of x
            bounds.append((rng.integers(low, high, bound_shape) / 4).astype(dtype))
    return Case(lax.clamp, lambda lo, v, hi: np.minimum(np.maximum(v, lo), hi),
                [bounds[0], x, bounds[1]], values=_grid_values)


SELECTION = [
    Record("select_n", _select_n_case, dtypes=ALL),
    Record("clamp", _clamp_case, dtypes=ALL),
]


# ------------------------------------------------------------------- shapes and movement

def _squeeze_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(1 if rng.random() < 0.5 else s for s in _shape(rng, max_ndim=4))
    ones = [d for d, s in enumerate(shape) if s == 1]
    dims = tuple(d - len(shape) if rng.random() < 0.3 else d for d in _subset(rng, ones))
    return Case(lambda x: lax.squeeze(x, dims), lambda x: np.squeeze(x, axis=dims),
                [standard_values(rng, shape, dtype)])


def _rev_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    dims = tuple(_subset(rng, list(range(len(shape)))))
    return Case(lambda x: lax.rev(x, dims), lambda x: np.flip(x, dims),
                [standard_values(rng, shape, dtype)])


def _iota_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng, min_ndim=1)
    dimension = int(rng.integers(len(shape)))
    if rng.random() < 0.2:  # long enough to wrap small integers and round small floats
        shape = shape[:dimension] + (300,) + shape[dimension + 1:]

    def reference() -> np.ndarray:
        counts = np.arange(shape[dimension])
        counts = counts.astype(dtype) if np.dtype(dtype).kind in "iu" else \
            counts.astype(np.float64).astype(dtype)
        view = [1] * len(shape)
        view[dimension] = shape[dimension]
        return np.broadcast_to(counts.reshape(view), shape)
    return Case(lambda: lax.broadcasted_iota(dtype, shape, dimension), reference, [])


def _bitcast_case(rng: np.random.Generator, dtype: Any) -> Case:
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or dtype.kind == "c":
        targets = [dtype]  # bool and complex are bitcast only to themselves
    else:
        targets = [np.dtype(d) for d in NUMERIC if np.dtype(d).kind != "c"]
    target = targets[int(rng.integers(len(targets)))]
    shape = _shape(rng)
    if target.itemsize > dtype.itemsize:
        shape = shape + (target.itemsize // dtype.itemsize,)

    def reference(x: np.ndarray) -> np.ndarray:
        x = np.array(x, order="C")
        if target.itemsize < x.itemsize:
            return x.reshape(x.shape + (1,)).view(target)
        return x.view(target).reshape(x.shape[:-1]) if target.itemsize > x.itemsize \
            else x.view(target)
    return Case(lambda x: bitcast_convert_type(x, target), reference,
                [_bit_values(rng, shape, dtype) if dtype.kind in "iu" else
                 standard_values(rng, shape, dtype)])


def _broadcast_in_dim_case(rng: np.random.Generator, dtype: Any) -> Case:
    out_shape = _shape(rng, max_ndim=4)
    kept = sorted(_subset(rng, list(range(len(out_shape)))))
    operand_shape = tuple(1 if rng.random() < 0.3 else out_shape[d] for d in kept)

    def reference(x: np.ndarray) -> np.ndarray:
        view = [1] * len(out_shape)
        for d, s in zip(kept, operand_shape):
            view[d] = s
        return np.broadcast_to(np.reshape(x, view), out_shape)
    return Case(lambda x: lax.broadcast_in_dim(x, out_shape, kept), reference,
                [standard_values(rng, operand_shape, dtype)])


def _transpose_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng, max_ndim=4)
    perm = tuple(int(p) for p in rng.permutation(len(shape)))
    return Case(lambda x: lax.transpose(x, perm), lambda x: np.transpose(x, perm),
                [standard_values(rng, shape, dtype)])


def _reshape_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng, max_ndim=4)
    dims = tuple(int(p) for p in rng.permutation(len(shape))) if rng.random() < 0.5 else None
    permuted = [shape[d] for d in dims] if dims is not None else list(shape)
    new_sizes: list[int] = []
    for size in permuted:  # merge neighbours now and then, insert unit dimensions
        if new_sizes and rng.random() < 0.4:
            new_sizes[-1] *= size
        else:
            new_sizes.append(size)
        if rng.random() < 0.2:
            new_sizes.append(1)
    return Case(lambda x: lax.reshape(x, new_sizes, dims),
                lambda x: np.reshape(x if dims is None else np.transpose(x, dims), new_sizes),
                [standard_values(rng, shape, dtype)])


def _exact_sum_values(rng: np.random.Generator, shape: tuple[int, ...],
                      dtype: Any) -> np.ndarray:
    # Small integers make float16 and bfloat16 sums exact whatever the summation order.
    if np.dtype(dtype) in (np.dtype(np.float16), BF16):
        return rng.integers(-3, 4, shape).astype(dtype)
    return standard_values(rng, shape, dtype)


def _reduce_sum_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    axes = tuple(_subset(rng, list(range(len(shape)))))

    def reference(x: np.ndarray) -> np.ndarray:
        wide = np.complex128 if np.dtype(dtype).kind == "c" else \
            (np.int64 if np.dtype(dtype).kind in "iu" else np.float64)
        return np.sum(x.astype(wide), axis=axes).astype(dtype)
    return Case(lambda x: lax.reduce_sum(x, axes), reference,
                [_exact_sum_values(rng, shape, dtype)], values=_exact_sum_values)


def _convert_reference(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """XLA's Convert: real part of complex, truncating and saturating float to int."""
    x = np.asarray(x)
    if x.dtype.kind == "c" and target.kind != "c":
        x = x.real
    if target == np.bool_:
        return x != 0
    if _is_float(x.dtype) and target.kind in "iu":
        info = np.iinfo(target)
        wide = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0, posinf=info.max,
                             neginf=info.min)
        return np.clip(wide, info.min, info.max).astype(target)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(target)


def _convert_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    values = standard_values(rng, shape, dtype)
    if _is_float(dtype):  # large values saturate small integer types, NaN converts to 0
        special = np.array([300.5, -1e4, np.nan, np.inf, -2.5, 0.5]).astype(dtype)
        values = np.where(rng.random(shape) < 0.2, rng.choice(special, shape), values)
    return values.astype(dtype)


def _convert_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    if np.dtype(dtype) == np.float64:  # derivative checks: a conversion that stays exact
        target, weak = np.dtype(np.float64), True
        x = standard_values(rng, shape, dtype)
    else:
        target, weak = np.dtype(ALL[int(rng.integers(len(ALL)))]), False
        x = _convert_values(rng, shape, dtype)
    return Case(lambda x: lax._convert_element_type(x, target, weak_type=weak),
                lambda x: _convert_reference(x, target), [x], values=_convert_values)


def _add_any_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    reference = np.logical_or if np.dtype(dtype) == np.bool_ else np.add
    return Case(lax.add_any, reference,
                [standard_values(rng, shape, dtype), standard_values(rng, shape, dtype)])


SHAPES = [
    Record("squeeze", _squeeze_case, dtypes=ALL),
    Record("rev", _rev_case, dtypes=ALL),
    Record("iota", _iota_case, dtypes=NUMERIC, grad=False, vmap=False),
    Record("bitcast_convert_type", _bitcast_case, dtypes=ALL, grad=False),
    Record("broadcast_in_dim", _broadcast_in_dim_case, dtypes=ALL),
    Record("transpose", _transpose_case, dtypes=ALL),
    Record("reshape", _reshape_case, dtypes=ALL),
    Record("reduce_sum", _reduce_sum_case, dtypes=NUMERIC),
    Record("convert_element_type", _convert_case, dtypes=ALL),
    Record("add_any", _add_any_case, dtypes=ALL),
]


# ------------------------------------------------------------------------------ slicing

def _slice_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    starts, limits, strides = [], [], []
    for size in shape:
        a, b = sorted(int(v) for v in rng.integers(0, size + 1, 2))
        starts.append(a)
        limits.append(b)
        strides.append(int(rng.integers(1, 4)))
    steps = tuple(strides) if rng.random() < 0.7 else None

    def reference(x: np.ndarray) -> np.ndarray:
        index = tuple(slice(a, b, s) for a, b, s in zip(starts, limits, steps or [1] * len(shape)))
        return x[index]
    return Case(lambda x: lax.slice(x, starts, limits, steps), reference,
                [standard_values(rng, shape, dtype)])


def _ref_pad(x: np.ndarray, value: np.ndarray, config: list[tuple[int, int, int]]) -> np.ndarray:
    """Pad one axis at a time: interior, then the positive edges, then crop negative ones."""
    out = np.asarray(x)
    for axis, (low, high, interior) in enumerate(config):
        out = np.moveaxis(out, axis, 0)
        n = out.shape[0]
        spread = np.full((n + max(n - 1, 0) * interior,) + out.shape[1:], value, out.dtype)
        spread[::interior + 1] = out
        parts = [np.full((max(low, 0),) + out.shape[1:], value, out.dtype), spread,
                 np.full((max(high, 0),) + out.shape[1:], value, out.dtype)]
        out = np.concatenate(parts)
        out = out[max(-low, 0):out.shape[0] - max(-high, 0)]
        out = np.moveaxis(out, 0, axis)
    return out


def _pad_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng)
    config = []
    for size in shape:
        interior = int(rng.integers(0, 3))
        grown = size + max(size - 1, 0) * interior
        low, high = (int(v) for v in rng.integers(-2, 4, 2))
        low = max(low, -grown)  # the result may be empty but not negative
        high = max(high, -(grown + low))
        config.append((low, high, interior))
    value = standard_values(rng, (), dtype)
    return Case(lambda x, v: lax.pad(x, v, config), lambda x, v: _ref_pad(x, v, config),
                [standard_values(rng, shape, dtype), value])


def _concatenate_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _shape(rng, min_ndim=1)
    dimension = int(rng.integers(len(shape)))
    args = []
    for _ in range(int(rng.integers(2, 4))):
        part = list(shape)
        part[dimension] = int(rng.integers(0, 4))
        args.append(standard_values(rng, tuple(part), dtype))
    return Case(lambda *xs: lax.concatenate(xs, dimension),
                lambda *xs: np.concatenate(xs, axis=dimension), args)


SLICING = [
    Record("slice", _slice_case, dtypes=ALL),
    Record("pad", _pad_case, dtypes=ALL),
    Record("concatenate", _concatenate_case, dtypes=ALL),
]

RECORDS: list[Record] = [*COMPARISONS, *BITWISE, *SELECTION, *SHAPES, *SLICING]
