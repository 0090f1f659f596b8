"""HLO text: printing our IR in XLA's HLO text format, and reading it back (mirrors XLA's
HloModule::ToString and HloParser).

```
HloModule m, entry_computation_layout={(f32[4,8]{1,0})->f32[4]{0}}

%add (x.0: f32[], y.1: f32[]) -> f32[] {
  %x.0 = f32[] parameter(0)
  %y.1 = f32[] parameter(1)
  ROOT %add.2 = f32[] add(%x.0, %y.1)
}

ENTRY %main (p.3: f32[4,8]) -> f32[4] {
  %p.3 = f32[4,8]{1,0} parameter(0)
  %constant.4 = f32[] constant(0)
  ROOT %reduce.5 = f32[4]{0} reduce(%p.3, %constant.4), dimensions={1}, to_apply=%add
}
```

Computations print callees first; `parse_module(print_module(m))` gives back `m`'s structure and
printing it again gives the same text. How each attribute of `ir.py` is written:

- `dimensions` (tuple): `dimensions={0,1}`; sort's `dimension` (int): `dimensions={0}`.
- slice `starts, limits, strides`: `slice={[0:4], [1:8:2]}` (strides written only when one
  is not 1, as XLA does); pad `padding`: `padding=0_1x2_2`, or `0_1_1x2_2_0` when some
  interior padding is not 0; dynamic-slice `sizes`: `dynamic_slice_sizes={2,3}`.
- dot `lhs_contracting` ...: `lhs_contracting_dims={1}` ...; custom-call `target`:
  `custom_call_target="name"`, `backend_config` (a string): `backend_config="..."`.
- `window` (a `shape_inference_base.Window`; a mapping with XLA's text keys, which shape
  inference also accepts, prints the same and reads back as a `Window`):
  `window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}`
  (fields at their neutral value are left out, as XLA does).
- constants: `constant(1.5)`, `constant({1, 2})`, `constant({ { 1, 2 }, { 3, 4 } })`, `true`,
  `inf`, `-inf`, `nan`, complex `(1, 2)`; floats use the fewest digits that give back the
  same value in the constant's dtype (bf16 and f16 included).
- called computations: `to_apply=%r` (reduce, reduce-window, scatter, sort, call),
  `calls=%f` (fusion), `condition=%c, body=%b` (while), `select=%s, scatter=%t`,
  `true_computation=%t, false_computation=%f` (conditional on a pred) or
  `branch_computations={%a, %b}` (on an index), `called_computations={...}` (anything else).
- every other attribute (`direction`, `index`, `iota_dimension`, `kind`, gather and scatter
  dimension numbers under XLA's names, fusion `tiling`, ...) is a generic value: bools
  `true/false`, ints, floats (`1.0`: a Python float keeps its point), strings (bare when they
  read back as the same string, else JSON-quoted), tuples `{a,b}` (lists print the same and
  come back as tuples), mappings as JSON objects (their lists come back as tuples; an empty
  mapping comes back as an empty tuple). Fusion `tiling` is such a mapping:
  `tiling={"tile": [1, 1024], "vector_width": 16}`.
- `metadata` (an `OpMetadata`) prints last, as XLA writes it:
  `metadata={op_name="jit(f)/mul" source_file="f.py" source_line=3}` (empty fields left
  out). `print_module(m, metadata=False)` leaves it out: the text that keys compiled code.
"""
from __future__ import annotations

import json
import math
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule, OpMetadata
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape, xla_type_name
from jaxlite.xla.text_parser import (
    BARE_TOKEN,
    CALLED_ATTRIBUTE_KEYS,
    CALLED_KEYS,
    CONDITIONAL_PRED_KEYS,
    SKIPPED_ATTRIBUTES,
    TEXT_KEY_OF_ATTR,
    Window,
    parse_module,
    parse_shape,
    parse_value,
)

__all__ = [
    "SKIPPED_ATTRIBUTES",
    "Window",
    "format_literal",
    "format_metadata",
    "format_value",
    "parse_module",
    "parse_shape",
    "print_computation",
    "print_instruction",
    "print_module",
]

# Characters a printed name may not hold: the parser splits on them.
_NAME_FORBIDDEN = set(" \t\n,=(){}[]%\"/")


