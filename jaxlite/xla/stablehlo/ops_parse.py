"""Per-op rules of the StableHLO reader: which HLO instruction(s) each StableHLO (or CHLO)
op becomes. The printer's tables (`ops.py`, `ops_regions.py`) are read backwards through
`OPCODES_OF_OP_NAME` for the elementwise ops; the others have a rule here.

A rule is `rule(fb, op, operands, types) -> values`: `fb` the function builder
(builder.py), `op` the parsed op, `operands` its operand instructions, `types` its result
shapes; it returns one instruction per result.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference_base import Window
from jaxlite.xla.stablehlo import ops, ops_regions, refinement, tokens_parse
from jaxlite.xla.stablehlo import syntax as S
from jaxlite.xla.stablehlo.builder import FunctionBuilder, free_values, tuple_shape
from jaxlite.xla.stablehlo.ffi_parse import is_typed_ffi_call, read_ffi_call
from jaxlite.xla.stablehlo.lapack_parse import lapack_call
from jaxlite.xla.stablehlo.parser import Op

_O = Opcode
Values = list[HloInstruction]
Rule = Callable[[FunctionBuilder, Op, Values, Sequence[Shape]], Values]

# Custom-call targets that only place a value (shardings on one device): identities.
IDENTITY_TARGETS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                    "mhlo.sharding")


def _simple(opcode: Opcode) -> Rule:
    def rule(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
        return [fb.add(opcode, types[0], operands)]
    return rule


def _one(opcode: Opcode, attrs: Callable[[Op], dict[str, Any]]) -> Rule:
    def rule(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
        return [fb.add(opcode, types[0], operands, attrs(op))]
    return rule


def _prop(op: Op, *keys: str, default: Any = None) -> Any:
    """The first of `keys` the op has (pretty and generic forms name some differently)."""
    for key in keys:
        if key in op.attrs:
            return op.attrs[key]
    if default is not None:
        return default
    raise KeyError(f"missing attribute {keys[0]!r}")


def _constant(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    literal = op.attrs["value"] if "value" in op.attrs else op.positional[0]
    literal = np.asarray(literal)
    return [fb.add(_O.CONSTANT, Shape(literal.dtype, literal.shape), (), {"literal": literal})]


def _compare(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    words = [w for w in op.positional if isinstance(w, str)]
    direction = op.attrs.get("comparison_direction", words[0] if words else None)
    kind = op.attrs.get("compare_type", words[1] if len(words) > 1 else None)
    attrs = {"direction": direction}
    if kind == "TOTALORDER":  # the others follow from the element type
        attrs["type"] = kind
    return [fb.add(_O.COMPARE, types[0], operands, attrs)]


def _broadcast(fb: FunctionBuilder, op: Op, operands: Values,
               types: Sequence[Shape]) -> Values:
    """StableHLO's broadcast_in_dim also stretches size-1 dimensions, HLO's broadcast only
    adds dimensions: reshape those size-1 dimensions away first."""
    (x,), out = operands, types[0]
    dims = tuple(_prop(op, "broadcast_dimensions", "dims"))
    kept = [i for i, d in enumerate(dims) if x.shape.dims[i] == out.dims[d]]
    if len(kept) < len(dims):
        x = fb.add(_O.RESHAPE, x.shape.with_dims(tuple(x.shape.dims[i] for i in kept)), [x])
        dims = tuple(dims[i] for i in kept)
    return [fb.add(_O.BROADCAST, out, [x], {"dimensions": dims})]


def _slice(op: Op) -> dict[str, Any]:
    if "start_indices" in op.attrs:
        starts, limits = op.attrs["start_indices"], op.attrs["limit_indices"]
        return {"starts": starts, "limits": limits,
                "strides": op.attrs.get("strides", (1,) * len(starts))}
    ranges = [r.split(":") for r in op.positional[0].strip("[] ").replace(" ", "").split(",")
              if r]
    return {"starts": tuple(int(r[0]) for r in ranges),
            "limits": tuple(int(r[1]) for r in ranges),
            "strides": tuple(int(r[2]) if len(r) > 2 else 1 for r in ranges)}


def _pad(op: Op) -> dict[str, Any]:
    low = _prop(op, "edge_padding_low", "low")
    high = _prop(op, "edge_padding_high", "high")
    interior = _prop(op, "interior_padding", "interior")
    return {"padding": tuple(zip(low, high, interior))}


def _gather(op: Op) -> dict[str, Any]:
    numbers = S.parse_struct(op.attrs["dimension_numbers"])
    attrs = {key: numbers.get(key, ()) for key in (
        "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
        "start_indices_batching_dims", "start_index_map")}
    attrs.update(index_vector_dim=numbers.get("index_vector_dim", 0),
                 slice_sizes=op.attrs["slice_sizes"],
                 indices_are_sorted=bool(op.attrs.get("indices_are_sorted", False)))
    return attrs


def _dot(op: Op) -> dict[str, Any]:
    if "dot_dimension_numbers" in op.attrs:
        n = S.parse_struct(op.attrs["dot_dimension_numbers"])
        return {"lhs_batch": n.get("lhs_batching_dimensions", ()),
                "rhs_batch": n.get("rhs_batching_dimensions", ()),
                "lhs_contracting": n.get("lhs_contracting_dimensions", ()),
                "rhs_contracting": n.get("rhs_contracting_dimensions", ())}
    batch = op.attrs.get("batching_dims", ((), ()))
    contracting = op.attrs.get("contracting_dims", ((), ()))
    return {"lhs_batch": batch[0], "rhs_batch": batch[1],
            "lhs_contracting": contracting[0], "rhs_contracting": contracting[1]}


def _window(size: Sequence[int], strides: Any = None, padding: Any = None,
            base: Any = None, dilation: Any = None, reversal: Any = None) -> Window:
    rank = len(size)
    pads = np.zeros((rank, 2), np.int64) if padding is None else \
        np.asarray(padding, np.int64).reshape(rank, 2)
    return Window(tuple(size), tuple(strides or (1,) * rank), tuple(int(p) for p in pads[:, 0]),
                  tuple(int(p) for p in pads[:, 1]), tuple(base or (1,) * rank),
                  tuple(dilation or (1,) * rank), tuple(bool(r) for r in reversal or
                                                        (False,) * rank))


def _convolution(fb: FunctionBuilder, op: Op, operands: Values,
                 types: Sequence[Shape]) -> Values:
    a = op.attrs
    if "window" in a:  # pretty: `window = {stride = [..], pad = [[..]], ...}`
        w = a["window"]
        size = tuple(operands[1].shape.dims[i] for i in _spatial(a["dim_labels"]))
        window = _window(size, w.get("stride"), w.get("pad"), w.get("lhs_dilate"),
                         w.get("rhs_dilate"), w.get("reverse"))
        labels = a["dim_labels"]
    else:
        labels = S.conv_dim_labels(a["dimension_numbers"][len("#stablehlo.conv<"):-1])
        size = tuple(operands[1].shape.dims[i] for i in _spatial(labels))
        window = _window(size, a.get("window_strides"), a.get("padding"),
                         a.get("lhs_dilation"), a.get("rhs_dilation"),
                         a.get("window_reversal"))
    attrs = {"window": window, "dim_labels": labels,
             "feature_group_count": int(a.get("feature_group_count", 1)),
             "batch_group_count": int(a.get("batch_group_count", 1))}
    return [fb.add(_O.CONVOLUTION, types[0], operands, attrs)]


def _spatial(labels: str) -> list[int]:
    """The kernel's spatial dimensions, in order, of `b01f_01io->b01f`."""
    kernel = labels.split("->")[0].split("_")[1]
    return [kernel.index(str(i)) for i in range(len(kernel) - 2)]


