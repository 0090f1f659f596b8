"""`call_exported`: calling a program exported by `jaxlite.export` (mirrors JAX's primitive of
that name).

The equation carries the `Exported` (its in/out avals and its HLO module); a
shape-polymorphic one gives the module specialized to the operands' sizes. Lowering brings
the exported module's computations into the module being built and calls its entry, so the
exported program is compiled together with the code around it. Eagerly (a bare `bind`) the
module runs on the HLO evaluator; `Exported.call` goes through `jit`, which compiles it.

As in JAX, the primitive has no batching rule, and no derivative of its own: `Exported.call`
differentiates through the exported VJP (a `custom_vjp`), and without one JAX's "No VJP is
available" ValueError is raised.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.opcodes import Opcode

__all__ = ["call_exported_p"]

call_exported_p = Primitive("call_exported", multiple_results=True)


def _abstract_eval(*avals: ShapedArray, exported: Any) -> list[ShapedArray]:
    if exported.uses_shape_polymorphism:
        # Sizes that do not fit raise JAX's ValueError (shape_refinement.py).
        return list(exported.out_avals_for([a.shape for a in avals]))
    expected = [(a.shape, a.dtype) for a in exported.in_avals]
    if [(a.shape, a.dtype) for a in avals] != expected:
        raise TypeError(f"call_exported of '{exported.fun_name}': the operands' types "
                        f"{[a.str_short() for a in avals]} are not the exported ones "
                        f"{[a.str_short() for a in exported.in_avals]}.")
    return list(exported.out_avals)


def _reference(*args: Any, exported: Any) -> list[np.ndarray]:
    module = exported.hlo_module_for([np.shape(a) for a in args])
    result = evaluate_module(module, [np.asarray(a) for a in args])
    return list(result) if len(exported.out_avals) != 1 else [result]


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, exported: Any) -> Any:
    raise ValueError("No VJP is available")


def _batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], **params: Any) -> Any:
    raise NotImplementedError("Batching rule for 'call_exported' not implemented")


def _lower(ctx: LoweringContext, *args: HloInstruction,
           exported: Any) -> list[HloInstruction]:
    name = hlo.computation_name(exported.fun_name)
    entry = ctx.import_module(exported.hlo_module_for([a.shape.dims for a in args]), name)
    call = ctx.builder.add(Opcode.CALL, entry.root.shape, args, None, (entry,), name=name)
    if len(exported.out_avals) == 1:
        return [call]
    return [hlo.get_tuple_element(ctx, call, i) for i in range(len(exported.out_avals))]


call_exported_p.abstract_eval = _abstract_eval
call_exported_p.reference = _reference
call_exported_p.jvp = _jvp
call_exported_p.batch = _batch
call_exported_p.lower = _lower
