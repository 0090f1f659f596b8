"""The structures of XLA's FFI C API (`xla/ffi/api/c_api.h`) as ctypes structures.

A typed FFI handler is a C function `XLA_FFI_Error* handler(XLA_FFI_CallFrame*)`. The
call frame carries a pointer to the API's function table (`XLA_FFI_Api`), the execution
stage, and three arrays: arguments and results (pointers to `XLA_FFI_Buffer`: dtype code,
data pointer, rank, dimensions) and attributes (sorted by name; each a scalar, an array,
a string or a dictionary). Every structure starts with `struct_size` (the offset of its
last field plus that field's size, which handlers check) and an extension pointer.

Only the layouts live here; `api_table` fills the function table and `frames` builds the
call frames.
"""
from __future__ import annotations

import ctypes
from typing import Any

import ml_dtypes
import numpy as np

__all__ = ["API_FUNCTIONS", "offset_of", "Extension", "Buffer", "Args", "Rets", "Attrs", "CallFrame", "ByteSpan", "Scalar",
           "Array", "Api", "ApiVersion", "ErrorCreateArgs", "ErrorGetMessageArgs",
           "ErrorDestroyArgs", "StreamGetArgs", "StateSetArgs", "StateGetArgs",
           "TypeRegisterArgs", "TypeInfo", "ContextGetArgs", "RunIdGetArgs", "DeviceOrdinalGetArgs",
           "HandlerRegisterArgs", "HandlerBundle", "ThreadPoolNumThreadsArgs",
           "Metadata", "MetadataExtension", "EXTENSION_METADATA", "struct_size", "dtype_code", "STAGES", "EXECUTE", "ARG_BUFFER", "ATTR_ARRAY",
           "ATTR_DICTIONARY", "ATTR_SCALAR", "ATTR_STRING", "API_MAJOR", "API_MINOR"]

API_MAJOR, API_MINOR = 0, 3   # the version of the C API these layouts follow

# Execution stages, in the order XLA runs them.
STAGES = ("instantiate", "prepare", "initialize", "execute")
EXECUTE = 3

ARG_BUFFER = 1                 # XLA_FFI_ArgType_BUFFER (and XLA_FFI_RetType_BUFFER)
ATTR_ARRAY, ATTR_DICTIONARY, ATTR_SCALAR, ATTR_STRING = 1, 2, 3, 4

_P = ctypes.c_void_p
_I64 = ctypes.c_int64
_SIZE = ctypes.c_size_t
_ENUM = ctypes.c_int32          # C enums are ints on the platforms XLA supports


class Extension(ctypes.Structure):
    _fields_ = [("struct_size", _SIZE), ("type", _ENUM), ("next", _P)]


def _struct(name: str, fields: list[tuple[str, Any]]) -> type[ctypes.Structure]:
    """A C API structure: `struct_size`, `extension_start`, then `fields`."""
    head: list[tuple[str, Any]] = [("struct_size", _SIZE), ("extension_start", _P)]
    return type(name, (ctypes.Structure,), {"_fields_": head + fields})


ApiVersion = _struct("ApiVersion", [("major_version", ctypes.c_int),
                                    ("minor_version", ctypes.c_int)])
Buffer = _struct("Buffer", [("dtype", _ENUM), ("data", _P), ("rank", _I64),
                            ("dims", ctypes.POINTER(_I64))])
Args = _struct("Args", [("size", _I64), ("types", _P), ("args", _P)])
Rets = _struct("Rets", [("size", _I64), ("types", _P), ("rets", _P)])
Attrs = _struct("Attrs", [("size", _I64), ("types", _P), ("names", _P), ("attrs", _P)])
CallFrame = _struct("CallFrame", [("api", _P), ("ctx", _P), ("stage", _ENUM), ("args", Args),
                                  ("rets", Rets), ("attrs", Attrs), ("future", _P)])
ErrorCreateArgs = _struct("ErrorCreateArgs", [("message", ctypes.c_char_p), ("errc", _ENUM)])
ErrorGetMessageArgs = _struct("ErrorGetMessageArgs", [("error", _P), ("message", _P)])
ErrorDestroyArgs = _struct("ErrorDestroyArgs", [("error", _P)])
StreamGetArgs = _struct("StreamGetArgs", [("ctx", _P), ("stream", _P)])
StateSetArgs = _struct("StateSetArgs", [("ctx", _P), ("stage", _ENUM), ("type_id", _P),
                                        ("state", _P)])
StateGetArgs = _struct("StateGetArgs", [("ctx", _P), ("stage", _ENUM), ("type_id", _P),
                                        ("state", _P)])
