"""The HLO verifier: checks that a module is well formed (mirrors xla::HloVerifier).

`verify_module(module)` checks, for every computation of the module:
  - SSA and topological order: every operand is an instruction of the same computation
    listed before its user; instruction names are unique in the whole module (and so are
    computation names); the root is one of the computation's instructions;
  - parameters are numbered 0..n-1 without gaps or repeats;
  - operand counts follow the opcode table;
  - every instruction's shape equals the shape that `infer_shape` gives for its operands,
    attributes and called computations (layouts may differ);
  - called computations belong to the module (their signatures are checked by the shape
    rules: reductions take scalars, a while body keeps the carried shape, ...);
  - the entry computation belongs to the module and has a root.
The first broken rule raises `HloVerificationError`, naming the computation, the
instruction (`%add.3`) and the rule.
"""
from __future__ import annotations

from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape_inference import infer_shape

__all__ = ["HloVerificationError", "verify_computation", "verify_module"]


class HloVerificationError(ValueError):
    """A module breaks a rule of well-formed HLO; the message says where and which."""


def _fail(comp: HloComputation, inst: HloInstruction | None, rule: str) -> None:
    where = f"in computation %{comp.name}"
    if inst is not None:
        where += f", instruction %{inst.name}"
    raise HloVerificationError(f"{where}: {rule}")


def _check_parameters(comp: HloComputation) -> None:
    params = [i for i in comp.instructions if i.opcode is Opcode.PARAMETER]
    numbers = sorted(p.attr("number") for p in params
                     if isinstance(p.attr("number"), int))
    if numbers != list(range(len(params))):
        _fail(comp, None, f"parameter numbers must be 0..{len(params) - 1} without gaps or "
                          f"repeats, got {[p.attr('number') for p in params]}")


def verify_computation(comp: HloComputation, known: set[int] | None = None,
                       names: dict[str, str] | None = None) -> None:
    """Check one computation.

    Parameters
    ----------
    comp : the computation.
    known : ids of the computations it may call (those of its module); None skips the check.
    names : instruction name -> computation name of the names seen so far in the module,
        updated here, so that names are checked for uniqueness across computations.
    """
    names = {} if names is None else names
    defined: set[int] = set()
    for inst in comp.instructions:
        if inst.name in names:
            _fail(comp, inst, f"the name is already used in computation %{names[inst.name]} "
                              "(names must be unique in the module)")
        names[inst.name] = comp.name
        for position, operand in enumerate(inst.operands):
            if id(operand) not in defined:
                _fail(comp, inst, f"operand {position} (%{operand.name}) is not defined "
                                  "before its use in this computation (SSA, topological order)")
        arity = inst.opcode.arity
        if arity is not None and len(inst.operands) != arity:
            _fail(comp, inst, f"{inst.opcode.text} takes {arity} operand(s), got "
                              f"{len(inst.operands)}")
        for callee in inst.called:
            if known is not None and id(callee) not in known:
                _fail(comp, inst, f"calls computation %{callee.name}, which is not in the "
                                  "module")
        try:
            # Without the name, the rule's message starts with the opcode: the location
            # is said once, by `_fail`.
            inferred = infer_shape(inst.opcode, [o.shape for o in inst.operands], inst.attrs,
                                   inst.called, inst.shape)
        except ValueError as error:
            _fail(comp, inst, str(error))
        if not inferred.same_array(inst.shape):
            _fail(comp, inst, f"the shape {inst.shape} does not match the shape {inferred} "
                              f"inferred from the operands "
                              f"({', '.join(str(o.shape) for o in inst.operands)})")
        defined.add(id(inst))
    if id(comp.root) not in defined:
        _fail(comp, None, f"the root %{comp.root.name} is not one of the computation's "
                          "instructions")
    _check_parameters(comp)


def verify_module(module: HloModule) -> None:
    """Check every computation of `module`; raise `HloVerificationError` on the first fault."""
    known = {id(c) for c in module.computations}
    seen: dict[str, HloComputation] = {}
    for comp in module.computations:
        if comp.name in seen and seen[comp.name] is not comp:
            raise HloVerificationError(f"computation name %{comp.name} is used twice in "
                                       f"module {module.name}")
        seen[comp.name] = comp
    if id(module.entry) not in known:
        raise HloVerificationError(f"the entry computation %{module.entry.name} is not one of "
                                   f"the computations of module {module.name}")
    names: dict[str, str] = {}
    for comp in module.computations:
        verify_computation(comp, known, names)
