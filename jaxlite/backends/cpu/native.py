"""LLVM IR text to machine code, and machine code to a callable entry function (the CPU
backend's counterpart of XLA's `SimpleOrcJIT` and its object-code cache hooks).

`compile_objects(irs)` optimizes the executable's main module at -O3 for the host and code-
generates the library modules it calls (GEMMs, compiled once per process) and returns the
object files' bytes: what the persistent compilation cache stores. `load_objects(objs)`
links them into the process (resolving the runtime's symbols and the C math library by
address, and each other's) and returns the entry point as a ctypes function and as an
address (which the runtime's `jl_invoke` calls with the arguments in a frame). `assembly(ir)`
compiles again to assembly, for `Executable.text("asm")` only.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import threading
from dataclasses import dataclass
from typing import Sequence

import llvmlite.binding as llvm

from jaxlite.backends.cpu import llvm_target, runtime

__all__ = ["NativeModule", "compile_object", "compile_library", "compile_objects", "link",
           "load_objects", "assembly", "ENTRY_ARGTYPES"]

# The entry function: (params, outs, arena, consts, extra, threads); see codegen/program.py.
ENTRY_ARGTYPES = (ctypes.c_void_p,) * 5 + (ctypes.c_int64,)

# C math functions generated code may call: the fallback of the vector math library and
# what LLVM lowers its own math intrinsics (and `frem`) to.
_MATH = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sin", "cos", "tan",
         "atan", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh", "cbrt", "atan2",
         "pow", "erf", "erfc", "lgamma", "fmod", "ldexp", "exp10", "hypot",
         "cexp", "clog", "csqrt", "csin", "ccos", "ctan", "ctanh", "csinh", "ccosh", "casin",
         "cacos", "catan", "casinh", "cacosh", "catanh")


@functools.lru_cache(maxsize=None)
def _install_symbols() -> None:
    runtime.install(lambda text: _compile([text]), link)
    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    for base in _MATH:
        for name in (base, base + "f"):
            function = getattr(libm, name, None)
            if function is not None:
                llvm.add_symbol(name, ctypes.cast(function, ctypes.c_void_p).value)


def _new_machine() -> llvm.TargetMachine:
    """A target machine for the host CPU with all its features, at -O3.

    An execution engine takes ownership of the target machine it is given and frees it
    with itself, so every engine gets a machine of its own, and the one that compiles
    (`_machine`) is never handed to an engine."""
    cpu, features = llvm_target.host_cpu()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=3,
                                        codemodel="jitdefault")


@functools.lru_cache(maxsize=None)
def _machine() -> llvm.TargetMachine:
    return _new_machine()


def _parsed(ir_texts: Sequence[str], optimize: bool) -> llvm.ModuleRef:
    """The modules parsed, verified and linked into the first (then optimized)."""
    machine = _machine()
    module = None
    for text in ir_texts:
        part = llvm.parse_assembly(text)
        part.verify()
        part.triple = machine.triple
        part.data_layout = str(machine.target_data)
        if module is None:
            module = part
        else:
            module.link_in(part)
    assert module is not None, "no module to compile"
    if optimize:
        options = llvm.create_pipeline_tuning_options(speed_level=3)
        options.loop_vectorization = True
        options.slp_vectorization = True
        builder = llvm.create_pass_builder(machine, options)
        builder.getModulePassManager().run(module, builder)
    return module


def _compile(ir_texts: Sequence[str]) -> bytes:
    return bytes(_machine().emit_object(_parsed(ir_texts, True)))


def compile_object(ir_texts: str | Sequence[str]) -> bytes:
    """The object code of LLVM modules (text) linked into one, optimized for the host."""
    _install_symbols()
    return _compile([ir_texts] if isinstance(ir_texts, str) else ir_texts)


# Object code of modules compiled without the optimization pipeline, by their text's digest.
_LIBRARY_OBJECTS: dict[bytes, bytes] = {}
_LIBRARY_LOCK = threading.Lock()


def compile_library(ir_text: str) -> bytes:
    """The object code of a module whose IR needs no optimization (a generated GEMM: its
    loops are already blocked, unrolled and vectorized; LLVM's -O3 pipeline makes it no
    faster and costs twice the time), code-generated at -O3. Compiled once per process."""
    key = hashlib.sha256(ir_text.encode()).digest()
    with _LIBRARY_LOCK:
        if key in _LIBRARY_OBJECTS:
            return _LIBRARY_OBJECTS[key]
    _install_symbols()
    code = bytes(_machine().emit_object(_parsed([ir_text], False)))
    with _LIBRARY_LOCK:
        _LIBRARY_OBJECTS[key] = code
    return code


def compile_objects(ir_texts: Sequence[str]) -> list[bytes]:
    """Object code of an executable: its main module (optimized), then each library module
    it calls into (see `compile_library`)."""
    return [compile_object(ir_texts[0])] + [compile_library(t) for t in ir_texts[1:]]


def assembly(ir_texts: str | Sequence[str]) -> str:
    """The host assembly of LLVM modules (optimized as `compile_object` does)."""
    return _machine().emit_assembly(_parsed([ir_texts] if isinstance(ir_texts, str)
                                            else ir_texts, True))


@dataclass
class NativeModule:
    """Machine code linked into the process; keeps its engine (and so the code) alive."""

    engine: llvm.ExecutionEngine
    entry: ctypes._CFuncPtr
    code_size: int
    address: int = 0     # of the entry function, for `runtime.invoke_frame`


def link(object_code: bytes | Sequence[bytes]) -> llvm.ExecutionEngine:
    """An execution engine holding the object files, linked into the process (and with
    each other)."""
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _new_machine())
    for code in [object_code] if isinstance(object_code, bytes) else object_code:
        engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    return engine


def load_objects(objects: Sequence[bytes], entry: str) -> NativeModule:
    """Link object files into the process and return the entry function."""
    _install_symbols()
    engine = link(objects)
    address = engine.get_function_address(entry)
    if not address:
        raise RuntimeError(f"the compiled module has no function {entry!r}")
    function = ctypes.CFUNCTYPE(None, *ENTRY_ARGTYPES)(address)
    return NativeModule(engine, function, sum(len(o) for o in objects), address)
