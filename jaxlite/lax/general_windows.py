"""`lax.reduce_window` with any reducer: the `reduce_window` primitive (XLA's variadic
ReduceWindow).

Mirrors `jax.lax.reduce_window`. With one operand, `lax.add`, `max` or `min` and an initial
value known to be the identity, the dedicated window primitives of `windows.py` are used,
as in JAX; any other reducer (or initial value, or several operands) is traced into a jaxpr
of scalars that the `reduce_window` equation carries. Each output folds its window's
elements in row-major order into the initial value, as XLA on the CPU does; padded places
and base-dilation holes are skipped (for a monoid that is the same as holding the initial
value; for other reducers it is what XLA computes). It lowers to that fold, written with
slices of the padded operand (XLA's reduce-window instruction is for monoids here). The derivative is JAX's: a reduce_window
of (values, tangents) pairs with the reducer's jvp as the reducer.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.ad import (Zero, instantiate, jvp_jaxpr, tangent_aval,
                                    zeros_like_aval)
from jaxlite.interpreters.batching import batch_at_front
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.lax._composed import lower_by_expansion
from jaxlite.lax._control_flow_util import eval_closed
from jaxlite.lax._reducer_util import (apply_elementwise, apply_to_numpy, flat_operands,
                                       find_monoid, reduction_jaxpr)
from jaxlite.lax._window_util import (WINDOW_PARAMS, check_params, element_slices, out_shape,
                                      pad_config)
from jaxlite.lax.arithmetic import add
from jaxlite.lax.broadcast import broadcast_in_dim
from jaxlite.lax.convolution import padtype_to_pads
from jaxlite.lax.math_functions import max as lax_max
from jaxlite.lax.math_functions import min as lax_min
from jaxlite.lax.selection import select_n
from jaxlite.lax.slicing import pad_p, slice
from jaxlite.lax.windows import reduce_window_max_p, reduce_window_min_p, reduce_window_sum_p
from jaxlite.tree_util import tree_unflatten

__all__ = ["reduce_window", "reduce_window_p"]

reduce_window_p = Primitive("reduce_window", multiple_results=True)

def _split(values: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    n = len(values) // 2
    return list(values[:n]), list(values[n:])


def _abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, **window: Any
                   ) -> list[ShapedArray]:
    operands, inits = _split(avals)
    if any(a.shape != () for a in inits):
        raise TypeError(f"reduce_window: initial values must be scalars, got shapes "
                        f"{[a.shape for a in inits]}.")
    if [o.dtype for o in operands] != [i.dtype for i in inits]:
        raise TypeError("reduce_window operand dtypes should match corresponding initial "
                        f"value dtypes, got operands={[o.str_short() for o in operands]} "
                        f"and initial_values={[i.str_short() for i in inits]}")
    if len({o.shape for o in operands}) != 1:
        raise TypeError(f"reduce_window: operands must have one shape, got "
                        f"{[o.shape for o in operands]}.")
    check_params(operands[0].ndim, *(window[k] for k in WINDOW_PARAMS), "reduce_window")
    shape = out_shape(operands[0].shape, window)
    return [ShapedArray(shape, o.dtype, o.weak_type and i.weak_type)
            for o, i in zip(operands, inits)]


def _reference(*args: np.ndarray, jaxpr: ClosedJaxpr, **window: Any) -> list[np.ndarray]:
    operands, inits = _split([np.asarray(a) for a in args])
    shape = out_shape(operands[0].shape, window)
    acc = [np.broadcast_to(i, shape).copy() for i in inits]
    if 0 in shape:
        return acc
    config = pad_config(window)
    padded = [pad_p.reference(x, i, padding_config=config) for x, i in zip(operands, inits)]
    # XLA skips padding and base-dilation holes (it does not fold the initial value in).
    real = pad_p.reference(np.ones(operands[0].shape, bool), np.bool_(False),
                           padding_config=config)
    for starts, limits, strides in element_slices(shape, window):
        index = tuple(np.s_[lo:hi:st] for lo, hi, st in zip(starts, limits, strides))
        stepped = apply_to_numpy(jaxpr, *acc, *(p[index] for p in padded))
        acc = [np.where(real[index], new, old) for new, old in zip(stepped, acc)]
    return [np.asarray(a, i.dtype) for a, i in zip(acc, inits)]


def _expansion(*args: Any, jaxpr: ClosedJaxpr, **window: Any) -> list[Any]:
    """The reference's fold in lax operations (the lowering: backends give reduce-window
    padding the initial value's meaning, which only monoids can use)."""
    operands, inits = _split(args)
    operand_shape = get_aval(operands[0]).shape
    shape = out_shape(operand_shape, window)
    acc = [broadcast_in_dim(i, shape, ()) for i in inits]
    if 0 in shape:
        return acc
    config = pad_config(window)
    padded = [pad_p.bind(x, i, padding_config=config) for x, i in zip(operands, inits)]
    real = pad_p.bind(broadcast_in_dim(np.bool_(True), operand_shape, ()), np.bool_(False),
                      padding_config=config)
    for starts, limits, strides in element_slices(shape, window):
        stepped = apply_elementwise(jaxpr, *acc, *(slice(p, starts, limits, strides)
                                                   for p in padded))
        keep = slice(real, starts, limits, strides)
        acc = [select_n(keep, old, new) for new, old in zip(stepped, acc)]
    return acc


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
         **window: Any) -> tuple[list, list]:
    operands, inits = _split(primals)
    operand_tangents, init_tangents = _split(tangents)
    if not all(isinstance(t, Zero) for t in init_tangents):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    if all(isinstance(t, Zero) for t in operand_tangents):
        outs = reduce_window_p.bind(*primals, jaxpr=jaxpr, **window)
        return outs, [Zero(tangent_aval(get_aval(o))) for o in outs]
    n = len(operands)
    jvp = jvp_jaxpr(jaxpr, [True] * (2 * n))  # (a, b, ta, tb) -> (out, t_out)

    def pair_reducer(*xs: Any) -> list[Any]:  # (a, ta, b, tb), the operands' layout
        a, ta, b, tb = xs[:n], xs[n:2 * n], xs[2 * n:3 * n], xs[3 * n:]
        return eval_closed(jvp, *a, *b, *ta, *tb)
    scalars = [ShapedArray((), a.dtype, a.weak_type) for a in jaxpr.in_avals[:n]]
    pair_jaxpr = trace_to_jaxpr(pair_reducer, scalars * 4)
    zeros = [zeros_like_aval(get_aval(i).update(weak_type=False)) for i in inits]
    outs = reduce_window_p.bind(*operands, *map(instantiate, operand_tangents), *inits,
                                *zeros, jaxpr=pair_jaxpr, **window)
    return outs[:n], outs[n:]


