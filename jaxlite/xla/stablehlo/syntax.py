"""Reading MLIR's text form: tokens, attribute values, types and `dense<...>` literals (the
lexical half of the StableHLO parser; `parser.py` reads ops and regions from these tokens).

Angle-bracketed parts (`tensor<4xf32>`, `dense<[1, 2]>`, `#stablehlo<comparison_direction
LT>`, `#stablehlo.conv<[b, 0, 1, f]x[...]->[...]>`) are single tokens, read again by the
functions here when a value is needed. Source locations (`loc(...)`, `#loc` aliases) are
dropped by the tokenizer.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Iterator

import numpy as np

from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo.types import dtype_of_element_type

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<value>%[A-Za-z0-9_$.\-]+(?:\#\d+)?)
  | (?P<symbol>@(?:[A-Za-z0-9_$.\-]+|"(?:[^"\\]|\\.)*"))
  | (?P<block>\^[A-Za-z0-9_]+)
  | (?P<word>[\#!]?[A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<number>[-+]?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))
  | (?P<punct>->|[()\[\]{}<>,:=*?x])
""", re.VERBOSE)

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_LOC_ALIAS = re.compile(r"^#loc\d*\s*=.*$", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Token:
    kind: str
    text: str
    line: int


def _angle_end(text: str, start: int) -> int:
    """Index after the `>` closing the `<` at `start` (`->` and strings do not count)."""
    depth, i = 0, start
    while i < len(text):
        char = text[i]
        if char == '"':
            i = _STRING.match(text, i).end()
            continue
        if char == "-" and text.startswith("->", i):
            i += 1
        elif char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise SyntaxError(f"StableHLO parser: unclosed '<' at offset {start}")


def tokenize(text: str) -> list[Token]:
    """The tokens of MLIR text, without locations; a word directly followed by `<...>`
    (a type or attribute) is one token."""
    text = _LOC_ALIAS.sub("", text)
    tokens: list[Token] = []
    pos, line = 0, 1
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise SyntaxError(f"StableHLO parser: line {line}: unexpected character "
                              f"{text[pos]!r}")
        kind, end = match.lastgroup, match.end()
        if kind == "word" and end < len(text) and text[end] == "<":
            end = _angle_end(text, end)
        if kind != "space":
            tokens.append(Token(kind, text[pos:end], line))
        line += text.count("\n", pos, end)
        pos = end
    return _without_locations(tokens)


def _without_locations(tokens: list[Token]) -> list[Token]:
    kept: list[Token] = []
    i = 0
    while i < len(tokens):
        if tokens[i].text == "loc" and i + 1 < len(tokens) and tokens[i + 1].text == "(":
            depth, i = 0, i + 1
            while True:
                depth += {"(": 1, ")": -1}.get(tokens[i].text, 0)
                i += 1
                if depth == 0:
                    break
            continue
        kept.append(tokens[i])
        i += 1
    return kept


# ----------------------------------------------------------------------------- types

_DIMS = re.compile(r"((?:(?:\d+|\?)x)*)(.*)", re.DOTALL)
# A dynamic dimension (`tensor<?x4xf32>`, as JAX prints shape-polymorphic modules): known
# once the arguments' shapes are (`refinement.py`).
DYNAMIC = -1


# jaxlite has no token type: a token is an empty bool array, as `jaxlite.lax.create_token`
# makes it (side effects keep program order, so a token only has to flow).
TOKEN_TYPE = "!stablehlo.token"
TOKEN_SHAPE = Shape(np.dtype(np.bool_), (0,))


def is_type(text: str) -> bool:
    """Whether the token `text` is a type (tensor, tuple or token)."""
    return text.startswith(("tensor<", "tuple<")) or text == TOKEN_TYPE


def parse_type(text: str) -> Shape:
    """The Shape of a tensor type, of `tuple<T, ...>` (a tuple shape) or of
    `!stablehlo.token` (an empty bool array, TOKEN_SHAPE)."""
    if text == TOKEN_TYPE:
        return TOKEN_SHAPE
    if text.startswith("tuple<") and text.endswith(">"):
        # each element type is one token (a word with its `<...>`)
        parts = [token.text for token in tokenize(text[6:-1]) if token.text != ","]
        return Shape.tuple([parse_type(part) for part in parts])
    return parse_tensor_type(text)


def parse_tensor_type(text: str) -> Shape:
    """The Shape of `tensor<3x4xf32>` (`tensor<f32>` for a scalar)."""
    if not (text.startswith("tensor<") and text.endswith(">")):
        raise NotImplementedError(f"StableHLO parser: type {text} is not a tensor, tuple "
                                  "or token type")
    inner = text[len("tensor<"):-1]
    match = _DIMS.match(inner)
    dims = tuple(DYNAMIC if d == "?" else int(d) for d in match.group(1).split("x") if d)
    element = match.group(2).split(",")[0].strip()  # drop a trailing encoding
    if element == "index":  # layouts and other attributes of machine-sized integers
        return Shape(np.dtype(np.int64), dims)
    return Shape(dtype_of_element_type(element), dims)


# ----------------------------------------------------------------------------- literals

_LITERAL_TOKEN = re.compile(r'\s*("0x[0-9A-Fa-f]*"|[\[\](),]|true|false|'
                            r'[-+]?(?:0x[0-9A-Fa-f]+|inf|nan|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?))')


def parse_dense(text: str, shape: Shape) -> np.ndarray:
    """The array of `dense<...>` (the attribute's text) as an array of `shape`."""
    inner = text[len("dense<"):-1].strip()
    dtype = np.dtype(shape.dtype)
    if not inner:
        return np.zeros(shape.dims, dtype)
    if inner.startswith('"0x'):
        raw = np.frombuffer(bytes.fromhex(inner[3:-1]), dtype.newbyteorder("<"))
        if raw.size == 1:  # a splat
            return np.full(shape.dims, raw.astype(dtype)[0], dtype)
        return raw.astype(dtype).reshape(shape.dims)
    tokens = [m.group(1) for m in _LITERAL_TOKEN.finditer(inner)]
    nested, _ = _literal_node(tokens, 0)
    values = _flatten(nested)
    array = np.array([_element(v, dtype) for v in values], dtype).reshape(-1)
    if array.size == 1:
        return np.full(shape.dims, array[0], dtype)
    return array.reshape(shape.dims)


def _literal_node(tokens: list[str], i: int) -> tuple[Any, int]:
    if tokens[i] in "[(":
        close, items, i = "]" if tokens[i] == "[" else ")", [], i + 1
        while tokens[i] != close:
            item, i = _literal_node(tokens, i)
            items.append(item)
            if tokens[i] == ",":
                i += 1
        return (tuple(items) if close == ")" else items), i + 1
    return tokens[i], i + 1


def _flatten(node: Any) -> Iterator[Any]:
    if isinstance(node, list):
        for item in node:
            yield from _flatten(item)
    else:
        yield node


def _element(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, tuple):  # a complex number (real, imag)
        part = np.float32 if dtype.itemsize == 8 else np.float64
        return complex(_element(value[0], np.dtype(part)), _element(value[1], np.dtype(part)))
    if value in ("true", "false"):
        return value == "true"
    if value.lstrip("-+").startswith("0x") and dtype.kind not in "iub":
        bits = np.array(int(value, 16), np.uint64).astype(f"u{dtype.itemsize}")
        return bits.view(dtype)[()]
    if dtype.kind in "iub":
        return int(value, 0)
    return float(value)


# ----------------------------------------------------------------------------- attributes

def parse_enum(text: str) -> str:
    """`LT` of `#stablehlo<comparison_direction LT>`."""
    return text[text.index("<") + 1:-1].split()[-1]


def parse_int_array(text: str) -> tuple:
    """`(1, 2)` of `array<i64: 1, 2>`, `(True,)` of `array<i1: true>`."""
    inner = text[text.index("<") + 1:-1]
    _, _, items = inner.partition(":")
    values = [v.strip() for v in items.split(",") if v.strip()]
    return tuple(v == "true" if v in ("true", "false") else int(v) for v in values)


def parse_struct(text: str) -> dict[str, Any]:
    """`{'offset_dims': (1,), 'index_vector_dim': 1}` of `#stablehlo.gather<offset_dims =
    [1], index_vector_dim = 1>`."""
    inner = text[text.index("<") + 1:-1]
    fields: dict[str, Any] = {}
    for key, value in re.findall(r"(\w+)\s*=\s*(\[[^\]]*\]|[-\w]+)", inner):
        fields[key] = tuple(int(v) for v in value[1:-1].split(",") if v.strip()) \
            if value.startswith("[") else int(value)
    return fields


def conv_dim_labels(text: str) -> str:
    """HLO's `b01f_01io->b01f` from `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`."""
    lhs_rhs, _, out = text.replace(" ", "").partition("->")
    lhs, _, rhs = lhs_rhs.partition("]x[")
    labels = [part.strip("[]").replace(",", "") for part in (lhs, rhs, out)]
    return f"{labels[0]}_{labels[1]}->{labels[2]}"


class TypedInt(int):
    """An integer attribute written with its type (`3 : i64`); `element_type` is the type."""

    element_type: str


class TypedFloat(float):
    """A float attribute written with its type (`1.0E-5 : f32`)."""

    element_type: str


def typed_number(value: int | float, element_type: str) -> int | float:
    """`value : element_type` as a TypedInt or TypedFloat (a float written as its bits,
    `0x3727C5AC : f32`, becomes the float); other types leave the value as it is."""
    try:
        dtype = dtype_of_element_type(element_type)
    except ValueError:
        return value
    if dtype.kind == "f" and isinstance(value, int):
        unsigned = np.dtype(f"u{dtype.itemsize}")
        value = float(np.asarray(value, unsigned).view(dtype))
    typed: TypedInt | TypedFloat
    if dtype.kind == "f":
        typed = TypedFloat(value)
    elif dtype.kind in "iu":
        typed = TypedInt(value)
    else:
        return value
    typed.element_type = element_type
    return typed


def unquote(text: str) -> str:
    """The value of an MLIR string literal (`\\22` style hex escapes included)."""
    body = text[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        if body[i] == "\\":
            nxt = body[i + 1]
            if nxt in '"\\':
                out += nxt.encode()
                i += 2
                continue
            escape = {"n": b"\n", "t": b"\t"}.get(nxt)
            if escape is not None:
                out += escape
                i += 2
                continue
            out.append(int(body[i + 1:i + 3], 16))
            i += 3
        else:
            out += body[i].encode()
            i += 1
    return out.decode("utf-8")
