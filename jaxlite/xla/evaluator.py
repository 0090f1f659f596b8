"""The HLO evaluator: runs a module instruction by instruction with numpy (mirrors XLA's
HloEvaluator). It is the reference backend that judges every pass, so it favours plain,
checkable semantics over speed, while keeping clear of pathological slowness.

`evaluate_module(module, args)` runs the entry computation on numpy arrays;
`evaluate_computation(comp, args)` runs any computation. The numbers are XLA's on the CPU
(see evaluator_elementwise for the elementwise edge cases). Arrays are logical: layouts
never change values. Values are numpy arrays, or Python tuples for tuple shapes.

Scalar computations (a reduction's `to_apply`, a sort comparator, a scatter's combiner) are
run over whole arrays at once when they consist of elementwise operations only, which is
what makes reductions, sorts and scatters cost a few numpy calls rather than one call per
element; other scalar computations are run element by element.

The topics live in evaluator_elementwise, evaluator_arrays and evaluator_reductions; this
module holds the interpreter loop, the structural and control-flow opcodes, and the
custom-call registry `CUSTOM_CALL_TARGETS`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxlite.errors import JaxRuntimeError
from jaxlite.xla import evaluator_arrays, evaluator_reductions
from jaxlite.xla.evaluator_elementwise import KERNELS
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.shape import Shape

__all__ = [
    "CUSTOM_CALL_TARGETS",
    "HloEvaluationError",
    "evaluate_computation",
    "evaluate_module",
]

_O = Opcode

CUSTOM_CALL_TARGETS: dict[str, Callable[..., Any]] = {}
"""custom-call target name -> `fn(inst, *operands)` returning an array (or a tuple of arrays
for a tuple shape). Backends and libraries register the targets they emit."""

_HANDLERS = {**evaluator_arrays.HANDLERS, **evaluator_reductions.HANDLERS}
# Opcodes that keep working when a scalar computation runs over whole arrays.
_VECTOR_SAFE = {_O.PARAMETER, _O.CONSTANT, _O.TUPLE, _O.GET_TUPLE_ELEMENT, _O.COPY}


class HloEvaluationError(ValueError):
    """The evaluator cannot run an instruction; the message names it and says why."""


def _literal(inst: HloInstruction, shape: Shape, value: Any) -> Any:
    if shape.is_tuple:
        return tuple(_literal(inst, s, v) for s, v in zip(shape.tuple_shapes or (), value))
    return np.asarray(value).astype(shape.dtype, copy=False)


def _copy(value: Any) -> Any:
    return tuple(_copy(v) for v in value) if isinstance(value, tuple) else np.array(value)


class _Evaluator:
    """One evaluation: the interpreter loop plus a cache of per-computation facts."""

    def __init__(self) -> None:
        self._vector_safe: dict[int, bool] = {}

    def vector_safe(self, comp: HloComputation) -> bool:
        """Whether `comp` may run on arrays in place of its scalar parameters."""
        key = id(comp)
        if key not in self._vector_safe:
            self._vector_safe[key] = False  # guards against (invalid) recursion
            self._vector_safe[key] = all(self._inst_vector_safe(i) for i in comp.instructions)
        return self._vector_safe[key]

    def _inst_vector_safe(self, inst: HloInstruction) -> bool:
        if inst.opcode.kind is Kind.ELEMENTWISE or inst.opcode in _VECTOR_SAFE:
            return inst.opcode is not _O.CONSTANT or inst.shape.is_tuple or inst.shape.rank == 0
        if inst.opcode is _O.BITCAST_CONVERT:
            return inst.shape.dims == inst.operands[0].shape.dims
        if inst.opcode in (_O.CALL, _O.FUSION):
            return all(self.vector_safe(c) for c in inst.called)
        return False

    def apply(self, comp: HloComputation, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the scalar computation `comp` elementwise over `arrays` (broadcast together)."""
        arrays = [np.asarray(a) for a in arrays]
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        root = comp.root.shape
        dtypes = [s.dtype for s in root.tuple_shapes] if root.is_tuple else [root.dtype]
        if self.vector_safe(comp):
            out = self.run(comp, arrays)
            outs = list(out) if isinstance(out, tuple) else [out]
        else:
            flat = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
            results = [self.run(comp, [np.asarray(f[i]) for f in flat])
                       for i in range(int(np.prod(shape)))]
            columns = [list(r) if isinstance(r, tuple) else [r] for r in results]
            outs = [np.array([c[k] for c in columns], dtype=d).reshape(shape)
                    for k, d in enumerate(dtypes)]
        return [np.broadcast_to(np.asarray(o), shape).astype(d, copy=False)
                for o, d in zip(outs, dtypes)]

    def run(self, comp: HloComputation, args: Sequence[Any]) -> Any:
        """Evaluate `comp` on `args` (not checked: see `evaluate_computation`)."""
        env: dict[int, Any] = {}
        for inst in comp.instructions:
            try:
                env[id(inst)] = self._evaluate(inst, [env[id(o)] for o in inst.operands],
                                               args)
            except (HloEvaluationError, JaxRuntimeError):  # the latter: a host callback's
                raise
            except Exception as error:
                raise HloEvaluationError(
                    f"evaluating %{inst.name} ({inst.opcode.text}) in computation "
                    f"%{comp.name} failed: {type(error).__name__}: {error}") from error
        return env[id(comp.root)]

    def _evaluate(self, inst: HloInstruction, ops: list[Any], args: Sequence[Any]) -> Any:
        op = inst.opcode
        kernel = KERNELS.get(op)
        if kernel is not None:
            return np.asarray(kernel(inst, *ops)).astype(inst.shape.dtype, copy=False)
        handler = _HANDLERS.get(op)
        if handler is not None:
            return handler(inst, ops, self.apply)
        if op is _O.PARAMETER:
            return args[inst.attr("number")]
        if op is _O.CONSTANT:
            return _literal(inst, inst.shape, inst.attr("literal"))
        if op is _O.TUPLE:
            return tuple(ops)
        if op is _O.GET_TUPLE_ELEMENT:
            return ops[0][inst.attr("index")]
        if op is _O.COPY:
            return _copy(ops[0])
        if op in (_O.CALL, _O.FUSION):
            return self.run(inst.called[0], ops)
        if op is _O.WHILE:
            return self._while(inst, ops[0])
        if op is _O.CONDITIONAL:
            return self._conditional(inst, ops)
        if op is _O.CUSTOM_CALL:
            return self._custom_call(inst, ops)
        raise HloEvaluationError(f"%{inst.name}: the evaluator has no rule for opcode "
                                 f"{op.text}")

    def _while(self, inst: HloInstruction, state: Any) -> Any:
        condition, body = inst.called
        while bool(self.run(condition, [state])):
            state = self.run(body, [state])
        return state

    def _conditional(self, inst: HloInstruction, ops: list[Any]) -> Any:
        selector, branches = ops[0], inst.called
        if selector.dtype == np.bool_:
            index = 0 if bool(selector) else 1  # branches are (true, false)
        else:
            index = int(selector)
            index = index if 0 <= index < len(branches) else len(branches) - 1
        return self.run(branches[index], [ops[index + 1]])

    def _custom_call(self, inst: HloInstruction, ops: list[Any]) -> Any:
        target = inst.attr("target")
        fn = CUSTOM_CALL_TARGETS.get(target)
        if fn is None:
            known = ", ".join(sorted(CUSTOM_CALL_TARGETS)) or "none"
            raise HloEvaluationError(
                f"%{inst.name}: no custom-call target {target!r} is registered in "
                f"jaxlite.xla.evaluator.CUSTOM_CALL_TARGETS (registered: {known})")
        return _literal(inst, inst.shape, fn(inst, *ops))


