"""Reading shape-polymorphic StableHLO (`tensor<?x4xf32>`) for arguments of known shapes:
the reader's half of XLA's shape refinement, which JAX runs before it compiles such a module.

`@main`'s dynamic argument types take the concrete shapes of the arguments (`syntax.DYNAMIC`
marks a `?` until then). Each op then gets concrete result types:
- sizes computed at run time become constants: `get_dimension_size` is the argument's size,
  and the shape operands of `dynamic_broadcast_in_dim`, `dynamic_reshape`, `dynamic_iota`,
  `real_dynamic_slice`, `dynamic_pad` and `dynamic_gather` are folded (evaluated, since they
  depend on sizes and constants only), which turns each into its static op;
- `custom_call @shape_assertion` checks its folded predicate and raises JAX's ValueError with
  the assertion's message when it fails;
- any other op with a `?` in its result type gets the shape its operands imply (`_REFINERS`:
  transpose, broadcast_in_dim, reduce, dot_general, concatenate, call; the operands' shape
  for the rest, elementwise ops and conversions).
A called function is built once per shape of its operands.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from jaxlite.xla.evaluator import evaluate_computation
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference import infer_shape
from jaxlite.xla.shape_inference_base import Window
from jaxlite.xla.stablehlo import ops
from jaxlite.xla.stablehlo import syntax as S
from jaxlite.xla.stablehlo.builder import FunctionBuilder
from jaxlite.xla.stablehlo.parser import Op
from jaxlite.xla.stablehlo.syntax import DYNAMIC

__all__ = ["CUSTOM_CALLS", "RULES", "SHAPE_ASSERTION", "called", "concrete_argument",
           "is_dynamic", "refine_types", "shape_assertion"]

Values = list[HloInstruction]
SHAPE_ASSERTION = "shape_assertion"


def is_dynamic(shape: Shape) -> bool:
    """Whether `shape` (or a part of a tuple shape) has a `?` dimension."""
    if shape.is_tuple:
        return any(is_dynamic(part) for part in shape.tuple_shapes)
    return DYNAMIC in shape.dims


def concrete_argument(declared: Shape, actual: Shape, index: int) -> Shape:
    """`declared` (an argument type of `@main`) with its `?` sizes taken from `actual`;
    JAX's ValueError when the rank or a static size differs."""
    if len(declared.dims) != len(actual.dims) or any(
            d not in (DYNAMIC, a) for d, a in zip(declared.dims, actual.dims)):
        spelled = tuple("?" if d == DYNAMIC else d for d in declared.dims)
        raise ValueError(f"Shape mismatch for args[{index}]: expected {spelled} and called "
                         f"with {tuple(actual.dims)}")
    return declared.with_dims(tuple(actual.dims))


def fold(value: HloInstruction, op: Op) -> np.ndarray:
    """The value of an instruction that depends on constants only (sizes of the arguments
    are constants by now)."""
    order: list[HloInstruction] = []
    seen: set[int] = set()

    def visit(inst: HloInstruction) -> None:
        if id(inst) in seen:
            return
        seen.add(id(inst))
        if inst.opcode is Opcode.PARAMETER:
            raise NotImplementedError(
                f"from_stablehlo: line {op.line}: a size of '{op.name}' depends on the "
                "values of the arguments, not only on their shapes")
        for operand in inst.operands:
            visit(operand)
        order.append(inst)
    visit(value)
    return np.asarray(evaluate_computation(HloComputation("fold", tuple(order), value), []))


def refine_types(fb: FunctionBuilder, op: Op, operands: Values,
                 types: Sequence[Shape]) -> list[Shape]:
    """`types` (an op's result types) with each `?` replaced by the size its operands
    imply; NotImplementedError naming the op when that is not known here."""
    if op.name in RULES or _target(op) in CUSTOM_CALLS:  # they refine their own results
        return list(types)
    refiner = _REFINERS.get(op.name)
    if refiner is None and op.name in _SHAPE_PRESERVING:
        refiner = _like_operands
    if refiner is None:
        raise NotImplementedError(f"from_stablehlo: line {op.line}: cannot refine the "
                                  f"dynamic result type of '{op.name}'")
    refined = list(refiner(fb, op, operands, types))
    if any(is_dynamic(t) for t in refined):
        raise NotImplementedError(f"from_stablehlo: line {op.line}: cannot refine the "
                                  f"dynamic result type of '{op.name}' from its operands")
    return refined


