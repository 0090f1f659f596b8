"""The host as an LLVM target: initialization, target machine and JIT compilation.

Everything that touches llvmlite's binding layer to turn LLVM IR text into callable machine
code goes through here, so that code generators only produce IR text. The target is the host
CPU with all its features (AVX-512 or AVX2, which decides the GEMM's vector width), at -O3.
"""
from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

import llvmlite.binding as llvm

from jaxlite.backends.cpu.llvm_optimize import initialize


@functools.lru_cache(maxsize=None)
def host_cpu() -> tuple[str, str]:
    """The host CPU's name and its feature string, e.g. ('znver4', '+avx512f,...')."""
    initialize()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def new_target_machine() -> llvm.TargetMachine:
    """A fresh target machine for the host CPU with every feature it has, at -O3.

    An execution engine takes ownership of the machine it is given and frees it with itself,
    so every engine gets its own; the shared one below is never handed to an engine.
    """
    initialize()
    name, features = host_cpu()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=name, features=features, opt=3, codemodel="jitdefault")


@functools.lru_cache(maxsize=None)
def target_machine() -> llvm.TargetMachine:
    """The shared host target machine, for passes, layouts and assembly (not for engines)."""
    return new_target_machine()


def has_avx512() -> bool:
    return "+avx512f" in host_cpu()[1]


def vector_bytes() -> int:
    """The bytes of the host's vector registers: 64 with AVX-512, else 32 (AVX2)."""
    return 64 if has_avx512() else 32


def optimize(module: llvm.ModuleRef) -> None:
    """Run LLVM's -O3 pipeline (vectorizers included) on `module` in place."""
    machine = target_machine()
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)


@dataclass
class CompiledModule:
    """Machine code for one LLVM module, kept alive with its execution engine."""

    engine: llvm.ExecutionEngine
    module: llvm.ModuleRef

    def address(self, name: str) -> int:
        address = self.engine.get_function_address(name)
        if not address:
            raise KeyError(f"function {name!r} is not in the compiled module")
        return address

    def function(self, name: str, restype: object, *argtypes: object) -> ctypes._CFuncPtr:
        """The compiled function `name` as a ctypes callable (which releases the GIL)."""
        return ctypes.CFUNCTYPE(restype, *argtypes)(self.address(name))

    def assembly(self) -> str:
        return target_machine().emit_assembly(self.module)


def compile_ir(ir_text: str, optimize_module: bool = True) -> CompiledModule:
    """Parse, verify, optimize and JIT-compile LLVM IR text for the host."""
    initialize()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    module.triple = target_machine().triple
    module.data_layout = str(target_machine().target_data)
    if optimize_module:
        optimize(module)
    engine = llvm.create_mcjit_compiler(module, new_target_machine())
    engine.finalize_object()
    engine.run_static_constructors()
    return CompiledModule(engine, module)
