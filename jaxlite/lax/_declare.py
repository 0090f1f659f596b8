"""Factories for declaring primitives whose rules follow a common pattern.

Most `lax` primitives are elementwise: their shape rule, dtype check, batching rule and eager
reference differ only in the math. `elementwise` builds such a primitive from its reference
function and the dtype kinds it accepts, so each declaration only states what is particular
to it (its jvp, its transpose if linear).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.batching import batch_elementwise
from jaxlite.lax._lowering_util import elementwise_rule
from jaxlite.xla.opcodes import Opcode

# Dtype kinds an elementwise primitive may accept.
BOOL, SIGNED, UNSIGNED, FLOATING, COMPLEX = "bool", "signed", "unsigned", "floating", "complex"
INTEGER = (SIGNED, UNSIGNED)
INEXACT = (FLOATING, COMPLEX)
NUMERIC = (SIGNED, UNSIGNED, FLOATING, COMPLEX)
ANY = (BOOL, SIGNED, UNSIGNED, FLOATING, COMPLEX)

def _kind_names(kinds: Sequence[str]) -> str:
    """The accepted kinds as JAX lists them: integer, floating, complexfloating, bool."""
    names = []
    if SIGNED in kinds and UNSIGNED in kinds:
        names.append("integer")
    else:
        names += [n for k, n in ((SIGNED, "signedinteger"), (UNSIGNED, "unsignedinteger"))
                  if k in kinds]
    names += [n for k, n in ((FLOATING, "floating"), (COMPLEX, "complexfloating"),
                             (BOOL, "bool")) if k in kinds]
    return ", ".join(names)


def dtype_kind(dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return BOOL
    if dtypes.is_complex(dtype):
        return COMPLEX
    if dtypes.is_floating(dtype):
        return FLOATING
    if dtypes.is_unsigned(dtype):
        return UNSIGNED
    return SIGNED


def check_dtype_kind(name: str, dtype: np.dtype, kinds: Sequence[str],
                     position: int | None = None) -> None:
    """JAX's TypeError when `dtype` is not of `kinds` (naming the operand's position for
    primitives of several operands)."""
    if dtype_kind(dtype) not in kinds:
        at = "" if position is None else f" at position {position}"
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name}{at}. "
                        f"Accepted dtypes{at} are subtypes of {_kind_names(kinds)}.")


def check_same_shapes(name: str, avals: Sequence[ShapedArray]) -> None:
    shapes = [a.shape for a in avals]
    if any(s != shapes[0] for s in shapes[1:]):
        listed = ", ".join(str(s) for s in shapes)
        raise TypeError(f"{name} got incompatible shapes for broadcasting: {listed}. (The "
                        "primitive takes operands of one shape: broadcast them first with "
                        "lax.broadcast_in_dim, or use the jaxlite.numpy function.)")


def check_same_dtypes(name: str, avals: Sequence[ShapedArray]) -> None:
    names = [np.dtype(a.dtype).name for a in avals]
    if any(n != names[0] for n in names[1:]):
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(names)}. (Tip: jnp.{name} is a similar function that "
                        "does automatic type promotion on inputs).")


def upcast_low_precision(reference: Callable[..., Any]) -> Callable[..., Any]:
    """Compute float16/bfloat16 in float32 and round back, as XLA does on the CPU."""
    def wrapped(*args: Any, **params: Any) -> Any:
        low = [a.dtype for a in args if isinstance(a, np.ndarray)
               and a.dtype in (np.float16, dtypes.bfloat16)]
        if not low:
            return reference(*args, **params)
        wide = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == low[0] else a
                for a in args]
        out = reference(*wide, **params)
        return np.asarray(out).astype(low[0]) if np.asarray(out).dtype == np.float32 else out
    wrapped.__name__ = getattr(reference, "__name__", "reference")
    return wrapped


def elementwise(name: str, reference: Callable[..., Any], *, kinds: Sequence[str],
                num_args: int = 1,
                result_dtype: Callable[[np.dtype], np.dtype] | None = None,
                hlo_opcode: Opcode | None = None) -> Primitive:
    """Declare an elementwise primitive.

    Parameters
    ----------
    name : the primitive's name.
    reference : numpy function computing the primitive eagerly.
    kinds : dtype kinds accepted (all operands share one dtype).
    num_args : number of operands.
    result_dtype : maps the operand dtype to the result dtype (default: the same).
    hlo_opcode : the elementwise HLO opcode that computes it, when there is one; it gives
        the primitive its lowering rule.
    """
    primitive = Primitive(name)

    def abstract_eval(*avals: ShapedArray, **params: Any) -> ShapedArray:
        if len(avals) != num_args:
            raise TypeError(f"{name} takes {num_args} operand(s), got {len(avals)}")
        for i, aval in enumerate(avals):
            check_dtype_kind(name, aval.dtype, kinds, None if num_args == 1 else i)
        check_same_dtypes(name, avals)
        check_same_shapes(name, avals)
        dtype = avals[0].dtype if result_dtype is None else result_dtype(avals[0].dtype)
        weak = all(a.weak_type for a in avals) and result_dtype is None
        return ShapedArray(avals[0].shape, np.dtype(dtype), weak)

    primitive.abstract_eval = abstract_eval
    primitive.reference = upcast_low_precision(reference)
    primitive.batch = batch_elementwise(primitive)
    primitive.elementwise = True  # (a placed operand's sharding carries to the result)
    if hlo_opcode is not None:
        primitive.lower = elementwise_rule(hlo_opcode)
    return primitive