# Modules are immutable, and one is printed several times per compilation (the keys of the
# in-memory and persistent caches), so each module's text is kept while the module lives:
# with metadata (index True) and without (False).
_PRINTED: dict[bool, weakref.WeakKeyDictionary[HloModule, str]] = {
    True: weakref.WeakKeyDictionary(), False: weakref.WeakKeyDictionary()}


def print_module(module: HloModule, metadata: bool = True) -> str:
    """`module` in HLO text: the header, then each computation, callees first; each
    instruction's metadata too unless `metadata` is False."""
    printed = _PRINTED[metadata]
    text = printed.get(module)
    if text is None:
        text = printed[module] = _module_text(module, metadata)
    return text


def _module_text(module: HloModule, metadata: bool = True) -> str:
    _check_name(module.name, "module")
    entry = module.entry
    params = ", ".join(str(p.shape) for p in entry.parameters)
    header = f"HloModule {module.name}, entry_computation_layout={{({params})->{entry.root.shape}}}"
    if module.num_partitions > 1:
        header += f", num_partitions={module.num_partitions}"
    lines = [header, ""]
    for comp in module.computations:
        lines.append(print_computation(comp, is_entry=comp is entry, metadata=metadata))
        lines.append("")
    return "\n".join(lines)


def print_computation(comp: HloComputation, is_entry: bool = False,
                      metadata: bool = True) -> str:
    """One computation: `[ENTRY ]%name (p: f32[4]) -> f32[] {`, its instructions, `}`."""
    _check_name(comp.name, "computation")
    signature = ", ".join(f"{p.name}: {_plain_shape(p.shape)}" for p in comp.parameters)
    head = f"{'ENTRY ' if is_entry else ''}%{comp.name} ({signature}) -> "
    lines = [head + _plain_shape(comp.root.shape) + " {"]
    for inst in comp.instructions:
        prefix = "  ROOT " if inst is comp.root else "  "
        lines.append(prefix + print_instruction(inst, metadata))
    lines.append("}")
    return "\n".join(lines)


def print_instruction(inst: HloInstruction, metadata: bool = True) -> str:
    """`%name = shape opcode(operands), attributes` (without ROOT or indentation)."""
    _check_name(inst.name, "instruction")
    if inst.opcode is Opcode.PARAMETER:
        inside = str(inst.attr("number"))
    elif inst.opcode is Opcode.CONSTANT:
        inside = format_literal(np.asarray(inst.attr("literal")))
    else:
        inside = ", ".join(f"%{operand.name}" for operand in inst.operands)
    try:
        pieces = _attribute_texts(inst) + _called_texts(inst)
    except (TypeError, ValueError) as err:
        raise type(err)(f"instruction %{inst.name} ({inst.opcode.text}): {err}") from err
    if metadata and inst.metadata is not None:
        pieces.append(format_metadata(inst.metadata))
    return ", ".join([f"%{inst.name} = {inst.shape} {inst.opcode.text}({inside})"] + pieces)


def format_metadata(metadata: OpMetadata) -> str:
    """`metadata={op_name="..." source_file="..." source_line=N}`, empty fields left out."""
    fields = []
    if metadata.op_name:
        fields.append(f"op_name={json.dumps(metadata.op_name)}")
    if metadata.source_file:
        fields.append(f"source_file={json.dumps(metadata.source_file)}")
    if metadata.source_line:
        fields.append(f"source_line={int(metadata.source_line)}")
    return "metadata={" + " ".join(fields) + "}"


def _check_name(name: str, what: str) -> None:
    if not name or _NAME_FORBIDDEN & set(name):
        raise ValueError(f"{what} name {name!r} cannot be written in HLO text: names may not "
                         f"be empty or hold spaces or any of , = ( ) {{ }} [ ] % \" /")


def _plain_shape(shape: Shape) -> str:
    """A shape without its layout, as XLA writes computation signatures."""
    if shape.is_tuple:
        return "(" + ", ".join(_plain_shape(s) for s in shape.tuple_shapes or ()) + ")"
    return f"{xla_type_name(shape.dtype)}[{','.join(str(d) for d in shape.dims)}]"


# ----------------------------------------------------------------------------- attributes

