"""Elementwise selection: `select_n` (and its two-way form `select`) and `clamp`.

Mirrors `jax.lax.select_n`, `jax.lax.select` and `jax.lax.clamp` (XLA's Select and Clamp).
`select_n(which, *cases)` picks, per element, the case that `which` names: a bool `which`
picks between two cases (False the first), an integer one among any number. Both primitives
accept a 0-d `which` (or 0-d clamp bounds) with full-shaped other operands, as XLA does.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.batching import move_batch_axis
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import upcast_low_precision
from jaxlite.lax.arithmetic import full_like, typed_operands
from jaxlite.lax.bitwise import bitwise_and
from jaxlite.lax.broadcast import broadcast_in_dim
from jaxlite.lax.comparisons import gt, lt
from jaxlite.xla.ir import HloInstruction

__all__ = ["select_n", "select", "clamp", "select_n_p", "clamp_p"]


def _batch_with_scalars(axis_size: int, args: Sequence[Any], dims: Sequence[int | None],
                        scalar_ok: Sequence[bool]) -> tuple[list[Any], int]:
    """Line up the batch axes of operands that are full-shaped or (where allowed) 0-d.

    The operands marked `scalar_ok` may be 0-d while the others have the full shape. A 0-d
    operand that is batched has become a vector of one value per batch member, so it must be
    broadcast to the full shape; one that is not batched can stay 0-d.
    """
    full = next(i for i, ok in enumerate(scalar_ok) if not ok)
    full_shape = list(np.shape(args[full]))
    if dims[full] is not None:
        del full_shape[dims[full]]
    batched_dims = {d for d in dims if d is not None}
    aligned = len(batched_dims) == 1 and all(
        (np.ndim(x) == len(full_shape) + 1) if d is not None else (ok and np.ndim(x) == 0)
        for x, d, ok in zip(args, dims, scalar_ok))
    if aligned:
        return list(args), batched_dims.pop()
    out = []
    for x, d, ok in zip(args, dims, scalar_ok):
        if d is None and ok and np.ndim(x) == 0:
            out.append(x)
            continue
        x = move_batch_axis(x, d, axis_size, 0)
        if np.ndim(x) == 1 and full_shape:
            x = broadcast_in_dim(x, (axis_size, *full_shape), (0,))
        out.append(x)
    return out, 0


def _check_same_dtypes(name: str, avals: Sequence[ShapedArray], tip: str) -> None:
    # JAX's wording, with a tip naming the jnp function that promotes (if there is one).
    names = [np.dtype(a.dtype).name for a in avals]
    if any(n != names[0] for n in names[1:]):
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(names)}.{tip}")


# ----------------------------------------------------------------------------- select_n

select_n_p = Primitive("select_n")


def _select_n_abstract_eval(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select_n requires at least one case, got none.")
    shapes = [c.shape for c in cases]
    if any(s != shapes[0] for s in shapes[1:]):
        raise TypeError(f"select cases must have the same shapes, got {list(shapes)}.")
    _check_same_dtypes("select", cases, " (Tip: jnp.where is a similar function that does "
                       "automatic type promotion on inputs).")
    if which.dtype != np.bool_ and not dtypes.is_integer(which.dtype):
        raise TypeError(f"select `which` must be boolean or integer type, got "
                        f"{np.dtype(which.dtype).name}.")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError(f"select with boolean `which` cannot have > 2 cases (got "
                        f"{len(cases)}; use an integer `which` to choose among more).")
    if which.shape not in ((), shapes[0]):
        raise TypeError(f"select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {shapes[0]}.")
    return ShapedArray(shapes[0], cases[0].dtype, all(c.weak_type for c in cases))


def _select_n_reference(which: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    # Out-of-range indices are unspecified in XLA; on the CPU they clamp to the first or last
    # case, and so does this loop (each case wins wherever `which` reaches it).
    index = np.asarray(which).astype(np.int64)
    out = np.asarray(cases[0])
    for i, case in enumerate(cases[1:], start=1):
        out = np.where(index >= i, case, out)
    return np.broadcast_to(out, np.shape(cases[0]))


def _select_n_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    if all(isinstance(t, ad.Zero) for t in case_tangents):
        return out, ad.Zero(ad.tangent_aval(get_aval(out)))
    return out, select_n_p.bind(which, *map(ad.instantiate, case_tangents))


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    if is_undefined(which):
        raise TypeError("select_n is not linear in its predicate `which`; it cannot be "
                        "transposed with respect to it.")
    zeros = full_like(ct, 0)
    cts: list[Any] = [None]
    for i, case in enumerate(cases):
        if not is_undefined(case):
            cts.append(None)
            continue
        branches = [zeros] * len(cases)
        branches[i] = ct
        cts.append(select_n_p.bind(which, *branches))
    return cts


def _select_n_batch(axis_size: int, args: Sequence[Any],
                    dims: Sequence[int | None]) -> tuple[Any, int]:
    scalar_ok = [True] + [False] * (len(args) - 1)
    args, out_dim = _batch_with_scalars(axis_size, args, dims, scalar_ok)
    return select_n_p.bind(*args), out_dim


def _select_n_lower(ctx: LoweringContext, which: HloInstruction,
                    *cases: HloInstruction) -> HloInstruction:
    return hlo.select_n(ctx, which, cases)


select_n_p.abstract_eval = _select_n_abstract_eval
select_n_p.reference = _select_n_reference
select_n_p.jvp = _select_n_jvp
select_n_p.transpose = _select_n_transpose
select_n_p.batch = _select_n_batch
select_n_p.lower = _select_n_lower


def _broadcast_scalar_cases(which: Any, cases: list[Any]) -> list[Any]:
    """0-d cases broadcast to the shape of the other cases when those all share one shape
    (or, when every case is 0-d, to the shape of `which`); anything else is left for the
    primitive's shape check to report."""
    shapes = ({tuple(np.shape(c)) for c in cases} - {()}) or {tuple(np.shape(which))} - {()}
    if len(shapes) != 1:
        return cases
    shape = shapes.pop()
    return [broadcast_in_dim(c, shape, ()) if np.ndim(c) == 0 else c for c in cases]


