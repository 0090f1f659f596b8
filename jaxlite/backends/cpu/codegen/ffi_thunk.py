"""FFI custom-calls on the cpu backend: generated code calls the handler directly (XLA's
CPU custom-call thunk for typed FFI handlers), with no Python on the way.

A custom-call to a registered FFI target compiles to the same kernel as any custom-call
(`custom_call.emit_custom_call`: tables of operand and result addresses, handed to an
external symbol). For an FFI target that symbol is a *thunk*: a small native function,
generated as LLVM IR when the program's custom-calls are installed and linked into the
process, that on each call

1. copies the call site's `XLA_FFI_Buffer`s (dtype codes, ranks, dimensions: fixed) from
   the site's `FrameTemplate` to its stack, and stores each buffer's data pointer there;
2. copies the template `XLA_FFI_CallFrame` (API table, context, attributes: fixed) to its
   stack and points its argument and result arrays at the stack buffers;
3. for each per-call stage (`frames.CALL_STAGES`: execute, as XLA's CPU runtime) stores
   the stage and calls the handler read from the target's slot (so re-registering a name
   takes effect in compiled programs);
4. when a handler returns an error, calls back into Python (only then) to record it; the
   executable raises it as `JaxRuntimeError` when the call returns.

State is per thunk, and a thunk per call site: the symbol is a digest of the custom-call's
attributes, which include the site number the lowering gives each FFI call
(`frames.SITE_ATTRIBUTE`), so two jitted functions calling a stateful handler alike have
separate states, as JAX's separate executables do.

The stack copies make concurrent calls safe. `instantiate`, when registered, runs once per
call site as the thunk is made (XLA runs it when it compiles). The site's template lives as
long as the process, as the thunk's code that points into it does.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any

import llvmlite.binding as llvm
import numpy as np

from jaxlite.backends.cpu import native
from jaxlite.xla.ffi import c_api, frames, registry
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape

__all__ = ["is_ffi_call", "install_ffi_thunk"]

_LOCK = threading.Lock()
_SITES: dict[str, Any] = {}   # symbol -> (template, engine): kept for the process
_REPORT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_FRAME_SIZE = ctypes.sizeof(c_api.CallFrame)
_BUFFER_SIZE = ctypes.sizeof(c_api.Buffer)
_DATA = c_api.offset_of(c_api.Buffer, "data")
_STAGE = c_api.offset_of(c_api.CallFrame, "stage")
_ARGS = c_api.offset_of(c_api.CallFrame, "args", "args")
_RETS = c_api.offset_of(c_api.CallFrame, "rets", "rets")


def is_ffi_call(inst: HloInstruction) -> bool:
    """Whether custom-call `inst` calls a registered FFI target."""
    return registry.is_registered(inst.attr("target"))


def _leaves(shape: Shape) -> list[Shape]:
    if shape.is_tuple:
        return [leaf for s in shape.tuple_shapes or () for leaf in _leaves(s)]
    return [shape]


class _Reporter:
    """The Python function a thunk calls when a handler fails: records the error as the
    executable's pending error (`record`, custom_call's) and destroys it."""

    def __init__(self, target: str, record: Any) -> None:
        self.function = _REPORT(self._report)
        self.target, self.record = target, record

    def _report(self, error: int, _unused: int) -> None:
        self.record(frames.handler_error(self.target, error or 0))

    def address(self) -> int:
        return ctypes.cast(self.function, ctypes.c_void_p).value or 0


def _ptr(address: int) -> str:
    return f"inttoptr (i64 {address} to ptr)"


def _thunk_ir(symbol: str, template: frames.FrameTemplate, target: registry.FfiTarget,
              sizes: list[int], aliases: tuple, report: int) -> str:
    """The LLVM IR of the thunk `symbol` (see the module docstring)."""
    n_args, count = template.n_args, template.n_args + template.n_rets
    lines = [f'define void @"{symbol}"(ptr %ins, ptr %outs) {{', "entry:",
             f"  %bufs = alloca [{max(1, count) * _BUFFER_SIZE} x i8], align 16",
             f"  %ptrs = alloca [{max(1, count)} x ptr], align 16",
             f"  %frame = alloca [{_FRAME_SIZE} x i8], align 16",
             f"  call void @llvm.memcpy.p0.p0.i64(ptr %bufs, ptr "
             f"{_ptr(ctypes.addressof(template.buffers))}, i64 {count * _BUFFER_SIZE}, i1 false)",
             f"  call void @llvm.memcpy.p0.p0.i64(ptr %frame, ptr "
             f"{_ptr(template.frame_address())}, i64 {_FRAME_SIZE}, i1 false)"]
    for k in range(count):
        table, index = ("%ins", k) if k < n_args else ("%outs", k - n_args)
        lines += [f"  %src{k} = getelementptr inbounds ptr, ptr {table}, i64 {index}",
                  f"  %data{k} = load ptr, ptr %src{k}, align 8",
                  f"  %buf{k} = getelementptr inbounds i8, ptr %bufs, i64 {k * _BUFFER_SIZE}",
                  f"  %dataslot{k} = getelementptr inbounds i8, ptr %buf{k}, i64 {_DATA}",
                  f"  store ptr %data{k}, ptr %dataslot{k}, align 8",
                  f"  %ptr{k} = getelementptr inbounds ptr, ptr %ptrs, i64 {k}",
                  f"  store ptr %buf{k}, ptr %ptr{k}, align 8"]
    for i, o in aliases:  # an aliased output starts as its input, as in XLA's shared buffer
        lines.append(f"  call void @llvm.memmove.p0.p0.i64(ptr %data{n_args + o}, "
                     f"ptr %data{i}, i64 {sizes[n_args + o]}, i1 false)")
    lines += [f"  %argslot = getelementptr inbounds i8, ptr %frame, i64 {_ARGS}",
              "  store ptr %ptrs, ptr %argslot, align 8",
              f"  %rets = getelementptr inbounds ptr, ptr %ptrs, i64 {n_args}",
              f"  %retslot = getelementptr inbounds i8, ptr %frame, i64 {_RETS}",
              "  store ptr %rets, ptr %retslot, align 8",
              f"  %stageslot = getelementptr inbounds i8, ptr %frame, i64 {_STAGE}"]
    for stage in frames.CALL_STAGES:
        if not target.stage(stage):
            continue
        index = c_api.STAGES.index(stage)
        slot = target.slots_address() + 8 * index
        lines += [f"  store i32 {index}, ptr %stageslot, align 4",
                  f"  %h{stage} = load ptr, ptr {_ptr(slot)}, align 8",
                  f"  %none{stage} = icmp eq ptr %h{stage}, null",
                  f"  br i1 %none{stage}, label %after{stage}, label %call{stage}",
                  f"call{stage}:",
                  f"  %err{stage} = call ptr %h{stage}(ptr %frame)",
                  f"  %bad{stage} = icmp ne ptr %err{stage}, null",
                  f"  br i1 %bad{stage}, label %fail{stage}, label %after{stage}",
                  f"fail{stage}:",
                  f"  call void {_ptr(report)}(ptr %err{stage}, ptr null)",
                  "  ret void",
                  f"after{stage}:"]
    lines += ["  ret void", "}",
              "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
              "declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)"]
    return "\n".join(lines) + "\n"


def install_ffi_thunk(inst: HloInstruction, symbol: str, record_error: Any) -> None:
    """Make, link and register under `symbol` the thunk of FFI custom-call `inst` (once per
    symbol); `record_error(exception)` keeps a handler's error for the executable."""
    with _LOCK:
        if symbol in _SITES:
            return
        target = registry.lookup(inst.attr("target"))
        if target.api_version != 1:
            raise NotImplementedError(f"FFI target {target.name!r}: jaxlite calls typed FFI "
                                      "handlers only (api_version=1)")
        operands = [leaf for o in inst.operands for leaf in _leaves(o.shape)]
        results = _leaves(inst.shape)
        for shape in [*operands, *results]:
            if shape.layout is not None and tuple(shape.layout) != tuple(
                    range(len(shape.dims) - 1, -1, -1)):
                raise NotImplementedError(f"FFI custom-call %{inst.name}: jaxlite passes "
                                          "row-major buffers only")
        layouts = list(inst.attrs.get(frames.LAYOUTS_ATTRIBUTE, ())) or \
            [()] * (len(operands) + len(results))
        told = [(frames.logical_dims(s.dims, l), s.dtype)
                for s, l in zip([*operands, *results], layouts)]
        template = frames.FrameTemplate(told[:len(operands)], told[len(operands):],
                                        inst.attr("backend_config") or "")
        template.instantiate(target)
        reporter = _Reporter(target.name, record_error)
        sizes = [int(np.prod(s.dims, dtype=np.int64)) * np.dtype(s.dtype).itemsize
                 for s in [*operands, *results]]
        aliases = tuple(inst.attrs.get(frames.ALIASES_ATTRIBUTE, ()))
        ir = _thunk_ir(symbol, template, target, sizes, aliases, reporter.address())
        engine = native.link(native.compile_object(ir))
        address = engine.get_function_address(symbol)
        llvm.add_symbol(symbol, address)
        _SITES[symbol] = (template, reporter, engine)