def _attribute_texts(inst: HloInstruction) -> list[str]:
    op, attrs = inst.opcode, inst.attrs
    texts = []
    for key, value in attrs.items():
        if (op is Opcode.PARAMETER and key == "number") or (
                op is Opcode.CONSTANT and key == "literal"):
            continue
        _check_name(key, "attribute")
        if key in CALLED_ATTRIBUTE_KEYS or (key in SKIPPED_ATTRIBUTES and not (
                key == "backend_config" and op is Opcode.CUSTOM_CALL)):
            raise ValueError(f"attribute {key!r} would not read back (the parser takes it for "
                             f"a called computation or skips it as XLA-only); rename it")
        if op is Opcode.SLICE and key in ("starts", "limits", "strides"):
            if key == "starts":
                texts.append("slice=" + _format_slice(attrs))
        elif op is Opcode.PAD and key == "padding":
            texts.append("padding=" + _format_padding(value))
        elif op is Opcode.SORT and key == "dimension":
            texts.append(f"dimensions={{{int(value)}}}")
        elif key == "dimensions":
            dims = (value,) if isinstance(value, (int, np.integer)) else value
            texts.append("dimensions=" + format_value(tuple(dims)))
        elif op is Opcode.DYNAMIC_SLICE and key == "sizes":
            texts.append("dynamic_slice_sizes=" + format_value(tuple(value)))
        elif key == "window":
            texts.append("window=" + _format_window(value))
        elif key == "sharding":
            texts.append("sharding=" + value.text())
        elif key == "target" or (key == "backend_config" and op is Opcode.CUSTOM_CALL):
            texts.append(f"{TEXT_KEY_OF_ATTR.get(key, key)}={json.dumps(str(value))}")
        else:
            texts.append(f"{TEXT_KEY_OF_ATTR.get(key, key)}={format_value(value)}")
    return texts


def _called_texts(inst: HloInstruction) -> list[str]:
    names = [f"%{comp.name}" for comp in inst.called]
    if not names:
        return []
    keys = CALLED_KEYS.get(inst.opcode)
    if inst.opcode is Opcode.CONDITIONAL and len(names) == 2 and inst.operands and (
            not inst.operands[0].shape.is_tuple and inst.operands[0].shape.dtype == np.bool_):
        keys = CONDITIONAL_PRED_KEYS
    if keys is not None and len(keys) == len(names):
        return [f"{key}={name}" for key, name in zip(keys, names)]
    key = "branch_computations" if inst.opcode is Opcode.CONDITIONAL else "called_computations"
    return [f"{key}={{{', '.join(names)}}}"]


def _format_slice(attrs: Mapping[str, Any]) -> str:
    starts, limits = attrs["starts"], attrs["limits"]
    strides = attrs.get("strides") or (1,) * len(starts)
    with_strides = any(s != 1 for s in strides)
    parts = [f"[{b}:{e}:{s}]" if with_strides else f"[{b}:{e}]"
             for b, e, s in zip(starts, limits, strides)]
    return "{" + ", ".join(parts) + "}"


def _format_padding(padding: Any) -> str:
    with_interior = any(len(dim) > 2 and dim[2] != 0 for dim in padding)
    parts = []
    for dim in padding:
        low, high = _window_number(dim[0]), _window_number(dim[1])
        parts.append(f"{low}_{high}_{dim[2] if len(dim) > 2 else 0}" if with_interior
                     else f"{low}_{high}")
    return "x".join(parts)


def _format_window(window: Any) -> str:
    if isinstance(window, Mapping):
        # The mapping form that shape inference accepts, with XLA's text keys.
        window = _window_of_mapping(window)
    if not isinstance(window, Window):
        raise TypeError(f"window must be a Window, got {type(window).__name__}")

    def joined(values: Any) -> str:
        return "x".join(_window_number(v) for v in values)
    parts = [f"size={joined(window.size)}"] if window.size else []
    if any(s != 1 for s in window.stride):
        parts.append(f"stride={joined(window.stride)}")
    if any(window.pad_low) or any(window.pad_high):
        parts.append("pad=" + "x".join(f"{_window_number(lo)}_{_window_number(hi)}"
                                       for lo, hi in zip(window.pad_low, window.pad_high)))
    if any(d != 1 for d in window.base_dilation):
        parts.append(f"lhs_dilate={joined(window.base_dilation)}")
    if any(d != 1 for d in window.window_dilation):
        parts.append(f"rhs_dilate={joined(window.window_dilation)}")
    if any(window.reversal):
        parts.append(f"rhs_reversal={joined(window.reversal)}")
    return "{" + " ".join(parts) + "}"


