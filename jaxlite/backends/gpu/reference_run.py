"""Running a fusion's kernels on numpy arrays with the kernel interpreter: how tests (and,
later, a GPU-less run of the backend) check what the builders made against the HLO
evaluator."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.fusion_kernels import FusionKernels
from jaxlite.backends.gpu.kernel_interpreter import run_kernel
from jaxlite.xla.shape import Shape

__all__ = ["from_memory_order", "run_fusion", "to_memory_order"]


def to_memory_order(array: np.ndarray, shape: Shape) -> np.ndarray:
    """The elements of a logical array as a flat buffer in `shape`'s layout."""
    major_to_minor = tuple(reversed(shape.layout))
    flat = np.transpose(np.asarray(array, shape.dtype), major_to_minor).reshape(-1)
    return np.ascontiguousarray(flat)


def from_memory_order(flat: np.ndarray, shape: Shape) -> np.ndarray:
    """The logical array of a flat buffer laid out as `shape` says."""
    major_to_minor = tuple(reversed(shape.layout))
    physical = flat.reshape([shape.dims[d] for d in major_to_minor])
    return np.transpose(physical, np.argsort(major_to_minor))


def _garbage(buffer: ir.Buffer, size: int) -> np.ndarray:
    """Uninitialized memory: NaN or a fill pattern, so that unwritten elements show."""
    dtype = ir.dtype_of(buffer.dtype)
    fill = np.nan if dtype.kind == "f" or buffer.dtype == "bfloat16" else 0x5A
    return np.full(size, fill).astype(dtype)


def run_fusion(kernels: FusionKernels, operands: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The fusion's results (logical arrays) for `operands`, computed by interpreting its
    kernels one after another."""
    memory = {b.name: to_memory_order(x, shape)
              for (b, shape), x in zip(kernels.inputs, operands)}
    for buffer, shape in kernels.outputs:
        memory[buffer.name] = _garbage(buffer, int(np.prod(shape.dims, dtype=np.int64)))
    for buffer in kernels.scratch:
        memory[buffer.name] = _garbage(buffer, buffer.size)
    for kernel in kernels.kernels:
        run_kernel(kernel, {b.name: memory[b.name] for b in kernel.buffers})
    return [from_memory_order(memory[b.name], shape) for b, shape in kernels.outputs]
