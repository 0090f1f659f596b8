"""LLVM IR text to machine code, and machine code to a callable entry function (the CPU
backend's counterpart of XLA's `SimpleOrcJIT` and its object-code cache hooks).

`compile_objects(irs)` optimizes the executable's main module at -O3 for the host and code-
generates the library modules it calls (GEMMs, compiled once per process) and returns the
object files' bytes: what the persistent compilation cache stores. After the first
`IN_PROCESS_COMPILES` modules, the -O3 pipeline runs in worker processes
(`llvm_optimize`), each replaced after `WORKER_COMPILES` modules, because llvmlite's pass
manager leaks about 57 KB per module it optimizes; the code is the same bytes. `load_objects(objs)`
links them into the process (resolving the runtime's symbols and the C math library by
address, and each other's) and returns the entry point as a ctypes function and as an
address (which the runtime's `jl_invoke` calls with the arguments in a frame). `assembly(ir)`
compiles again to assembly, for `Executable.text("asm")` only.
"""
from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import functools
import hashlib
import os
import subprocess
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import llvmlite.binding as llvm

from jaxlite.backends.cpu import (compile_cache, disk_cache, llvm_optimize, llvm_target,
                                  runtime)

__all__ = ["NativeModule", "install_runtime", "compile_object", "compile_library", "compile_objects", "link",
           "load_objects", "assembly", "optimized_ir_and_assembly", "ENTRY_ARGTYPES"]

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
    runtime.install(_runtime_object, link)
    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    for base in _MATH:
        for name in (base, base + "f"):
            function = getattr(libm, name, None)
            if function is not None:
                llvm.add_symbol(name, ctypes.cast(function, ctypes.c_void_p).value)


def install_runtime() -> None:
    """Link the runtime and the C math functions into the process (once; the client does
    it when it starts)."""
    _install_symbols()


def _runtime_object(ir_text: str) -> bytes:
    """The object code of the runtime module (compiled at every process start, about 0.17 s
    of the first call), from the persistent cache when it holds it (`_stored_object`)."""
    return _stored_object(ir_text, "runtime", compile_cache.KEY_SYMBOL,
                          lambda text: _compile([text]))


def _stored_object(ir_text: str, kind: str, symbol: str, compile_text) -> bytes:
    """The object code of a module from the persistent cache, else `compile_text(text)`'s
    and stored there; keyed on the module's text and checked as programs are
    (`compile_cache`): the key is compiled into the code as the global `symbol`."""
    folder = disk_cache.cache_folder()
    if folder is None or not disk_cache.folder_status(folder)[0]:
        return compile_text(ir_text)
    key = compile_cache.cache_key(ir_text, kind, keep_name=True)
    payload = disk_cache.read_entry(folder, key,
                                    lambda data: compile_cache.payload_problem(data, key))
    if payload is not None:
        return compile_cache.unpack_objects(payload)[0]  # type: ignore[index]
    code = compile_text(ir_text + compile_cache.key_global(key, symbol))
    if disk_cache.folder_status(folder)[1]:
        disk_cache.write_entry(folder, key, compile_cache.pack_objects([code]))
    return code


def _new_machine() -> llvm.TargetMachine:
    """A target machine for the host CPU with all its features, at -O3.

    An execution engine takes ownership of the target machine it is given and frees it
    with itself, so every engine gets a machine of its own, and the one that compiles
    (`_machine`) is never handed to an engine."""
    cpu, features = llvm_target.host_cpu()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=3,
                                        codemodel="jitdefault")


def _machine() -> llvm.TargetMachine:
    return llvm_optimize.target_machine(*llvm_target.host_cpu())


def _parsed(ir_texts: Sequence[str], optimize: bool) -> llvm.ModuleRef:
    """The modules parsed, verified and linked into the first (then optimized)."""
    return llvm_optimize.parse_and_link(ir_texts, _machine(), optimize)


def _compile(ir_texts: Sequence[str]) -> bytes:
    cpu, features = llvm_target.host_cpu()
    return _WORKERS.object_code(ir_texts, cpu, features)


