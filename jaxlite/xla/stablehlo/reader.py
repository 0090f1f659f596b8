"""Reading StableHLO text back into jaxlite's HLO (the reverse of `print_module`; mirrors
what XLA does with `jax.jit(f).lower(x).as_text()` when it compiles it).

`parse_module(text)` runs the three stages: `parser.py` reads the text into op records
(`syntax.py` holds its tokens, types and literals), `builder.py` turns functions and regions
into computations and `ops_parse.py` each op into instructions. A shape-polymorphic module
(`tensor<?x4xf32>`) reads for given argument shapes (`refinement.py`).
"""
from __future__ import annotations

from typing import Sequence

from jaxlite.xla.ir import HloModule
from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import refinement
from jaxlite.xla.stablehlo.builder import build_module, entry_arguments
from jaxlite.xla.stablehlo.ops_parse import RULES
from jaxlite.xla.stablehlo.parser import Module, parse

__all__ = ["RULES", "entry_arguments", "parse_module"]


def parse_module(text: str, argument_shapes: Sequence[Shape] | None = None) -> HloModule:
    """jaxlite's HLO module of StableHLO text as `jax.jit(f).lower(x).as_text()` prints it:
    `@main` is the entry computation, returning its result (a tuple of several). Raises
    NotImplementedError naming an op (and its line) that jaxlite cannot read.

    A module whose arguments have dynamic sizes (`?`) needs `argument_shapes`, the shapes
    of the arguments it is called with (JAX's ValueError when they do not fit); the module
    read is then specialized to them."""
    module = parse(text)
    declared = entry_arguments(module)
    if argument_shapes is None:
        if any(refinement.is_dynamic(s) for s in declared):
            raise ValueError("from_stablehlo: the module's arguments have dynamic sizes "
                             "(`?`); read it for concrete argument shapes")
        return build_module(module, RULES)
    if len(argument_shapes) != len(declared):
        raise ValueError(f"from_stablehlo: the module takes {len(declared)} arguments, "
                         f"got {len(argument_shapes)} shapes")
    shapes = [refinement.concrete_argument(want, got, i)
              for i, (want, got) in enumerate(zip(declared, argument_shapes))]
    return build_module(module, RULES, refinement.refine_types, shapes)

