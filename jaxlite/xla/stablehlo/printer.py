"""Printing an HLO module as StableHLO in MLIR's text form (what `jax.jit(f).lower(x)
.as_text()` prints).

```
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<f32>) {
    %0 = stablehlo.sine %arg0 : tensor<4xf32>
    %1 = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %3 = stablehlo.add %arg1, %arg2 : tensor<f32>
      "stablehlo.return"(%3) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %2 : tensor<f32>
  }
}
```

How HLO's structure maps onto StableHLO's:
- Tuples do not exist as values: every HLO value is a list of SSA values, one per array
  leaf of its shape (`tuple` and `get-tuple-element` only regroup names; nothing is printed).
  A tuple-shaped root becomes several results; a while loop carries the leaves of its state.
- Computations that an op applies (reducers, comparators, loop conditions and bodies,
  branches) are written inline as the op's regions; `call` and `fusion` call a
  `func.func private` of their computation instead. Branches of `stablehlo.case` /
  `stablehlo.if` use their operands' values from the enclosing block, as StableHLO's
  branches take no arguments.
- Ops with StableHLO's short form for same-typed operands (`stablehlo.add %0, %1 :
  tensor<4xf32>`) and constants print in the short ("pretty") form; every other op in
  MLIR's generic form (`"stablehlo.op"(operands) <{properties}> ({regions}) : type`),
  which MLIR's parser reads for any op.
- SSA names are fresh per function (`%0`, `%1`, ...; block arguments `%argN`), so one
  computation inlined in several places never clashes with itself.
"""
from __future__ import annotations

import re
from typing import Callable, Mapping, Sequence

from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import types as T

# An MLIR symbol (`@main`) written bare; any other name is quoted.
_BARE_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")

# Values of one HLO instruction: one SSA name per array leaf of its shape.
Leaves = list[str]

_INDENT = "  "