# Whether the -O3 pipeline may run in worker processes; modules optimized here first (a
# short program never starts a worker); modules a worker optimizes before it is replaced.
USE_WORKERS = True
IN_PROCESS_COMPILES = 32
WORKER_COMPILES = 256
# Starts a worker: the source of `llvm_optimize` as this process read it, given on the
# command line, so the worker imports llvmlite only and speaks this process's protocol even
# when the file changes on disk meanwhile (an upgrade during a long run, an edit).
_LAUNCH = ("import sys, types; m = types.ModuleType('jaxlite_llvm_optimize'); "
           "exec(compile(sys.argv[1], sys.argv[2], 'exec'), m.__dict__); "
           "m.serve(sys.stdin.buffer, sys.stdout.buffer)")
_SOURCE = Path(llvm_optimize.__file__).read_text(encoding="utf-8")


class _WorkerDied(Exception):
    pass


class _Worker:
    """A process running `llvm_optimize.serve`; OSError when it cannot start or does not
    say it is ready."""

    def __init__(self) -> None:
        # A session of its own: Ctrl-C in a terminal interrupts this process, not the worker
        # (which ends when its input does, as when this process dies).
        command = [sys.executable, "-c", _LAUNCH, _SOURCE, llvm_optimize.__file__]
        self.process = subprocess.Popen(command,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        start_new_session=True)
        self.compiles = 0
        if llvm_optimize.read_message(self.process.stdout) != [llvm_optimize.READY]:
            self.close(gracefully=False)
            raise OSError("the LLVM optimizer process did not start")

    def object_code(self, ir_texts: Sequence[str], cpu: str, features: str) -> bytes:
        self.compiles += 1
        try:
            llvm_optimize.write_message(self.process.stdin, [
                cpu.encode(), features.encode(), *(t.encode() for t in ir_texts)])
            answer = llvm_optimize.read_message(self.process.stdout)
        except OSError as error:
            raise _WorkerDied(str(error)) from error
        if answer is None or len(answer) != 2:
            raise _WorkerDied(f"exit status {self.process.poll()}")
        status, body = answer
        if status != b"ok":
            raise RuntimeError(body.decode())  # what LLVM said, as when run in this process
        return body

    def close(self, gracefully: bool = True) -> None:
        """End the worker: at the end of its input, or at once (its state is unknown)."""
        try:
            if gracefully:
                self.process.stdin.close()
                self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            gracefully = False
        if not gracefully:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:  # unwritten bytes for a process that is gone
                pass


