"""Reading StableHLO text back into jaxlite's HLO (the reverse of `print_module`; mirrors
what XLA does with `jax.jit(f).lower(x).as_text()` when it compiles it).

`parse_module(text)` runs the three stages: `parser.py` reads the text into op records
(`syntax.py` holds its tokens, types and literals), `builder.py` turns functions and regions
into computations and `ops_parse.py` each op into instructions.
"""
from __future__ import annotations

from jaxlite.xla.ir import HloModule
from jaxlite.xla.stablehlo.builder import build_module
from jaxlite.xla.stablehlo.ops_parse import RULES
from jaxlite.xla.stablehlo.parser import parse

__all__ = ["RULES", "parse_module"]


def parse_module(text: str) -> HloModule:
    """jaxlite's HLO module of StableHLO text as `jax.jit(f).lower(x).as_text()` prints it:
    `@main` is the entry computation, returning its result (a tuple of several). Raises
    NotImplementedError naming an op (and its line) that jaxlite cannot read."""
    return build_module(parse(text), RULES)
