"""Eager primitives on arrays in a GPU's memory (JAX's eager mode on a GPU, where each
operation runs as its own small program on the device).

`eager.apply_primitive` hands a primitive here when one of its operands is committed
to a device with its own memory (see `device_values`). With an `xp` rule
(`device_rules`): the operands as device arrays (a host operand, as the Python scalars
that jnp broadcasts, sent over once; a zero-stride broadcast sends what it repeats), the
rule on the device's stream, the results device values — device memory in, device memory
out, no host round trip. Without one, `host_operands` gives the reference rule host
copies (one device-to-host transfer per device operand, kept by the value) and the
placement sends each result back (one transfer): see `device_rules` for which primitives
and why.

A jitted call on the GPU takes such Arrays' device memory as its arguments
(`argument_buffer`) and, when any argument was in device memory, leaves its results there
(`device_results`).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.backends.registry import started_default
from jaxlite.core import dtypes
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.device_rules import device_rule
from jaxlite.runtime.device_values import (DeviceValue, default_client, device_operand,
                                           memory_device_of, memory_launcher,
                                           stores_natively)

__all__ = ["apply_on_device", "argument_buffer", "device_results", "host_operands",
           "keep_on_device", "memory_device", "put_on_default_device", "storable"]


def memory_device(args: Sequence[Any], default: Any = None) -> Any:
    """Where eager work on `args` runs when not on the host: the device of the first
    committed Array among them whose memory is not the host's; else that of an
    uncommitted Array in a device's memory; else `default` (the default device, when
    its memory is not the host's); else None."""
    for arg in args:
        if type(arg) is ArrayImpl and arg._sharding is not None:
            devices = arg._sharding.device_set
            if len(devices) == 1:
                device = next(iter(devices))
                if memory_launcher(device) is not None:
                    return device
    for arg in args:
        if type(arg) is ArrayImpl and type(arg._value) is DeviceValue:
            return arg._value.device
    return default


def apply_on_device(primitive: Any, args: Sequence[Any], params: dict,
                    in_avals: Sequence[Any], out_avals: Any, default: Any = None) -> Any:
    """The results of `primitive` on `args` computed by its `xp` rule in the memory of
    the device an operand lives on (or of `default`, the default device when it is a
    GPU), as Arrays holding device values (placed afterwards by the caller); None when
    no such device is at hand or the primitive has no rule for these operands (the
    caller runs the reference on `host_operands`)."""
    device = memory_device(args, default)
    if device is None:
        return None
    launcher = memory_launcher(device)
    many = primitive.multiple_results
    outs = list(out_avals) if many else [out_avals]
    avals = list(in_avals) + outs
    if not all(storable(launcher, a) for a in avals):
        return None
    rule = device_rule(primitive, in_avals)
    if rule is None:
        return None
    with launcher.scope():
        keep = device is default  # (uncommitted Arrays belong on the default device only)
        operands = [_operand(launcher, device, a, aval, keep)
                    for a, aval in zip(args, in_avals)]
        try:
            with np.errstate(all="ignore"):  # (as the host path: a GPU raises no flags)
                results = rule(launcher.xp, *operands, **params)
        except (TypeError, NotImplementedError):
            # The array module lacks this case (a dtype CuPy does not support for the
            # operation): the reference on the host, which raises any real error.
            return None
        if results is None:  # a case the rule declines
            return None
        results = list(results) if many else [results]
        arrays = [_result(launcher, device, r, aval) for r, aval in zip(results, outs)]
    return arrays if many else arrays[0]


def storable(launcher: Any, aval: Any) -> bool:
    """Whether values of `aval` live in the device's memory as themselves (not float0 or
    typed keys, which have no plain storage, nor a dtype the array module lacks)."""
    return not (dtypes.is_extended(aval.dtype) or aval.dtype == dtypes.float0) and \
        stores_natively(launcher, aval.dtype)


