"""Per-opcode rules of sharding propagation (the operand -> result and result -> operand
cases of XLA's ShardingPropagation::InferShardingFromOperands and GetShardingFromUser).

`forward(inst, view)` proposes a sharding for `inst` from its operands' current shardings;
`backward(user, k, view)` proposes one for the user's operand `k` from the user's sharding.
Both return None when they have nothing to say. `view` answers what propagation knows so
far (`view.of(inst)`), how many partitions there are (`view.n`) and how aggressive this
round is (`view.level`, 0..3 as in XLA: the lowest rounds skip proposals that would often
cost a reshard, such as sharding a broadcast's result from its operand).

Everything works on tile grids (sharding_propagation_tiles): a rule states which dimension
of one value is which dimension of the other, and `map_dims` does the rest. Dimensions that
have no counterpart are left whole on the new value (a dot's contracted dimensions: the
result is a partial sum the partitioner all-reduces, so its tiles become replication).
Tuple-shaped values, control flow and Sharding constraints are the driver's business
(sharding_propagation.py).
"""
from __future__ import annotations

from typing import Callable, Protocol, Sequence

import numpy as np

from jaxlite.xla.hlo_sharding import HloSharding
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.sharding_propagation_dims import (conv_dims, dot_dims,
                                                          gather_maps, partner_dims,
                                                          scatter_maps)
from jaxlite.xla.passes.sharding_propagation_tiles import (better, grid_of, is_manual,
                                                           manual_like, map_dims,
                                                           replicate_dims, reshape_grid,
                                                           reverse_dims, sharding_of)

__all__ = ["forward", "backward", "View"]


class View(Protocol):
    n: int
    level: int

    def of(self, inst: HloInstruction) -> HloSharding | None: ...


def _rank(inst: HloInstruction) -> int:
    return len(inst.shape.dims)


def _moved(sharding: HloSharding | None, rank: int, n: int,
           change: Callable[[np.ndarray], np.ndarray]) -> HloSharding | None:
    """`sharding` (of a rank-`rank` value) with its grid changed; maximal and manual
    shardings have no grid and do not carry over."""
    grid = grid_of(sharding, rank, n)
    return None if grid is None else sharding_of(change(grid))


def _mapped(sharding, rank, n, source_of: Sequence[int | None]):
    return _moved(sharding, rank, n, lambda g: map_dims(g, source_of))


def _most_specific(candidates: Sequence[HloSharding | None], rank: int,
                   view: View) -> HloSharding | None:
    """The combination of several proposals for one value, as XLA folds an elementwise op's
    operands or a value's users in: each improves on the last when it can (combining
    partial shardings after the first round)."""
    result = None
    for candidate in candidates:
        result = better(result, candidate, rank, view.n, view.level > 0) or result
    return result


def _unsliced(sharding, rank, n, sliced: Sequence[int]):
    return _moved(sharding, rank, n, lambda g: replicate_dims(g, sliced))


def _sliced_dims(inst: HloInstruction) -> list[int]:
    """Dimensions a dynamic-slice cuts (or a dynamic-update-slice's update does not cover)."""
    if inst.opcode is Opcode.DYNAMIC_SLICE:
        sizes, whole = inst.attr("sizes"), inst.operands[0].shape.dims
    else:
        sizes, whole = inst.operands[1].shape.dims, inst.shape.dims
    return [d for d, (s, w) in enumerate(zip(sizes, whole)) if s != w]


# ---------------------------------------------------------------- forward: operands -> result

def _elementwise_forward(inst, view):
    rank = _rank(inst)
    same_rank = [view.of(o) for o in inst.operands if _rank(o) == rank]
    maximal = [s for s in same_rank if s is not None and s.is_maximal]
    if maximal:  # a value pinned to one device stays there
        return maximal[0]
    return _most_specific(same_rank, rank, view)


