"""Algebraic simplification (mirrors the exact subset of XLA's AlgebraicSimplifier).

Contract: `simplify_algebra(module)` replaces instructions by cheaper ones that give the same
bits for every input, NaN, infinities and -0.0 included; it never trades exactness for speed.
So `x + 0.0` stays (it turns -0.0 into 0.0) while `x + (-0.0)`, `x - 0.0`, `x * 1`, `x / 1`
go; identities of max/min/and/or/xor go (`max(x, -inf)`, ...); `-(-x)` and `not(not(x))`
give `x`. Movement: reshape to the same shape, reshape of reshape, identity transpose and
transpose of transpose (composed), broadcast of broadcast (composed), identity broadcast,
slice taking everything, slice of slice (composed), reverse over nothing and reverse of
reverse, zero padding, concatenate of one operand (operands of size 0 dropped), and any
movement of a broadcast scalar (it stays a broadcast scalar). An elementwise operation of
broadcast scalars becomes the operation on the scalars, broadcast (so that constant folding
sees constants). Converts to the same type go; convert of a lossless convert is one convert.
select with a constant predicate or equal cases picks its case; get-tuple-element of a tuple
takes the element. A single-input reduce with one element per output is its combiner applied
to the initial value and the element; one with no elements per output is the initial value,
broadcast. "Constant" means a constant, or a broadcast of one, whose elements are all the
same bits. Replacements keep the replaced instruction's name; dead leftovers are left to
DCE. It returns the same module object when no rule applies.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from jaxlite.core import dtypes
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.rewriting import RewriteContext, rewrite_module
from jaxlite.xla.shape import Shape

__all__ = ["is_lossless_conversion", "simplify_algebra"]

_O = Opcode
SimplifyRule = Callable[[HloInstruction, RewriteContext], "HloInstruction | None"]

# A rule's result may itself simplify further (reshape(reshape(reshape(x)))): retry a few
# times before moving on; the pipeline's fixed point catches anything left.
_MAX_REWRITES_PER_INSTRUCTION = 8


# --------------------------------------------------------------------------- helpers

def _splat(inst: HloInstruction) -> np.ndarray | None:
    """The one value (0-d array) that every element of `inst` has, when `inst` is a constant
    (or a broadcast of one) whose elements all have the same bits; else None."""
    while inst.opcode is _O.BROADCAST:
        inst = inst.operands[0]
    if inst.opcode is not _O.CONSTANT or inst.shape.is_tuple:
        return None
    literal = np.ascontiguousarray(inst.attr("literal"))
    if literal.size == 0:
        return None
    first = literal.reshape(-1)[:1]
    if literal.tobytes() != first.tobytes() * literal.size:
        return None
    return first.reshape(())


def _splat_is(inst: HloInstruction, value: object) -> bool:
    """Whether every element of `inst` is known to have exactly the bits of `value`."""
    splat = _splat(inst)
    if splat is None:
        return False
    return splat.tobytes() == np.asarray(value).astype(splat.dtype).tobytes()


def _forward(inst: HloInstruction, value: HloInstruction) -> HloInstruction | None:
    """`value` in place of `inst`, when it has the very same shape (layout included)."""
    return value if value.shape == inst.shape else None


def _scalar_of_broadcast(inst: HloInstruction) -> HloInstruction | None:
    """x when `inst` is a broadcast of the scalar x."""
    if inst.opcode is _O.BROADCAST and inst.operands[0].shape.rank == 0:
        return inst.operands[0]
    return None


def _broadcast(ctx: RewriteContext, scalar: HloInstruction, like: HloInstruction,
               name: str | None = None) -> HloInstruction:
    return ctx.new(_O.BROADCAST, [scalar], {"dimensions": ()}, shape=like.shape, name=name)


@functools.lru_cache(maxsize=None)
def _kind(dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return "pred"
    if dtypes.is_integer(dtype):
        return "int"
    return "float" if dtypes.is_floating(dtype) else "complex"


def is_lossless_conversion(source: np.dtype, target: np.dtype) -> bool:
    """Whether every value of `source` converts to a `target` value that holds it exactly."""
    source, target = np.dtype(source), np.dtype(target)
    s, t = _kind(source), _kind(target)
    if source == target or (s == "pred" and t != "pred"):
        return True
    if s == "int" and t == "int":
        si, ti = dtypes.iinfo(source), dtypes.iinfo(target)
        return ti.min <= si.min and si.max <= ti.max
    if s == "int" and t == "float":
        info = dtypes.iinfo(source)
        value_bits = info.bits - (1 if info.min < 0 else 0)
        return value_bits <= dtypes.finfo(target).nmant + 1
    if s == "float" and t == "float":
        sf, tf = dtypes.finfo(source), dtypes.finfo(target)
        # Precision, range, and the smallest subnormal (its exponent is minexp - nmant).
        return (tf.nmant >= sf.nmant and tf.maxexp >= sf.maxexp
                and tf.minexp - tf.nmant <= sf.minexp - sf.nmant)
    return False


# --------------------------------------------------------------------------- arithmetic

def _identity_of(opcode: Opcode, dtype: np.dtype, side: int) -> object | None:
    """The value e with x op e == x bit for bit (side 1) or e op x == x (side 0)."""
    kind = _kind(dtype)
    if kind == "complex":
        return None
    ones = ~np.zeros((), dtype) if kind in ("int", "pred") else None
    if opcode is _O.ADD and kind in ("int", "float"):
        return 0 if kind == "int" else -0.0  # 0.0 + -0.0 is 0.0: only -0.0 is exact
    if opcode is _O.SUBTRACT and side == 1 and kind in ("int", "float"):
        return 0  # x - 0.0 == x + -0.0
    if opcode is _O.MULTIPLY and kind in ("int", "float"):
        return 1
    if opcode is _O.DIVIDE and side == 1 and kind in ("int", "float"):
        return 1
    if opcode in (_O.MAXIMUM, _O.MINIMUM):
        low = opcode is _O.MAXIMUM
        if kind == "float":
            return -np.inf if low else np.inf
        if kind == "pred":
            return not low
        info = dtypes.iinfo(dtype)
        return info.min if low else info.max
    if opcode is _O.AND and kind in ("int", "pred"):
        return ones
    if opcode in (_O.OR, _O.XOR) and kind in ("int", "pred"):
        return 0
    return None


def _binary_identity(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    dtype = inst.shape.dtype
    for side, other in ((1, 0), (0, 1)):
        identity = _identity_of(inst.opcode, dtype, side)
        if identity is not None and _splat_is(inst.operands[side], identity):
            kept = _forward(inst, inst.operands[other])
            if kept is not None:
                return kept
    return None


def _double_negation(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    inner = inst.operands[0]
    if inner.opcode is inst.opcode:
        return _forward(inst, inner.operands[0])
    return None


def _elementwise_of_scalars(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    """op(broadcast(a), broadcast(b)) -> broadcast(op(a, b)) for scalars a, b."""
    if inst.shape.is_tuple or inst.shape.rank == 0:
        return None
    scalars = []
    for operand in inst.operands:
        scalar = operand if operand.shape.rank == 0 else _scalar_of_broadcast(operand)
        if scalar is None:
            return None
        scalars.append(scalar)
    op = ctx.new(inst.opcode, scalars, dict(inst.attrs), shape=Shape(inst.shape.dtype, ()))
    return _broadcast(ctx, op, inst, name=inst.name)


def _convert(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    x = inst.operands[0]
    if x.shape.dtype == inst.shape.dtype:
        return _forward(inst, x)
    if x.opcode is _O.CONVERT:
        source = x.operands[0]
        if is_lossless_conversion(source.shape.dtype, x.shape.dtype):
            return ctx.new(_O.CONVERT, [source], shape=inst.shape, name=inst.name)
    return None


def _select(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    pred, on_true, on_false = inst.operands
    if on_true is on_false:
        return _forward(inst, on_true)
    if _splat_is(pred, True):
        return _forward(inst, on_true)
    if _splat_is(pred, False):
        return _forward(inst, on_false)
    return None


def _tuple_element(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    operand = inst.operands[0]
    if operand.opcode is _O.TUPLE:
        return _forward(inst, operand.operands[int(inst.attr("index"))])
    return None


# ----------------------------------------------------------------------------- movement

def _movement_of_scalar(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    """Reshaping, transposing, slicing, reversing or broadcasting a broadcast scalar gives
    a broadcast of the same scalar."""
    scalar = _scalar_of_broadcast(inst.operands[0])
    if scalar is None or inst.shape.is_tuple:
        return None
    if inst.opcode is _O.BROADCAST and inst.attr("dimensions") == ():
        return None  # already the canonical form
    return _broadcast(ctx, scalar, inst, name=inst.name)


def _reshape(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    x = inst.operands[0]
    if x.shape.dims == inst.shape.dims:
        return _forward(inst, x)
    if x.opcode is _O.RESHAPE:
        return ctx.new(_O.RESHAPE, [x.operands[0]], shape=inst.shape, name=inst.name)
    return None


def _transpose(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    x = inst.operands[0]
    perm = tuple(inst.attr("dimensions"))
    if perm == tuple(range(len(perm))):
        return _forward(inst, x)
    if x.opcode is _O.TRANSPOSE:
        inner = tuple(x.attr("dimensions"))
        composed = tuple(inner[p] for p in perm)
        return ctx.new(_O.TRANSPOSE, [x.operands[0]], {"dimensions": composed},
                       shape=inst.shape, name=inst.name)
    return None


def _broadcast_rule(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    x = inst.operands[0]
    dims = tuple(inst.attr("dimensions"))
    if dims == tuple(range(inst.shape.rank)) and x.shape.dims == inst.shape.dims:
        return _forward(inst, x)
    if x.opcode is _O.BROADCAST:
        composed = tuple(dims[d] for d in x.attr("dimensions"))
        return ctx.new(_O.BROADCAST, [x.operands[0]], {"dimensions": composed},
                       shape=inst.shape, name=inst.name)
    return None


def _slice(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    x = inst.operands[0]
    starts = tuple(inst.attr("starts"))
    strides = tuple(inst.attr("strides", (1,) * len(starts)))
    # Starting at 0 and keeping every size means stride 1 (or a dimension of at most 1).
    if not any(starts) and x.shape.dims == inst.shape.dims:
        return _forward(inst, x)
    if x.opcode is _O.SLICE:
        inner_starts = tuple(x.attr("starts"))
        inner_strides = tuple(x.attr("strides", (1,) * len(inner_starts)))
        new_starts, new_limits, new_strides = [], [], []
        for size, s1, t1, s2, t2 in zip(inst.shape.dims, inner_starts, inner_strides,
                                        starts, strides):
            start, stride = s1 + s2 * t1, t1 * t2
            new_starts.append(start)
            new_strides.append(stride)
            new_limits.append(start + (size - 1) * stride + 1 if size else start)
        return ctx.new(_O.SLICE, [x.operands[0]],
                       {"starts": tuple(new_starts), "limits": tuple(new_limits),
                        "strides": tuple(new_strides)}, shape=inst.shape, name=inst.name)
    return None


def _reverse(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    x = inst.operands[0]
    dims = {d for d in inst.attr("dimensions") if inst.shape.dims[d] > 1}
    if not dims:
        return _forward(inst, x)
    if x.opcode is _O.REVERSE:
        inner = {d for d in x.attr("dimensions") if x.shape.dims[d] > 1}
        remaining = tuple(sorted(dims ^ inner))
        if not remaining:
            return _forward(inst, x.operands[0])
        return ctx.new(_O.REVERSE, [x.operands[0]], {"dimensions": remaining},
                       shape=inst.shape, name=inst.name)
    return None


def _pad(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    if all(int(v) == 0 for config in inst.attr("padding") for v in config):
        return _forward(inst, inst.operands[0])
    return None


def _concatenate(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    dim = int(inst.attr("dimensions")[0])
    operands = [o for o in inst.operands if o.shape.dims[dim] > 0] or [inst.operands[0]]
    if len(operands) == 1:
        return _forward(inst, operands[0])
    if len(operands) < len(inst.operands):
        return ctx.new(_O.CONCATENATE, operands, dict(inst.attrs), shape=inst.shape,
                       name=inst.name)
    return None


# ---------------------------------------------------------------------------- reduce

def _binary_combiner(comp: HloComputation) -> tuple[Opcode, bool] | None:
    """(opcode, swapped) when `comp` returns `p0 op p1` (swapped: `p1 op p0`)."""
    params, root = comp.parameters, comp.root
    if len(params) != 2 or root.opcode.arity != 2 or not root.opcode.is_elementwise:
        return None
    if root.opcode is _O.COMPARE or root.shape != params[0].shape:
        return None
    if root.operands == (params[0], params[1]):
        return root.opcode, False
    if root.operands == (params[1], params[0]):
        return root.opcode, True
    return None


def _reduce(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    if len(inst.operands) != 2 or inst.shape.is_tuple:
        return None
    x, init = inst.operands
    reduced = [x.shape.dims[d] for d in inst.attr("dimensions")]
    per_output = int(np.prod(reduced, dtype=np.int64))
    if per_output == 0:
        return _broadcast(ctx, init, inst, name=inst.name)
    combiner = _binary_combiner(inst.called[0])
    if per_output != 1 or combiner is None:
        return None
    # The evaluator (and XLA) folds one element as combiner(init, element).
    opcode, swapped = combiner
    element = x if x.shape.dims == inst.shape.dims else ctx.new(
        _O.RESHAPE, [x], shape=Shape(x.shape.dtype, inst.shape.dims))
    start = _broadcast(ctx, init, inst)
    operands = [element, start] if swapped else [start, element]
    return ctx.new(opcode, operands, shape=inst.shape, name=inst.name)


# ------------------------------------------------------------------------------ table

_RULES: dict[Opcode, tuple[SimplifyRule, ...]] = {
    _O.NEGATE: (_double_negation,), _O.NOT: (_double_negation,),
    _O.CONVERT: (_convert,), _O.SELECT: (_select,),
    _O.GET_TUPLE_ELEMENT: (_tuple_element,),
    _O.RESHAPE: (_reshape, _movement_of_scalar),
    _O.TRANSPOSE: (_transpose, _movement_of_scalar),
    _O.BROADCAST: (_broadcast_rule, _movement_of_scalar),
    _O.SLICE: (_slice, _movement_of_scalar), _O.REVERSE: (_reverse, _movement_of_scalar),
    _O.PAD: (_pad,), _O.CONCATENATE: (_concatenate,), _O.REDUCE: (_reduce,),
}
for _op in (_O.ADD, _O.SUBTRACT, _O.MULTIPLY, _O.DIVIDE, _O.MAXIMUM, _O.MINIMUM, _O.AND,
            _O.OR, _O.XOR):
    _RULES[_op] = (_binary_identity,)


def _rules_for(opcode: Opcode) -> tuple[SimplifyRule, ...]:
    specific = _RULES.get(opcode, ())
    if opcode.is_elementwise:
        return specific + (_elementwise_of_scalars,)
    return specific


def _simplify(inst: HloInstruction, ctx: RewriteContext) -> HloInstruction | None:
    current = inst
    for _ in range(_MAX_REWRITES_PER_INSTRUCTION):
        for rule in _rules_for(current.opcode):
            replacement = rule(current, ctx)
            if replacement is not None and replacement is not current:
                break
        else:
            break
        if replacement.name != inst.name:
            # Rules give a new version of an instruction its name; any other name is an
            # existing value, already simplified and in the computation: leave it be.
            return replacement
        current = replacement
    return None if current is inst else current


def simplify_algebra(module: HloModule) -> HloModule:
    """`module` with exact algebraic identities applied (see the module doc)."""
    return rewrite_module(module, _simplify)