ContextGetArgs = _struct("ContextGetArgs", [("ctx", _P), ("type_id", _P), ("data", _P)])
RunIdGetArgs = _struct("RunIdGetArgs", [("ctx", _P), ("run_id", _I64)])
DeviceOrdinalGetArgs = _struct("DeviceOrdinalGetArgs", [("ctx", _P),
                                                        ("device_ordinal", ctypes.c_int32)])
ThreadPoolNumThreadsArgs = _struct("ThreadPoolNumThreadsArgs", [("ctx", _P),
                                                                ("num_threads", _P)])


class Metadata(ctypes.Structure):
    _fields_ = [("struct_size", _SIZE), ("api_version", ApiVersion),
                ("traits", ctypes.c_uint32), ("state_type_id", _I64)]


class MetadataExtension(ctypes.Structure):
    _fields_ = [("extension_base", Extension), ("metadata", _P)]


EXTENSION_METADATA = 1   # XLA_FFI_Extension_Metadata


class ByteSpan(ctypes.Structure):
    _fields_ = [("ptr", _P), ("len", _SIZE)]


class Scalar(ctypes.Structure):
    _fields_ = [("dtype", _ENUM), ("value", _P)]


class Array(ctypes.Structure):
    _fields_ = [("dtype", _ENUM), ("size", _SIZE), ("data", _P)]


class HandlerBundle(ctypes.Structure):
    _fields_ = [(stage, _P) for stage in STAGES]


HandlerRegisterArgs = _struct("HandlerRegisterArgs", [("name", ByteSpan), ("platform", ByteSpan),
                                                      ("bundle", HandlerBundle),
                                                      ("traits", ctypes.c_uint32)])
TypeInfo = _struct("TypeInfo", [("deleter", _P)])
TypeRegisterArgs = _struct("TypeRegisterArgs", [("name", ByteSpan), ("type_id", _P),
                                                ("type_info", _P)])

# The function table, in the header's order; `api_table` fills the slots.
API_FUNCTIONS = ("Error_Create", "Error_GetMessage", "Error_Destroy", "Handler_Register",
                 "Stream_Get", "Type_Register", "ExecutionContext_Get", "State_Set",
                 "State_Get", "DeviceMemory_Allocate", "DeviceMemory_Free",
                 "ThreadPool_Schedule", "ThreadPool_NumThreads", "Future_Create",
                 "Future_SetAvailable", "Future_SetError", "RunId_Get", "DeviceOrdinal_Get")
Api = _struct("Api", [("api_version", ApiVersion), ("internal_api", _P)]
              + [(f"XLA_FFI_{name}", _P) for name in API_FUNCTIONS])


def offset_of(structure: type[ctypes.Structure], *path: str) -> int:
    """The byte offset of a (nested) field, e.g. `offset_of(CallFrame, "args", "args")`:
    where code that writes frames without ctypes (the cpu backend's thunks) stores."""
    offset = 0
    for name in path:
        field = getattr(structure, name)
        offset += field.offset
        structure = dict(structure._fields_)[name]
    return offset


def struct_size(structure: type[ctypes.Structure], last_field: str) -> int:
    """The header's `XLA_FFI_STRUCT_SIZE`: the end of `last_field`."""
    field = getattr(structure, last_field)
    return field.offset + field.size


# XLA_FFI_DataType codes of the dtypes jaxlite arrays may hold.
_CODES = {np.dtype(np.bool_): 1, np.dtype(np.int8): 2, np.dtype(np.int16): 3,
          np.dtype(np.int32): 4, np.dtype(np.int64): 5, np.dtype(np.uint8): 6,
          np.dtype(np.uint16): 7, np.dtype(np.uint32): 8, np.dtype(np.uint64): 9,
          np.dtype(np.float16): 10, np.dtype(np.float32): 11, np.dtype(np.float64): 12,
          np.dtype(np.complex64): 15, np.dtype(ml_dtypes.bfloat16): 16,
          np.dtype(np.complex128): 18, np.dtype(ml_dtypes.float8_e5m2): 19,
          np.dtype(ml_dtypes.float8_e4m3fn): 20, np.dtype(ml_dtypes.int4): 21,
          np.dtype(ml_dtypes.uint4): 22, np.dtype(ml_dtypes.float8_e4m3b11fnuz): 23,
          np.dtype(ml_dtypes.float8_e5m2fnuz): 24, np.dtype(ml_dtypes.float8_e4m3fnuz): 25}


def dtype_code(dtype: Any) -> int:
    """The XLA_FFI_DataType code of a numpy dtype."""
    try:
        return _CODES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"the XLA FFI has no data type for {np.dtype(dtype)}") from None
