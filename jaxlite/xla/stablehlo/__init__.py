"""StableHLO, the portable form of XLA programs: printing jaxlite's HLO modules as
StableHLO in MLIR's text form (mirrors what `jax.jit(f).lower(x).as_text()` prints).

`print_module(module)` gives the text; `RULES` maps each HLO opcode to the rule that prints
it, `OPCODES_OF_OP_NAME` each op name back to its opcodes (see `printer.py` for the
structure, `ops.py` and `ops_regions.py` for the ops, `lapack.py` for the linear-algebra
custom calls, `collectives.py` for all_reduce and the other collectives, `dynamic.py` for modules with
symbolic sizes, and `types.py` for the spelling of types and attributes).
"""
from __future__ import annotations

from jaxlite.xla.ir import HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.stablehlo import collectives, dynamic, ops, ops_regions
from jaxlite.xla.stablehlo.printer import ModuleWriter

__all__ = ["OPCODES_OF_OP_NAME", "RULES", "print_module"]

RULES: dict[Opcode, ops.Rule] = {**ops.RULES, **ops_regions.RULES, **collectives.RULES}


def _opcodes_of_op_names() -> dict[str, tuple[Opcode, ...]]:
    tables = ((ops.SAME_TYPE_OPS, "stablehlo."), (ops.GENERIC_ELEMENTWISE_OPS, "stablehlo."),
              (ops.CHLO_OPS, "chlo."), (ops.STRUCTURED_OPS, "stablehlo."),
              (ops_regions.REGION_OPS, ""), (collectives.COLLECTIVE_OPS, ""))
    result: dict[str, tuple[Opcode, ...]] = {"stablehlo.if": (Opcode.CONDITIONAL,)}
    for table, prefix in tables:
        for opcode, name in table.items():
            result[prefix + name] = result.get(prefix + name, ()) + (opcode,)
    result["stablehlo.reshape"] += (Opcode.BITCAST,)
    return result


# What a reader of StableHLO needs backwards: the HLO opcodes each op name stands for
# (`func.call` is a call or a fusion, `stablehlo.reshape` a reshape or a bitcast). Ops that
# the printer writes as several (exp2) or none (tuple, copy) are not listed.
OPCODES_OF_OP_NAME: dict[str, tuple[Opcode, ...]] = _opcodes_of_op_names()


def print_module(module: HloModule) -> str:
    """`module` as StableHLO text: `module @name`, `func.func public @main`, then a private
    function per computation that a `call` calls. Raises NotImplementedError naming the
    opcode for an instruction it cannot print. A module with symbolic sizes (shape
    polymorphism) prints with dynamic dimensions, as JAX prints it (`dynamic.py`)."""
    if dynamic.is_polymorphic(module):
        return dynamic.PolymorphicModuleWriter(RULES).module(module)
    return ModuleWriter(RULES).module(module)
