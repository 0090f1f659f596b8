"""What the cpu backend writes to the dump folder (in the spirit of the files XLA's CPU
compiler writes under `--xla_dump_to`).

With `JAXLITE_DUMP_DIR` (`jaxlite_dump_dir`) set, the pass pipeline writes the module
after each pass (`<module>.<NNNN>.<pass>.txt`); after code generation this module adds, for
the same module name:

- `<module>.buffer-assignment.txt`: the allocations of the entry (parameters, results, the
  temporary arena), their sizes, and the values each holds with offset and live range;
  then the same for each computation a while loop, conditional or call runs.
- `<module>.ir-no-opt.ll`: the LLVM IR as generated (the entry function `jl_main`, its
  kernels `kernel.N`, then the modules it links, such as the GEMMs).
- `<module>.ir-with-opt.ll`: the same after LLVM's -O3 pipeline.
- `<module>.s`: the host assembly of it.
"""
from __future__ import annotations

from jaxlite.backends.cpu.codegen.control_flow import control_computations, while_plans
from jaxlite.backends.cpu.codegen.module import ModuleInfo
from jaxlite.backends.cpu.codegen.program import ComputationPlan, plan_computation
from jaxlite.backends.cpu.native import optimized_ir_and_assembly
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.pipeline import write_dump

__all__ = ["buffer_assignment_text", "write_program_dumps"]


def write_program_dumps(folder: str, name: str, optimized: HloModule, info: ModuleInfo,
                        ir_texts: list[str]) -> list[str]:
    """Write the buffer assignment, LLVM IR (before and after optimization) and assembly
    of a compiled module as `<name>.<stage>` files in `folder`; return their paths."""
    with_opt, asm = optimized_ir_and_assembly(ir_texts)
    stages = {"buffer-assignment.txt": buffer_assignment_text(optimized, info),
              "ir-no-opt.ll": "\n".join(ir_texts),
              "ir-with-opt.ll": with_opt,
              "s": asm}
    return [write_dump(folder, name, stage, text) for stage, text in stages.items()]


def buffer_assignment_text(module: HloModule, info: ModuleInfo) -> str:
    """The buffer assignment of the entry as the code uses it, then those of the
    computations its while loops, conditionals and calls run (planned as code generation
    plans them), each headed by the instruction that runs it."""
    parts = [info.plan.assignment.to_text()]
    for comp in control_computations(module):
        for inst in comp.instructions:
            for role, plan in _called_plans(inst):
                parts.append(f"\n{role} of %{inst.name}: {plan.comp.name}\n"
                             + plan.assignment.to_text())
    return "".join(parts)


def _called_plans(inst: HloInstruction) -> list[tuple[str, ComputationPlan]]:
    if inst.opcode is Opcode.WHILE:
        condition, body, _ = while_plans(inst)
        return [("condition", condition), ("body", body)]
    if inst.opcode in (Opcode.CONDITIONAL, Opcode.CALL):
        return [(f"computation {k}", plan_computation(c)) for k, c in enumerate(inst.called)]
    return []
