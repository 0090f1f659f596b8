"""Eager primitives on arrays in a GPU's memory (JAX's eager mode on a GPU, where each
operation runs as its own small program on the device).

`dispatch.apply_primitive` hands a primitive here when one of its operands is committed
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

from jaxlite.core import dtypes
from jaxlite.runtime.array import ArrayImpl
from jaxlite.runtime.device_rules import device_rule
from jaxlite.runtime.device_values import (DeviceValue, device_operand, memory_launcher,
                                           stores_natively)

__all__ = ["apply_on_device", "argument_buffer", "device_results", "host_operands",
           "memory_device"]


def memory_device(args: Sequence[Any]) -> Any:
    """The device of the first committed Array among `args` whose memory is not the
    host's, or None."""
    for arg in args:
        if type(arg) is ArrayImpl and arg._sharding is not None:
            devices = arg._sharding.device_set
            if len(devices) == 1:
                device = next(iter(devices))
                if memory_launcher(device) is not None:
                    return device
    return None


def apply_on_device(primitive: Any, args: Sequence[Any], params: dict,
                    in_avals: Sequence[Any], out_avals: Any) -> Any:
    """The results of `primitive` on `args` computed by its `xp` rule in the memory of
    the device an operand lives on, as Arrays holding device values (placed afterwards
    by the caller); None when no operand is in a device's memory or the primitive has no
    rule for these operands (the caller runs the reference on `host_operands`)."""
    device = memory_device(args)
    if device is None:
        return None
    launcher = memory_launcher(device)
    many = primitive.multiple_results
    outs = list(out_avals) if many else [out_avals]
    avals = list(in_avals) + outs
    if any(dtypes.is_extended(a.dtype) or a.dtype == dtypes.float0
           or not stores_natively(launcher, a.dtype) for a in avals):
        return None
    rule = device_rule(primitive, in_avals)
    if rule is None:
        return None
    with launcher.scope():
        operands = [_operand(launcher, device, a, aval) for a, aval in zip(args, in_avals)]
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


def _operand(launcher: Any, device: Any, arg: Any, aval: Any) -> Any:
    """An operand as a device array: a device value's own, else sent over."""
    value = arg._value if type(arg) is ArrayImpl else None
    if type(value) is DeviceValue and value.device is device:
        return value.array
    host = value if type(value) is np.ndarray else np.asarray(arg, dtype=aval.dtype)
    if host.dtype != aval.dtype:
        host = host.astype(aval.dtype)
    return device_operand(launcher, host)


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


def argument_buffer(client: Any, arg: Any) -> Any:
    """The device memory of an Array on `client`'s device as the client's buffer (no
    transfer), or None for any other argument."""
    if type(arg) is not ArrayImpl or type(arg._value) is not DeviceValue:
        return None
    value = arg._value
    maker = getattr(client, "buffer_from_device", None)
    if maker is None or value.launcher is not getattr(client, "launcher", None):
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
