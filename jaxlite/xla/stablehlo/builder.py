"""Building jaxlite's HLO module from parsed StableHLO (`parser.Module`): functions become
computations, ops become instructions (the per-op rules are in `ops_parse.py`).

The structural mapping is the printer's (printer.py) read backwards:
- Each function is a computation whose root is its result, or a tuple of its results when
  it has several (as jaxlite lowers `jit`); `@main` is the entry; a `func.call` is an HLO
  `call` (followed by a `get-tuple-element` per result).
- An op with several results is one tuple-shaped instruction and a `get-tuple-element`
  per result (`%0#1`).
- Regions: a reducer or comparator takes its block arguments as parameters; while loop
  conditions and bodies take one tuple, the loop state; the branches of `case` / `if` take
  one tuple of the values they use from the enclosing function (StableHLO's branches
  capture, HLO's take operands). Values a while region captures travel along in its state.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from jaxlite.xla.ir import ComputationBuilder, HloComputation, HloInstruction, HloModule, \
    NameUniquer, reachable_computations
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo.parser import Function, Module, Op, Region


def tuple_shape(shapes: Sequence[Shape]) -> Shape:
    return Shape.tuple(list(shapes))


class ModuleBuilder:
    """Builds every function of a parsed module that `@main` reaches, once each."""

    def __init__(self, module: Module, rules: dict) -> None:
        self.module = module
        self.rules = rules
        self.names = NameUniquer()
        self.computations: dict[str, HloComputation] = {}

    def build(self) -> HloModule:
        if "main" not in self.module.functions:
            raise ValueError("from_stablehlo: the module has no `func.func public @main`")
        entry = FunctionBuilder(self, "main").function(self.module.functions["main"])
        return HloModule(self.module.name, entry, tuple(reachable_computations(entry)))

    def called(self, name: str) -> HloComputation:
        if name not in self.computations:
            function = self.module.functions.get(name)
            if function is None:
                raise ValueError(f"from_stablehlo: func.call of unknown function @{name}")
            self.computations[name] = FunctionBuilder(self, name).function(function)
        return self.computations[name]


class FunctionBuilder:
    """Builds one computation: an environment of SSA names and the instructions so far."""

    def __init__(self, module: ModuleBuilder, name: str) -> None:
        self.module = module
        self.b = ComputationBuilder(name, module.names)
        self.env: dict[str, HloInstruction] = {}

    # ------------------------------------------------------------------ instructions

    def add(self, opcode: Opcode, shape: Shape, operands: Sequence[HloInstruction] = (),
            attrs: dict | None = None, called: Sequence[HloComputation] = ()
            ) -> HloInstruction:
        return self.b.add(opcode, shape, operands, attrs, called)

    def element(self, value: HloInstruction, index: int) -> HloInstruction:
        shape = value.shape.tuple_shapes[index]
        return self.add(Opcode.GET_TUPLE_ELEMENT, shape, [value], {"index": index})

    def tuple(self, values: Sequence[HloInstruction]) -> HloInstruction:
        return self.add(Opcode.TUPLE, tuple_shape([v.shape for v in values]), values)

    def split(self, value: HloInstruction, count: int) -> list[HloInstruction]:
        """The `count` results of a tuple-shaped value (the value itself when one and
        not a tuple)."""
        if not value.shape.is_tuple:
            return [value]
        return [self.element(value, i) for i in range(count)]

    def subcomputation(self, name: str) -> "FunctionBuilder":
        return FunctionBuilder(self.module, name)

    # ------------------------------------------------------------------ functions, regions

    def function(self, function: Function, tuple_root: bool = False) -> HloComputation:
        for value, shape in function.arguments:
            self.env[value] = self.b.parameter(shape, "Arg")
        return self.finish(self.run(function.body.ops), tuple_root)

    def finish(self, results: list[HloInstruction], tuple_root: bool) -> HloComputation:
        root = results[0] if len(results) == 1 and not tuple_root else self.tuple(results)
        return self.b.build(root)

    def run(self, ops: Iterable[Op]) -> list[HloInstruction]:
        """Adds the instructions of `ops`; the values their terminator returns."""
        for op in ops:
            operands = [self.lookup(name, op) for name in op.operands]
            if op.name in ("func.return", "stablehlo.return"):
                return operands
            values = self.op(op, operands)
            if len(values) != len(op.results):
                raise ValueError(f"from_stablehlo: line {op.line}: '{op.name}' gives "
                                 f"{len(values)} values for {len(op.results)} names")
            self.env.update(zip(op.results, values))
        raise ValueError("from_stablehlo: a block without a return")

    def lookup(self, name: str, op: Op) -> HloInstruction:
        try:
            return self.env[name]
        except KeyError:
            raise ValueError(f"from_stablehlo: line {op.line}: '{op.name}' uses {name}, "
                             "which is not defined before it") from None

    def op(self, op: Op, operands: list[HloInstruction]) -> list[HloInstruction]:
        rule = self.module.rules.get(op.name)
        if rule is None:
            raise NotImplementedError(
                f"from_stablehlo: unsupported op '{op.name}' at line {op.line} "
                "(jaxlite.xla.stablehlo.ops_parse.RULES lists the ops it reads)")
        types = op.result_types[len(op.result_types) - len(op.results):]
        try:
            return rule(self, op, operands, types)
        except (KeyError, TypeError, ValueError, IndexError) as err:
            if "from_stablehlo:" in str(err):  # already names the op (a nested region's)
                raise
            raise type(err)(f"from_stablehlo: line {op.line} ('{op.name}'): {err}") from err

    def scalar_region(self, region: Region, name: str) -> HloComputation:
        """A reducer or comparator: each block argument a parameter."""
        sub = self.subcomputation(name)
        for value, shape in region.arguments:
            sub.env[value] = sub.b.parameter(shape, "Arg")
        sub.check_no_captures(region)
        return sub.finish(sub.run(region.ops), tuple_root=False)

    def check_no_captures(self, region: Region) -> None:
        free = free_values(region)
        if free:
            raise NotImplementedError(f"from_stablehlo: a reducer region uses {free[0]} of "
                                      "the enclosing function")

    def state_region(self, region: Region, name: str, state: Sequence[Shape],
                     captured: Sequence[str], passthrough: bool) -> HloComputation:
        """A computation of one tuple parameter: the region's block arguments, then the
        `captured` values; with `passthrough`, it returns the captured values after its
        own results (a loop body keeps them in its state)."""
        sub = self.subcomputation(name)
        param = sub.b.parameter(tuple_shape(state), "state")
        names = [value for value, _ in region.arguments] + list(captured)
        parts = sub.split(param, len(names)) if names else []
        sub.env.update(zip(names, parts))
        results = sub.run(region.ops)
        if passthrough:
            results = results + parts[len(region.arguments):]
            return sub.finish(results, tuple_root=True)
        return sub.finish(results, tuple_root=False)


def free_values(region: Region) -> list[str]:
    """SSA names a region uses but neither defines nor receives, in order of first use."""
    defined = {value for value, _ in region.arguments}
    free: list[str] = []
    for op in region.ops:
        used = list(op.operands)
        for inner in op.regions:
            used += free_values(inner)
        for name in used:
            if name not in defined and name not in free:
                free.append(name)
        defined.update(op.results)
    return free


def build_module(module: Module, rules: dict) -> HloModule:
    """jaxlite's HLO module of a parsed StableHLO module."""
    return ModuleBuilder(module, rules).build()
