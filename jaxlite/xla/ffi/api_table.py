"""jaxlite's `XLA_FFI_Api`: the function table every call frame points to (the C API's
`XLA_FFI_GetApi()` of XLA's CPU runtime).

Handlers built with XLA's headers call through it for what they cannot do alone: make
and read errors, ask for the stream (none on the CPU; on the gpu backend the stream its
call site was given with `set_stream`), keep per-call-site state between
stages, look up registered types. The functions are ctypes callbacks: none of them is on
the path of a handler that succeeds without state, which calls nothing.

Errors are numbered records (code, message) behind opaque non-null pointers; the caller
of a handler turns a returned error into `JaxRuntimeError` and destroys it. State is kept
per execution context, the number a call site hands to its handlers as `ctx`.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from typing import Any

from jaxlite.xla.ffi import c_api

__all__ = ["api_address", "register_type", "error_message", "destroy_error", "new_context", "drop_context",
           "set_stream", "ERROR_CODES"]

ERROR_CODES = {1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
               5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED",
               8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION", 10: "ABORTED",
               11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED", 13: "INTERNAL", 14: "UNAVAILABLE",
               15: "DATA_LOSS", 16: "UNAUTHENTICATED"}

_LOCK = threading.Lock()
_NUMBERS = itertools.count(1)
_ERRORS: dict[int, tuple[int, bytes]] = {}          # error pointer -> (code, message)
_STATES: dict[int, dict[tuple[int, int], int]] = {}  # ctx -> {(stage, type id): state}
_TYPES: dict[bytes, int] = {}                         # registered type name -> type id
_DELETERS: dict[int, int] = {}                        # type id -> its deleter's address
_STREAMS: dict[int, int] = {}                         # ctx -> its GPU stream (the gpu backend's)
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _new_error(code: int, message: str) -> int:
    with _LOCK:
        number = next(_NUMBERS)
        _ERRORS[number] = (code, message.encode())
    return number


def error_message(error: int) -> str:
    """`code: message` of an error a handler returned."""
    code, message = _ERRORS.get(error, (2, b"unknown error"))
    return f"{ERROR_CODES.get(code, 'UNKNOWN')}: {message.decode(errors='replace')}"


def destroy_error(error: int) -> None:
    """Forget an error (the C API's Error_Destroy)."""
    with _LOCK:
        _ERRORS.pop(error, None)


def new_context() -> int:
    """A fresh execution context: the `ctx` of one call site, holding its handlers' state."""
    with _LOCK:
        number = next(_NUMBERS)
        _STATES[number] = {}
    return number


def drop_context(ctx: int) -> None:
    """Forget a context's state (its call site will not run again), deleting each state
    object with its type's deleter when the type was registered with one."""
    with _LOCK:
        states = _STATES.pop(ctx, {})
        _STREAMS.pop(ctx, None)
    for (_stage, type_id), state in states.items():
        deleter = _DELETERS.get(type_id)
        if deleter and state:
            _DELETER(deleter)(state)


# ------------------------------------------------------------ the table's functions

def _args(address: int, structure: type[ctypes.Structure]) -> Any:
    return structure.from_address(address)


def _error_create(address: int) -> int:
    args = _args(address, c_api.ErrorCreateArgs)
    return _new_error(args.errc, (args.message or b"").decode(errors="replace"))


def _error_get_message(address: int) -> None:
    args = _args(address, c_api.ErrorGetMessageArgs)
    _code, message = _ERRORS.get(args.error or 0, (2, b"unknown error"))
    # The bytes live in the error's record until the error is destroyed.
    args.message = ctypes.cast(ctypes.c_char_p(message), ctypes.c_void_p).value


def _error_destroy(address: int) -> None:
    destroy_error(_args(address, c_api.ErrorDestroyArgs).error or 0)


def _handler_register(address: int) -> int:
    return _new_error(12, "jaxlite registers FFI handlers with jax.ffi.register_ffi_target, "
                          "not from C (XLA_FFI_Handler_Register)")


def set_stream(ctx: int, stream: int) -> None:
    """Let the handlers of context `ctx` get `stream` (a `cudaStream_t` / `hipStream_t`
    address) from Stream_Get: the gpu backend's call sites, where the handler enqueues
    its work on the executable's stream. Contexts without one (the CPU's) get null."""
    with _LOCK:
        _STREAMS[ctx] = stream


def _stream_get(address: int) -> int:
    args = _args(address, c_api.StreamGetArgs)
    args.stream = _STREAMS.get(args.ctx or 0) or None  # the CPU has no stream
    return 0


def _type_register(address: int) -> int:
    args = _args(address, c_api.TypeRegisterArgs)
    register_type(ctypes.string_at(args.name.ptr, args.name.len), args.type_id,
                  args.type_info or 0)
    return 0


def register_type(name: bytes, type_id_address: int, type_info_address: int = 0) -> int:
    """Give type `name` an id (kept if it has one), written to the `XLA_FFI_TypeId` at
    `type_id_address`; the same name always gets the same id. `type_info_address`: the
    type's `XLA_FFI_TypeInfo` (its deleter frees the state objects of dropped contexts)."""
    type_id = ctypes.c_int64.from_address(type_id_address)
    with _LOCK:
        if name not in _TYPES:
            _TYPES[name] = type_id.value or next(_NUMBERS)
        type_id.value = _TYPES[name]
        if type_info_address:
            info = c_api.TypeInfo.from_address(type_info_address)
            if info.deleter:
                _DELETERS[type_id.value] = info.deleter
    return type_id.value


def _state_key(args: Any) -> tuple[int, int]:
    return (args.stage, ctypes.c_int64.from_address(args.type_id).value if args.type_id else 0)


def _state_set(address: int) -> int:
    args = _args(address, c_api.StateSetArgs)
    with _LOCK:
        states = _STATES.get(args.ctx or 0)
        if states is None:
            return _new_error(9, "no execution context to keep FFI state in")
        states[_state_key(args)] = args.state or 0
    return 0


def _state_get(address: int) -> int:
    args = _args(address, c_api.StateGetArgs)
    states = _STATES.get(args.ctx or 0, {})
    key = _state_key(args)
    if key not in states:
        return _new_error(5, f"no FFI state of type id {key[1]} for stage {key[0]}")
    args.state = states[key]
    return 0


def _unimplemented(what: str):
    def function(address: int) -> int:
        return _new_error(12, f"jaxlite's CPU FFI does not implement {what}")
    return function


def _run_id_get(address: int) -> int:
    _args(address, c_api.RunIdGetArgs).run_id = 0
    return 0


def _device_ordinal_get(address: int) -> int:
    _args(address, c_api.DeviceOrdinalGetArgs).device_ordinal = 0
    return 0


_RETURNS_ERROR = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_RETURNS_NOTHING = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_FUNCTIONS = {
    "Error_Create": _RETURNS_ERROR(_error_create),
    "Error_GetMessage": _RETURNS_NOTHING(_error_get_message),
    "Error_Destroy": _RETURNS_NOTHING(_error_destroy),
    "Handler_Register": _RETURNS_ERROR(_handler_register),
    "Stream_Get": _RETURNS_ERROR(_stream_get),
    "Type_Register": _RETURNS_ERROR(_type_register),
    "State_Set": _RETURNS_ERROR(_state_set),
    "State_Get": _RETURNS_ERROR(_state_get),
    "RunId_Get": _RETURNS_ERROR(_run_id_get),
    "DeviceOrdinal_Get": _RETURNS_ERROR(_device_ordinal_get),
}
for _name in c_api.API_FUNCTIONS:
    if _name not in _FUNCTIONS:
        _FUNCTIONS[_name] = _RETURNS_ERROR(_unimplemented(f"XLA_FFI_{_name}"))


def _make_api() -> Any:
    api = c_api.Api()
    api.struct_size = c_api.struct_size(c_api.Api, "XLA_FFI_DeviceOrdinal_Get")
    api.api_version.struct_size = c_api.struct_size(c_api.ApiVersion, "minor_version")
    api.api_version.major_version = c_api.API_MAJOR
    api.api_version.minor_version = c_api.API_MINOR
    for name, function in _FUNCTIONS.items():
        setattr(api, f"XLA_FFI_{name}", ctypes.cast(function, ctypes.c_void_p).value)
    return api


_API = _make_api()   # lives as long as the process: compiled code holds its address


def api_address() -> int:
    """The address of jaxlite's XLA_FFI_Api table."""
    return ctypes.addressof(_API)
