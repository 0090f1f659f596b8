"""custom-call on the cpu backend: generated code calls back into Python (mirrors XLA's CPU
custom-call thunk, with a Python callback where XLA calls a registered C function).

A custom-call instruction becomes a small kernel that puts the addresses of its operand
buffers and of its result buffers into two stack tables and calls the external function
`@jl_custom_call.<digest>(ptr operands, ptr results)`. That symbol is a ctypes trampoline
(`CFUNCTYPE`: ctypes takes the GIL back for the call, which the executable released) made
for the instruction's signature: target name, backend_config, operand and result shapes
with their layouts. The trampoline wraps the buffers as numpy arrays (operands read-only),
looks the target up in `jaxlite.xla.evaluator.CUSTOM_CALL_TARGETS` at call time, calls it
as the interpreter does (`fn(instruction, *operands)`: an array, or a tuple of arrays for a
tuple result) and copies the results into the result buffers.

Layouts: a buffer holds its array in the layout its shape records (usually row-major); the
numpy views are built from the physical dimensions (major to minor) and transposed back to
the logical order, so targets always see logical arrays.

Lifetime and caching: the digest depends only on the signature, so one trampoline serves
every executable with that signature; `install_custom_calls(module)` makes (and registers
with LLVM's JIT linker) the trampolines of a module before its object code is linked,
whether that code was just generated or read from the compilation cache. Trampolines live
as long as the process: the JIT linker's symbol table is process-wide, and an executable's
code may be linked again from the cache at any time.

Typed FFI targets (`jaxlite.ffi`) get a native thunk under the same symbol instead of a
trampoline (`ffi_thunk`): the generated code calls the C handler with no Python between.

Errors: a Python exception cannot unwind through the generated code, so the trampoline
records it, later custom-calls of the same call do nothing, and the executable raises it
when the call returns (`raise_pending_error`).
"""
from __future__ import annotations

import ctypes
import hashlib
import threading
from typing import Any

import llvmlite.binding as llvm
import numpy as np

from jaxlite.backends.cpu.codegen.control_flow import control_computations
from jaxlite.backends.cpu.codegen.ffi_thunk import install_ffi_thunk, is_ffi_call
from jaxlite.backends.cpu.codegen.kernel import Kernel, kernel_function
from jaxlite.errors import JaxRuntimeError
from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS
from jaxlite.xla.ir import HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["emit_custom_call", "install_custom_calls", "raise_pending_error", "symbol_name"]

_TRAMPOLINE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_TRAMPOLINES: dict[str, Any] = {}   # symbol name -> CFUNCTYPE object (kept alive)
_LOCK = threading.Lock()


class _Pending(threading.local):
    """The first exception a custom-call target raised in this thread's current call.
    A class default rather than `getattr(..., None)`: every executable call reads it, and
    a missing thread-local attribute costs an exception internally (~1 us)."""

    error: BaseException | None = None


_PENDING = _Pending()


def _leaves(shape: Shape) -> list[Shape]:
    if shape.is_tuple:
        return [leaf for s in shape.tuple_shapes or () for leaf in _leaves(s)]
    return [shape]


def _signature(inst: HloInstruction) -> str:
    attrs = sorted((k, repr(v)) for k, v in inst.attrs.items())
    operands = [repr(leaf) + repr(leaf.layout) for o in inst.operands for leaf in _leaves(o.shape)]
    results = [repr(leaf) + repr(leaf.layout) for leaf in _leaves(inst.shape)]
    return repr((attrs, operands, results))


def symbol_name(inst: HloInstruction) -> str:
    """The external symbol the code of custom-call `inst` calls."""
    digest = hashlib.sha256(_signature(inst).encode()).hexdigest()[:24]
    return f"jl_custom_call.{digest}"


# ------------------------------------------------------------------------ emitting

def emit_custom_call(inst: HloInstruction) -> Kernel:
    """The kernel of custom-call `inst`: pointers to its operand and result buffers (one
    per array leaf), handed to the instruction's trampoline."""
    n_in = sum(len(_leaves(o.shape)) for o in inst.operands)
    n_out = len(_leaves(inst.shape))
    fb, ins, outs = kernel_function(n_in, n_out, noalias=False)
    tables = []
    for refs, hint in ((ins, "ins"), (outs, "outs")):
        table = fb.alloca(f"[{max(1, len(refs))} x ptr]", 8, hint)
        for k, ref in enumerate(refs):
            slot = fb.op(f"getelementptr inbounds ptr, ptr {table}, i64 {k}", "slot")
            fb.do(f"store ptr {ref}, ptr {slot}, align 8")
        tables.append(table)
    symbol = symbol_name(inst)
    fb.do(f"call void @\"{symbol}\"(ptr {tables[0]}, ptr {tables[1]})")
    fb.ret_void()
    declaration = f"declare void @\"{symbol}\"(ptr, ptr)"
    return Kernel(fb.text(), n_in, n_out, units=1, declarations=(declaration,))