def _results(fb: FunctionBuilder, opcode: Opcode, types: Sequence[Shape], operands: Values,
             attrs: dict[str, Any], called: Sequence[Any] = ()) -> Values:
    """One instruction for all results (a tuple when several), split into values."""
    shape = types[0] if len(types) == 1 else tuple_shape(types)
    return fb.split(fb.add(opcode, shape, operands, attrs, called), len(types))


def _reducer(fb: FunctionBuilder, op: Op, operands: Values) -> Any:
    """The reducer of a reduce: its region, or the `applies stablehlo.add` of the pretty
    form (a computation of two scalars)."""
    if op.regions:
        return fb.scalar_region(op.regions[0], "region")
    sub = fb.subcomputation("region")
    scalar = Shape(operands[0].shape.dtype, ())
    x, y = sub.b.parameter(scalar, "Arg"), sub.b.parameter(scalar, "Arg")
    opcode = _elementwise_opcode(op.attrs["applies"])
    return sub.b.build(sub.add(opcode, scalar, [x, y]))


def _reduce(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    attrs = {"dimensions": tuple(op.attrs["dimensions"])}
    return _results(fb, _O.REDUCE, types, operands, attrs, [_reducer(fb, op, operands)])


def _reduce_window(fb: FunctionBuilder, op: Op, operands: Values,
                   types: Sequence[Shape]) -> Values:
    a = op.attrs
    window = _window(a["window_dimensions"], a.get("window_strides"), a.get("padding"),
                     a.get("base_dilations"), a.get("window_dilations"))
    return _results(fb, _O.REDUCE_WINDOW, types, operands, {"window": window},
                    [fb.scalar_region(op.regions[0], "region")])


def _select_and_scatter(fb: FunctionBuilder, op: Op, operands: Values,
                        types: Sequence[Shape]) -> Values:
    a = op.attrs
    window = _window(a["window_dimensions"], a.get("window_strides"), a.get("padding"))
    called = [fb.scalar_region(r, "region") for r in op.regions]
    return _results(fb, _O.SELECT_AND_SCATTER, types, operands, {"window": window}, called)


def _sort(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    attrs = {"dimension": int(op.attrs.get("dimension", -1)) % operands[0].shape.rank,
             "is_stable": bool(op.attrs.get("is_stable", False))}
    return _results(fb, _O.SORT, types, operands, attrs,
                    [fb.scalar_region(op.regions[0], "compare")])


def _scatter(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    n = S.parse_struct(op.attrs["scatter_dimension_numbers"])
    attrs = {key: n.get(key, ()) for key in (
        "update_window_dims", "inserted_window_dims", "input_batching_dims",
        "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")}
    attrs.update(index_vector_dim=n.get("index_vector_dim", 0),
                 indices_are_sorted=bool(op.attrs.get("indices_are_sorted", False)),
                 unique_indices=bool(op.attrs.get("unique_indices", False)))
    return _results(fb, _O.SCATTER, types, operands, attrs,
                    [fb.scalar_region(op.regions[0], "region")])


def _while(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    cond, body = op.regions
    captured = [v for v in free_values(cond) + free_values(body)]
    captured = [v for i, v in enumerate(captured) if v not in captured[:i]]
    extra = [fb.lookup(name, op) for name in captured]
    state = [v.shape for v in operands + extra]
    cond_comp = fb.state_region(cond, "cond", state, captured, passthrough=False)
    body_comp = fb.state_region(body, "body", state, captured, passthrough=True)
    init = fb.tuple(operands + extra)
    loop = fb.add(_O.WHILE, init.shape, [init], None, [cond_comp, body_comp])
    return [fb.element(loop, i) for i in range(len(operands))]


def _branches(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    """`case` / `if`: each branch a computation of the values it captures (a tuple)."""
    branch_operands, called = [], []
    for i, region in enumerate(op.regions):
        captured = free_values(region)
        values = [fb.lookup(name, op) for name in captured]
        called.append(fb.state_region(region, f"branch_{i}", [v.shape for v in values],
                                      captured, passthrough=False))
        branch_operands.append(fb.tuple(values))
    return _results(fb, _O.CONDITIONAL, types, operands + branch_operands, {}, called)


def _call(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    callee = refinement.called(fb, op, operands)
    call = fb.add(_O.CALL, callee.root.shape, operands, None, [callee])
    return fb.split(call, len(types))


def _custom_call(fb: FunctionBuilder, op: Op, operands: Values,
                 types: Sequence[Shape]) -> Values:
    target = op.attrs.get("callee") or op.attrs.get("call_target_name")
    target = str(target).lstrip("@").strip('"')
    if target in IDENTITY_TARGETS:
        return list(operands)
    if target in refinement.CUSTOM_CALLS:  # of shape-polymorphic modules
        return refinement.CUSTOM_CALLS[target](fb, op, operands, types)
    if target in tokens_parse.PYTHON_CALLBACK_TARGETS:
        raise tokens_parse.python_callback_error(target, op.line)
    lapack = lapack_call(fb, target, operands, types, op.attrs)
    if lapack is not None:
        return lapack
    if is_typed_ffi_call(op):
        return read_ffi_call(fb, op, target, list(operands), types)
    config = op.attrs.get("backend_config", "")
    attrs: dict[str, Any] = {"target": target,
                             "custom_call_has_side_effect": bool(
                                 op.attrs.get("has_side_effect", False))}
    if isinstance(config, str) and config:
        attrs["backend_config"] = config
    for key, value in (op.attrs.get("mhlo.frontend_attributes") or {}).items():
        attrs[key] = _frontend_value(value)
    return _results(fb, _O.CUSTOM_CALL, types, operands, attrs)


def _frontend_value(text: Any) -> Any:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return text
    return tuple(value) if isinstance(value, list) else value


def _fft(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    kind = op.attrs.get("fft_type", op.attrs.get("type"))
    length = op.attrs.get("fft_length", op.attrs.get("length"))
    config = json.dumps({"fft_type": kind, "fft_length": list(length)})
    attrs = {"target": ops_regions.FFT_TARGET, "backend_config": config,
             "custom_call_has_side_effect": False}
    return [fb.add(_O.CUSTOM_CALL, types[0], operands, attrs)]


def _count_leading_zeros(fb: FunctionBuilder, op: Op, operands: Values,
                         types: Sequence[Shape]) -> Values:
    """bits - popcount(x smeared right): every bit below the highest set bit set."""
    (x,), shape = operands, types[0]
    bits = np.dtype(shape.dtype).itemsize * 8
    smeared, shift = x, 1
    while shift < bits:
        amount = fb.add(_O.CONSTANT, shape, (), {"literal": np.full(shape.dims, shift,
                                                                    shape.dtype)})
        moved = fb.add(_O.SHIFT_RIGHT_LOGICAL, shape, [smeared, amount])
        smeared = fb.add(_O.OR, shape, [smeared, moved])
        shift *= 2
    width = fb.add(_O.CONSTANT, shape, (), {"literal": np.full(shape.dims, bits, shape.dtype)})
    return [fb.add(_O.SUBTRACT, shape, [width, fb.add(_O.POPCNT, shape, [smeared])])]


def _reduce_precision(op: Op) -> dict[str, Any]:
    """`format = e5m10` (pretty form) or `exponent_bits` and `mantissa_bits` (generic)."""
    if "format" in op.attrs:
        exponent, mantissa = str(op.attrs["format"]).lstrip("e").split("m")
        return {"exponent_bits": int(exponent), "mantissa_bits": int(mantissa)}
    return {"exponent_bits": int(op.attrs["exponent_bits"]),
            "mantissa_bits": int(op.attrs["mantissa_bits"])}


def _square(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    return [fb.add(_O.MULTIPLY, types[0], operands * 2)]


def _top_k(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    """The k largest along the last dimension, and their indices: a stable sort of (x,
    iota) by descending x (ties keep the lower index first), then the first k."""
    (x,), (values, indices) = operands, types
    last = x.shape.rank - 1
    iota = fb.add(_O.IOTA, Shape(indices.dtype, x.shape.dims), (), {"iota_dimension": last})
    sub = fb.subcomputation("top_k_compare")
    scalars = [Shape(x.shape.dtype, ()), Shape(x.shape.dtype, ()),
               Shape(indices.dtype, ()), Shape(indices.dtype, ())]
    a, b = [sub.b.parameter(shape, "Arg") for shape in scalars][:2]
    compare = sub.b.build(sub.add(_O.COMPARE, Shape(np.bool_, ()), [a, b],
                                  {"direction": "GT", "type": "TOTALORDER"}))
    both = tuple_shape([x.shape, iota.shape])
    ordered = fb.split(fb.add(_O.SORT, both, [x, iota], {"dimension": last, "is_stable": True},
                              [compare]), 2)
    limits = {"starts": (0,) * x.shape.rank, "limits": values.dims,
              "strides": (1,) * x.shape.rank}
    return [fb.add(_O.SLICE, shape, [value], limits)
            for value, shape in zip(ordered, (values, indices))]


def _identity(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
    return list(operands)


def _chlo_call(target: str) -> Rule:
    def rule(fb: FunctionBuilder, op: Op, operands: Values, types: Sequence[Shape]) -> Values:
        attrs = {"target": target, "custom_call_has_side_effect": False}
        return [fb.add(_O.CUSTOM_CALL, types[0], operands, attrs)]
    return rule


def _elementwise_opcode(name: str) -> Opcode:
    for table, prefix in ((ops.SAME_TYPE_OPS, "stablehlo."),
                          (ops.GENERIC_ELEMENTWISE_OPS, "stablehlo."), (ops.CHLO_OPS, "chlo.")):
        for opcode, op_name in table.items():
            if prefix + op_name == name:
                return opcode
    raise NotImplementedError(f"from_stablehlo: unsupported op '{name}'")


def _dims(opcode: Opcode, *keys: str) -> Rule:
    return _one(opcode, lambda op: {"dimensions": tuple(_prop(op, *keys))})


RULES: dict[str, Rule] = {
    **{f"stablehlo.{name}": _simple(opcode) for opcode, name in ops.SAME_TYPE_OPS.items()},
    **{f"stablehlo.{name}": _simple(opcode)
       for opcode, name in ops.GENERIC_ELEMENTWISE_OPS.items()},
    **{f"chlo.{name}": _simple(opcode) for opcode, name in ops.CHLO_OPS.items()},
    **{name: _chlo_call(target) for target, name in ops_regions.CHLO_TARGETS.items()},
    "stablehlo.constant": _constant,
    "stablehlo.compare": _compare,
    "stablehlo.reshape": _simple(_O.RESHAPE),
    "stablehlo.broadcast_in_dim": _broadcast,
    "stablehlo.transpose": _dims(_O.TRANSPOSE, "permutation", "dims"),
    "stablehlo.reverse": _dims(_O.REVERSE, "dimensions", "dims"),
    "stablehlo.concatenate": _one(_O.CONCATENATE,
                                  lambda op: {"dimensions": (int(_prop(op, "dimension", "dim")),)}),
    "stablehlo.slice": _one(_O.SLICE, _slice),
    "stablehlo.pad": _one(_O.PAD, _pad),
    "stablehlo.dynamic_slice": _one(_O.DYNAMIC_SLICE,
                                    lambda op: {"sizes": tuple(_prop(op, "slice_sizes", "sizes"))}),
    "stablehlo.dynamic_update_slice": _simple(_O.DYNAMIC_UPDATE_SLICE),
    "stablehlo.iota": _one(_O.IOTA,
                           lambda op: {"iota_dimension": int(_prop(op, "iota_dimension", "dim"))}),
    "stablehlo.gather": _one(_O.GATHER, _gather),
    "stablehlo.reduce_precision": _one(_O.REDUCE_PRECISION, _reduce_precision),
    "stablehlo.dot_general": _one(_O.DOT, _dot),
    "stablehlo.convolution": _convolution,
    "stablehlo.reduce": _reduce,
    "stablehlo.reduce_window": _reduce_window,
    "stablehlo.select_and_scatter": _select_and_scatter,
    "stablehlo.sort": _sort,
    "stablehlo.scatter": _scatter,
    "stablehlo.while": _while,
    "stablehlo.case": _branches,
    "stablehlo.if": _branches,
    "func.call": _call,
    "stablehlo.custom_call": _custom_call,
    "stablehlo.fft": _fft,
    "stablehlo.optimization_barrier": _identity,
    "chlo.square": _square,
    "stablehlo.count_leading_zeros": _count_leading_zeros,
    "chlo.top_k": _top_k,
    "sdy.sharding_constraint": _identity,
    "sdy.reshard": _identity,
    **tokens_parse.RULES,
    **refinement.RULES,
}