def _batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *, jaxpr: ClosedJaxpr,
           **window: Any) -> tuple[list, list]:
    operands, inits = _split(args)
    operand_dims, init_dims = _split(dims)
    if any(d is not None for d in init_dims):
        raise NotImplementedError("lax.reduce_window under vmap with batched initial values "
                                  "is not supported (JAX neither).")
    operands = batch_at_front(operands, operand_dims, axis_size)
    wide = {k: (((0, 0) if k == "padding" else 1),) + tuple(v) for k, v in window.items()}
    outs = reduce_window_p.bind(*operands, *inits, jaxpr=jaxpr, **wide)
    return outs, [0] * len(outs)


reduce_window_p.abstract_eval = _abstract_eval
reduce_window_p.reference = _reference
reduce_window_p.jvp = _jvp
reduce_window_p.batch = _batch
reduce_window_p.lower = lower_by_expansion(reduce_window_p, _expansion)

_MONOIDS = [(add, "add", reduce_window_sum_p), (lax_max, "max", reduce_window_max_p),
            (lax_min, "min", reduce_window_min_p)]


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = "VALID",
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce every window of `operand` with `computation` (mirrors `jax.lax.reduce_window`).

    `operand` and `init_value` are pytrees of one structure (arrays of one shape, and
    scalars); `padding` is (low, high) pairs or 'VALID' / 'SAME' / 'SAME_LOWER'. Padded
    places and base-dilation holes hold the initial values.
    """
    leaves, inits, tree = flat_operands("reduce_window", operand, init_value)
    if len(leaves) != len(inits):
        raise ValueError("Must have same total number of operands as init_values: "
                         f" {len(leaves)} vs. {len(inits)}")
    shape = tuple(np.shape(leaves[0]))
    ndim = len(window_dimensions)
    window = {
        "window_dimensions": tuple(int(w) for w in window_dimensions),
        "window_strides": (1,) * ndim if window_strides is None
        else tuple(int(s) for s in window_strides),
        "base_dilation": (1,) * ndim if base_dilation is None
        else tuple(int(b) for b in base_dilation),
        "window_dilation": (1,) * ndim if window_dilation is None
        else tuple(int(d) for d in window_dilation),
    }
    if isinstance(padding, str):
        # As in JAX, a padding name sees the operand undilated and the window dilated.
        extent = [(w - 1) * d + 1 for w, d in zip(window["window_dimensions"],
                                                 window["window_dilation"])]
        pads = padtype_to_pads(shape, extent, window["window_strides"], padding)
    else:
        pads = padding
    window["padding"] = tuple((int(lo), int(hi)) for lo, hi in pads)
    primitive = find_monoid(_MONOIDS, computation, inits)
    if primitive is not None:
        return tree_unflatten(tree, [primitive.bind(leaves[0], **window)])
    jaxpr, out_tree = reduction_jaxpr(computation, [get_aval(i) for i in inits], tree)
    if out_tree != tree:
        raise ValueError("reduce_window output must have the same tree structure as the "
                         f"operands {tree} vs. {out_tree}")
    outs = reduce_window_p.bind(*leaves, *inits, jaxpr=jaxpr, **window)
    return tree_unflatten(tree, outs)
