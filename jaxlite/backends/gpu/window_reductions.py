"""reduce-window at one output index, as kernel IR (pooling, and the running sums, products
and extrema of `jnp.cumsum` and `lax.cummax`), and the combiner of a reduction applied
to scalars, which `variadic_reductions` shares.

An output element folds its window's elements in index order, as XLA and the cpu
backend do (a running sum's rounding depends on the order): the accumulator starts at the
initial value; a window position in the padding, or between the elements of a dilated
base, contributes the initial value, as XLA's padding does; the others the operand's
element. One thread computes one output (a loop kernel through `update_kernels.as_fusion`):
a window of w elements costs w steps, so a running sum over n elements costs n * n / 2
in all, fine for pooling windows and short scans; long scans want a parallel prefix sum.
"""
from __future__ import annotations

from typing import Any

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.index_math import add, delinearize, div, rem
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference_base import RuleContext, window_of

__all__ = ["combine", "reduce_window_value"]


def combine(em: Any, comp: HloComputation, accs: list[ir.Var], values: list[ir.Expr]) -> None:
    """accs = comp(accs..., values...), the combiner's HLO evaluated on scalars by `em`
    (an `hlo_elemental.Elemental`); its root is a tuple for several accumulators."""
    with em.scope() as body:
        for param, value in zip(comp.parameters, list(accs) + list(values)):
            em.seed(param, (), value)
        root = comp.root
        new = [em.value(o, ()) for o in (root.operands if root.shape.is_tuple else [root])]
        # every new component bound before any accumulator changes (one may read another)
        bound = [em.fresh("next", acc.dtype) for acc in accs]
        em.emit(*(ir.Let(b, v) for b, v in zip(bound, new)),
                *(ir.Assign(acc, b) for acc, b in zip(accs, bound)))
    em.emit(*body)


def reduce_window_value(em: Any, inst: HloInstruction, index: tuple) -> ir.Var:
    """The single-operand reduce-window `inst` at the output index `index`."""
    operand, init = inst.operands
    dims = operand.shape.dims
    window = window_of(RuleContext(inst.opcode, (), inst.attrs, inst.called, inst.shape,
                                   inst.name), len(dims))
    start = em.value(init, ())
    acc = em.fresh("window", start.dtype)
    em.emit(ir.Let(acc, start))
    size = 1
    for s in window.size:
        size *= s
    w = em.fresh("w", "int32")
    with em.scope() as body:
        offsets = delinearize(w, Shape(operand.shape.dtype, tuple(window.size)))
        inside: ir.Expr = ir.Const(True, "bool")
        source = []
        for d, (i, k) in enumerate(zip(index, offsets)):
            # the position in the padded, dilated base
            at = em.let(add(add(ir.Binary("mul", i, ir.index_const(window.stride[d])),
                                ir.Binary("mul", k, ir.index_const(window.window_dilation[d]))),
                            -window.pad_low[d]), "at")
            dilation = window.base_dilation[d]
            inside = ir.Binary("and", inside, ir.Binary("ge", at, ir.index_const(0)))
            if dilation > 1:
                inside = ir.Binary("and", inside, ir.Binary("eq", rem(at, dilation),
                                                            ir.index_const(0)))
            element = div(at, dilation) if dilation > 1 else at
            inside = ir.Binary("and", inside, ir.Binary("lt", element, ir.index_const(dims[d])))
            source.append(element)
        value = em.choose(em.let(inside, "inside"), lambda: em.value(operand, tuple(source)),
                          lambda: start)
        combine(em, inst.called[0], [acc], [value])
    em.emit(ir.For(w, ir.index_const(0), ir.index_const(size), ir.index_const(1), tuple(body)))
    return acc
