"""Reading XLA's HLO text into our IR (mirrors XLA's HloParser), and the tables it shares with
the printer in `text.py`.

The parser reads what `text.print_module` writes, and XLA's own text as real JAX prints it
(`jit(f).lower(...).as_text(dialect="hlo")` and `.compile().as_text()`): `%`-prefixed names or
bare ones, operands with or without their shapes (`add(f32[4]{0} %a, f32[4]{0} %b)` is the older
style), computation signatures, `/*index=5*/` comments, and the module header's extra fields.
Attributes that only describe where a value came from or how XLA schedules and places it
(`SKIPPED_ATTRIBUTES`) are dropped; every other attribute becomes an entry of
`HloInstruction.attrs`: the ones `ir.py` names get their Python form (see `text.py`), the rest
a generic value (ints, floats, bools, strings, tuples, JSON objects). XLA's iota form of
`replica_groups` (`[2,2]<=[4]`) is read into explicit groups (collectives.py).

The module is line-oriented, as XLA's text is: one instruction per line, a computation between a
header line ending in `{` and a line `}`.
"""
from __future__ import annotations

import contextvars
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxlite.xla.collectives import iota_replica_groups
from jaxlite.xla.hlo_sharding import parse_sharding
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule, OpMetadata
from jaxlite.xla.opcodes import OPCODE_OF_TEXT, Opcode
from jaxlite.xla.shape import Shape, dtype_of_type_name
from jaxlite.xla.shape_inference_base import Window

# Attributes of XLA's text with no meaning for our IR: source locations, scheduling
# and placement hints. `backend_config` is kept on custom-call only, where it is an operand of
# the call; on fusions it holds XLA's own code-generation choices.
SKIPPED_ATTRIBUTES = frozenset({
    "metadata", "frontend_attributes", "origin", "statistics",
    "control-predecessors", "raw_backend_config_string", "backend_config",
})

# Attributes renamed between the text (XLA's spelling) and `HloInstruction.attrs` (ours).
ATTR_OF_TEXT_KEY = {
    "lhs_contracting_dims": "lhs_contracting", "rhs_contracting_dims": "rhs_contracting",
    "lhs_batch_dims": "lhs_batch", "rhs_batch_dims": "rhs_batch",
    "custom_call_target": "target",
}
TEXT_KEY_OF_ATTR = {attr: key for key, attr in ATTR_OF_TEXT_KEY.items()}

# The text keys naming called computations, in the order of `HloInstruction.called`.
CALLED_KEYS: dict[Opcode, tuple[str, ...]] = {
    Opcode.REDUCE: ("to_apply",), Opcode.REDUCE_WINDOW: ("to_apply",),
    Opcode.SCATTER: ("to_apply",), Opcode.SORT: ("to_apply",), Opcode.CALL: ("to_apply",),
    Opcode.FUSION: ("calls",), Opcode.WHILE: ("condition", "body"),
    Opcode.SELECT_AND_SCATTER: ("select", "scatter"),
    Opcode.ALL_REDUCE: ("to_apply",), Opcode.REDUCE_SCATTER: ("to_apply",),
}
# A conditional on a pred calls (true branch, false branch): XLA's branch 0 is the true one.
CONDITIONAL_PRED_KEYS = ("true_computation", "false_computation")
CALLED_LIST_KEYS = ("branch_computations", "called_computations")
CALLED_ATTRIBUTE_KEYS = frozenset(
    {k for keys in CALLED_KEYS.values() for k in keys} | set(CONDITIONAL_PRED_KEYS)
    | set(CALLED_LIST_KEYS))

# A string that prints without quotes: no spaces, separators, brackets, quotes or comments.
BARE_TOKEN = re.compile(r"[^\s,{}()\[\]\"=%/]+")
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?|inf|nan)")
_OPENERS = "({["
# A scalar literal that is a dimension expression names a variable (`2*b`, `floordiv(b, 2)`).
_SYMBOLIC_SCALAR = re.compile(r"[-+*^ ()0-9,]*[A-Za-z_][A-Za-z0-9_+\-*^ (),]*")


