"""Reading StableHLO text (what `jax.jit(f).lower(x).as_text()` prints) into `Op` records:
the syntactic half of `from_stablehlo`; `ops_parse.py` turns the records into HLO.

An `Op` holds its result names, op name, operand names, attributes (Python values: ints,
tuples, strings, numpy arrays, or the raw token text of an attribute this parser does not
interpret), regions and result types. Both of MLIR's forms are read:
- the generic form `%r:2 = "stablehlo.op"(%a, %b) <{props}> ({regions}) {attrs} : (T, T)
  -> (T, T)`, which every op has;
- the pretty forms JAX prints: `stablehlo.add %a, %b : T`, keyword clauses (`dims = [0]`,
  `contracting_dims = [1] x [0]`, `LT, ..., SIGNED` enums), `stablehlo.slice %x [1:5, 0:8:2]`,
  `stablehlo.reduce(%x init: %y) applies stablehlo.add across dimensions = [0]`,
  `stablehlo.while(%iterArg = %x) : T cond {...} do {...}`, `stablehlo.convolution(...)
  dim_numbers = ..., window = {...}`, `call @f(%x)`, `stablehlo.custom_call @target(%x)`.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import syntax as S


@dataclasses.dataclass
class Region:
    """A block: its arguments (name and shape) and ops; the last op is its terminator."""
    arguments: list[tuple[str, Shape]]
    ops: list["Op"]


@dataclasses.dataclass
class Op:
    name: str
    results: list[str]
    operands: list[str]
    attrs: dict[str, Any]
    regions: list[Region]
    result_types: list[Shape]
    line: int
    positional: list[Any] = dataclasses.field(default_factory=list)  # bare words, `[..]`


@dataclasses.dataclass
class Function:
    name: str
    arguments: list[tuple[str, Shape]]
    result_types: list[Shape]
    body: Region
    public: bool
    # The attribute dictionary of each argument and result (`{jax.token = true}`, ...).
    argument_attrs: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    result_attrs: list[dict[str, Any]] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Module:
    name: str
    functions: dict[str, Function]


class Parser:
    """Recursive descent over the tokens of one module."""

    def __init__(self, text: str) -> None:
        self.tokens = S.tokenize(text)
        self.pos = 0

    # ------------------------------------------------------------------ tokens

    def peek(self, ahead: int = 0) -> S.Token:
        index = self.pos + ahead
        return self.tokens[index] if index < len(self.tokens) else S.Token("end", "", -1)

    def next(self) -> S.Token:
        token = self.peek()
        if token.kind == "end":
            last = self.tokens[-1].line if self.tokens else 1
            raise SyntaxError(f"StableHLO parser: line {last}: unexpected end of the text")
        self.pos += 1
        return token

    def accept(self, text: str) -> bool:
        if self.peek().text == text:
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> S.Token:
        token = self.next()
        if token.text != text:
            raise SyntaxError(f"StableHLO parser: line {token.line}: expected {text!r}, "
                              f"got {token.text!r}")
        return token

    # ------------------------------------------------------------------ module

    def module(self) -> Module:
        name = "module"
        if self.accept("module"):
            if self.peek().kind == "symbol":
                name = self.next().text[1:].strip('"')
            if self.accept("attributes"):
                self.attribute_dict()
            self.expect("{")
        functions: dict[str, Function] = {}
        while self.peek().text not in ("}", ""):
            if self.peek().text in _SKIPPED_MODULE_OPS:
                self.skip_line()
                continue
            function = self.function()
            functions[function.name] = function
        return Module(name, functions)

    def skip_line(self) -> None:
        line = self.peek().line
        while self.peek().line == line:
            self.next()

    def function(self) -> Function:
        self.expect("func.func")
        public = True
        if self.peek().text in ("public", "private"):
            public = self.next().text == "public"
        name = self.next().text[1:].strip('"')
        self.expect("(")
        arguments, argument_attrs = [], []
        while not self.accept(")"):
            value = self.next().text
            self.expect(":")
            arguments.append((value, self.type()))
            argument_attrs.append(self.attribute_dict() if self.peek().text == "{" else {})
            self.accept(",")
        results: list[Shape] = []
        result_attrs: list[dict[str, Any]] = []
        if self.accept("->"):
            results = self.result_type_list(result_attrs)
        if self.accept("attributes"):
            self.attribute_dict()
        return Function(name, arguments, results, self.region(arguments), public,
                        argument_attrs, result_attrs)

    def result_type_list(self, attrs: list[dict[str, Any]] | None = None) -> list[Shape]:
        """`T` or `(T {attrs}, T)`; each result's attributes (jax.result_info and the like)
        are appended to `attrs` when given."""
        attrs = [] if attrs is None else attrs
        if not self.accept("("):
            attrs.append({})
            return [self.type()]
        results = []
        while not self.accept(")"):
            results.append(self.type())
            attrs.append(self.attribute_dict() if self.peek().text == "{" else {})
            self.accept(",")
        return results

    def region(self, arguments: list[tuple[str, Shape]] | None = None) -> Region:
        """`{ ^bb0(%a: T): ops }` (the block label left out when it has no arguments)."""
        self.expect("{")
        arguments = list(arguments or [])
        if self.peek().kind == "block":
            self.next()
            if self.accept("("):
                while not self.accept(")"):
                    value = self.next().text
                    self.expect(":")
                    arguments.append((value, self.type()))
                    self.accept(",")
            self.expect(":")
        ops = []
        while not self.accept("}"):
            ops.append(self.op())
        return Region(arguments, ops)

    # ------------------------------------------------------------------ types, attributes

    def type(self) -> Shape:
        return S.parse_type(self.next().text)

    def type_list(self) -> list[Shape]:
        types = [self.type()]
        while self.peek().text == "," and S.is_type(self.peek(1).text):
            self.next()
            types.append(self.type())
        return types

    def signature(self) -> list[Shape]:
        """The result types of `: (T, T) -> T`, `: T -> T`, `: T, T` (the result types
        last) or `: T`."""
        if self.peek().text == "(":
            self.next()
            while not self.accept(")"):
                self.type()
                self.accept(",")
            self.expect("->")
            return self.result_type_list()
        types = self.type_list()
        if self.accept("->"):
            return self.result_type_list()
        return types

    def attribute_dict(self) -> dict[str, Any]:
        """`{key = value, ...}` (a bare key is a unit attribute, True)."""
        self.expect("{")
        attrs: dict[str, Any] = {}
        while not self.accept("}"):
            key = self.next().text.strip('"')
            attrs[key] = self.value() if self.accept("=") else True
            self.accept(",")
        return attrs

    def value(self) -> Any:
        """One attribute value; `[1] x [0]` pairs and `value : type` are read whole."""
        token = self.next()
        text = token.text
        if text == "[":
            items = []
            while not self.accept("]"):
                items.append(self.value())
                self.accept(",")
            result: Any = tuple(items)
        elif text == "{":
            self.pos -= 1
            result = self.attribute_dict()
        elif token.kind == "number":
            result = float(text) if any(c in text for c in ".eE") and "0x" not in text \
                else int(text, 0)
        elif token.kind == "string":
            result = S.unquote(text)
        elif text in ("true", "false"):
            result = text == "true"
        elif text.startswith("array<"):
            result = S.parse_int_array(text)
        elif text.startswith("#stablehlo<") or text.startswith("#chlo<"):
            result = S.parse_enum(text)
        elif text.startswith("dense<"):
            self.expect(":")
            return S.parse_dense(text, self.type())
        else:
            result = text  # a symbol, enum word, struct or unknown attribute: raw text
        if self.peek().text == "x" and self.peek(1).text == "[":
            self.next()
            return (result, self.value())
        if self.peek().text == ":" and self.peek(1).kind == "word" and \
                not S.is_type(self.peek(1).text):
            self.pos += 2  # `1 : i64`: the number keeps its type
            if isinstance(result, (int, float)) and not isinstance(result, bool):
                result = S.typed_number(result, self.peek(-1).text)
        return result

    # ------------------------------------------------------------------ ops

    def op(self) -> Op:
        line = self.peek().line
        results = self.result_names()
        token = self.next()
        if token.kind == "string":
            op = self.generic(S.unquote(token.text), results, line)
        else:
            op = self.pretty(token.text, results, line)
        if op.name.startswith("func.") and op.name not in ("func.call", "func.return"):
            raise NotImplementedError(f"StableHLO parser: line {line}: op '{op.name}'")
        return op

    def result_names(self) -> list[str]:
        if not (self.peek().kind == "value" and self.peek(1).text in ("=", ",", ":")):
            return []
        names = []
        while True:
            base = self.next().text
            if self.accept(":"):
                names += [f"{base}#{i}" for i in range(int(self.next().text))]
            else:
                names.append(base)
            if not self.accept(","):
                break
        self.expect("=")
        return names

    def generic(self, name: str, results: list[str], line: int) -> Op:
        self.expect("(")
        operands = self.value_list(")")
        attrs: dict[str, Any] = {}
        if self.accept("<"):
            attrs.update(self.attribute_dict())
            self.expect(">")
        regions = []
        if self.accept("("):
            while not self.accept(")"):
                regions.append(self.region())
                self.accept(",")
        if self.peek().text == "{":
            attrs.update(self.attribute_dict())
        self.expect(":")
        return Op(name, results, operands, attrs, regions, self.signature(), line)

    def value_list(self, close: str) -> list[str]:
        values = []
        while not self.accept(close):
            token = self.next()
            if token.kind != "value":
                raise SyntaxError(f"StableHLO parser: line {token.line}: expected a value "
                                  f"(%name) or {close!r}, got {token.text!r}")
            values.append(token.text)
            self.accept(",")
        return values

    def pretty(self, name: str, results: list[str], line: int) -> Op:
        name = "func.call" if name == "call" else name
        name = "func.return" if name == "return" else name
        op = Op(name, results, [], {}, [], [], line)
        special = _PRETTY_HEADS.get(name)
        if special is not None:
            special(self, op)
        else:
            self.clauses(op)
        if self.peek().text == "{" and self.peek().line == line:
            op.attrs.update(self.attribute_dict())
        if self.peek().line == line and self.accept(":"):
            op.result_types = self.signature()
        if name == "stablehlo.while":
            arguments = list(zip(op.attrs.pop("iter_args"), op.result_types))
            self.expect("cond")
            op.regions.append(self.region(arguments))
            self.expect("do")
            op.regions.append(self.region(arguments))
        if name == "stablehlo.reduce" and self.peek().text == "reducer":
            op.regions.append(self.reducer_region())
        return op

    def clauses(self, op: Op) -> None:
        """`%a, %b, key = value, WORD, [..]` up to the `:` of the type or an attribute
        dictionary, on the op's line."""
        while self.peek().text not in (":", "{", "", "}") and self.peek().line == op.line:
            token = self.peek()
            if token.kind == "value":
                op.operands.append(self.next().text)
            elif token.kind == "word" and self.peek(1).text == "=":
                self.pos += 2
                op.attrs[token.text] = self.value()
            elif token.text == "[":
                op.positional.append(self.raw_brackets())
            elif token.kind == "word" and not token.text.startswith("dense<"):
                op.positional.append(self.next().text)
            else:
                op.positional.append(self.value())
            self.accept(",")

    def raw_brackets(self) -> str:
        start, depth = self.pos, 0
        while True:
            depth += {"[": 1, "]": -1}.get(self.next().text, 0)
            if depth == 0:
                return " ".join(t.text for t in self.tokens[start:self.pos])

    def reducer_region(self) -> Region:
        """`reducer(%a: T, %c: T) (%b: T, %d: T) {...}`: a pair of arguments per input."""
        self.expect("reducer")
        pairs = []
        while self.accept("("):
            pair = []
            while not self.accept(")"):
                value = self.next().text
                self.expect(":")
                pair.append((value, self.type()))
                self.accept(",")
            pairs.append(pair)
        arguments = [p[0] for p in pairs] + [p[1] for p in pairs]
        return self.region(arguments)