def _contraction_forward(inst, view):
    """A dot's or convolution's result from either operand: batch and free dimensions
    carry over; contracted ones (the result is a partial sum) become replication."""
    if view.level < 1:  # XLA lets a dot's users speak first (seen in its dumps)
        return None
    lhs, rhs = inst.operands
    lhs_of, rhs_of = _contraction_maps(inst)
    from_lhs = _mapped(view.of(lhs), _rank(lhs), view.n, lhs_of)
    from_rhs = _mapped(view.of(rhs), _rank(rhs), view.n, rhs_of)
    return _most_specific([from_lhs, from_rhs], _rank(inst), view)


def _contraction_maps(inst):
    return dot_dims(inst) if inst.opcode is Opcode.DOT else conv_dims(inst)


def _broadcast_forward(inst, view):
    if view.level < 3:  # sharding a broadcast's result early forces reshards later (XLA)
        return None
    operand = inst.operands[0]
    dims = list(inst.attr("dimensions"))
    source_of = [dims.index(d) if d in dims else None for d in range(_rank(inst))]
    return _mapped(view.of(operand), _rank(operand), view.n, source_of)


def _reduce_forward(inst, view):
    inputs = inst.operands[:len(inst.operands) // 2]
    rank = _rank(inputs[0])
    reduced = set(inst.attr("dimensions"))
    kept = [d for d in range(rank) if d not in reduced]
    result = _mapped(_most_specific([view.of(o) for o in inputs], rank, view), rank,
                     view.n, kept)
    if inst.shape.is_tuple:  # a variadic reduce: every result laid out alike
        return None if result is None else tuple(
            result for _ in inst.shape.tuple_shapes)
    return result


def _transpose_forward(inst, view):
    operand = inst.operands[0]
    return _mapped(view.of(operand), _rank(operand), view.n, list(inst.attr("dimensions")))


def _reshape_forward(inst, view):
    operand = inst.operands[0]
    return _moved(view.of(operand), _rank(operand), view.n,
                  lambda g: reshape_grid(g, operand.shape.dims, inst.shape.dims))


def _reverse_forward(inst, view):
    operand = inst.operands[0]
    return _moved(view.of(operand), _rank(operand), view.n,
                  lambda g: reverse_dims(g, inst.attr("dimensions")))


def _first_operand(inst, view):
    return view.of(inst.operands[0])


def _concatenate_forward(inst, view):
    return _most_specific([view.of(o) for o in inst.operands], _rank(inst), view)


def _dynamic_slice_forward(inst, view):
    source = inst.operands[0 if inst.opcode is Opcode.DYNAMIC_SLICE else 1]
    from_slice = _unsliced(view.of(source), _rank(inst), view.n, _sliced_dims(inst))
    if inst.opcode is Opcode.DYNAMIC_SLICE:
        return from_slice
    return _most_specific([view.of(inst.operands[0]), from_slice], _rank(inst), view)


def _gather_forward(inst, view):
    operand_of, indices_of = gather_maps(inst)
    operand, indices = inst.operands
    # The indices speak first (XLA's order), then the operand's passed-through dimensions.
    return _most_specific(
        [_mapped(view.of(indices), _rank(indices), view.n, indices_of),
         _mapped(view.of(operand), _rank(operand), view.n, operand_of)], _rank(inst), view)


def _scatter_forward(inst, view):
    operand = inst.operands[0]
    return _unsliced(view.of(operand), _rank(operand), view.n, scatter_maps(inst))


def _sort_forward(inst, view):
    if not inst.shape.is_tuple:
        return _elementwise_forward(inst, view)
    rank = _rank(inst.operands[0])
    common = _most_specific([view.of(o) for o in inst.operands], rank, view)
    return None if common is None else tuple(common for _ in inst.operands)


FORWARD = {
    Opcode.DOT: _contraction_forward,
    Opcode.CONVOLUTION: _contraction_forward,
    Opcode.BROADCAST: _broadcast_forward,
    Opcode.REDUCE: _reduce_forward,
    Opcode.TRANSPOSE: _transpose_forward,
    Opcode.RESHAPE: _reshape_forward,
    Opcode.BITCAST: _reshape_forward,
    Opcode.REVERSE: _reverse_forward,
    Opcode.SLICE: _first_operand,
    Opcode.PAD: _first_operand,
    Opcode.COPY: _first_operand,
    Opcode.REDUCE_WINDOW: _first_operand,
    Opcode.SELECT_AND_SCATTER: _first_operand,
    Opcode.CONCATENATE: _concatenate_forward,
    Opcode.DYNAMIC_SLICE: _dynamic_slice_forward,
    Opcode.DYNAMIC_UPDATE_SLICE: _dynamic_slice_forward,
    Opcode.GATHER: _gather_forward,
    Opcode.SCATTER: _scatter_forward,
    Opcode.SORT: _sort_forward,
}


def _in_manual_body(inst: HloInstruction, sharding: HloSharding):
    """`inst`'s layout next to a value laid out as `sharding` in a shard_map body: the same
    for an array of the same shape, else manual over the same partitions."""
    if not inst.shape.is_tuple and sharding.subgroups and \
            len(sharding.tiles_per_dim) == _rank(inst):
        return sharding
    if inst.shape.is_tuple:
        return tuple(manual_like(sharding, len(s.dims)) for s in inst.shape.tuple_shapes)
    return manual_like(sharding, _rank(inst))


def forward(inst: HloInstruction, view: View):
    """A sharding for `inst` from its operands' (a tuple of leaves for a tuple result)."""
    manual = [view.of(o) for o in inst.operands if is_manual(view.of(o))]
    if manual:  # inside a shard_map body every value is the body's own business (XLA)
        return _in_manual_body(inst, manual[0])
    if inst.opcode.is_elementwise or inst.opcode is Opcode.BITCAST_CONVERT:
        return _elementwise_forward(inst, view)
    rule = FORWARD.get(inst.opcode)
    return None if rule is None else rule(inst, view)


# ---------------------------------------------------------------- backward: result -> operand

def _inverse(source_of: Sequence[int | None], rank: int) -> list[int | None]:
    """For each of `rank` source dimensions, the dimension of the new value that is it."""
    return [source_of.index(d) if d in source_of else None for d in range(rank)]


def _through(user, k, view, source_of):
    """The operand `k` of `user`, whose dimension d is the user's `source_of`-inverse."""
    operand = user.operands[k]
    return _mapped(view.of(user), _rank(user), view.n, _inverse(source_of, _rank(operand)))


def _elementwise_backward(user, k, view):
    operand = user.operands[k]
    if _rank(operand) != _rank(user):
        return HloSharding.replicate()  # a scalar bound of clamp, say
    return view.of(user)


def _contraction_backward(user, k, view):
    """An operand of a dot or convolution from its result, improved by the other operand's
    layout of the dimensions the two share (an lhs whose contracted dimension meets an rhs
    split along it is split alike: no resharding before the partial sums)."""
    operand, other = user.operands[k], user.operands[1 - k]
    from_result = _through(user, k, view, _contraction_maps(user)[k])
    from_other = _mapped(view.of(other), _rank(other), view.n, partner_dims(user, k))
    return _most_specific([from_result, from_other], _rank(operand), view)


def _broadcast_backward(user, k, view):
    dims = list(user.attr("dimensions"))
    return _mapped(view.of(user), _rank(user), view.n, dims)


def _is_init_value(user: HloInstruction, k: int) -> bool:
    reductions = (Opcode.REDUCE, Opcode.REDUCE_WINDOW)
    return user.opcode in reductions and k >= len(user.operands) // 2


def _reduce_backward(user, k, view):
    count = len(user.operands) // 2
    operand = user.operands[k]
    sharding = view.of(user)
    if isinstance(sharding, tuple):
        sharding = sharding[k]
    reduced = set(user.attr("dimensions"))
    kept = [d for d in range(_rank(operand)) if d not in reduced]
    from_result = _mapped(sharding, len(kept), view.n, _inverse(kept, _rank(operand)))
    # The inputs of a variadic reduce (argmax's values and indices) are laid out alike.
    siblings = [view.of(o) for o in user.operands[:count] if o is not operand]
    return _most_specific([from_result] + siblings, _rank(operand), view)


def _transpose_backward(user, k, view):
    return _through(user, k, view, list(user.attr("dimensions")))


def _reshape_backward(user, k, view):
    operand = user.operands[0]
    return _moved(view.of(user), _rank(user), view.n,
                  lambda g: reshape_grid(g, user.shape.dims, operand.shape.dims))


def _reverse_backward(user, k, view):
    return _moved(view.of(user), _rank(user), view.n,
                  lambda g: reverse_dims(g, user.attr("dimensions")))


def _same_or_scalar(user, k, view):
    """Operand 0 (and concatenate's others) as laid out as the result; pad values and other
    scalars replicated."""
    if _rank(user.operands[k]) != _rank(user):
        return HloSharding.replicate()
    return view.of(user)


def _dynamic_slice_backward(user, k, view):
    data = 0 if user.opcode is Opcode.DYNAMIC_SLICE else 1
    if k == 0 and user.opcode is Opcode.DYNAMIC_UPDATE_SLICE:
        return view.of(user)
    if k != data:
        return HloSharding.replicate()  # start indices
    return _unsliced(view.of(user), _rank(user), view.n, _sliced_dims(user))


def _gather_backward(user, k, view):
    maps = gather_maps(user)
    return _through(user, k, view, maps[k])


def _scatter_backward(user, k, view):
    if k != 0:
        return None
    return _unsliced(view.of(user), _rank(user), view.n, scatter_maps(user))


def _sort_backward(user, k, view):
    sharding = view.of(user)
    if not isinstance(sharding, tuple):
        return sharding
    siblings = [view.of(o) for o in user.operands if o is not user.operands[k]]
    return _most_specific([sharding[k]] + siblings, _rank(user.operands[k]), view)


BACKWARD = {
    Opcode.DOT: _contraction_backward,
    Opcode.CONVOLUTION: _contraction_backward,
    Opcode.BROADCAST: _broadcast_backward,
    Opcode.REDUCE: _reduce_backward,
    Opcode.TRANSPOSE: _transpose_backward,
    Opcode.RESHAPE: _reshape_backward,
    Opcode.BITCAST: _reshape_backward,
    Opcode.REVERSE: _reverse_backward,
    Opcode.SLICE: _same_or_scalar,
    Opcode.PAD: _same_or_scalar,
    Opcode.COPY: _same_or_scalar,
    Opcode.CONCATENATE: _same_or_scalar,
    Opcode.REDUCE_WINDOW: _same_or_scalar,
    Opcode.SELECT_AND_SCATTER: _same_or_scalar,
    Opcode.DYNAMIC_SLICE: _dynamic_slice_backward,
    Opcode.DYNAMIC_UPDATE_SLICE: _dynamic_slice_backward,
    Opcode.GATHER: _gather_backward,
    Opcode.SCATTER: _scatter_backward,
    Opcode.SORT: _sort_backward,
}


def backward(user: HloInstruction, k: int, view: View):
    """A sharding for operand `k` of `user` from the user's sharding."""
    sharding = view.of(user)
    if isinstance(sharding, HloSharding) and sharding.is_manual:
        return _in_manual_body(user.operands[k], sharding)  # all of a shard_map body's
    if sharding is None or _is_init_value(user, k):
        return None  # XLA leaves a reduction's init value alone (replicated in the end)
    if is_manual(sharding):
        return _in_manual_body(user.operands[k], view.of(user))
    if user.opcode.is_elementwise or user.opcode is Opcode.BITCAST_CONVERT:
        return _elementwise_backward(user, k, view)
    rule = BACKWARD.get(user.opcode)
    return None if rule is None else rule(user, k, view)