class _WorkerPool:
    """Idle workers, started on demand (one per thread compiling at once, at most one per
    core; beyond that a module is optimized here) and replaced when used up."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy = 0
        self._in_process = 0
        self._pid = os.getpid()
        self._broken = not sys.executable

    def object_code(self, ir_texts: Sequence[str], cpu: str, features: str) -> bytes:
        for attempt in range(2):
            worker = self._take()
            if worker is None:
                return llvm_optimize.object_code(ir_texts, cpu, features)
            try:
                code = worker.object_code(ir_texts, cpu, features)
            except _WorkerDied as died:
                # Killed from outside, or LLVM crashed on this module: one more try.
                self._give_back(worker, broken=True)
                if attempt:
                    raise RuntimeError(f"LLVM failed: the optimizer process ended ({died}) "
                                       "while compiling this module.") from None
                continue
            except RuntimeError:  # LLVM rejected the module; the worker is fine
                self._give_back(worker, broken=False)
                raise
            except BaseException:  # an interrupt: the worker's state is unknown
                self._give_back(worker, broken=True)
                raise
            self._give_back(worker, broken=False)
            return code
        raise AssertionError("unreachable")

    def _take(self) -> _Worker | None:
        with self._lock:
            if os.getpid() != self._pid:  # a forked child: the parent's workers are not ours
                self._idle, self._busy, self._pid = [], 0, os.getpid()
            if not USE_WORKERS or self._broken or self._in_process < IN_PROCESS_COMPILES or (
                    not self._idle and self._busy >= max(2, os.cpu_count() or 1)):
                self._in_process += 1
                return None
            self._busy += 1
            if self._idle:
                return self._idle.pop()
        try:
            return _Worker()
        except OSError:  # no processes here (a sandbox): optimize in this process
            with self._lock:
                self._broken = True
                self._busy -= 1
            return None

    def _give_back(self, worker: _Worker, broken: bool) -> None:
        with self._lock:
            self._busy -= 1
            if not broken and worker.compiles < WORKER_COMPILES:
                self._idle.append(worker)
                return
        worker.close(gracefully=not broken)

    def close(self) -> None:
        """End the idle workers (at exit; new ones start when needed)."""
        with self._lock:
            idle, self._idle = self._idle, []
            if os.getpid() != self._pid:  # a forked child's copies: its parent's workers
                return
        for worker in idle:
            worker.close()


_WORKERS = _WorkerPool()
atexit.register(_WORKERS.close)


def compile_object(ir_texts: str | Sequence[str]) -> bytes:
    """The object code of LLVM modules (text) linked into one, optimized for the host."""
    _install_symbols()
    return _compile([ir_texts] if isinstance(ir_texts, str) else ir_texts)


# Object code of modules compiled without the optimization pipeline, by their text's digest
# (the least recently used dropped beyond the capacity: GEMM kernels differ by shape).
_LIBRARY_OBJECTS: OrderedDict[bytes, bytes] = OrderedDict()
_LIBRARY_CAPACITY = 1024
_LIBRARY_LOCK = threading.Lock()


def compile_library(ir_text: str) -> bytes:
    """The object code of a module whose IR needs no optimization (a generated GEMM: its
    loops are already blocked, unrolled and vectorized; LLVM's -O3 pipeline makes it no
    faster and costs twice the time), code-generated at -O3. Compiled once per process
    (while among the `_LIBRARY_CAPACITY` most recently used) and kept in the persistent
    cache, so that another program with the same GEMMs links their code without LLVM."""
    key = hashlib.sha256(ir_text.encode()).digest()
    with _LIBRARY_LOCK:
        if key in _LIBRARY_OBJECTS:
            _LIBRARY_OBJECTS.move_to_end(key)
            return _LIBRARY_OBJECTS[key]
    _install_symbols()
    # The key's global is named by the text's digest: each library module of a program
    # (linked together) defines its own.
    code = _stored_object(ir_text, "library", f"jl_library_key.{key.hex()[:24]}",
                          _library_object)
    with _LIBRARY_LOCK:
        _LIBRARY_OBJECTS[key] = code
        while len(_LIBRARY_OBJECTS) > _LIBRARY_CAPACITY:
            _LIBRARY_OBJECTS.popitem(last=False)
    return code


def _library_object(ir_text: str) -> bytes:
    module = _parsed([ir_text], False)
    with llvm_optimize.generating_code():
        return bytes(_machine().emit_object(module))


def compile_objects(ir_texts: Sequence[str]) -> list[bytes]:
    """Object code of an executable: its main module (optimized), then each library module
    it calls into (see `compile_library`)."""
    return [compile_object(ir_texts[0])] + [compile_library(t) for t in ir_texts[1:]]


def assembly(ir_texts: str | Sequence[str]) -> str:
    """The host assembly of LLVM modules (optimized as `compile_object` does)."""
    module = _parsed([ir_texts] if isinstance(ir_texts, str) else ir_texts, True)
    with llvm_optimize.generating_code():
        return _machine().emit_assembly(module)


def optimized_ir_and_assembly(ir_texts: Sequence[str]) -> tuple[str, str]:
    """The LLVM IR of modules linked and optimized as `compile_object` does, and its host
    assembly (for the dump folder: one optimization serves both)."""
    module = _parsed(ir_texts, True)
    optimized = str(module)
    with llvm_optimize.generating_code():
        return optimized, _machine().emit_assembly(module)


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