def _argument(comp: HloComputation, param: HloInstruction, shape: Shape, value: Any) -> Any:
    """`value` checked against a parameter's shape (Python scalars and lists are converted)."""
    where = f"argument {param.attr('number')} (%{param.name} of %{comp.name})"
    if shape.is_tuple:
        parts = shape.tuple_shapes or ()
        if not isinstance(value, (tuple, list)) or len(value) != len(parts):
            raise HloEvaluationError(f"{where} must be a tuple of {len(parts)} values for "
                                     f"{shape}, got {type(value).__name__}")
        return tuple(_argument(comp, param, s, v) for s, v in zip(parts, value))
    array = np.asarray(value)
    if array.dtype != shape.dtype:
        if isinstance(value, (np.ndarray, np.generic)):
            raise HloEvaluationError(f"{where} must have element type {shape} but is a "
                                     f"{array.dtype.name} array; convert it first")
        array = array.astype(shape.dtype)
    if array.shape != shape.dims:
        raise HloEvaluationError(f"{where} must have dimensions {shape.dims} ({shape}), got "
                                 f"{array.shape}")
    return array


def evaluate_computation(comp: HloComputation, args: Sequence[Any]) -> Any:
    """Evaluate `comp` on `args` with numpy; returns an array, or a tuple for a tuple root.

    Raises `HloEvaluationError` for a wrong number, dtype or shape of arguments, an unknown
    custom-call target, or a failing instruction (named in the message).
    """
    params = comp.parameters
    if len(args) != len(params):
        raise HloEvaluationError(f"computation %{comp.name} takes {len(params)} arguments "
                                 f"({', '.join(str(p.shape) for p in params)}), got "
                                 f"{len(args)}")
    checked = [_argument(comp, p, p.shape, a) for p, a in zip(params, args)]
    with np.errstate(all="ignore"):  # integer wrap-around and IEEE specials are intended
        return _copy(_Evaluator().run(comp, checked))


def evaluate_module(module: HloModule, args: Sequence[Any]) -> Any:
    """Evaluate the entry computation of `module` on `args` (numpy arrays, one per entry
    parameter). Returns the root's value: a numpy array, or a tuple of them (nested as the
    root's tuple shape is) for a tuple-shaped root."""
    return evaluate_computation(module.entry, args)
