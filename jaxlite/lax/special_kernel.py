"""Elementwise special functions computed by float64 numpy kernels (custom-calls).

Special functions such as the incomplete gamma and beta functions, the Hurwitz zeta
function or the exponential integrals are computed by series, continued fractions and
recurrences whose length depends on the argument. Rather than unrolling those algorithms
into HLO, each such primitive has one numpy *kernel* (usually a `scipy.special` ufunc,
which is the accuracy reference of the tests, wrapped with JAX's conventions at the edges
of the domain). The kernel runs in float64 (complex128 for complex inputs) and its result
is rounded to the operand dtype, so float32 results are correctly rounded rather than
accurate to a few ulps as XLA's float32 approximations are.

`kernel_primitive` declares such a primitive with every rule but the derivative (which
each declaration states next to it, with lax functions): shape and dtype checks, batching
and the float16/bfloat16 upcast come from `elementwise`; eager evaluation calls the kernel;
`jit` lowers to a pure custom-call `jaxlite_special_<name>` whose target (registered in
`jaxlite.xla.evaluator.CUSTOM_CALL_TARGETS`) calls the same kernel, so eager and compiled
results are bit-identical and every backend that runs custom-calls runs these primitives.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._declare import FLOATING, elementwise
from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["kernel_primitive", "kernel_jvp", "target_name", "wide"]


def target_name(name: str) -> str:
    """The custom-call target of the kernel primitive `name`."""
    return f"jaxlite_special_{name}"


def wide(x: np.ndarray) -> np.ndarray:
    """`x` as float64 (complex128 for complex dtypes): the precision kernels compute in."""
    x = np.asarray(x)
    return x.astype(np.complex128 if dtypes.is_complex(x.dtype) else np.float64)


def _reference(name: str, kernel: Callable[..., np.ndarray],
               out_dtype: Callable[[np.dtype], np.dtype] | None) -> Callable[..., np.ndarray]:
    def reference(*operands: np.ndarray) -> np.ndarray:
        dtype = np.asarray(operands[0]).dtype
        target = np.dtype(dtype if out_dtype is None else out_dtype(dtype))
        if np.asarray(operands[0]).size == 0:
            return np.empty(np.shape(operands[0]), target)
        with np.errstate(all="ignore"):
            out = kernel(*(wide(x) for x in operands))
            return np.asarray(out).astype(target)
    reference.__name__ = f"{name}_reference"
    return reference


def kernel_primitive(name: str, kernel: Callable[..., np.ndarray], *, num_args: int = 1,
                     kinds: tuple[str, ...] = (FLOATING,),
                     result_dtype: Callable[[np.dtype], np.dtype] | None = None
                     ) -> Primitive:
    """Declare the elementwise primitive `name` computed by the numpy `kernel`.

    Parameters
    ----------
    name : the primitive's name (and, prefixed, its custom-call target's).
    kernel : numpy function of `num_args` float64 (or complex128) arrays of one shape.
    num_args : the number of operands (all of one dtype, as for every elementwise
        primitive).
    kinds : the dtype kinds accepted.
    result_dtype : maps the operand dtype to the result dtype (default: the same).

    The caller adds the jvp rule (`kernel_jvp`).
    """
    reference = _reference(name, kernel, result_dtype)
    primitive = elementwise(name, reference, kinds=kinds, num_args=num_args,
                            result_dtype=result_dtype)
    target = target_name(name)

    def lower(ctx: LoweringContext, *operands: HloInstruction) -> HloInstruction:
        return hlo.result(ctx, Opcode.CUSTOM_CALL, operands, target=target,
                          backend_config="{}", custom_call_has_side_effect=False)

    def custom_call(inst: HloInstruction, *operands: np.ndarray) -> np.ndarray:
        return primitive.reference(*operands)

    primitive.lower = lower
    CUSTOM_CALL_TARGETS[target] = custom_call
    return primitive


def kernel_jvp(primitive: Primitive, *rules: Callable[..., Any] | None,
               with_output: bool = False) -> None:
    """Give a kernel primitive its jvp, one rule per operand (None: no dependence).

    `rule(tangent, *operands)` returns that operand's contribution to the output tangent,
    or `rule(tangent, output, *operands)` with `with_output`. For the libraries that declare
    kernel primitives of their own (jaxlite.scipy), which do not reach the interpreters.
    """
    if with_output:
        ad.defjvp2(primitive, *rules)
    else:
        ad.defjvp(primitive, *rules)
