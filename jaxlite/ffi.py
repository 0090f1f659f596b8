"""`jaxlite.ffi`: call C/C++ functions written for XLA's typed FFI (mirrors `jax.ffi`).

A handler built against XLA's headers (`xla/ffi/api/ffi.h`) runs unchanged: register it
with `register_ffi_target(name, pycapsule(lib.Handler))` and call it with
`ffi_call(name, result_shape_dtypes, vmap_method=...)(*arrays, **attributes)`. Eagerly and
on the interpreter backend jaxlite builds the call frame in Python; under `jit` on the cpu
backend the generated code builds it and calls the handler directly. The machinery lives in
`jaxlite.xla.ffi` (the C API) and `jaxlite.lax.ffi_call` (the primitive).
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray
from jaxlite.lax.broadcast import transpose
from jaxlite.lax.ffi_call import VMAP_METHODS, ffi_call_p, lower_ffi_custom_call
from jaxlite.xla.ffi import api_table, frames, registry
from jaxlite.xla.ffi.attributes import encode_attributes

__all__ = ["build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir",
           "pycapsule", "register_ffi_target", "register_ffi_target_as_batch_partitionable",
           "register_ffi_type", "register_ffi_type_id"]

_BATCH_PARTITIONABLE: set[str] = set()


def register_ffi_target(name: str, fn: Any, platform: str = "cpu", api_version: int = 1,
                        **kwargs: Any) -> None:
    """Register a foreign function target (mirrors `jax.ffi.register_ffi_target`).

    `fn` is a PyCapsule holding the handler's address (`pycapsule(lib.Handler)`), or a dict
    from stage names ("instantiate", "prepare", "initialize", "execute") to capsules.
    jaxlite runs typed FFI handlers (`api_version=1`) registered for "cpu" on the cpu
    backend, and those registered for "CUDA" / "ROCM" on the gpu backend (device buffers,
    and the launcher's stream from `XLA_FFI_Stream_Get`).
    """
    registry.register(name, fn, platform, api_version)
    if platform.lower() in registry.CPU_PLATFORMS:
        frames.install_evaluator_target(name)


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """Removed in JAX (mirrors `jax.ffi.register_ffi_type_id`): use `register_ffi_type`."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(name: str, type_registration: dict[str, Any],
                      platform: str = "cpu") -> None:
    """Register a custom type handlers refer to by id (mirrors `jax.ffi.register_ffi_type`):
    `type_registration["type_id"]` is a capsule holding an `XLA_FFI_TypeId*`, which gets
    the type's id; `"type_info"` (optional) one holding its `XLA_FFI_TypeInfo*`."""
    address = registry.function_address(type_registration["type_id"])
    info = type_registration.get("type_info")
    api_table.register_type(name.encode(), address,
                            registry.function_address(info) if info is not None else 0)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Mark a target as batch partitionable (mirrors
    `jax.ffi.register_ffi_target_as_batch_partitionable`); jaxlite partitions nothing
    (one device per program), so this is only recorded."""
    _BATCH_PARTITIONABLE.add(name)


def pycapsule(funcptr: Any) -> Any:
    """Wrap a ctypes function pointer in a PyCapsule (mirrors `jax.ffi.pycapsule`)."""
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
    return new_capsule(ctypes.cast(funcptr, ctypes.c_void_p).value, None, None)


def include_dir() -> str:
    """The folder holding XLA's FFI headers (mirrors `jax.ffi.include_dir`).

    jaxlite ships no headers of its own: the headers are jaxlib's (found without importing
    it), which XLA's license lets handlers include. RuntimeError when jaxlib is absent.
    """
    spec = importlib.util.find_spec("jaxlib")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        include = os.path.join(folder, "include")
        if os.path.isfile(os.path.join(include, "xla", "ffi", "api", "ffi.h")):
            return include
    raise RuntimeError("Cannot find XLA's FFI headers: jaxlite uses those jaxlib ships "
                       "(jaxlib/include/xla/ffi/api/ffi.h); install jaxlib to build "
                       "handlers with them")


def _result_avals(results: Sequence[Any]) -> tuple[ShapedArray, ...]:
    avals = []
    for i, result in enumerate(results):
        if not hasattr(result, "shape") or not hasattr(result, "dtype"):
            raise ValueError("All elements of result_shape_dtypes must have 'shape' and "
                             f"'dtype' attributes. Got {result} at position {i}.")
        avals.append(ShapedArray(tuple(result.shape), np.dtype(result.dtype)))
    return tuple(avals)


def _layout(layout: Any, rank: int) -> tuple[int, ...]:
    """A layout argument as a major-to-minor axis order, `()` for row-major (None, a
    sequence of axes, or an object with `major_to_minor`)."""
    if layout is None:
        return ()
    order = tuple(int(a) for a in getattr(layout, "major_to_minor", layout))
    if sorted(order) != list(range(rank)):
        raise ValueError(f"The FFI layout {order} is not an order of the {rank} axes of the "
                         "array it describes")
    return () if order == tuple(range(rank)) else order


def _stored(x: Any, layout: tuple[int, ...]) -> Any:
    return transpose(x, layout) if layout else x


def _stored_aval(aval: ShapedArray, layout: tuple[int, ...]) -> ShapedArray:
    return ShapedArray(tuple(aval.shape[a] for a in layout), aval.dtype) if layout else aval


def _logical(y: Any, layout: tuple[int, ...]) -> Any:
    return transpose(y, tuple(int(a) for a in np.argsort(layout))) if layout else y


def ffi_call(target_name: str, result_shape_dtypes: Any, *, has_side_effect: bool = False,
             vmap_method: str | None = None, input_layouts: Sequence[Any] | None = None,
             output_layouts: Any = None, input_output_aliases: dict[int, int] | None = None,
             custom_call_api_version: int = 4,
             legacy_backend_config: str | None = None) -> Callable[..., Any]:
    """Call an FFI target (mirrors `jax.ffi.ffi_call`): returns a function of the input
    arrays whose keyword arguments are the handler's attributes.

    `vmap_method` says how the call batches under `vmap` (see `jax.pure_callback`);
    without one, `vmap` raises NotImplementedError. Not differentiable: wrap the call in
    `custom_vjp`. `input_layouts` / `output_layouts` give major-to-minor axis orders the
    handler's buffers are stored in (arrays are transposed in and out).
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires "
                         f"custom_call_api_version < 4; got {custom_call_api_version}.")
    if custom_call_api_version < 4:
        raise NotImplementedError("jaxlite calls typed FFI handlers only "
                                  "(custom_call_api_version=4)")
    multiple = isinstance(result_shape_dtypes, Sequence)
    result_avals = _result_avals(result_shape_dtypes if multiple else [result_shape_dtypes])
    requested = output_layouts if multiple else [output_layouts]
    if requested is None:
        requested = [None] * len(result_avals)
    if len(requested) != len(result_avals):
        raise ValueError(f"The number of outputs ({len(result_avals)}) must equal the number "
                         f"of output layouts ({len(requested)}).")
    out_layouts = tuple(_layout(l, len(a.shape)) for l, a in zip(requested, result_avals))

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if input_layouts is not None and len(input_layouts) != len(args):
            raise ValueError(f"The number of input arguments ({len(args)}) must equal the "
                             f"number of input layouts ({len(input_layouts)}).")
        in_layouts = tuple(_layout(l, np.ndim(x)) for l, x in
                           zip(input_layouts or [None] * len(args), args))
        aliases = tuple(sorted((int(i), int(o)) for i, o in (input_output_aliases or {}).items()))
        for i, o in aliases:
            if i >= len(args) or o >= len(result_avals):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' outside "
                                 f"the {len(args)} inputs or {len(result_avals)} outputs.")
            if in_layouts[i] != out_layouts[o]:
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                                 "referring to an input and an output of different layouts.")
        stored = ffi_call_p.bind(
            *[_stored(x, l) for x, l in zip(args, in_layouts)], target_name=target_name,
            result_avals=tuple(_stored_aval(a, l) for a, l in zip(result_avals, out_layouts)),
            attributes=encode_attributes(kwargs), vmap_method=vmap_method,
            has_side_effect=has_side_effect, input_output_aliases=aliases,
            input_layouts=in_layouts, output_layouts=out_layouts)
        results = [_logical(y, l) for y, l in zip(stored, out_layouts)]
        if multiple:
            return tuple(results) if isinstance(result_shape_dtypes, tuple) else list(results)
        return results[0]
    return wrapped


def build_ffi_lowering_function(call_target_name: str, *, has_side_effect: bool = False,
                                **lowering_args: Any) -> Callable[..., Any]:
    """A lowering function for an FFI custom call (mirrors
    `jax.ffi.build_ffi_lowering_function`): `lower(ctx, *operands, **attributes)` emits
    the custom-call and returns its results (jaxlite's HLO values, not an MLIR op)."""
    def lower(ctx: Any, *operands: Any, **params: Any) -> list[Any]:
        inner = getattr(ctx, "jaxlite_context", None) or ctx
        return lower_ffi_custom_call(inner, operands, call_target_name,
                                     encode_attributes(params), has_side_effect)
    return lower


def ffi_lowering(call_target_name: str, *, operand_layouts: Any = None,
                 result_layouts: Any = None, backend_config: Any = None,
                 skip_ffi_layout_processing: bool = False,
                 **lowering_args: Any) -> Callable[..., Any]:
    """A lowering rule calling an FFI target (mirrors `jax.ffi.ffi_lowering`), for
    `mlir.register_lowering(prim, ffi_lowering("name"))`: the equation's parameters become
    the handler's attributes."""
    return build_ffi_lowering_function(call_target_name, **lowering_args)