def _window_number(value: Any) -> str:
    # A symbolic size (shape polymorphism) in parentheses and without spaces, so that the
    # `x`, `_` and spaces of the window's text still separate.
    if getattr(value, "is_symbolic_dim", False):
        return "(" + str(value).replace(" ", "") + ")"
    return str(int(value))


def _window_size(value: Any) -> Any:
    return value if getattr(value, "is_symbolic_dim", False) else int(value)


def _window_of_mapping(fields: Mapping[str, Any]) -> Window:
    size = tuple(_window_size(s) for s in fields["size"])

    def numbers(key: str, default: int) -> tuple[int, ...]:
        value = fields.get(key)
        return (default,) * len(size) if value is None else tuple(int(v) for v in value)
    pads = fields.get("pad") or ((0, 0),) * len(size)
    return Window(size, numbers("stride", 1), tuple(_window_size(p[0]) for p in pads),
                  tuple(_window_size(p[1]) for p in pads), numbers("lhs_dilate", 1),
                  numbers("rhs_dilate", 1),
                  tuple(bool(r) for r in numbers("window_reversal", 0)))


def format_value(value: Any) -> str:
    """The text of a generic attribute value (see the module docstring); `parse_value` reads
    it back."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        if BARE_TOKEN.fullmatch(value) and parse_value(value) == value:
            return value
        return json.dumps(value)
    if isinstance(value, (tuple, list)):
        return "{" + ",".join(format_value(v) for v in value) + "}"
    if isinstance(value, Mapping):
        return json.dumps(_jsonable(value))
    raise TypeError(f"attribute value {value!r} of type {type(value).__name__} has no HLO text "
                    f"form (use bools, ints, floats, strings, tuples or mappings of them)")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


# ----------------------------------------------------------------------------- literals

def format_literal(array: np.ndarray) -> str:
    """A constant's literal as XLA writes it: `1.5`, `{1, 2}`, `{ { 1, 2 }, { 3, 4 } }`."""
    if array.dtype == object:  # a symbolic dimension used as a value (`jaxlite.export`)
        return str(array[()])
    if array.ndim == 0:
        return _format_element(array[()], array.dtype, scalar=True)

    def nested(sub: np.ndarray, top: bool) -> str:
        if sub.shape[0] == 0:
            return "{}"
        if sub.ndim == 1:
            items = ", ".join(_format_element(v, array.dtype) for v in sub)
            return f"{{{items}}}" if top else f"{{ {items} }}"
        return "{ " + ", ".join(nested(row, False) for row in sub) + " }"
    return nested(array, True)


def _format_element(value: Any, dtype: np.dtype, scalar: bool = False) -> str:
    if dtype == np.bool_:
        # XLA writes pred scalars as true/false and pred arrays as 1/0.
        return ("true" if value else "false") if scalar else ("1" if value else "0")
    if dtype.kind in "iu":
        return str(int(value))
    if dtype.kind == "c":
        real_dtype = np.dtype(f"f{dtype.itemsize // 2}")
        return (f"({_format_float(value.real, real_dtype)}, "
                f"{_format_float(value.imag, real_dtype)})")
    return _format_float(value, dtype)


def _format_float(value: Any, dtype: np.dtype) -> str:
    """The shortest decimal text that reads back as the same `dtype` value."""
    number = float(value)
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    target = np.asarray(value, dtype)
    for digits in range(1, 18):
        text = f"{number:.{digits}g}"
        with np.errstate(over="ignore"):  # a rounded-up candidate may pass the dtype's max
            if np.asarray(float(text)).astype(dtype) == target:
                break
    if "e" in text and 0 <= int(text.split("e")[1]) < 16:
        # Whole numbers such as 100 read better without an exponent (1e+02).
        text = np.format_float_positional(float(text), trim="-")
    return text
