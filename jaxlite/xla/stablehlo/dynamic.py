"""Shape-polymorphic modules as StableHLO: dynamic dimensions (`tensor<?x4xf32>`) and the
ops that compute sizes at run time, as JAX prints a module exported with symbolic shapes.

A module of `jaxlite.export` with symbolic sizes (`f32[b,4]`) prints each symbolic
dimension as `?`. `@main` begins by reading each dimension variable off an argument
(`stablehlo.get_dimension_size`); an op whose result size cannot be inferred from its
operands takes the sizes as a shape tensor built from those values: `broadcast_in_dim`
becomes `dynamic_broadcast_in_dim`, `iota` `dynamic_iota`, `reshape` `dynamic_reshape`, a
slice with symbolic bounds `real_dynamic_slice`, a pad by symbolic amounts `dynamic_pad`,
a window of symbolic size the custom call `stablehlo.dynamic_reduce_window`, and a size
used as a value (`s32[] constant(b)`) is computed. XLA's shape refinement (run when JAX
calls such a module) turns it all back into static shapes once the arguments' sizes are
known.

Sizes are i32 values, as in JAX without x64. Symbolic sizes are recognized by their
`is_symbolic_dim` attribute (the `DimExpr`s of `jaxlite.core.shape_poly`, which this
package cannot import), and evaluated through their `terms()`.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.ops import window_fields
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves, ModuleWriter

__all__ = ["PolymorphicModuleWriter", "is_polymorphic"]

_SIZE = Shape(np.dtype(np.int32), ())
Rule = Callable[[FunctionWriter, HloInstruction, Sequence[Leaves]], Leaves]


def _symbolic(value: Any) -> bool:
    return getattr(value, "is_symbolic_dim", False)


def _symbolic_shape(shape: Shape) -> bool:
    return any(_symbolic(d) for leaf in T.leaf_shapes(shape) for d in leaf.dims)


def is_polymorphic(module: HloModule) -> bool:
    """Whether some value of `module` has a symbolic size."""
    return any(_symbolic_shape(inst.shape) for comp in module.computations
               for inst in comp.instructions)


class PolymorphicModuleWriter(ModuleWriter):
    """A `ModuleWriter` for modules with symbolic sizes (see the module docstring)."""

    def __init__(self, rules: Mapping[Opcode, Rule]) -> None:
        dynamic = {op: _when_symbolic(rules[op], rule) for op, rule in _DYNAMIC_RULES.items()}
        # A called computation is written in place: the dimension variables are values of
        # @main, which another function could not see.
        super().__init__({**rules, **dynamic, Opcode.CALL: _inline_call})
        self.variables: dict[str, str] = {}  # dimension variable -> its i32 value in @main

    def module_attributes(self, module: HloModule) -> dict[str, str]:
        return {"jax.uses_shape_polymorphism": "true"}

    def prologue(self, writer: FunctionWriter, params: Sequence[Leaves]) -> None:
        """Each dimension variable's value, read from the first argument dimension that is
        exactly that variable."""
        for leaves in params:
            for name in leaves:
                for axis, d in enumerate(writer.shapes[name].dims):
                    variable = str(d)
                    if _symbolic(d) and d.variables() == {variable} and \
                            variable not in self.variables:
                        self.variables[variable] = writer.generic(
                            "stablehlo.get_dimension_size", [name], [_SIZE],
                            {"dimension": T.i64(axis)})[0]
        needed = set().union(*[d.variables() for leaves in params for n in leaves
                               for d in writer.shapes[n].dims if _symbolic(d)])
        missing = sorted(needed - set(self.variables))
        if missing:
            raise NotImplementedError(
                f"StableHLO printer: the dimension variables {missing} are not the size of "
                "any argument dimension by themselves; jaxlite reads each variable off such "
                "a dimension (`b`, not only `2*b`).")
        self.assert_specification(writer, params)

    def assert_specification(self, writer: FunctionWriter, params: Sequence[Leaves]) -> None:
        """JAX's `shape_assertion`s, in JAX's order and with its messages: each dimension
        variable is at least 1; every other symbolic argument dimension equals its
        specification; each inequality constraint of the scope holds."""
        args = [n for leaves in params for n in leaves]
        shapes = [writer.shapes[n] for n in args]
        check = _Assertions(writer, self.variables, shapes)
        one = writer.constant("dense<1>", _SIZE)[0]
        for k, (variable, value) in enumerate(self.variables.items()):
            # the k-th reports the variables read so far
            check(value, one, "GE", [], "Input shapes do not match the polymorphic shapes "
                  f"specification. Expected value >= 1 for dimension variable '{variable}'.",
                  reported=k + 1)
        for i, (name, shape) in enumerate(zip(args, shapes)):
            for axis, d in enumerate(shape.dims):
                if _symbolic(d) and (i, axis) not in check.origins.values():
                    size = writer.generic("stablehlo.get_dimension_size", [name], [_SIZE],
                                          {"dimension": T.i64(axis)})[0]
                    spec = size_value(writer, d)
                    check(size, spec, "EQ", [size, spec], "Input shapes do not match the "
                          "polymorphic shapes specification. Found inconsistency between "
                          f"dimension size args[{i}].shape[{axis}] (= {{0}}) and the "
                          f"specification '{d}' (= {{1}}).")
        scope = next((d.scope for s in shapes for d in s.dims if _symbolic(d)), None)
        inequalities = [t for t in getattr(scope, "constraints_str", ()) if "==" not in t]
        zero = writer.constant("dense<0>", _SIZE)[0] if inequalities else ""
        for text, difference in zip(inequalities, getattr(scope, "nonnegative", ())):
            amount = size_value(writer, difference)
            check(amount, zero, "GE", [amount], "Input shapes do not match the symbolic "
                  f"shape constraint {text}. Expected '{difference}' to be greater or equal "
                  "to 0, but found {0}. ")


class _Assertions:
    """Writes `custom_call @shape_assertion(pred, operands...)`: JAX numbers the operands
    that its message shows (`{0}`, `{1}`, ...) in order of first use, the given ones first,
    then the variables of its "Obtained dimension variables" part."""

    def __init__(self, w: FunctionWriter, variables: Mapping[str, str],
                 shapes: Sequence[Shape]) -> None:
        self.w, self.variables = w, variables
        self.specs = ",".join(f"args[{i}].shape = {_spec(s.dims)}"
                              for i, s in enumerate(shapes))
        # each variable's argument dimension (where the prologue read it)
        self.origins = {v: next((i, k) for i, s in enumerate(shapes)
                                for k, d in enumerate(s.dims) if _symbolic(d) and str(d) == v)
                        for v in variables}

    def __call__(self, lhs: str, rhs: str, direction: str, shown: Sequence[str], head: str,
                 reported: int | None = None) -> None:
        operands = list(dict.fromkeys(shown))

        def index(value: str) -> int:
            if value not in operands:
                operands.append(value)
            return operands.index(value)
        obtained = "".join(
            f"'{v}' = {{{index(value)}}} from specification '{v}' for dimension "
            f"args[{self.origins[v][0]}].shape[{self.origins[v][1]}] (= {{{index(value)}}}), "
            for v, value in list(self.variables.items())[:reported])
        message = (f"{head} Using the following polymorphic shapes specifications: "
                   f"{self.specs}. Obtained dimension variables: {obtained}. Please see "
                   "https://docs.jax.dev/en/latest/export/shape_poly.html"
                   "#shape-assertion-errors for more details.")
        ok = self.w.generic("stablehlo.compare", [lhs, rhs], [_SIZE.with_dtype(np.bool_)], {
            "comparison_direction": T.enum_attr("comparison_direction", direction),
            "compare_type": T.enum_attr("comparison_type", "SIGNED")})[0]
        self.w.generic("stablehlo.custom_call", [ok, *operands], [], {
            "call_target_name": T.string("shape_assertion"), "api_version": "2 : i32",
            "has_side_effect": "true"}, attributes={"error_message": T.string(message)})


def _spec(dims: Sequence[Any]) -> str:
    """A shape as JAX's messages spell it: `(b, 4)`, `(b,)`."""
    inner = ", ".join(str(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"


def _inline_call(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]
                 ) -> Leaves:
    return w.computation(inst.called[0], operands)


def _when_symbolic(static: Rule, dynamic: Rule) -> Rule:
    """`dynamic` for an instruction with symbolic sizes, else `static`."""
    def rule(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
        return (dynamic if _has_symbolic_sizes(inst) else static)(w, inst, operands)
    return rule


def _has_symbolic_sizes(inst: HloInstruction) -> bool:
    if inst.opcode is Opcode.CONSTANT:
        return np.asarray(inst.attr("literal")).dtype == object
    if inst.opcode is Opcode.PAD:
        return any(_symbolic(v) for dim in inst.attr("padding") for v in dim)
    if inst.opcode is Opcode.REDUCE_WINDOW:
        return any(_symbolic(v) for values in window_fields(inst.attr("window")).values()
                   for v in values)
    sizes = [*inst.shape.dims, *(inst.attr("starts") or ()), *(inst.attr("limits") or ())]
    return any(_symbolic(v) for v in sizes)


# ------------------------------------------------------------------------ sizes as values

def size_value(w: FunctionWriter, size: Any) -> str:
    """A `tensor<i32>` holding `size` (an int or a symbolic size)."""
    if not _symbolic(size):
        return w.constant(f"dense<{int(size)}>", _SIZE)[0]
    total: str | None = None
    for atoms, coefficient in size.terms():
        term = None if coefficient == 1 else w.constant(f"dense<{coefficient}>", _SIZE)[0]
        for atom, power in atoms:
            value = _atom_value(w, atom)
            for _ in range(power):
                term = value if term is None else _binary(w, "multiply", term, value)
        term = term if term is not None else w.constant(f"dense<{coefficient}>", _SIZE)[0]
        total = term if total is None else _binary(w, "add", total, term)
    return total if total is not None else w.constant("dense<0>", _SIZE)[0]


def _atom_value(w: FunctionWriter, atom: tuple) -> str:
    if atom[0] == "var":
        variables = getattr(w.module, "variables", {})
        if atom[1] not in variables:
            raise NotImplementedError(f"StableHLO printer: the dimension variable "
                                      f"'{atom[1]}' is not known in this function")
        return variables[atom[1]]
    numerator, denominator = size_value(w, atom[1]), size_value(w, atom[2])
    # Sizes are never negative, where truncating division is floor division.
    return _binary(w, "divide" if atom[0] == "floordiv" else "remainder",
                   numerator, denominator)


def _binary(w: FunctionWriter, op: str, a: str, b: str) -> str:
    return w.same_type(f"stablehlo.{op}", [a, b], _SIZE)[0]


def shape_value(w: FunctionWriter, sizes: Sequence[Any]) -> str:
    """A `tensor<Nxi32>` of the sizes (JAX's shape operand of the dynamic ops)."""
    one = Shape(np.dtype(np.int32), (1,))
    pieces = [w.generic("stablehlo.reshape", [size_value(w, s)], [one])[0] for s in sizes]
    if len(pieces) == 1:
        return pieces[0]
    return w.generic("stablehlo.concatenate", pieces,
                     [Shape(np.dtype(np.int32), (len(sizes),))],
                     {"dimension": T.i64(0)})[0]


# ------------------------------------------------------------------------ the dynamic ops

def _broadcast(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    shape = shape_value(w, inst.shape.dims)
    return w.generic("stablehlo.dynamic_broadcast_in_dim", [operands[0][0], shape],
                     [inst.shape], {"broadcast_dimensions": T.i64_array(
                         inst.attr("dimensions") or ())})


def _iota(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    shape = shape_value(w, inst.shape.dims)
    return w.generic("stablehlo.dynamic_iota", [shape], [inst.shape],
                     {"iota_dimension": T.i64(inst.attr("iota_dimension"))})


def _reshape(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    shape = shape_value(w, inst.shape.dims)
    return w.generic("stablehlo.dynamic_reshape", [operands[0][0], shape], [inst.shape])


def _slice(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    starts, limits = inst.attr("starts"), inst.attr("limits")
    strides = inst.attr("strides") or (1,) * len(starts)
    bounds = [shape_value(w, values) for values in (starts, limits, strides)]
    return w.generic("stablehlo.real_dynamic_slice", [operands[0][0], *bounds],
                     [inst.shape])


def _constant(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    value = size_value(w, np.asarray(inst.attr("literal"))[()])
    if np.dtype(inst.shape.dtype) == np.int32:
        return [value]
    return w.generic("stablehlo.convert", [value], [inst.shape])


def _pad(w: FunctionWriter, inst: HloInstruction, operands: Sequence[Leaves]) -> Leaves:
    padding = [tuple(dim) + (0,) * (3 - len(dim)) for dim in inst.attr("padding")]
    amounts = [shape_value(w, [dim[k] for dim in padding]) for k in range(3)]
    return w.generic("stablehlo.dynamic_pad", [operands[0][0], operands[1][0], *amounts],
                     [inst.shape])


def _reduce_window(w: FunctionWriter, inst: HloInstruction,
                   operands: Sequence[Leaves]) -> Leaves:
    """A window of symbolic size (a cumulative sum over the batch) as JAX writes it: the
    custom call `stablehlo.dynamic_reduce_window`, its window as shape operands and its
    reducer a function."""
    win = window_fields(inst.attr("window"))
    sizes = [shape_value(w, win[key])
             for key in ("size", "stride", "base_dilation", "window_dilation")]
    pads = shape_value(w, [v for pair in zip(win["pad_low"], win["pad_high"]) for v in pair])
    padding = w.generic("stablehlo.reshape", [pads],
                        [Shape(np.dtype(np.int32), (len(win["size"]), 2))])[0]
    reducer = w.module.symbol(inst.called[0])
    values = [v for leaves in operands for v in leaves]
    return w.generic("stablehlo.custom_call", [*values, *sizes, padding], [inst.shape], {
        "api_version": "2 : i32", "call_target_name": T.string("stablehlo.dynamic_reduce_window"),
        "called_computations": f"[{reducer}]"})


_DYNAMIC_RULES: dict[Opcode, Rule] = {
    Opcode.BROADCAST: _broadcast, Opcode.IOTA: _iota, Opcode.RESHAPE: _reshape,
    Opcode.SLICE: _slice, Opcode.CONSTANT: _constant, Opcode.REDUCE_WINDOW: _reduce_window,
    Opcode.PAD: _pad,
}
