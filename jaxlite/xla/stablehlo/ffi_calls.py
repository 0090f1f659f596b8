"""FFI custom calls in StableHLO: a custom-call to a registered FFI target (`jax.ffi.
ffi_call`) prints as JAX writes it, so real XLA calls the same handler with the same
attributes.

JAX's form: `stablehlo.custom_call @target` with `api_version = 1`, an empty
`backend_config` string, operand and result layouts, `output_operand_aliases` for
`input_output_aliases`, and the attributes as the
`mhlo.backend_config` dictionary (XLA reads a dictionary there as a typed FFI call). Each
attribute keeps the type jaxlite's call frame gives it (`xla.ffi.attributes`): scalars
`value : type` (floats as their bit pattern, exact), arrays `dense<...> : tensor<N x type>`,
strings, nested dictionaries.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from jaxlite.xla.ffi import frames, registry
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import types as T

__all__ = ["is_ffi_call", "ffi_custom_call"]


def is_ffi_call(inst: HloInstruction) -> bool:
    """Whether custom-call `inst` calls a registered FFI target."""
    return registry.is_registered(str(inst.attr("target")))


def _scalar(dtype: np.dtype, value: Any) -> str:
    element = T.element_type(dtype)
    if dtype == np.bool_:
        return "true" if value else "false"
    if dtype.kind in "iu":
        return f"{int(value)} : {element}"
    bits = np.asarray(value, dtype).reshape(1).view(f"u{dtype.itemsize}")[0]
    return f"0x{int(bits):0{2 * dtype.itemsize}X} : {element}"


def _attribute(encoded: list[Any]) -> str:
    kind = encoded[0]
    if kind == "bool":
        return "true" if encoded[1] else "false"
    if kind in ("int64", "float64"):
        return _scalar(np.dtype(kind), encoded[1])
    if kind == "string":
        return T.string(encoded[1])
    if kind == "dict":
        return _dictionary(encoded[1])
    dtype = np.dtype(encoded[1])
    if kind == "scalar":
        return _scalar(dtype, encoded[2])
    array = np.asarray(encoded[2], dtype)
    return f"{T.dense_literal(array)} : {T.tensor_type(Shape(dtype, array.shape))}"


def _dictionary(decoded: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{name} = {_attribute(value)}"
                           for name, value in sorted(decoded.items())) + "}"


def _layout(shape: Shape, order: Sequence[int]) -> str:
    """The minor-to-major layout attribute of a buffer stored in major-to-minor `order`
    (empty: row-major)."""
    rank = len(shape.dims)
    if rank == 0:
        return "dense<> : tensor<0xindex>"
    order = order or range(rank)
    return f"dense<{T.dims_list(reversed(list(order)))}> : tensor<{rank}xindex>"


def _transpose(w: Any, value: str, permutation: Sequence[int]) -> str:
    shape = w.shapes[value]
    dims = tuple(shape.dims[p] for p in permutation)
    return w.generic("stablehlo.transpose", [value], [Shape(shape.dtype, dims)],
                     {"permutation": T.i64_array(permutation)})[0]


def ffi_custom_call(w: Any, inst: HloInstruction, values: Sequence[str],
                    results: Sequence[Shape]) -> list[str]:
    """The `stablehlo.custom_call` of FFI custom-call `inst` (see the module docstring).

    jaxlite's custom-call takes and gives the arrays as stored (`frames.LAYOUTS_ATTRIBUTE`);
    StableHLO's takes logical arrays and layouts, so stored operands are transposed back
    before the call and the results into their stored order after it."""
    layouts = list(inst.attrs.get(frames.LAYOUTS_ATTRIBUTE, ())) or \
        [()] * (len(values) + len(results))
    in_orders, out_orders = layouts[:len(values)], layouts[len(values):]
    logical = [_transpose(w, v, np.argsort(o)) if o else v for v, o in zip(values, in_orders)]
    returned = [Shape(s.dtype, frames.logical_dims(s.dims, o)) for s, o in zip(results, out_orders)]
    props = {"call_target_name": T.string(str(inst.attr("target"))),
             "api_version": "1 : i32", "backend_config": '""',
             "has_side_effect": "true" if inst.attr("custom_call_has_side_effect") else "false",
             "operand_layouts": "[" + ", ".join(_layout(w.shapes[v], o)
                                                for v, o in zip(logical, in_orders)) + "]",
             "result_layouts": "[" + ", ".join(_layout(s, o)
                                               for s, o in zip(returned, out_orders)) + "]"}
    aliases = inst.attrs.get(frames.ALIASES_ATTRIBUTE, ())
    if aliases:
        props["output_operand_aliases"] = "[" + ", ".join(
            f"#stablehlo.output_operand_alias<output_tuple_indices = "
            f"{f'[{o}]' if len(results) > 1 else '[]'}, operand_index = {i}, "
            "operand_tuple_indices = []>" for i, o in aliases) + "]"
    attributes = json.loads(inst.attr("backend_config") or "{}")
    outs = w.generic("stablehlo.custom_call", logical, returned, props,
                     attributes={"mhlo.backend_config": _dictionary(attributes)})
    return [_transpose(w, y, o) if o else y for y, o in zip(outs, out_orders)]
