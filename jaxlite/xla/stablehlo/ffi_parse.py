"""Reading typed FFI calls (`stablehlo.custom_call @target` with its attributes in an
`mhlo.backend_config` dictionary, as `jax.ffi.ffi_call` lowers) as jaxlite's FFI
custom-calls: the reverse of `ffi_calls.py`.

A call of a target registered with `jaxlite.ffi.register_ffi_target` becomes the
custom-call jaxlite's own lowering makes (`lax.ffi_call`): the attributes as the canonical
text `xla.ffi.attributes` encodes, typed as the text types them (`3 : i64`, `1.0E-5 : f32`,
`dense<...> : tensor<3xf32>`, strings, booleans, dictionaries). A call of a target jaxlite
does not know is an error that says how to register it; buffers in another layout than
row-major, and aliased outputs, are not read yet (NotImplementedError).
"""
from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from jaxlite.xla.ffi import frames, registry
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import syntax as S
from jaxlite.xla.stablehlo.builder import FunctionBuilder, tuple_shape
from jaxlite.xla.stablehlo.parser import Op

__all__ = ["is_typed_ffi_call", "read_ffi_call"]


def _attribute_dictionary(op: Op) -> dict | None:
    """The call's typed attributes: `mhlo.backend_config` (JAX's cpu form) or a dictionary
    `backend_config` (its form elsewhere); None when there is neither."""
    for key in ("mhlo.backend_config", "backend_config"):
        if isinstance(op.attrs.get(key), dict):
            return op.attrs[key]
    return None


def is_typed_ffi_call(op: Op) -> bool:
    """Whether custom call `op` is a typed FFI call (attributes as a dictionary)."""
    return _attribute_dictionary(op) is not None or int(op.attrs.get("api_version", 1)) == 4


def _encoded(name: str, value: Any) -> list[Any]:
    """One attribute as `xla.ffi.attributes` encodes it."""
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, str):
        return ["string", value]
    if isinstance(value, dict):
        return ["dict", {k: _encoded(f"{name}.{k}", v) for k, v in sorted(value.items())}]
    if isinstance(value, np.ndarray):
        kind = "scalar" if value.ndim == 0 else "array"
        return [kind, value.dtype.name, value.tolist()]
    if isinstance(value, (S.TypedInt, S.TypedFloat)):
        dtype = S.dtype_of_element_type(value.element_type)
        python = int(value) if dtype.kind in "iu" else float(value)
        if dtype.name in ("int64", "float64"):
            return [dtype.name, python]
        return ["scalar", dtype.name, python]
    raise NotImplementedError(f"from_stablehlo: FFI attribute {name!r}: cannot read "
                              f"{value!r}")


def _row_major(layouts: Any, shapes: Sequence[Shape]) -> bool:
    for layout, shape in zip(layouts or (), shapes):
        if tuple(int(d) for d in np.asarray(layout).reshape(-1)) != \
                tuple(range(shape.rank - 1, -1, -1)):
            return False
    return True


def read_ffi_call(fb: FunctionBuilder, op: Op, target: str, operands: list[HloInstruction],
                  types: Sequence[Shape]) -> list[HloInstruction]:
    """The values of typed FFI call `op` of `target` (see the module docstring)."""
    if not registry.is_registered(target):
        raise NotImplementedError(
            f"from_stablehlo: custom call @{target} at line {op.line} is a typed FFI call "
            f"of a target jaxlite does not know; register its handler first with "
            f"jaxlite.ffi.register_ffi_target({target!r}, jaxlite.ffi.pycapsule(fn), "
            "platform='cpu')")
    operand_shapes = [o.shape for o in operands]
    if not (_row_major(op.attrs.get("operand_layouts"), operand_shapes)
            and _row_major(op.attrs.get("result_layouts"), types)):
        raise NotImplementedError(f"from_stablehlo: FFI call @{target} at line {op.line}: "
                                  "buffers in a layout other than row-major")
    if op.attrs.get("output_operand_aliases"):
        raise NotImplementedError(f"from_stablehlo: FFI call @{target} at line {op.line}: "
                                  "aliased outputs")
    attributes = {name: _encoded(name, value) for name, value in
                  sorted((_attribute_dictionary(op) or {}).items())}
    attrs = {"target": target,
             "backend_config": json.dumps(attributes, sort_keys=True, separators=(",", ":")),
             "custom_call_has_side_effect": bool(op.attrs.get("has_side_effect", False)),
             frames.SITE_ATTRIBUTE: frames.new_site()}
    call = fb.add(Opcode.CUSTOM_CALL, tuple_shape(list(types)), operands, attrs)
    return fb.split(call, len(types))