def _target(op: Op) -> str:
    target = op.attrs.get("callee") or op.attrs.get("call_target_name") or ""
    return str(target).lstrip("@").strip('"')


def _fill(want: Shape, dims: Sequence[int]) -> Shape:
    return want.with_dims(tuple(d if w == DYNAMIC else w for w, d in zip(want.dims, dims)))


# Ops whose results have the shape of their operands (elementwise ops, conversions,
# select, sort, ...).
_SHAPE_PRESERVING = {prefix + name for table, prefix in (
    (ops.SAME_TYPE_OPS, "stablehlo."), (ops.GENERIC_ELEMENTWISE_OPS, "stablehlo."),
    (ops.CHLO_OPS, "chlo.")) for name in table.values()} | {
    "stablehlo.compare", "stablehlo.reverse", "stablehlo.sort", "stablehlo.map",
    "stablehlo.reduce_precision", "stablehlo.optimization_barrier", "chlo.square",
    "sdy.sharding_constraint", "sdy.reshard", "stablehlo.custom_call"}


def _like_operands(fb: FunctionBuilder, op: Op, operands: Values,
                   types: Sequence[Shape]) -> list[Shape]:
    """Each `?` from the first operand of the same rank that agrees with the static sizes
    (for `_SHAPE_PRESERVING` ops; a custom call's results are taken to be like its
    operands, as for the sharding annotations JAX writes)."""
    refined = []
    for want in types:
        for operand in operands:
            dims = operand.shape.dims if not operand.shape.is_tuple else ()
            if len(dims) == len(want.dims) and all(
                    w in (DYNAMIC, d) for w, d in zip(want.dims, dims)):
                want = _fill(want, dims)
                break
        refined.append(want)
    return refined


def _transpose(fb: FunctionBuilder, op: Op, operands: Values,
               types: Sequence[Shape]) -> list[Shape]:
    order = op.attrs.get("permutation", op.attrs.get("dims"))
    return [_fill(types[0], [operands[0].shape.dims[d] for d in order])]


def _broadcast_in_dim(fb: FunctionBuilder, op: Op, operands: Values,
                      types: Sequence[Shape]) -> list[Shape]:
    dims = list(types[0].dims)
    mapping = op.attrs.get("broadcast_dimensions", op.attrs.get("dims", ()))
    for i, d in enumerate(mapping):
        if dims[d] == DYNAMIC:
            dims[d] = operands[0].shape.dims[i]
    return [types[0].with_dims(tuple(dims))]


