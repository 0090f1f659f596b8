"""Call frames for FFI handlers, and calling them from Python (the eager path and the
interpreter backend; the cpu backend's generated code builds its frames itself).

A `FrameTemplate` is everything about one call site's frame that does not change from call
to call: the argument and result buffers' dtype codes, ranks and dimensions, the type
arrays, the attributes, the API table, the context. Per call only the buffers' data
pointers differ. `FrameTemplate.buffers` holds the `XLA_FFI_Buffer`s of the arguments then
the results, `pointers` an array of pointers to them, and `frame` the `XLA_FFI_CallFrame`
whose `args.args` and `rets.rets` point into `pointers`.

Eager calls keep one template per signature (target, shapes, attributes), as JAX keeps
one compiled computation per eager signature; compiled call sites have their own. A
compiled call site is one custom-call of one lowering: the lowering numbers each FFI
custom-call (`SITE_ATTRIBUTE`), so two jitted functions that call a handler alike, or one
function lowered again for new shapes, have separate states, as JAX's separate executables
do; calling the same executable again keeps its state.

Stages, as XLA's CPU runtime runs typed handlers: `instantiate` once per call site,
before its first call, with the attributes and no buffers; then `execute` on every call
with the full frame. XLA's CPU runtime never runs `prepare` and `initialize` (checked with
JAX 0.10.2: a handler registered for all four stages sees instantiate once and execute per
call), and neither does jaxlite's (`CALL_STAGES`). A handler's error
becomes `JaxRuntimeError` with the handler's message, as in JAX.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
import weakref
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from jaxlite.errors import JaxRuntimeError
from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS
from jaxlite.xla.ffi import api_table, c_api, registry
from jaxlite.xla.ffi.attributes import AttributeBlock
from jaxlite.xla.ir import HloInstruction

__all__ = ["ALIASES_ATTRIBUTE", "LAYOUTS_ATTRIBUTE", "SITE_ATTRIBUTE", "new_site", "logical_dims", "CALL_STAGES", "FrameTemplate", "call_target", "handler_error",
           "install_evaluator_target"]

_HANDLER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
BUFFER_SIZE = c_api.struct_size(c_api.Buffer, "dims")
# The stages a CPU call runs, in order (see the module docstring).
CALL_STAGES = ("execute",)
# The custom-call attribute naming (input, output) pairs that share a buffer.
ALIASES_ATTRIBUTE = "ffi_aliases"
# The custom-call attribute giving, per argument then result, the major-to-minor order of
# its buffer's axes when not row-major (`()` when row-major): the operand is the array
# laid out in that order, and the handler is told the logical dimensions.
LAYOUTS_ATTRIBUTE = "ffi_layouts"
# The custom-call attribute numbering FFI call sites (unique in the process): the handler's
# state belongs to one site, as XLA's belongs to one custom-call of one executable.
SITE_ATTRIBUTE = "ffi_site"
_SITES = itertools.count()


def new_site() -> int:
    """A fresh call-site number (for `SITE_ATTRIBUTE`): each FFI custom-call that a
    lowering or a reader makes is a site of its own."""
    return next(_SITES)


def logical_dims(physical: Sequence[int], layout: Sequence[int]) -> tuple[int, ...]:
    """The dimensions a handler sees for a buffer of `physical` dimensions stored with
    major-to-minor `layout` (empty: row-major, the same)."""
    if not layout:
        return tuple(physical)
    dims = [0] * len(physical)
    for k, axis in enumerate(layout):
        dims[axis] = physical[k]
    return tuple(dims)


def handler_error(target: str, error: int) -> JaxRuntimeError:
    """The exception for an error a handler returned (the error is destroyed)."""
    message = api_table.error_message(error)
    api_table.destroy_error(error)
    return JaxRuntimeError(f"{message}\n(the error of the FFI handler of {target!r})")


class FrameTemplate:
    """The fixed parts of one call site's frame (see the module docstring)."""

    def __init__(self, operands: Sequence[tuple[tuple[int, ...], Any]],
                 results: Sequence[tuple[tuple[int, ...], Any]], attributes: str) -> None:
        self.n_args, self.n_rets = len(operands), len(results)
        count = self.n_args + self.n_rets
        self._keep: list[Any] = []
        self.buffers = (c_api.Buffer * max(1, count))()
        self.pointers = (ctypes.c_void_p * max(1, count))()
        for i, (dims, dtype) in enumerate([*operands, *results]):
            extents = (ctypes.c_int64 * max(1, len(dims)))(*dims)
            self._keep.append(extents)
            self.buffers[i] = c_api.Buffer(struct_size=BUFFER_SIZE, dtype=c_api.dtype_code(dtype),
                                           rank=len(dims), dims=extents)
            self.pointers[i] = ctypes.addressof(self.buffers[i])
        types = (ctypes.c_int32 * max(1, count))(*[c_api.ARG_BUFFER] * count)
        self.attributes = AttributeBlock(attributes)
        self.context = api_table.new_context()
        # The context's state is deleted with the template (not at exit: the handlers'
        # library may be gone by then).
        weakref.finalize(self, api_table.drop_context, self.context).atexit = False
        frame = c_api.CallFrame(struct_size=c_api.struct_size(c_api.CallFrame, "attrs"),
                                api=api_table.api_address(), ctx=self.context,
                                stage=c_api.EXECUTE)
        frame.args = c_api.Args(struct_size=c_api.struct_size(c_api.Args, "args"),
                                size=self.n_args, types=ctypes.addressof(types),
                                args=ctypes.addressof(self.pointers))
        frame.rets = c_api.Rets(struct_size=c_api.struct_size(c_api.Rets, "rets"),
                                size=self.n_rets, types=ctypes.addressof(types),
                                rets=ctypes.addressof(self.pointers) + 8 * self.n_args)
        frame.attrs = self.attributes.attrs
        self.frame = frame
        self._keep.append(types)

    def frame_address(self) -> int:
        return ctypes.addressof(self.frame)

    def instantiate(self, target: registry.FfiTarget) -> None:
        """Run the bundle's instantiate handler, if any (attributes only, no buffers)."""
        address = target.stage("instantiate")
        if address:
            frame = c_api.CallFrame.from_buffer_copy(self.frame)
            frame.args.size = frame.rets.size = 0
            frame.stage = c_api.STAGES.index("instantiate")
            error = _HANDLER(address)(ctypes.addressof(frame))
            if error:
                raise handler_error(target.name, error)

    def run(self, target: registry.FfiTarget, addresses: Sequence[int]) -> None:
        """Call the bundle's per-call stages on buffers at `addresses` (arguments, then
        results)."""
        for i, address in enumerate(addresses):
            self.buffers[i].data = address
        for stage in CALL_STAGES:
            handler = target.stage(stage)
            if handler:
                self.frame.stage = c_api.STAGES.index(stage)
                error = _HANDLER(handler)(self.frame_address())
                if error:
                    raise handler_error(target.name, error)


