"""`from_stablehlo` of a shape-polymorphic module (`tensor<?x4xf32>` arguments, as
`jax.export`'s `mlir_module()` prints an export for `symbolic_shape("b, 4")`, and as
jaxlite's own `Exported.mlir_module()` prints one).

The text says which sizes are dynamic but not what they are called. The messages of the
shape assertions at the top of `@main` (JAX's, and jaxlite's own) name the specification
of the argument dimensions they check ("... from specification 'b' for dimension
args[0].shape[0]", "... args[1].shape[0] (= {0}) and the specification '2*b'") and the
scope's constraints ("the symbolic shape constraint b >= 2"); a variable that JAX passes to
its wrapped function (`jax.global_constant = "b"` on an argument of
`@_wrapped_jax_export_main`, fed by `get_dimension_size`) is named too; other sizes are
`_<arg>_<dim>`. The `?` sizes of the results are their own variables (`_out<result>_<dim>`),
which calls replace by the sizes they find.

Each call reads the module again for the shapes of its arguments (XLA's shape refinement,
see `jaxlite.xla.stablehlo.refinement`), once per shape: `get_dimension_size` becomes the
argument's size, the shape assertions JAX wrote are checked (JAX's ValueError when one
fails), and every size becomes static.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from typing import Sequence

from jaxlite.core.avals import ShapedArray
from jaxlite.core.shape_poly_parse import SymbolicScope, parse as parse_dimension
from jaxlite.transforms.export.exported import Exported
from jaxlite.xla.ir import HloModule
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo.parser import Module
from jaxlite.xla.stablehlo.reader import entry_arguments, parse_module
from jaxlite.xla.stablehlo.syntax import DYNAMIC

__all__ = ["RefinedExported", "symbolic_avals"]


@dataclasses.dataclass(frozen=True, eq=False)
class RefinedExported(Exported):
    """An `Exported` of shape-polymorphic StableHLO text, specialized per call."""

    stablehlo_text: str = dataclasses.field(default="", repr=False)

    @functools.cached_property
    def _module(self) -> HloModule:
        raise NotImplementedError(
            "from_stablehlo: a shape-polymorphic module has no HLO module of its own; "
            "hlo_module_for(shapes) gives it for concrete argument shapes")

    def mlir_module(self) -> str:
        """The StableHLO text it was read from."""
        return self.stablehlo_text

    def hlo_module_for(self, shapes: Sequence[tuple[int, ...]]) -> HloModule:
        """The module read for arguments of `shapes` (JAX's ValueErrors when they do not
        fit); one reading per shape, kept."""
        key = tuple(tuple(int(d) for d in shape) for shape in shapes)
        if key not in self._readings:
            self.dimension_values(key)  # rank and constant sizes, with JAX's errors
            concrete = [Shape(a.dtype, shape) for a, shape in zip(self.in_avals, key)]
            self._readings[key] = parse_module(self.stablehlo_text, concrete)
        return self._readings[key]

    def out_avals_for(self, shapes: Sequence[tuple[int, ...]]) -> tuple[ShapedArray, ...]:
        root = self.hlo_module_for(shapes).entry.root.shape
        leaves = root.tuple_shapes if len(self.out_avals) != 1 else (root,)
        return tuple(ShapedArray(s.dims, s.dtype) for s in leaves)

    @functools.cached_property
    def _readings(self) -> dict[tuple, HloModule]:
        return {}

    def serialize(self, vjp_order: int = 0) -> bytearray:
        raise NotImplementedError("from_stablehlo: a shape-polymorphic module read from "
                                  "StableHLO serializes as its text (mlir_module())")


def symbolic_avals(module: Module, results: Sequence[Shape]
                   ) -> tuple[tuple[ShapedArray, ...], tuple[ShapedArray, ...]]:
    """The argument and result avals of `@main`, each `?` a dimension variable."""
    specs, constraints = _assertion_specs(module)
    scope = SymbolicScope(constraints)
    names = {**_variable_names(module), **specs}

    def aval(shape: Shape, name_of) -> ShapedArray:
        dims = tuple(parse_dimension(name_of(k), scope) if d == DYNAMIC else d
                     for k, d in enumerate(shape.dims))
        return ShapedArray(dims, shape.dtype)
    ins = tuple(aval(s, lambda k, i=i: names.get((i, k), f"_{i}_{k}"))
                for i, s in enumerate(entry_arguments(module)))
    outs = tuple(aval(s, lambda k, i=i: f"_out{i}_{k}") for i, s in enumerate(results))
    return ins, outs


_OBTAINED = re.compile(r"'[^']+' = \{\d+\} from specification '([^']+)' for dimension "
                       r"args\[(\d+)\]\.shape\[(\d+)\]")
_INCONSISTENT = re.compile(r"dimension size args\[(\d+)\]\.shape\[(\d+)\] \(= \{\d+\}\) "
                           r"and the specification '([^']+)'")
_CONSTRAINT = re.compile(r"the symbolic shape constraint (.+?)\. Expected ")


def _assertion_specs(module: Module) -> tuple[dict[tuple[int, int], str], list[str]]:
    """What the shape assertions of `@main` say (as JAX and jaxlite write them): the
    specification of each argument dimension they name, and the scope's constraints."""
    specs: dict[tuple[int, int], str] = {}
    constraints: list[str] = []
    for op in module.functions["main"].body.ops:
        target = str(op.attrs.get("callee") or op.attrs.get("call_target_name") or "")
        if op.name != "stablehlo.custom_call" or target.lstrip("@") != "shape_assertion":
            continue
        message = str(op.attrs.get("error_message", ""))
        for spec, i, k in _OBTAINED.findall(message):
            specs[(int(i), int(k))] = spec
        for i, k, spec in _INCONSISTENT.findall(message):
            specs[(int(i), int(k))] = spec
        constraints += [c for c in _CONSTRAINT.findall(message) if c not in constraints]
    return specs, constraints


def _variable_names(module: Module) -> dict[tuple[int, int], str]:
    """(argument, dimension) -> the dimension variable JAX passes for that size."""
    main = module.functions["main"]
    passed = [value for (value, _), attrs in zip(main.arguments, main.argument_attrs)
              if attrs.get("jax.token") is not True]
    position = {value: i for i, value in enumerate(passed)}
    sizes: dict[str, tuple[int, int]] = {}
    names: dict[tuple[int, int], str] = {}
    for op in main.body.ops:
        if op.name == "stablehlo.get_dimension_size" and op.operands[0] in position:
            dim = int(op.attrs.get("dimension", op.attrs.get("dim", 0)))
            sizes[op.results[0]] = (position[op.operands[0]], dim)
        elif op.name == "func.call":
            callee = module.functions.get(op.attrs["callee"].lstrip("@").strip('"'))
            for operand, attrs in zip(op.operands, callee.argument_attrs if callee else ()):
                name = attrs.get("jax.global_constant")
                if isinstance(name, str) and operand in sizes:
                    names.setdefault(sizes[operand], name)
    return names