def _is_symbolic_scalar(text: str) -> bool:
    # a complex scalar `(re, im)` has a comma, which no dimension expression has
    if _FLOAT.fullmatch(text) or text in ("true", "false") or "," in text:
        return False
    return bool(_SYMBOLIC_SCALAR.fullmatch(text)) and not re.match(r"[+-]?nan\b", text)
# One `key=value` of a metadata block: a JSON-quoted string or a bare token.
_METADATA_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s}]+)')


# How to read a dimension that is not an integer: the symbolic sizes (`b`, `2*b + 1`) of a
# module exported with shape polymorphism (`jaxlite.export`). `parse_module(text,
# read_dimension=...)` sets it for the duration of the parse; without one such a
# dimension is an error.
_DIMENSION_READER: contextvars.ContextVar[Callable[[str], Any] | None] = \
    contextvars.ContextVar("hlo_dimension_reader", default=None)


def _dimension(token: str) -> Any:
    token = token.strip()
    if _INT.fullmatch(token):
        return int(token)
    reader = _DIMENSION_READER.get()
    if reader is None:
        raise ValueError(f"symbolic dimension {token!r}: parse the module with a "
                         "`read_dimension` function to read it")
    return reader(token)


# ----------------------------------------------------------------------------- scanning

def _scan(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, bracket depth) for each character of `text[start:]` outside quoted
    strings; an opening bracket reports the depth inside it, a closing one the depth after it."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if in_string:
            in_string = escaped or char != '"'
            escaped = not escaped and char == "\\"
            continue
        if char == '"':
            in_string = True
            continue
        depth += (char in _OPENERS) - (char in ")}]")
        yield i, char, depth


def find_closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at `text[start]`, skipping nested brackets and
    quoted strings."""
    for i, char, depth in _scan(text, start):
        if depth == 0 and char in ")}]":
            return i
    raise ValueError(f"unbalanced {text[start]!r} at column {start} in: {text}")


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """`text` split at the separators outside brackets and strings, each piece stripped."""
    cuts = [i for i, char, depth in _scan(text) if char == separator and depth == 0]
    pieces = [text[a + 1:b].strip() for a, b in zip([-1] + cuts, cuts + [len(text)])]
    return [] if pieces == [""] else pieces


def strip_comments(line: str) -> str:
    """`line` without `/* ... */` comments (XLA writes `/*index=5*/` into long lists)."""
    while True:
        begin = next((i for i, _, _ in _scan(line) if line.startswith("/*", i)), -1)
        if begin < 0:
            return line
        end = line.find("*/", begin + 2)
        line = line[:begin] + ("" if end < 0 else line[end + 2:])


# ----------------------------------------------------------------------------- shapes and values

def parse_shape(text: str, pos: int = 0) -> tuple[Shape, int]:
    """The shape starting at `text[pos]` (`f32[4,8]{1,0}`, `f32[]`, `(s32[], f32[2]{0})`) and
    the position after it. Layouts are minor-to-major; tiling and memory-space suffixes of
    XLA's layouts (`{1,0:T(8,128)}`) are ignored."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if text.startswith("(", pos):
        end = find_closing(text, pos)
        parts = split_top_level(text[pos + 1:end])
        return Shape.tuple([parse_shape(part)[0] for part in parts]), end + 1
    match = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]").match(text, pos)
    if match is None:
        raise ValueError(f"expected a shape at column {pos} in: {text}")
    dims_text = match.group(2).strip()
    if any(c in dims_text for c in "<=?"):
        raise ValueError(f"dynamic shape {match.group(0)} is not supported: {text}")
    dims = tuple(_dimension(d) for d in split_top_level(dims_text)) if dims_text else ()
    dtype = dtype_of_type_name(match.group(1))
    pos = match.end()
    layout = None
    if text.startswith("{", pos):
        end = find_closing(text, pos)
        minor_to_major = text[pos + 1:end].split(":")[0].strip()
        if dims:
            layout = tuple(int(d) for d in minor_to_major.split(","))
        pos = end + 1
    return Shape(dtype, dims, layout), pos


