"""Typed FFI custom calls on the gpu backend (XLA's GPU custom-call thunk for handlers
registered with `jax.ffi.register_ffi_target(..., platform="CUDA")` or "ROCM").

The handler runs on the device's memory: its argument and result buffers are the
executable's device arrays (their device addresses in the call frame, no host copy), and
`XLA_FFI_Stream_Get` answers the launcher's stream, on which the handler enqueues its
work, in order with the kernels before and after it, as XLA gives a handler the
executable's stream. The call itself is made from Python when the program reaches it
(the frame is `xla.ffi.frames.FrameTemplate`, built once per call site; its
`instantiate` stage runs at compile time). Results are fresh allocations from the
launcher's pool; an (input, output) pair of `input_output_aliases` starts the output as
a device copy of the input, which is what the shared buffer XLA gives such a pair holds.

The interpreter launcher calls no GPU handler (its memory is the host's, where a CUDA
handler's kernels cannot run): there an FFI call goes to the host fallback, which calls
the target's CPU handler when one is registered.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from jaxlite.xla.ffi import api_table, frames, registry
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.shape import Shape

__all__ = ["ffi_rule"]


def _row_major(shape: Shape) -> bool:
    rank = len(shape.dims)
    return not shape.layout or tuple(shape.layout) == tuple(range(rank - 1, -1, -1))


def ffi_rule(inst: HloInstruction, launcher: Any) -> tuple[Callable[[list[Any]], Any] | None,
                                                            str]:
    """(`operands -> results`, "") calling the FFI handler of the custom call `inst` on
    device memory, or (None, why not) when its target has no handler for the launcher's
    `ffi_platform` ("cuda", "rocm"; None: calls none) or its buffers are not row-major."""
    platform = launcher.ffi_platform
    name = inst.attr("target")
    if platform is None or not registry.is_registered(name, platform):
        return None, ""
    target = registry.lookup(name, platform)
    if target.api_version != 1:
        return None, f"FFI target {name!r} is not a typed handler (api_version=1)"
    results = list(inst.shape.tuple_shapes or ())
    if not all(_row_major(s) for s in [o.shape for o in inst.operands] + results):
        return None, f"FFI call {name!r} with buffers in another layout than row-major"
    return _FfiCall(inst, launcher, target, results), ""


class _FfiCall:
    """One call site: its frame template (instantiated, told the launcher's stream) and
    the lock that keeps two calls from writing its buffer addresses at once."""

    def __init__(self, inst: HloInstruction, launcher: Any, target: registry.FfiTarget,
                 results: list[Shape]) -> None:
        self.launcher, self.target, self.results = launcher, target, results
        layouts = list(inst.attrs.get(frames.LAYOUTS_ATTRIBUTE, ())) or \
            [()] * (len(inst.operands) + len(results))
        shapes = [o.shape for o in inst.operands] + results
        told = [(frames.logical_dims(s.dims, l), np.dtype(s.dtype))
                for s, l in zip(shapes, layouts)]
        self.aliases = tuple(tuple(pair) for pair in inst.attrs.get(frames.ALIASES_ATTRIBUTE,
                                                                     ()))
        self.template = frames.FrameTemplate(told[:len(inst.operands)],
                                             told[len(inst.operands):],
                                             inst.attr("backend_config") or "")
        self.template.instantiate(target)
        api_table.set_stream(self.template.context, launcher.stream_pointer())
        self.lock = threading.Lock()

    def __call__(self, operands: list[Any]) -> tuple:
        launcher = self.launcher
        outs = [launcher.empty(s.size, s.dtype) for s in self.results]
        for source, result in self.aliases:
            outs[result] = launcher.xp.copy(operands[source])
        addresses = [launcher.pointer(a) if a.size else 0 for a in [*operands, *outs]]
        with self.lock:
            self.template.run(self.target, addresses)
        return tuple(outs)
