"""What every kernel shares: its calling convention, the module-wide state kernels draw on,
and the description the program emitter needs to call it.

A kernel is an internal LLVM function `void @<name>(ptr %in0, ..., ptr %out0, ...,
[ptr %scratch,] i64 %lo, i64 %hi)`: the buffers of the instruction's operands, then of its
results, then (for kernels that need one, such as a GEMM's packed panels) its scratch memory,
then the range of its outermost parallel loop that this call computes (all of it for a call
on one thread). A kernel may come with whole LLVM modules of its own (a generated GEMM) that
the executable's module links in.
Kernels are emitted under the placeholder name `@KERNEL`; the module renames them, and two
instructions whose kernels have the same text (the same computation on buffers of the same
shapes) share one function.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxlite.backends.cpu.codegen.elemental import ConstantPool, Elemental
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder
from jaxlite.backends.cpu.codegen.mathfns import MATH_OPCODES, MathLib
from jaxlite.xla.cost_model import vector_width
from jaxlite.xla.ir import HloComputation
from jaxlite.xla.opcodes import Opcode

__all__ = ["Kernel", "KernelContext", "PLACEHOLDER", "DEFAULT_UNROLL", "emitter", "kernel_function",
           "lanes_for", "element_cost"]

PLACEHOLDER = "KERNEL"
# Vectors per step of a vectorized loop (the tiling's default when it records none).
DEFAULT_UNROLL = 4


@dataclass(frozen=True)
class Kernel:
    """A kernel's text and how to call it.

    text : the function definition, named `@KERNEL`.
    num_inputs, num_outputs : buffer parameters before `lo, hi`.
    units : iterations of the loop that `lo, hi` split (0: the kernel ignores them).
    grain : split points must be multiples of it.
    work : a rough count of operations (elements times operations per element), to decide
        whether threads pay.
    scratch : bytes of scratch memory each thread running the kernel needs (0: none, and
        no scratch parameter).
    modules : LLVM modules (text) the kernel calls into, linked with the executable's.
    declarations : `declare` lines of the external functions the text calls (a GEMM's range
        function, a custom-call's trampoline). Kept out of `text`: several kernels may call
        the same function, and LLVM rejects a module that declares it twice.
    """

    text: str
    num_inputs: int
    num_outputs: int
    units: int = 0
    grain: int = 1
    work: int = 0
    scratch: int = 0
    modules: tuple[str, ...] = ()
    declarations: tuple[str, ...] = ()

    @property
    def num_params(self) -> int:
        """Parameters of the kernel's function: buffers, scratch (if any), `lo`, `hi`."""
        return self.num_inputs + self.num_outputs + (1 if self.scratch else 0) + 2


class KernelContext:
    """State shared by the kernels of one LLVM module."""

    def __init__(self) -> None:
        self.mathlib = MathLib()
        self.constants = ConstantPool()


def kernel_function(num_inputs: int, num_outputs: int, noalias: bool
                    ) -> tuple[FunctionBuilder, list[str], list[str]]:
    """A builder for a kernel's function and the refs of its input and output pointers."""
    attr = "ptr noalias" if noalias else "ptr"
    params = [(attr, f"in{i}") for i in range(num_inputs)]
    params += [(attr, f"out{i}") for i in range(num_outputs)]
    params += [("i64", "lo"), ("i64", "hi")]
    fb = FunctionBuilder(PLACEHOLDER, params)
    return fb, [f"%in{i}" for i in range(num_inputs)], [f"%out{i}" for i in range(num_outputs)]


def emitter(ctx: KernelContext, fb: FunctionBuilder, width: int, inputs: list[str]
            ) -> Elemental:
    return Elemental(fb, width, dict(enumerate(inputs)), ctx.mathlib, ctx.constants)


# Per element, what an operation costs relative to an add (for the choice of threads).
_TRANSCENDENTAL_COST = 20


def element_cost(comp: HloComputation) -> int:
    """A rough count of operations per element of a fused computation: arithmetic counts
    one, transcendental functions twenty, data movement nothing."""
    cost = 1
    for inst in comp.instructions:
        if inst.opcode in MATH_OPCODES:
            cost += _TRANSCENDENTAL_COST
        elif inst.opcode.is_elementwise or inst.opcode is Opcode.REDUCE:
            cost += 1
    return cost


# Loop and reduction kernels use 64-byte vectors (16 float32 lanes) on every host, as the
# compiler's tiling plans them (`cost_model.VECTOR_BYTES`). On an AVX2 core LLVM splits
# each into two registers: a long loop body spills twice as much (the gelu loop: 82 spill
# moves per step against 41 at 8 lanes), but every operation gets two independent chains,
# and the latency-bound loops of the small linear algebra (the batch in the lanes) ran
# 1.3-1.7x slower at the host's 8 lanes (cholesky 16x16 b256, solve and inv 32x32 b64),
# while gelu, softmax, layernorm and sum ran alike either way.
KERNEL_VECTOR_BYTES = 64
# Lanes of a vectorized loop at most: a wider mask type (pred) still computes its float
# operands in at most one 64-byte vector each.
MAX_LANES = KERNEL_VECTOR_BYTES // 4


def lanes_for(dtype: np.dtype, inner_extent: int) -> int:
    """The SIMD width for `dtype`, lowered (in powers of two) to the innermost extent."""
    width = vector_width(dtype)
    while width > 1 and width > inner_extent:
        width //= 2
    return width
