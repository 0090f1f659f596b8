"""Instructions the gpu backend runs on the host: the HLO evaluator on copies of their
operands, one instruction at a time (correct first; each costs a round trip through host
memory and a synchronization of the stream).

Which instructions come here, and why, `Program.plan` says (`text("kernels")`): fusions
no builder handles, scatters of several operands, sorts too long for a block's shared
memory with a comparator CuPy cannot run, custom calls with no device rule (eig, the
tridiagonal solve and the Hessenberg/Schur/tridiagonal reductions, host callbacks, FFI
targets with only a CPU handler), complex elementwise fusions, fusions holding an
operation `hlo_elemental` does not compute (digamma, next-after, reduce-precision,
float64 erf-inv, ...), reduce-windows of several operands, dots of bools, rng,
and every other opcode without a kernel or an `xp` rule.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite.backends.gpu.update_kernels import alone
from jaxlite.xla.evaluator import evaluate_computation
from jaxlite.xla.evaluator_arrays import from_memory_order, to_memory_order
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

__all__ = ["HostInstruction"]


class HostInstruction:
    """One instruction evaluated on the host.

    Parameters
    ----------
    inst : the instruction (a fusion runs its fused computation).
    to_host : `(device array, dtype) -> numpy array`, the launcher's copy to the host.
    to_device : `numpy array -> device array`, the launcher's copy to the device.
    """

    def __init__(self, inst: HloInstruction, to_host: Callable[[Any, np.dtype], np.ndarray],
                 to_device: Callable[[np.ndarray], Any]) -> None:
        self.inst = inst
        self._computation = inst.called[0] if inst.opcode is Opcode.FUSION else alone(inst)
        self._to_host = to_host
        self._to_device = to_device

    def __call__(self, operands: list[Any]) -> Any:
        args = [self._host_value(v, o.shape) for v, o in zip(operands, self.inst.operands)]
        result = evaluate_computation(self._computation, args)
        return self._device_value(result, self.inst.shape)

    def _host_value(self, value: Any, shape: Shape) -> Any:
        if shape.is_tuple:
            return tuple(self._host_value(v, s) for v, s in zip(value, shape.tuple_shapes))
        return from_memory_order(self._to_host(value, shape.dtype), shape)

    def _device_value(self, value: Any, shape: Shape) -> Any:
        if shape.is_tuple:
            return tuple(self._device_value(v, s) for v, s in zip(value, shape.tuple_shapes))
        array = np.asarray(value).astype(shape.dtype, copy=False)
        return self._to_device(to_memory_order(array, shape))