def _reduce_head(p: Parser, op: Op) -> None:
    inits = []
    while p.accept("("):
        op.operands.append(p.next().text)
        p.expect("init")
        p.expect(":")
        inits.append(p.next().text)
        p.expect(")")
        p.accept(",")
    op.operands += inits
    if p.accept("applies"):
        op.attrs["applies"] = p.next().text
    p.expect("across")
    p.expect("dimensions")
    p.expect("=")
    op.attrs["dimensions"] = p.value()


def _while_head(p: Parser, op: Op) -> None:
    p.expect("(")
    op.attrs["iter_args"] = []  # the names of the regions' arguments
    while not p.accept(")"):
        op.attrs["iter_args"].append(p.next().text)
        p.expect("=")
        op.operands.append(p.next().text)
        p.accept(",")


def _convolution_head(p: Parser, op: Op) -> None:
    p.expect("(")
    op.operands += p.value_list(")")
    p.expect("dim_numbers")
    p.expect("=")
    start = p.pos
    while not (p.peek().text == "," and p.peek(1).text == "window"):
        p.next()
    op.attrs["dim_labels"] = S.conv_dim_labels(" ".join(t.text for t in p.tokens[start:p.pos]))
    p.expect(",")
    p.expect("window")
    p.expect("=")
    op.attrs["window"] = p.attribute_dict()


