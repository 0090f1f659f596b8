"""StableHLO, the portable form of XLA programs: printing jaxlite's HLO modules as
StableHLO in MLIR's text form (mirrors what `jax.jit(f).lower(x).as_text()` prints).

`print_module(module)` gives the text; `RULES` maps each HLO opcode to the rule that prints
it (see `printer.py` for the structure, `ops.py` and `ops_regions.py` for the ops, and
`types.py` for the spelling of types and attributes).
"""
from __future__ import annotations

from jaxlite.xla.ir import HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.stablehlo import ops, ops_regions
from jaxlite.xla.stablehlo.printer import ModuleWriter

__all__ = ["RULES", "print_module"]

RULES: dict[Opcode, ops.Rule] = {**ops.RULES, **ops_regions.RULES}


def print_module(module: HloModule) -> str:
    """`module` as StableHLO text: `module @name`, `func.func public @main`, then a private
    function per computation that a `call` calls. Raises NotImplementedError naming the
    opcode for an instruction it cannot print."""
    return ModuleWriter(RULES).module(module)
