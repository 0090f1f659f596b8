"""LLVM's -O3 pipeline and code generation for the host CPU, with nothing of jaxlite but
llvmlite (the optimizer of `native.compile_object`, in this process or in a worker).

Why a worker process: llvmlite's new pass manager allocates instrumentation callbacks for
each pass builder and never frees them (measured: about 57 KB of RSS for each module run
through the -O3 pipeline, over 1,000 compiles, while parsing, code generation and linking
free what they take). A process that compiles thousands of distinct programs would grow
without bound, so `native` sends modules to a worker running this file and replaces the
worker every so many modules: the leak dies with it.

Protocol over the worker's stdin and stdout: a message is a count of parts, then each part as
its length and bytes. The worker first says `READY`; a request holds the CPU's name, its
features, then the IR texts; the answer holds a status (b"ok" then the object code, or
b"error" then the message).
"""
from __future__ import annotations

import contextlib
import functools
import struct
import threading
from typing import BinaryIO, Sequence

import llvmlite.binding as llvm

__all__ = ["initialize", "target_machine", "parse_and_link", "object_code", "generating_code",
           "write_message", "read_message", "serve", "READY"]

# The worker's first message, once llvmlite is loaded and the target initialized.
READY = b"ready"

_COUNT = struct.Struct("<I")
_LENGTH = struct.Struct("<Q")


@functools.lru_cache(maxsize=None)
def initialize() -> None:
    """Load LLVM's native target once per process (this one or a worker)."""
    try:  # newer llvmlite initializes the core itself and rejects this
        llvm.initialize()
    except RuntimeError:
        pass
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.lru_cache(maxsize=None)
def target_machine(cpu: str, features: str) -> llvm.TargetMachine:
    """The shared machine that optimizes and emits code for `cpu` (never given to an
    execution engine, which would take ownership of it)."""
    initialize()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=3,
                                        codemodel="jitdefault")


def parse_and_link(ir_texts: Sequence[str], machine: llvm.TargetMachine,
                   optimize: bool) -> llvm.ModuleRef:
    """The modules parsed, verified and linked into the first (then optimized at -O3 with
    both vectorizers)."""
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


# Threads generating code now (see `generating_code`), under its lock.
_CODEGEN_LOCK = threading.Lock()
_codegen_users = 0


@contextlib.contextmanager
def generating_code():
    """Code generation with LLVM's loop strength reduction off.

    Why: on the kernels jaxlite generates (unrolled vector loops whose addresses are a base
    plus constant offsets, which x86 addressing modes take as they are) the pass changes
    register names and little else, and it was the most expensive pass of all: 14 % of a
    transformer block's LLVM time, 150 to 270 ms of its 570 ms of code generation. The switch
    is a process-wide LLVM option, so it is set only while some thread of this process
    generates jaxlite's code and put back after (another llvmlite user, numba say, keeps
    LLVM's default the rest of the time)."""
    global _codegen_users
    with _CODEGEN_LOCK:
        if _codegen_users == 0:
            llvm.set_option("jaxlite", "-disable-lsr=true")
        _codegen_users += 1
    try:
        yield
    finally:
        with _CODEGEN_LOCK:
            _codegen_users -= 1
            if _codegen_users == 0:
                llvm.set_option("jaxlite", "-disable-lsr=false")


def object_code(ir_texts: Sequence[str], cpu: str, features: str) -> bytes:
    """The object code of the modules linked into one and optimized for `cpu`."""
    machine = target_machine(cpu, features)
    module = parse_and_link(ir_texts, machine, True)
    with generating_code():
        return bytes(machine.emit_object(module))


def write_message(stream: BinaryIO, parts: Sequence[bytes]) -> None:
    stream.write(_COUNT.pack(len(parts)))
    for part in parts:
        stream.write(_LENGTH.pack(len(part)))
        stream.write(part)
    stream.flush()


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def read_message(stream: BinaryIO) -> list[bytes] | None:
    """The next message's parts, or None at the end of the stream (or a cut message)."""
    head = _read_exactly(stream, _COUNT.size)
    if head is None:
        return None
    parts = []
    for _ in range(_COUNT.unpack(head)[0]):
        length = _read_exactly(stream, _LENGTH.size)
        part = None if length is None else _read_exactly(stream, _LENGTH.unpack(length)[0])
        if part is None:
            return None
        parts.append(part)
    return parts


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Say `READY`, then answer requests until the other end closes the stream."""
    initialize()
    write_message(answers, [READY])
    while (parts := read_message(requests)) is not None:
        try:
            cpu, features, *texts = (p.decode() for p in parts)
            write_message(answers, [b"ok", object_code(texts, cpu, features)])
        except Exception as error:  # LLVM's parse and verify errors, reported to the caller
            write_message(answers, [b"error", str(error).encode()])
