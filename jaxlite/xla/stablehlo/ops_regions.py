"""Rules of the StableHLO printer for ops that apply computations (written as regions or
function calls) and for custom calls: reduce, reduce_window, select_and_scatter, sort,
scatter, while, case / if, func.call, custom_call.

HLO's `jaxlite_fft` custom call becomes StableHLO's `fft` op, the special-function kernels
CHLO has become CHLO ops, the LAPACK-style kernels XLA has become its LAPACK calls
(`lapack.py`, `lapack_reductions.py`), the kernels JAX computes with standard ops become
those ops (`kernel_expansions.py`), calls of registered FFI targets as JAX's typed FFI
calls (`ffi_calls.py`); any other target prints as
`stablehlo.custom_call @target`, with its backend_config string and side-effect flag, and
jaxlite's other custom-call attributes as `mhlo.frontend_attributes` (strings).
"""
from __future__ import annotations

import json
from typing import Sequence

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.ffi_calls import ffi_custom_call, is_ffi_call
from jaxlite.xla.stablehlo.kernel_expansions import kernel_expansion
from jaxlite.xla.stablehlo.lapack import custom_call
from jaxlite.xla.stablehlo.lapack_reductions import lapack_rule
from jaxlite.xla.stablehlo.ops import Rule, single_values, window_fields
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves

_O = Opcode

# Ops that apply computations, by opcode (a conditional on a predicate is `stablehlo.if`).
REGION_OPS: dict[Opcode, str] = {
    _O.REDUCE: "stablehlo.reduce", _O.REDUCE_WINDOW: "stablehlo.reduce_window",
    _O.SELECT_AND_SCATTER: "stablehlo.select_and_scatter", _O.SORT: "stablehlo.sort",
    _O.SCATTER: "stablehlo.scatter", _O.WHILE: "stablehlo.while",
    _O.CONDITIONAL: "stablehlo.case", _O.CALL: "func.call", _O.FUSION: "func.call",
    _O.CUSTOM_CALL: "stablehlo.custom_call",
}

# jaxlite's custom-call targets that are StableHLO ops of their own.
FFT_TARGET = "jaxlite_fft"
FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")

# jaxlite's special-function kernels that CHLO has (same operands, same order).
CHLO_TARGETS: dict[str, str] = {
    "jaxlite_special_bessel_i1e": "chlo.bessel_i1e",
    "jaxlite_special_polygamma": "chlo.polygamma",
    "jaxlite_special_zeta": "chlo.zeta",
}

# Attributes of a custom call that are its StableHLO properties, not frontend attributes.
_CUSTOM_CALL_KEYS = ("target", "backend_config", "custom_call_has_side_effect")


def _results(inst: HloInstruction) -> list:
    return T.leaf_shapes(inst.shape)