class FunctionWriter:
    """Writes the body of one `func.func`: fresh SSA names, their shapes and types,
    indented lines."""

    def __init__(self, module: "ModuleWriter", depth: int = 2) -> None:
        self.module = module
        self.lines: list[str] = []
        self.shapes: dict[str, Shape] = {}
        self.types: dict[str, str] = {}
        self._depth = depth
        self._next_value = 0
        self._next_arg = 0

    # ------------------------------------------------------------------ values and lines

    def line(self, text: str) -> None:
        self.lines.append(_INDENT * self._depth + text)

    def block_arguments(self, shapes: Sequence[Shape]) -> Leaves:
        """Fresh `%argN` names for arrays of `shapes`."""
        names = []
        for shape in shapes:
            name = f"%arg{self._next_arg}"
            self._next_arg += 1
            self.shapes[name], self.types[name] = shape, T.tensor_type(shape)
            names.append(name)
        return names

    def _results(self, shapes: Sequence[Shape]) -> tuple[str, Leaves]:
        """The `%5 = ` / `%5:2 = ` prefix of an op and the names of its results."""
        if not shapes:
            return "", []
        base = f"%{self._next_value}"
        self._next_value += 1
        if len(shapes) == 1:
            names = [base]
            prefix = f"{base} = "
        else:
            names = [f"{base}#{i}" for i in range(len(shapes))]
            prefix = f"{base}:{len(shapes)} = "
        for name, shape in zip(names, shapes):
            self.shapes[name], self.types[name] = shape, T.tensor_type(shape)
        return prefix, names

    # ------------------------------------------------------------------ ops

    def generic(self, op: str, operands: Sequence[str], results: Sequence[Shape],
                properties: Mapping[str, str] | None = None,
                regions: Sequence[Callable[[], None]] = (),
                attributes: Mapping[str, str] | None = None) -> Leaves:
        """`%r = "op"(operands) <{properties}> ({regions}) {attributes} : type`.

        Each region is a callable that writes the region's lines (see `region`)."""
        prefix, names = self._results(results)
        head = f'{prefix}"{op}"({", ".join(operands)})'
        if properties:
            head += " <{" + _dictionary(properties) + "}>"
        signature = T.function_type([self.types[o] for o in operands],
                                    [self.types[n] for n in names])
        tail = (" {" + _dictionary(attributes) + "}" if attributes else "") + " : " + signature
        if not regions:
            self.line(head + tail)
            return names
        self.line(head + " ({")
        for i, write in enumerate(regions):
            if i:
                self.line("}, {")
            self._depth += 1
            write()
            self._depth -= 1
        self.line("})" + tail)
        return names

    def same_type(self, op: str, operands: Sequence[str], result: Shape) -> Leaves:
        """`%r = stablehlo.add %a, %b : tensor<4xf32>`: StableHLO's short form, for ops whose
        operands and result have one type (else the generic form)."""
        result_type = T.tensor_type(result)
        if any(self.types[o] != result_type for o in operands):
            return self.generic(op, operands, [result])
        prefix, names = self._results([result])
        self.line(f"{prefix}{op} {', '.join(operands)} : {result_type}")
        return names

    def constant(self, literal: str, shape: Shape) -> Leaves:
        prefix, names = self._results([shape])
        self.line(f"{prefix}stablehlo.constant {literal} : {T.tensor_type(shape)}")
        return names

    def terminator(self, op: str, values: Sequence[str]) -> None:
        types = [self.types[v] for v in values]
        self.line(f'"{op}"({", ".join(values)}) : ({", ".join(types)}) -> ()')

    # ------------------------------------------------------------------ computations

    def region(self, comp: HloComputation, captured: Sequence[Leaves] | None = None
               ) -> Callable[[], None]:
        """A region that computes `comp`: its parameters are block arguments (flattened),
        or, with `captured`, the enclosing block's values for each parameter."""
        if captured is not None:
            return lambda: self.terminator("stablehlo.return", self.computation(
                comp, [list(leaves) for leaves in captured]))
        leaf_shapes = [T.leaf_shapes(p.shape) for p in comp.parameters]

        def body(args: Leaves) -> Leaves:
            params, start = [], 0
            for shapes in leaf_shapes:  # regroup the flat arguments per parameter
                params.append(args[start:start + len(shapes)])
                start += len(shapes)
            return self.computation(comp, params)
        return self.block([s for shapes in leaf_shapes for s in shapes], body)

    def block(self, shapes: Sequence[Shape], body: Callable[[Leaves], Leaves]
              ) -> Callable[[], None]:
        """A region whose block arguments have `shapes` and whose results `body` writes
        (given the arguments), then returns."""
        def write() -> None:
            args = self.block_arguments(shapes)
            typed = [f"{n}: {self.types[n]}" for n in args]
            self._depth -= 1  # MLIR writes block labels one step out
            self.line(f"^bb0({', '.join(typed)}):")
            self._depth += 1
            self.terminator("stablehlo.return", body(args))
        return write

    def computation(self, comp: HloComputation, params: Sequence[Leaves]) -> Leaves:
        """Write `comp`'s instructions with its parameters bound to `params`; the values
        of its root."""
        env: dict[HloInstruction, Leaves] = {}
        for inst in comp.instructions:
            if inst.opcode is Opcode.PARAMETER:
                env[inst] = list(params[inst.attr("number")])
            else:
                env[inst] = self.instruction(inst, [env[o] for o in inst.operands])
        return env[comp.root]

    def instruction(self, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
        rule = self.module.rules.get(inst.opcode)
        if rule is None:
            raise NotImplementedError(
                f"StableHLO printer: no rule for HLO opcode '{inst.opcode.text}' "
                f"(instruction %{inst.name}); jaxlite.xla.stablehlo.ops.RULES lists the "
                "opcodes it prints")
        try:
            return rule(self, inst, operands)
        except (KeyError, TypeError, ValueError) as err:
            raise type(err)(f"StableHLO printer: instruction %{inst.name} "
                            f"({inst.opcode.text}): {err}") from err


class ModuleWriter:
    """Writes a module: `main`, then a private function per called computation."""

    def __init__(self, rules: Mapping[Opcode, Callable[..., Leaves]]) -> None:
        self.rules = rules
        self._symbols: dict[int, str] = {}
        self._pending: list[tuple[HloComputation, str]] = []
        self._taken = {"main"}

    def symbol(self, comp: HloComputation) -> str:
        """`@name` of the private function computing `comp` (written once, after main)."""
        if id(comp) not in self._symbols:
            name = base = comp.name
            counter = 0
            while name in self._taken:
                counter += 1
                name = f"{base}_{counter}"
            self._taken.add(name)
            self._symbols[id(comp)] = _symbol(name)
            self._pending.append((comp, self._symbols[id(comp)]))
        return self._symbols[id(comp)]

    def module(self, module: HloModule) -> str:
        attributes = {"mhlo.num_partitions": "1 : i32", "mhlo.num_replicas": "1 : i32",
                      **self.module_attributes(module)}
        lines = [f"module {_symbol(module.name)} attributes {{{_dictionary(attributes)}}} {{"]
        lines += self.function(module.entry, "@main", "public")
        while self._pending:
            comp, name = self._pending.pop(0)
            lines += self.function(comp, name, "private")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def module_attributes(self, module: HloModule) -> dict[str, str]:
        """Attributes of the module beyond the partition and replica counts (none here)."""
        return {}

    def prologue(self, writer: FunctionWriter, params: Sequence[Leaves]) -> None:
        """Lines that `@main` begins with, before its computation (none here)."""

    def function(self, comp: HloComputation, symbol: str, visibility: str) -> list[str]:
        writer = FunctionWriter(self)
        params = [writer.block_arguments(T.leaf_shapes(p.shape)) for p in comp.parameters]
        if symbol == "@main":
            self.prologue(writer, params)
        results = writer.computation(comp, params)
        inputs = ", ".join(f"{n}: {writer.types[n]}" for leaves in params for n in leaves)
        result_types = [writer.types[r] for r in results]
        head = (f"{_INDENT}func.func {visibility} {symbol}({inputs}) -> "
                f"({', '.join(result_types)}) {{")
        ret = f"{_INDENT * 2}return"
        if results:
            ret += f" {', '.join(results)} : {', '.join(result_types)}"
        return [head, *writer.lines, ret, _INDENT + "}"]


def _dictionary(entries: Mapping[str, str]) -> str:
    return ", ".join(f"{key} = {value}" for key, value in sorted(entries.items()))


def _symbol(name: str) -> str:
    return "@" + (name if _BARE_SYMBOL.fullmatch(name) else T.string(name))