def _reduce(fb: FunctionBuilder, op: Op, operands: Values,
            types: Sequence[Shape]) -> list[Shape]:
    reduced = set(op.attrs["dimensions"])
    inputs = operands[:len(operands) // 2]
    return [_fill(t, [d for i, d in enumerate(x.shape.dims) if i not in reduced])
            for t, x in zip(types, inputs)]


def _dot_general(fb: FunctionBuilder, op: Op, operands: Values,
                 types: Sequence[Shape]) -> list[Shape]:
    lhs, rhs = (x.shape.dims for x in operands)
    if "dot_dimension_numbers" in op.attrs:  # the generic form
        n = S.parse_struct(op.attrs["dot_dimension_numbers"])
        lb, rb, lc, rc = (n.get(f"{side}_{kind}_dimensions", ()) for kind in (
            "batching", "contracting") for side in ("lhs", "rhs"))
    else:
        (lb, rb), (lc, rc) = op.attrs.get("batching_dims", ((), ())), \
            op.attrs.get("contracting_dims", ((), ()))
    free = [lhs[i] for i in range(len(lhs)) if i not in lb and i not in lc] + \
        [rhs[i] for i in range(len(rhs)) if i not in rb and i not in rc]
    return [_fill(types[0], [lhs[i] for i in lb] + free)]


def _concatenate(fb: FunctionBuilder, op: Op, operands: Values,
                 types: Sequence[Shape]) -> list[Shape]:
    axis = int(op.attrs.get("dimension", op.attrs.get("dim", 0)))
    dims = list(operands[0].shape.dims)
    dims[axis] = sum(x.shape.dims[axis] for x in operands)
    return [_fill(types[0], dims)]


def called(fb: FunctionBuilder, op: Op, operands: Values) -> HloComputation:
    """The computation that `func.call` op calls, for its operands' shapes and, while
    refining, the values of the integer scalars it passes that are known (the dimension
    variables JAX passes along, `jax.global_constant`)."""
    name = op.attrs["callee"].lstrip("@").strip('"')
    known: list[tuple[int, int]] = []
    if fb.module.refine is not None:
        for i, x in enumerate(operands):
            if x.shape.is_tuple or x.shape.dims or x.shape.dtype.kind not in "iu":
                continue
            try:
                known.append((i, int(fold(x, op))))
            except NotImplementedError:  # a value of the arguments
                pass
    return fb.module.called(name, [x.shape for x in operands], tuple(known))


def _call(fb: FunctionBuilder, op: Op, operands: Values,
          types: Sequence[Shape]) -> list[Shape]:
    callee = called(fb, op, operands)
    root = callee.root.shape
    return list(root.tuple_shapes) if len(types) != 1 else [root]


def _pad(fb: FunctionBuilder, op: Op, operands: Values,
         types: Sequence[Shape]) -> list[Shape]:
    a = op.attrs
    low, high, interior = (a.get(long, a.get(short)) for long, short in (
        ("edge_padding_low", "low"), ("edge_padding_high", "high"),
        ("interior_padding", "interior")))
    return [_fill(types[0], [lo + hi + d + max(d - 1, 0) * inner for d, lo, hi, inner
                             in zip(operands[0].shape.dims, low, high, interior)])]


def _while(fb: FunctionBuilder, op: Op, operands: Values,
           types: Sequence[Shape]) -> list[Shape]:
    return [x.shape for x in operands]


_REFINERS: dict[str, Callable[..., list[Shape]]] = {
    "stablehlo.transpose": _transpose, "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.reduce": _reduce, "stablehlo.dot_general": _dot_general,
    "stablehlo.concatenate": _concatenate, "func.call": _call, "stablehlo.while": _while,
    "stablehlo.pad": _pad,
}


# ----------------------------------------------------------------------------- dynamic ops

def _sizes(value: HloInstruction, op: Op) -> tuple[int, ...]:
    return tuple(int(v) for v in np.asarray(fold(value, op)).reshape(-1))


def _static(name: str, fb: FunctionBuilder, op: Op, operands: Values,
            types: Sequence[Shape]) -> Values:
    """The values of the static op `name` (through the reader's rules)."""
    return fb.module.rules[name](fb, op, operands, types)


def _get_dimension_size(fb: FunctionBuilder, op: Op, operands: Values,
                        types: Sequence[Shape]) -> Values:
    dim = int(op.attrs.get("dimension", op.attrs.get("dim", 0)))
    size = np.asarray(operands[0].shape.dims[dim], types[0].dtype)
    return [fb.add(Opcode.CONSTANT, types[0], (), {"literal": size})]


def _dynamic_broadcast_in_dim(fb: FunctionBuilder, op: Op, operands: Values,
                              types: Sequence[Shape]) -> Values:
    out = types[0].with_dims(_sizes(operands[1], op))
    return _static("stablehlo.broadcast_in_dim", fb, op, operands[:1], [out])


def _dynamic_reshape(fb: FunctionBuilder, op: Op, operands: Values,
                     types: Sequence[Shape]) -> Values:
    out = types[0].with_dims(_sizes(operands[1], op))
    return [fb.add(Opcode.RESHAPE, out, operands[:1])]


def _dynamic_iota(fb: FunctionBuilder, op: Op, operands: Values,
                  types: Sequence[Shape]) -> Values:
    out = types[0].with_dims(_sizes(operands[0], op))
    dim = int(op.attrs.get("iota_dimension", op.attrs.get("dim", 0)))
    return [fb.add(Opcode.IOTA, out, (), {"iota_dimension": dim})]


def _real_dynamic_slice(fb: FunctionBuilder, op: Op, operands: Values,
                        types: Sequence[Shape]) -> Values:
    starts, limits, strides = (_sizes(v, op) for v in operands[1:])
    dims = tuple(-(-(hi - lo) // step) for lo, hi, step in zip(starts, limits, strides))
    return [fb.add(Opcode.SLICE, types[0].with_dims(dims), operands[:1],
                   {"starts": starts, "limits": limits, "strides": strides})]


def _dynamic_pad(fb: FunctionBuilder, op: Op, operands: Values,
                 types: Sequence[Shape]) -> Values:
    low, high, interior = (_sizes(v, op) for v in operands[2:])
    dims = tuple(lo + hi + d + max(d - 1, 0) * inner for d, lo, hi, inner
                 in zip(operands[0].shape.dims, low, high, interior))
    return [fb.add(Opcode.PAD, types[0].with_dims(dims), operands[:2],
                   {"padding": tuple(zip(low, high, interior))})]


def _dynamic_gather(fb: FunctionBuilder, op: Op, operands: Values,
                    types: Sequence[Shape]) -> Values:
    sizes = _sizes(operands[2], op)
    static = Op("stablehlo.gather", op.results, op.operands[:2],
                {**op.attrs, "slice_sizes": sizes}, op.regions, op.result_types, op.line,
                op.positional)
    out = types[0].with_dims(_gather_dims(op, operands[1].shape, sizes))
    return _static("stablehlo.gather", fb, static, operands[:2], [out])


def _gather_dims(op: Op, indices: Shape, sizes: Sequence[int]) -> tuple[int, ...]:
    """A gather's result sizes: the slice sizes kept (at `offset_dims`), the indices'
    batch sizes in the other positions."""
    numbers = S.parse_struct(op.attrs["dimension_numbers"])
    dropped = set(numbers.get("collapsed_slice_dims", ())) | set(
        numbers.get("operand_batching_dims", ()))
    vector_dim = numbers.get("index_vector_dim", 0)
    batch = [d for i, d in enumerate(indices.dims) if i != vector_dim]
    offsets = [s for i, s in enumerate(sizes) if i not in dropped]
    positions = set(numbers.get("offset_dims", ()))
    return tuple(offsets.pop(0) if i in positions else batch.pop(0)
                 for i in range(len(batch) + len(offsets)))


def _dynamic_reduce_window(fb: FunctionBuilder, op: Op, operands: Values,
                           types: Sequence[Shape]) -> Values:
    """`custom_call @stablehlo.dynamic_reduce_window(inputs, inits, window_dimensions,
    window_strides, base_dilations, window_dilations, padding)`: its reducer is a
    function (`called_computations`)."""
    count = (len(operands) - 5) // 2
    size, stride, base, dilation = (_sizes(v, op) for v in operands[2 * count:-1])
    pads = np.asarray(fold(operands[-1], op), np.int64).reshape(len(size), 2)
    window = Window(size, stride, tuple(int(p) for p in pads[:, 0]),
                    tuple(int(p) for p in pads[:, 1]), base, dilation, (False,) * len(size))
    reducer_name = str(op.attrs["called_computations"][0]).lstrip("@").strip('"')
    scalars = [Shape(x.shape.dtype, ()) for x in operands[count:2 * count]] * 2
    reducer = fb.module.called(reducer_name, scalars)
    inputs = operands[:2 * count]
    shape = infer_shape(Opcode.REDUCE_WINDOW, [x.shape for x in inputs], {"window": window},
                        [reducer])
    value = fb.add(Opcode.REDUCE_WINDOW, shape, inputs, {"window": window}, [reducer])
    return fb.split(value, count)


def shape_assertion(fb: FunctionBuilder, op: Op, operands: Values,
                    types: Sequence[Shape] = ()) -> Values:
    """`custom_call @shape_assertion(%ok, %sizes...)`: nothing once it holds; JAX's
    ValueError, its `error_message` with `{0}`, ... the sizes, when it does not."""
    if not bool(fold(operands[0], op)):
        values = [int(fold(v, op)) for v in operands[1:]]
        error = ValueError(str(op.attrs.get("error_message", "shape assertion failed"))
                           .format(*values))
        error.add_note(f"from_stablehlo: line {op.line}: custom_call @{SHAPE_ASSERTION}")
        raise error
    return []


RULES: dict[str, Callable[..., Values]] = {
    "stablehlo.get_dimension_size": _get_dimension_size,
    "stablehlo.dynamic_broadcast_in_dim": _dynamic_broadcast_in_dim,
    "stablehlo.dynamic_reshape": _dynamic_reshape,
    "stablehlo.dynamic_iota": _dynamic_iota,
    "stablehlo.real_dynamic_slice": _real_dynamic_slice,
    "stablehlo.dynamic_pad": _dynamic_pad,
    "stablehlo.dynamic_gather": _dynamic_gather,
}

# Custom calls of shape-polymorphic modules, by target.
CUSTOM_CALLS: dict[str, Callable[..., Values]] = {
    SHAPE_ASSERTION: shape_assertion,
    "stablehlo.dynamic_reduce_window": _dynamic_reduce_window,
}
