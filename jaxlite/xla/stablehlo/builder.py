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

from typing import Callable, Iterable, Sequence

import numpy as np

from jaxlite.xla.ir import ComputationBuilder, HloComputation, HloInstruction, HloModule, \
    NameUniquer, reachable_computations
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo.parser import Function, Module, Op, Region
from jaxlite.xla.stablehlo.syntax import DYNAMIC, TOKEN_SHAPE


# refine(fb, op, operands, types) -> the op's result types without `?` sizes
Refine = Callable[["FunctionBuilder", Op, list[HloInstruction], Sequence[Shape]], list[Shape]]


def tuple_shape(shapes: Sequence[Shape]) -> Shape:
    return Shape.tuple(list(shapes))


class ModuleBuilder:
    """Builds every function of a parsed module that `@main` reaches, once each."""

    def __init__(self, module: Module, rules: dict, refine: Refine | None = None,
                 argument_shapes: Sequence[Shape] | None = None) -> None:
        self.module = module
        self.rules = rules
        self.refine = refine  # gives ops with `?` sizes their result types (refinement.py)
        self.argument_shapes = argument_shapes
        self.names = NameUniquer()
        self.computations: dict[tuple, HloComputation] = {}

    def build(self) -> HloModule:
        if "main" not in self.module.functions:
            raise ValueError("from_stablehlo: the module has no `func.func public @main`")
        entry = FunctionBuilder(self, "main").function(
            self.module.functions["main"], entry=True, shapes=self.argument_shapes)
        return HloModule(self.module.name, entry, tuple(reachable_computations(entry)))

    def called(self, name: str, operand_shapes: Sequence[Shape] = (),
               known: tuple[tuple[int, int], ...] = ()) -> HloComputation:
        """The computation of function `name` (one per shape of its operands when its
        arguments have `?` sizes; `known` (argument index, value) pairs are arguments whose
        values are known while reading, the dimension variables JAX passes)."""
        function = self.module.functions.get(name)
        if function is None:
            raise ValueError(f"from_stablehlo: func.call of unknown function @{name}")
        dynamic = any(DYNAMIC in shape.dims for _, shape in function.arguments
                      if not shape.is_tuple)
        key = (name, tuple(operand_shapes), known) if dynamic or known else (name,)
        if key not in self.computations:
            self.computations[key] = FunctionBuilder(self, name).function(
                function, shapes=operand_shapes if dynamic else None, known=dict(known))
        return self.computations[key]


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

    def function(self, function: Function, tuple_root: bool = False, entry: bool = False,
                 shapes: Sequence[Shape] | None = None, known: dict[int, int] | None = None
                 ) -> HloComputation:
        """The computation of `function`. In the `entry` function, the tokens that JAX
        threads through for ordered effects (arguments and results marked
        `jax.token = true`) are left out of the signature: jaxlite keeps effects in
        program order, so the caller has no token to pass, and the function makes its own.
        Tuple-typed arguments and results of the entry are flattened to their arrays (as
        jaxlite's printer writes them), so that callers pass and get arrays. `shapes`, when
        given, are the arguments' shapes (effect tokens left out), for `?`-sized ones;
        `known` maps arguments to the values they are known to have."""
        effect_args = _effect_tokens(function.argument_attrs) if entry else set()
        given = iter(shapes) if shapes is not None else None
        for i, (value, shape) in enumerate(function.arguments):
            if given is not None and i not in effect_args:
                shape = next(given)
            if i in effect_args:
                self.env[value] = self.token()
            else:
                self.env[value] = self.flat_parameter(shape) if entry \
                    else self.b.parameter(shape, "Arg")
            if known and i in known:  # read as the constant it is
                self.env[value] = self.add(Opcode.CONSTANT, shape, (), {
                    "literal": np.asarray(known[i], shape.dtype)})
        results = self.run(function.body.ops)
        if entry:
            dropped = _effect_tokens(function.result_attrs)
            results = [leaf for i, r in enumerate(results) if i not in dropped
                       for leaf in self.leaves(r)]
        return self.finish(results, tuple_root)

    def flat_parameter(self, shape: Shape) -> HloInstruction:
        """A parameter per array of `shape`, tupled again when it is a tuple."""
        if not shape.is_tuple:
            return self.b.parameter(shape, "Arg")
        return self.tuple([self.flat_parameter(part) for part in shape.tuple_shapes])

    def leaves(self, value: HloInstruction) -> list[HloInstruction]:
        """The arrays of a (possibly nested) tuple-shaped value, depth first."""
        if not value.shape.is_tuple:
            return [value]
        return [leaf for i in range(len(value.shape.tuple_shapes))
                for leaf in self.leaves(self.element(value, i))]

    def token(self) -> HloInstruction:
        """A new token (jaxlite's tokens are empty bool arrays, `syntax.TOKEN_SHAPE`)."""
        return self.add(Opcode.CONSTANT, TOKEN_SHAPE, (),
                        {"literal": np.zeros(TOKEN_SHAPE.dims, np.bool_)})

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
            if self.module.refine is not None and any(
                    DYNAMIC in t.dims for t in types if not t.is_tuple):
                types = self.module.refine(self, op, operands, types)
            return rule(self, op, operands, types)
        except (KeyError, TypeError, ValueError, IndexError) as err:
            if "from_stablehlo:" in str(err) or any(  # already names the op
                    "from_stablehlo:" in note for note in getattr(err, "__notes__", ())):
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


def entry_arguments(module: Module) -> list[Shape]:
    """The types of the arguments a caller passes to `@main` (its effect tokens left out)."""
    main = module.functions.get("main")
    if main is None:
        raise ValueError("from_stablehlo: the module has no `func.func public @main`")
    dropped = _effect_tokens(main.argument_attrs)
    return [shape for i, (_, shape) in enumerate(main.arguments) if i not in dropped]


def entry_results(module: Module) -> list[Shape]:
    """The types of the results `@main` gives its caller (effect tokens left out)."""
    main = module.functions["main"]
    dropped = _effect_tokens(main.result_attrs)
    return [shape for i, shape in enumerate(main.result_types) if i not in dropped]


def _effect_tokens(attrs: Sequence[dict]) -> set[int]:
    """The positions whose attributes mark an ordered-effect token (`jax.token = true`)."""
    return {i for i, a in enumerate(attrs) if a.get("jax.token") is True}


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


def build_module(module: Module, rules: dict, refine: Refine | None = None,
                 argument_shapes: Sequence[Shape] | None = None) -> HloModule:
    """jaxlite's HLO module of a parsed StableHLO module (with `argument_shapes`, @main's
    arguments have those shapes, and `refine` gives the ops' `?` sizes)."""
    return ModuleBuilder(module, rules, refine, argument_shapes).build()