def select_n(which: Any, *cases: Any) -> Any:
    """Per element, the case that `which` names (mirrors `jax.lax.select_n`).

    `which` is bool (at most two cases: False picks `cases[0]`) or integer (index into
    `cases`; out-of-range values are unspecified, as in XLA). It is 0-d or has the cases'
    shape.

    Differences from JAX: Python scalar cases take the dtype of the array cases, and 0-d
    cases broadcast to the shape of the others, or of `which` when all cases are 0-d (JAX
    requires equal shapes).
    """
    if not cases:
        raise ValueError("select_n() must have at least one case")
    cases = typed_operands("select_n", *cases)
    return select_n_p.bind(which, *_broadcast_scalar_cases(which, cases))


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """`on_true` where `pred` is true, else `on_false` (mirrors `jax.lax.select`).

    Differences from JAX: Python scalar cases take the dtype of the other case, and 0-d
    cases broadcast to the shape of the other case or of `pred`.
    """
    return select_n(pred, on_false, on_true)


# -------------------------------------------------------------------------------- clamp

clamp_p = Primitive("clamp")


def _clamp_abstract_eval(min: ShapedArray, operand: ShapedArray,
                         max: ShapedArray) -> ShapedArray:
    for name, bound in (("min", min), ("max", max)):
        if bound.shape not in ((), operand.shape):
            raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == "
                            f"(), got {name}.shape={bound.shape}, "
                            f"operand.shape={operand.shape}.")
    _check_same_dtypes("clamp", (min, operand, max), "")
    weak = min.weak_type and operand.weak_type and max.weak_type
    return ShapedArray(operand.shape, operand.dtype, weak)


def _clamp_reference(min: np.ndarray, operand: np.ndarray, max: np.ndarray) -> np.ndarray:
    # np.maximum and np.minimum propagate NaN from either side, as XLA's Clamp does, and
    # order complex numbers lexicographically, as XLA on the CPU does; min > max gives max.
    return np.minimum(np.maximum(operand, min), max)


def _clamp_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    lo, x, hi = primals
    t_lo, t_x, t_hi = tangents
    out = clamp_p.bind(lo, x, hi)
    zeros = full_like(x, 0)
    # The same masks as JAX: ties pass no tangent through, and only x's tangent passes where
    # lo < x < hi. Where lo > hi the result is hi, yet (as in JAX) hi's tangent passes only
    # where x > hi.
    masked = []
    if not isinstance(t_lo, ad.Zero):
        masked.append(select(bitwise_and(gt(lo, x), lt(lo, hi)), t_lo, zeros))
    if not isinstance(t_x, ad.Zero):
        masked.append(select(bitwise_and(gt(x, lo), lt(x, hi)), t_x, zeros))
    if not isinstance(t_hi, ad.Zero):
        masked.append(select(lt(hi, x), t_hi, zeros))
    tangent_out: Any = ad.Zero(ad.tangent_aval(get_aval(out)))
    for t in masked:
        tangent_out = ad.add_tangents(tangent_out, t)
    return out, tangent_out


def _clamp_batch(axis_size: int, args: Sequence[Any],
                 dims: Sequence[int | None]) -> tuple[Any, int]:
    args, out_dim = _batch_with_scalars(axis_size, args, dims, (True, False, True))
    return clamp_p.bind(*args), out_dim


def _clamp_lower(ctx: LoweringContext, min: HloInstruction, operand: HloInstruction,
                 max: HloInstruction) -> HloInstruction:
    return hlo.clamp(ctx, min, operand, max)


clamp_p.abstract_eval = _clamp_abstract_eval
clamp_p.reference = upcast_low_precision(_clamp_reference)
clamp_p.jvp = _clamp_jvp
clamp_p.batch = _clamp_batch
clamp_p.lower = _clamp_lower


def clamp(min: Any, x: Any, max: Any) -> Any:
    """`x` limited to the interval [`min`, `max`] elementwise (mirrors `jax.lax.clamp`).

    NaN in any operand gives NaN; where `min > max` the result is `max`. The derivative
    passes to `x` only where `min < x < max` strictly, as in JAX.

    `min` and `max` are 0-d or have the shape of `x`, as in JAX.

    Differences from JAX: Python scalars take the dtype of the array operands.
    """
    return clamp_p.bind(*typed_operands("clamp", min, x, max))