# ---------------------------------------------------------------------- trampolines

def _view(address: int, shape: Shape) -> np.ndarray:
    """The logical array stored at `address` in `shape`'s layout (a view, no copy)."""
    dims = shape.dims
    layout = shape.layout if shape.layout is not None else tuple(range(len(dims) - 1, -1, -1))
    major_to_minor = tuple(reversed(layout))
    physical = tuple(dims[d] for d in major_to_minor)
    count = int(np.prod(physical, dtype=np.int64))
    if count == 0 or not address:
        return np.zeros(dims, shape.dtype)
    raw = (ctypes.c_char * (count * shape.dtype.itemsize)).from_address(address)
    flat = np.frombuffer(raw, dtype=shape.dtype, count=count)
    return flat.reshape(physical).transpose(np.argsort(major_to_minor))


def _addresses(table: int, count: int) -> list[int]:
    if count == 0:
        return []
    return [a or 0 for a in (ctypes.c_void_p * count).from_address(table)]


def _make_trampoline(inst: HloInstruction) -> Any:
    operand_shapes = [leaf for o in inst.operands for leaf in _leaves(o.shape)]
    result_shapes = _leaves(inst.shape)
    target = inst.attr("target")

    def run(operands: int, results: int) -> None:
        if _PENDING.error is not None:
            # An earlier target of this call failed, and the call will raise: run no more
            # targets (XLA stops at the failure; a later host callback could wait for input).
            return
        try:
            views = []
            for address, shape in zip(_addresses(operands, len(operand_shapes)),
                                      operand_shapes):
                view = _view(address, shape)
                view.flags.writeable = False
                views.append(view)
            out = CUSTOM_CALL_TARGETS[target](inst, *views)
            values = list(out) if inst.shape.is_tuple else [out]
            for address, shape, value in zip(_addresses(results, len(result_shapes)),
                                              result_shapes, _flatten(values)):
                value = np.asarray(value)
                if value.shape != shape.dims:
                    raise ValueError(f"custom-call target {target!r} returned shape "
                                     f"{value.shape} for a result of shape {shape}")
                np.copyto(_view(address, shape), value, casting="unsafe")
        except BaseException as error:  # noqa: BLE001 (re-raised by the executable)
            if _PENDING.error is None:  # the first failure is the cause
                _PENDING.error = error

    return _TRAMPOLINE(run)


def _flatten(values: list[Any]) -> list[Any]:
    flat: list[Any] = []
    for v in values:
        flat.extend(_flatten(list(v)) if isinstance(v, tuple) else [v])
    return flat


def _custom_calls(module: HloModule) -> list[HloInstruction]:
    # Fusions never hold custom-calls: only control flow reaches the ones a module runs.
    return [inst for comp in control_computations(module) for inst in comp.instructions
            if inst.opcode is Opcode.CUSTOM_CALL]


def install_custom_calls(module: HloModule) -> None:
    """Make and register the trampolines of every custom-call of `module` (before its code
    is linked). Raises NotImplementedError for a target nobody registered."""
    for inst in _custom_calls(module):
        target = inst.attr("target")
        if is_ffi_call(inst):  # a native thunk calls the C handler: no Python in between
            install_ffi_thunk(inst, symbol_name(inst), _record_error)
            continue
        if target not in CUSTOM_CALL_TARGETS:
            known = ", ".join(sorted(CUSTOM_CALL_TARGETS)) or "none"
            raise NotImplementedError(
                f"the cpu backend cannot compile custom-call %{inst.name}: no target "
                f"{target!r} is registered in jaxlite.xla.evaluator.CUSTOM_CALL_TARGETS "
                f"(registered: {known})")
        name = symbol_name(inst)
        with _LOCK:
            if name not in _TRAMPOLINES:
                trampoline = _make_trampoline(inst)
                _TRAMPOLINES[name] = trampoline
                llvm.add_symbol(name, ctypes.cast(trampoline, ctypes.c_void_p).value)


def _record_error(error: BaseException) -> None:
    if _PENDING.error is None:  # the first failure is the cause
        _PENDING.error = error


def raise_pending_error() -> None:
    """Raise the exception a custom-call target raised during the last call on this
    thread, if any."""
    error = _PENDING.error
    if error is not None:
        _PENDING.error = None
        if isinstance(error, JaxRuntimeError):  # a host callback's report, JAX's error type
            raise error
        if not isinstance(error, Exception):  # Ctrl-C in a host callback stays KeyboardInterrupt
            raise error
        raise RuntimeError(f"a custom-call target failed: {error!r}") from error