def _operand(launcher: Any, device: Any, arg: Any, aval: Any, keep: bool) -> Any:
    """An operand as a device array: a device value's own, else sent over (and, when
    `keep`, kept by an uncommitted Array: see `keep_on_device`)."""
    value = arg._value if type(arg) is ArrayImpl else None
    if type(value) is DeviceValue and value.device is device:
        return value.array
    if keep and type(value) is np.ndarray and value.dtype == aval.dtype \
            and arg._sharding is None:
        return keep_on_device(arg, device, launcher).array
    host = value if type(value) is np.ndarray else np.asarray(arg, dtype=aval.dtype)
    if host.dtype != aval.dtype:
        host = host.astype(aval.dtype)
    return device_operand(launcher, host)


def put_on_default_device(array: ArrayImpl) -> ArrayImpl:
    """An uncommitted host Array sent to the default device now when that is a GPU
    (`device_put` without a placement, as JAX's puts it on its default device)."""
    device = memory_device_of(default_client())
    if device is None or type(array._value) is not np.ndarray or array._sharding is not None:
        return array
    launcher = memory_launcher(device)
    if storable(launcher, array.aval):
        with launcher.scope():
            keep_on_device(array, device, launcher)
    return array


def keep_on_device(array: ArrayImpl, device: Any, launcher: Any) -> DeviceValue:
    """Send an uncommitted host Array's contents to `device` (inside the launcher's
    `scope`) and keep them there: the Array then holds the device value, with its host
    buffer as the value's host copy. Arrays never change, so this changes only where
    the contents live: an uncommitted Array belongs on the default device, and later
    uses there (eager or jit) take it without another transfer, as JAX's arrays made on
    a GPU stay on it."""
    host = array._value
    value = DeviceValue(device_operand(launcher, host), host.dtype, device, launcher,
                        host if host.flags.c_contiguous else None)
    array._value = value
    return value


def _result(launcher: Any, device: Any, array: Any, aval: Any) -> ArrayImpl:
    if array.dtype != aval.dtype:
        array = array.astype(aval.dtype)
    if tuple(array.shape) != aval.shape:
        raise AssertionError(f"device rule produced shape {tuple(array.shape)}, expected "
                             f"{aval.shape}")
    return ArrayImpl(DeviceValue(array, aval.dtype, device, launcher), aval.weak_type)


def host_operands(args: Sequence[Any]) -> list[Any]:
    """`args` with each Array in device memory replaced by an uncommitted host Array of
    its contents (one transfer each, kept by the device value)."""
    return [ArrayImpl(arg._value.host(), arg.weak_type)
            if type(arg) is ArrayImpl and type(arg._value) is DeviceValue else arg
            for arg in args]


def argument_buffer(client: Any, arg: Any, aval: Any) -> Any:
    """The device memory of an Array on `client`'s device as the client's buffer (no
    transfer; when `client` is the default backend's, an uncommitted host Array of
    `aval`'s dtype is sent there first and keeps its device copy, see `keep_on_device`),
    or None for any other argument."""
    if type(arg) is not ArrayImpl:
        return None
    maker = getattr(client, "buffer_from_device", None)
    launcher = getattr(client, "launcher", None)
    if maker is None or launcher is None or getattr(launcher, "xp", np) is np:
        return None
    value = arg._value
    if type(value) is np.ndarray and arg._sharding is None and value.dtype == aval.dtype \
            and storable(launcher, aval) and client is started_default():
        with launcher.scope():
            value = keep_on_device(arg, client.devices()[0], launcher)
    if type(value) is not DeviceValue or value.launcher is not launcher:
        return None
    return maker(value.array, value.dtype)


def device_results(buffers: Sequence[Any], avals: Sequence[Any]) -> list[ArrayImpl] | None:
    """A call's result buffers as Arrays holding device values (no transfer); None when
    a result is not a plain array of a type the device stores."""
    arrays = []
    for buffer, aval in zip(buffers, avals):
        launcher = memory_launcher(buffer.device)
        if launcher is None or dtypes.is_extended(aval.dtype) or aval.dtype == dtypes.float0:
            return None
        value = DeviceValue(buffer.device_array(), aval.dtype, buffer.device, launcher)
        arrays.append(ArrayImpl(value, aval.weak_type))
    return arrays