# Eager calls reuse one template per call signature (as JAX compiles an eager call once
# and reuses it): its instantiate stage runs once and its state lives on between calls.
_EAGER_SITES: "OrderedDict[tuple, tuple[FrameTemplate, threading.Lock]]" = OrderedDict()
_EAGER_CAPACITY = 256
_EAGER_LOCK = threading.Lock()


def _eager_site(target: registry.FfiTarget, operands: Sequence[tuple[tuple[int, ...], Any]],
                results: Sequence[tuple[tuple[int, ...], Any]],
                attributes: str, site: Any) -> tuple[FrameTemplate, threading.Lock]:
    key = (target.name, tuple(target.slots), tuple(operands), tuple(results), attributes,
           site)
    with _EAGER_LOCK:
        site = _EAGER_SITES.get(key)
        if site is not None:
            _EAGER_SITES.move_to_end(key)
            return site
    template = FrameTemplate(operands, results, attributes)
    template.instantiate(target)
    with _EAGER_LOCK:
        site = _EAGER_SITES.setdefault(key, (template, threading.Lock()))
        while len(_EAGER_SITES) > _EAGER_CAPACITY:
            _EAGER_SITES.popitem(last=False)
    return site


def call_target(name: str, operands: Sequence[np.ndarray],
                results: Sequence[tuple[tuple[int, ...], Any]], attributes: str,
                aliases: Sequence[tuple[int, int]] = (),
                layouts: Sequence[Sequence[int]] = (), site: Any = None) -> list:
    """Call FFI target `name` on numpy `operands`; fresh result arrays of the `results`
    (shape, dtype) pairs. An (input, output) pair of `aliases` starts the output as a copy
    of the input, as the shared buffer XLA gives such a pair. `layouts` (per argument then
    result, see `LAYOUTS_ATTRIBUTE`) says which buffers are stored in another axis order.
    `site` names a compiled call site (`SITE_ATTRIBUTE`), None an eager call: each has its
    own state."""
    target = registry.lookup(name)
    if target.api_version != 1:
        raise NotImplementedError(f"FFI target {name!r}: jaxlite calls typed FFI handlers "
                                  "only (registered with api_version=1)")
    arrays = [np.asarray(x, order="C") for x in operands]
    outs = [np.zeros(shape, dtype) for shape, dtype in results]
    for i, o in aliases:
        outs[o][...] = arrays[i]
    layouts = list(layouts) or [()] * (len(arrays) + len(results))
    signature = [(logical_dims(a.shape, l), np.dtype(a.dtype))
                 for a, l in zip(arrays, layouts)]
    returned = [(logical_dims(s, l), np.dtype(d))
                for (s, d), l in zip(results, layouts[len(arrays):])]
    template, lock = _eager_site(target, signature, returned, attributes, site)
    with lock:  # the template's buffers are rewritten per call
        template.run(target, [a.ctypes.data if a.size else 0 for a in [*arrays, *outs]])
    return outs


def _evaluate(inst: HloInstruction, *operands: np.ndarray) -> tuple:
    """The custom-call target of the HLO evaluator: the instruction's results as a tuple."""
    shapes = [(s.dims, s.dtype) for s in inst.shape.tuple_shapes or ()]
    return tuple(call_target(inst.attr("target"), operands, shapes,
                             inst.attr("backend_config") or "",
                             inst.attrs.get(ALIASES_ATTRIBUTE, ()),
                             inst.attrs.get(LAYOUTS_ATTRIBUTE, ()),
                             inst.attrs.get(SITE_ATTRIBUTE)))


def install_evaluator_target(name: str) -> None:
    """Let programs run by the HLO evaluator (and host-called custom calls) call `name`."""
    CUSTOM_CALL_TARGETS[name] = _evaluate