def _sharding_head(p: Parser, op: Op) -> None:
    """`sdy.sharding_constraint %x <@mesh, [{"a"}, {}]>`: the value; the sharding, which
    means nothing on one device, is skipped."""
    op.operands.append(p.next().text)
    depth = 0
    while True:
        depth += {"<": 1, ">": -1}.get(p.next().text, 0)
        if depth == 0:
            return


def _call_head(p: Parser, op: Op) -> None:
    op.attrs["callee"] = p.next().text[1:].strip('"')
    p.expect("(")
    op.operands += p.value_list(")")


def _paren_head(p: Parser, op: Op) -> None:
    """`chlo.top_k(%x, k = 2)`."""
    p.expect("(")
    while not p.accept(")"):
        if p.peek().kind == "value":
            op.operands.append(p.next().text)
        else:
            key = p.next().text
            p.expect("=")
            op.attrs[key] = p.value()
        p.accept(",")


_PRETTY_HEADS = {
    "stablehlo.reduce": _reduce_head, "stablehlo.while": _while_head,
    "stablehlo.convolution": _convolution_head, "func.call": _call_head,
    "stablehlo.custom_call": _call_head, "chlo.top_k": _paren_head,
    "sdy.sharding_constraint": _sharding_head, "sdy.reshard": _sharding_head,
}

# Module-level ops that only describe the devices (a mesh of one device here).
_SKIPPED_MODULE_OPS = ("sdy.mesh",)


def parse(text: str) -> Module:
    """The functions of a StableHLO module's text."""
    return Parser(text).module()