def _bare_value(token: str) -> Any:
    if token in ("true", "false"):
        return token == "true"
    if _INT.fullmatch(token):
        return int(token)
    if _FLOAT.fullmatch(token):
        return float(token)
    return token


def _tuples(value: Any) -> Any:
    """JSON data with lists turned into tuples, so that tuples round-trip."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def parse_value(text: str) -> Any:
    """A generic attribute value: `true`, `3`, `1.5`, `LT`, `"quoted"`, `{1,2}` (a tuple),
    `{"k": [1]}` (a JSON object, lists as tuples). Anything else is kept as its text."""
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    if text.startswith("{") and find_closing(text, 0) == len(text) - 1:
        inner = text[1:-1].strip()
        if not inner:
            return ()
        if inner.startswith('"'):
            try:
                return _tuples(json.loads(text))
            except ValueError:
                pass
        return tuple(parse_value(piece) for piece in split_top_level(inner))
    if BARE_TOKEN.fullmatch(text):
        return _bare_value(text)
    return text


def parse_window(text: str) -> Window:
    """A `Window` from `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=.. rhs_dilate=..
    rhs_reversal=..}`; fields left out take their neutral values."""
    fields = dict(item.split("=", 1) for item in text.strip()[1:-1].split())
    size = tuple(_dimension(v) for v in split_top_level(fields["size"], "x")) if (
        "size" in fields) else ()

    def numbers(key: str, default: int) -> tuple[int, ...]:
        if key not in fields:
            return (default,) * len(size)
        return tuple(int(v) for v in fields[key].split("x"))
    pads = [tuple(_dimension(v) for v in split_top_level(p, "_"))
            for p in split_top_level(fields["pad"], "x")] if "pad" in fields else \
        [(0, 0)] * len(size)
    return Window(size, numbers("stride", 1), tuple(p[0] for p in pads),
                  tuple(p[1] for p in pads), numbers("lhs_dilate", 1),
                  numbers("rhs_dilate", 1), tuple(bool(r) for r in numbers("rhs_reversal", 0)))


def _literal_tokens(text: str) -> list[str]:
    return re.findall(r"[{}(),]|[^\s{}(),]+", text)


def parse_literal(text: str, shape: Shape) -> np.ndarray:
    """The array of a `constant(...)` literal of `shape`: `1.5`, `{1, 2}`, `{ {1, 2}, {3, 4} }`,
    `true`, `inf`, `nan`, complex `(1, 2)`."""
    if shape.is_tuple:
        raise ValueError(f"tuple constants are not supported: {text}")
    if "..." in text:
        raise ValueError("the literal is elided ('{...}'): print the module with its large "
                         "constants")
    if not shape.dims and _is_symbolic_scalar(text.strip()):
        value = _dimension(text)  # a dimension used as a value: `s32[] constant(2*b)`
        return np.array(value, dtype=object if getattr(value, "is_symbolic_dim", False)
                        else shape.dtype)
    tokens, pos = _literal_tokens(text), 0

    def node() -> Any:
        nonlocal pos
        token = tokens[pos]
        pos += 1
        if token == "{":
            items: list[Any] = []
            while tokens[pos] != "}":
                items.append(node())
                if tokens[pos] == ",":
                    pos += 1
            pos += 1
            return items
        if token == "(":
            real, imag = tokens[pos], tokens[pos + 2]
            pos += 4
            return complex(float(real), float(imag))
        return token
    tree = node()
    flat: list[Any] = []
    if shape.size == 0:
        # XLA writes empty arrays loosely (`{  }` for f32[0,3]): only the emptiness counts.
        if any(t not in "{}," for t in tokens):
            raise ValueError(f"literal {text} has elements but shape {shape} has none")
        return np.zeros(shape.dims, np.dtype(shape.dtype))

    def walk(item: Any, depth: int) -> None:
        if depth == shape.rank:
            if isinstance(item, list):
                raise ValueError(f"literal {text} is nested deeper than shape {shape}")
            flat.append(item)
            return
        if not isinstance(item, list) or len(item) != shape.dims[depth]:
            raise ValueError(f"literal {text} does not have shape {shape}")
        for child in item:
            walk(child, depth + 1)
    walk(tree, 0)
    dtype = np.dtype(shape.dtype)
    if dtype == np.bool_:
        values: list[Any] = [v in ("true", "1") for v in flat]
    elif dtype.kind in "iu":
        values = [int(v) for v in flat]
    elif dtype.kind == "c":
        values = [complex(v) for v in flat]
    else:
        values = [float(v) for v in flat]
    return np.array(values, dtype=dtype).reshape(shape.dims)


def _parse_slice(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    starts, limits, strides = [], [], []
    for piece in split_top_level(text.strip()[1:-1]):
        numbers = [_dimension(v) for v in piece.strip()[1:-1].split(":")]
        starts.append(numbers[0])
        limits.append(numbers[1])
        strides.append(numbers[2] if len(numbers) > 2 else 1)
    return tuple(starts), tuple(limits), tuple(strides)


def _parse_padding(text: str) -> tuple[tuple[int, int, int], ...]:
    if not text.strip():
        return ()
    config = []
    for dim in split_top_level(text.strip(), "x"):
        numbers = [_dimension(v) for v in split_top_level(dim, "_")]
        config.append((numbers[0], numbers[1], numbers[2] if len(numbers) > 2 else 0))
    return tuple(config)


# ----------------------------------------------------------------------------- modules

_COMPUTATION_HEADER = re.compile(r"(ENTRY\s+)?%?([^\s(%{]+).*\{$")
_INSTRUCTION_HEAD = re.compile(r"%?([^\s=%,(){}]+)\s*=\s*")
_OPCODE_HEAD = re.compile(r"\s*([a-z][a-z0-9\-]*)\(")


@dataclass
class _Block:
    """The text of one computation: its header and numbered body lines."""

    name: str
    is_entry: bool
    lines: list[tuple[int, str]]


def parse_module(text: str, read_dimension: Callable[[str], Any] | None = None) -> HloModule:
    """The module written in HLO `text` (ours or XLA's); see the module docstring.

    `read_dimension` reads the dimensions (in shapes, slice bounds and scalar constants)
    that are expressions rather than integers (shape polymorphism), into a symbolic size
    or, to specialize the module, an int.
    Raises ValueError naming the line for unknown opcodes, operands used before their
    definition, unknown computations and malformed instructions.
    """
    token = _DIMENSION_READER.set(read_dimension)
    try:
        return _ModuleParser(text).module()
    finally:
        _DIMENSION_READER.reset(token)


class _ModuleParser:
    def __init__(self, text: str) -> None:
        self.name: str | None = None
        self.num_partitions = 1
        self.blocks: dict[str, _Block] = {}
        self.built: dict[str, HloComputation] = {}
        self.completed: list[HloComputation] = []
        self.building: list[str] = []
        self._split(text)

    def _split(self, text: str) -> None:
        """Finds the module name and each computation's lines; the rest of XLA's text (the
        header's fields, FileNames / FunctionNames / FileLocations / StackFrames) is skipped."""
        current: _Block | None = None
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if current is not None:
                if line == "}":
                    self.blocks[current.name] = current
                    current = None
                elif line:
                    current.lines.append((number, line))
            elif line.startswith("HloModule"):
                match = re.match(r"HloModule\s+([^\s,]+)", line)
                if match is None:
                    raise ValueError(f"HloModule header without a name at line {number}: {line}")
                self.name = match.group(1)
                partitions = re.search(r"num_partitions=(\d+)", line)
                self.num_partitions = int(partitions.group(1)) if partitions else 1
            elif line.endswith("{") and (header := _COMPUTATION_HEADER.match(line)):
                name = header.group(2)
                if name in self.blocks:
                    raise ValueError(f"computation {name!r} is defined twice (line {number})")
                current = _Block(name, bool(header.group(1)), [])
        if current is not None:
            raise ValueError(f"computation {current.name!r} has no closing '}}'")
        if self.name is None:
            raise ValueError("HLO text has no 'HloModule <name>' header")
        if not self.blocks:
            raise ValueError(f"HLO module {self.name} has no computations")

    def module(self) -> HloModule:
        entries = [b.name for b in self.blocks.values() if b.is_entry]
        if len(entries) > 1:
            raise ValueError(f"HLO module {self.name} has several ENTRY computations: {entries}")
        for name in self.blocks:
            self.computation(name)
        entry = self.built[entries[0] if entries else list(self.blocks)[-1]]
        return HloModule(str(self.name), entry, tuple(self.completed), self.num_partitions)

    def computation(self, name: str) -> HloComputation:
        """The computation `name`, built on first use so that callees may follow callers."""
        if name in self.built:
            return self.built[name]
        if name not in self.blocks:
            raise ValueError(f"computation {name!r} is called but not defined")
        if name in self.building:
            raise ValueError(f"computation {name!r} calls itself: {' -> '.join(self.building)}")
        self.building.append(name)
        values: dict[str, HloInstruction] = {}
        root: HloInstruction | None = None
        for number, line in self.blocks[name].lines:
            try:
                inst, is_root = self._instruction(line, values)
            except (ValueError, KeyError, IndexError) as err:
                raise ValueError(f"{err} (in computation {name}, line {number}: {line})") from err
            if inst.name in values:
                raise ValueError(f"instruction %{inst.name} is defined twice in computation "
                                 f"{name} (line {number})")
            values[inst.name] = inst
            if is_root:
                if root is not None:
                    raise ValueError(f"computation {name} has two ROOTs (line {number})")
                root = inst
        if not values:
            raise ValueError(f"computation {name} has no instructions")
        instructions = tuple(values.values())
        comp = HloComputation(name, instructions, root or instructions[-1])
        self.building.pop()
        self.built[name] = comp
        self.completed.append(comp)
        return comp

    def _instruction(self, line: str, values: dict[str, HloInstruction]
                     ) -> tuple[HloInstruction, bool]:
        text = strip_comments(line).strip()
        is_root = text.startswith("ROOT ")
        if is_root:
            text = text[len("ROOT "):].lstrip()
        head = _INSTRUCTION_HEAD.match(text)
        if head is None:
            raise ValueError("expected '%name = shape opcode(operands), attributes'")
        shape, pos = parse_shape(text, head.end())
        opcode_head = _OPCODE_HEAD.match(text, pos)
        if opcode_head is None:
            raise ValueError(f"expected an opcode after the shape at column {pos}")
        opcode = OPCODE_OF_TEXT.get(opcode_head.group(1))
        if opcode is None:
            raise ValueError(f"unknown HLO opcode {opcode_head.group(1)!r}")
        close = find_closing(text, opcode_head.end() - 1)
        inside, rest = text[opcode_head.end():close], text[close + 1:].strip()
        if rest and not rest.startswith(","):
            raise ValueError(f"expected ', attribute=value' after the operands, got {rest!r}")
        attrs: dict[str, Any] = {}
        operands: tuple[HloInstruction, ...] = ()
        if opcode is Opcode.PARAMETER:
            attrs["number"] = int(inside)
        elif opcode is Opcode.CONSTANT:
            attrs["literal"] = parse_literal(inside, shape)
        else:
            operands = tuple(_operand(piece, values) for piece in split_top_level(inside))
        calls = _attributes(opcode, split_top_level(rest[1:]) if rest else [], attrs)
        metadata = parse_metadata(calls.pop("metadata")) if "metadata" in calls else None
        called = self._called(opcode, calls)
        return (HloInstruction(head.group(1), opcode, shape, operands, attrs, called, metadata),
                is_root)

    def _called(self, opcode: Opcode, calls: dict[str, str]) -> tuple[HloComputation, ...]:
        """The called computations in `HloInstruction.called` order."""
        keys: tuple[str, ...] = CALLED_KEYS.get(opcode, ())
        if opcode is Opcode.CONDITIONAL and CONDITIONAL_PRED_KEYS[0] in calls:
            keys = CONDITIONAL_PRED_KEYS
        missing = [key for key in keys if key not in calls]
        if missing:
            raise ValueError(f"{opcode.text} needs the attributes {missing}")
        references = [calls.pop(key) for key in keys]
        for key, value in calls.items():
            if key in CALLED_LIST_KEYS:
                references.extend(split_top_level(value.strip()[1:-1]))
            else:
                references.append(value)
        return tuple(self.computation(ref.strip().lstrip("%")) for ref in references)


def _operand(piece: str, values: dict[str, HloInstruction]) -> HloInstruction:
    """The instruction an operand names: `%a`, `a`, or the older `f32[4]{0} %a`."""
    if not piece:
        raise ValueError("empty operand")
    name = piece.split()[-1].lstrip("%")
    if name not in values:
        raise ValueError(f"operand %{name} is not defined before its use (HLO text is in SSA "
                         f"order: define every value above the instructions that use it)")
    return values[name]


def parse_metadata(text: str) -> OpMetadata:
    """`{op_name="jit(f)/mul" source_file="f.py" source_line=3}` as an `OpMetadata` (XLA's
    other fields, such as op_type or stack_frame_id, are dropped)."""
    fields = {key: json.loads(value) if value.startswith('"') else value
              for key, value in _METADATA_FIELD.findall(text.strip()[1:-1])}
    line = fields.get("source_line", "0")
    return OpMetadata(str(fields.get("op_name", "")), str(fields.get("source_file", "")),
                      int(line) if _INT.fullmatch(str(line)) else 0)


def _attributes(opcode: Opcode, pieces: list[str], attrs: dict[str, Any]) -> dict[str, str]:
    """Fills `attrs` from the `key=value` pieces; returns the called-computation references
    (and the metadata's text under "metadata")."""
    calls: dict[str, str] = {}
    for piece in pieces:
        key, equals, value = (part.strip() for part in piece.partition("="))
        if not equals:
            raise ValueError(f"attribute {piece!r} is not 'key=value'")
        if key in CALLED_ATTRIBUTE_KEYS or key == "metadata":
            calls[key] = value
        elif key == "backend_config" and opcode is Opcode.CUSTOM_CALL:
            attrs[key] = json.loads(value) if value.startswith('"') else value
        elif key in SKIPPED_ATTRIBUTES:
            continue
        elif key == "slice" and opcode is Opcode.SLICE:
            attrs["starts"], attrs["limits"], attrs["strides"] = _parse_slice(value)
        elif key == "padding" and opcode is Opcode.PAD:
            attrs["padding"] = _parse_padding(value)
        elif key == "dimensions" and opcode is Opcode.SORT:
            (attrs["dimension"],) = parse_value(value)
        elif key == "dimensions":
            attrs["dimensions"] = tuple(parse_value(value))
        elif key == "dynamic_slice_sizes" and opcode is Opcode.DYNAMIC_SLICE:
            attrs["sizes"] = tuple(parse_value(value))
        elif key == "window":
            attrs["window"] = parse_window(value)
        elif key == "sharding":
            attrs["sharding"] = parse_sharding(value)
        elif key == "replica_groups" and value.startswith("["):
            attrs["replica_groups"] = iota_replica_groups(value)
        else:
            attrs[ATTR_OF_TEXT_KEY.get(key, key)] = parse_value(value)
    return calls