def _reduce(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    props = {"dimensions": T.i64_array(inst.attr("dimensions"))}
    return w.generic(REGION_OPS[_O.REDUCE], single_values(operands), _results(inst), props,
                     [w.region(inst.called[0])])


def _reduce_window(w: FunctionWriter, inst: HloInstruction,
                   operands: Sequence[Leaves]) -> Leaves:
    win = window_fields(inst.attr("window"))
    props = {"window_dimensions": T.i64_array(win["size"]),
             "window_strides": T.i64_array(win["stride"]),
             "base_dilations": T.i64_array(win["base_dilation"]),
             "window_dilations": T.i64_array(win["window_dilation"]),
             "padding": T.padding_attr(win["pad_low"], win["pad_high"])}
    return w.generic(REGION_OPS[_O.REDUCE_WINDOW], single_values(operands), _results(inst), props,
                     [w.region(inst.called[0])])


def _select_and_scatter(w: FunctionWriter, inst: HloInstruction,
                        operands: Sequence[Leaves]) -> Leaves:
    win = window_fields(inst.attr("window"))
    props = {"window_dimensions": T.i64_array(win["size"]),
             "window_strides": T.i64_array(win["stride"]),
             "padding": T.padding_attr(win["pad_low"], win["pad_high"])}
    select, scatter = inst.called
    return w.generic(REGION_OPS[_O.SELECT_AND_SCATTER], single_values(operands), _results(inst), props,
                     [w.region(select), w.region(scatter)])


def _sort(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    props = {"dimension": T.i64(inst.attr("dimension")),
             "is_stable": T.boolean(inst.attr("is_stable", False))}
    return w.generic(REGION_OPS[_O.SORT], single_values(operands), _results(inst), props,
                     [w.region(inst.called[0])])


def _scatter(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    a = inst.attr
    numbers = T.struct_attr("scatter", [
        ("update_window_dims", a("update_window_dims")),
        ("inserted_window_dims", a("inserted_window_dims")),
        ("input_batching_dims", a("input_batching_dims", ())),
        ("scatter_indices_batching_dims", a("scatter_indices_batching_dims", ())),
        ("scatter_dims_to_operand_dims", a("scatter_dims_to_operand_dims")),
        ("index_vector_dim", a("index_vector_dim"))])
    props = {"scatter_dimension_numbers": numbers,
             "indices_are_sorted": T.boolean(a("indices_are_sorted", False)),
             "unique_indices": T.boolean(a("unique_indices", False))}
    return w.generic(REGION_OPS[_O.SCATTER], single_values(operands), _results(inst), props,
                     [w.region(inst.called[0])])


def _while(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    condition, body = inst.called
    return w.generic(REGION_OPS[_O.WHILE], list(operands[0]), _results(inst), None,
                     [w.region(condition), w.region(body)])


def _conditional(w: FunctionWriter, inst: HloInstruction,
                 operands: Sequence[Leaves]) -> Leaves:
    selector = single_values(operands[:1])
    branches = [w.region(comp, [operands[i + 1]]) for i, comp in enumerate(inst.called)]
    if inst.operands[0].shape.dtype == np.bool_:
        return w.generic("stablehlo.if", selector, _results(inst), None, branches)
    return w.generic(REGION_OPS[_O.CONDITIONAL], selector, _results(inst), None, branches)


def _call(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    values = [value for leaves in operands for value in leaves]
    recorded = inst.attr("lapack_call", None)
    if recorded is not None:  # a LAPACK call as the reader found it (lapack_parse.py)
        record = json.loads(recorded)
        return custom_call(w, record["target"], values, _results(inst), record["batch"],
                           record["config"], record["aliases"])
    callee = w.module.symbol(inst.called[0])
    return w.generic(REGION_OPS[inst.opcode], values, _results(inst), {"callee": callee})


def _custom_call(w: FunctionWriter, inst: HloInstruction,
                 operands: Sequence[Leaves]) -> Leaves:
    target = str(inst.attr("target"))
    config = inst.attr("backend_config")
    if target == FFT_TARGET:
        return _fft(w, inst, operands, json.loads(config))
    if target in CHLO_TARGETS and inst.shape.dtype.kind == "f":
        return w.generic(CHLO_TARGETS[target], single_values(operands), _results(inst))
    if is_ffi_call(inst):
        return ffi_custom_call(w, inst, [v for leaves in operands for v in leaves],
                               _results(inst))
    for find_rule in (lapack_rule, kernel_expansion):
        rule = find_rule(target)
        if rule is not None:
            values = rule(w, inst, [value for leaves in operands for value in leaves])
            if values is not None:
                return values
    props = {"call_target_name": T.string(target),
             "has_side_effect": T.boolean(inst.attr("custom_call_has_side_effect", True)),
             "api_version": "1 : i32"}
    if config:
        props["backend_config"] = T.string(str(config))
    extra = {key: T.string(_attribute_text(value)) for key, value in inst.attrs.items()
             if key not in _CUSTOM_CALL_KEYS}
    attributes = {"mhlo.frontend_attributes": "{" + ", ".join(
        f"{key} = {value}" for key, value in sorted(extra.items())) + "}"} if extra else None
    values = [value for leaves in operands for value in leaves]
    return w.generic(REGION_OPS[_O.CUSTOM_CALL], values, _results(inst), props,
                     attributes=attributes)


def _attribute_text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except TypeError:
        return repr(value)


def _fft(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves],
         config: dict) -> Leaves:
    fft_type = config["fft_type"]
    if fft_type not in FFT_TYPES:
        raise ValueError(f"unknown fft_type {fft_type!r}")
    props = {"fft_type": T.enum_attr("fft_type", fft_type),
             "fft_length": T.i64_array(config["fft_length"])}
    return w.generic("stablehlo.fft", single_values(operands), _results(inst), props)


RULES: dict[Opcode, Rule] = {
    _O.REDUCE: _reduce,
    _O.REDUCE_WINDOW: _reduce_window,
    _O.SELECT_AND_SCATTER: _select_and_scatter,
    _O.SORT: _sort,
    _O.SCATTER: _scatter,
    _O.WHILE: _while,
    _O.CONDITIONAL: _conditional,
    _O.CALL: _call,
    _O.FUSION: _call,  # a fused computation is a function like any other
    _O.CUSTOM_CALL: _custom_call,
}
