"""The machinery the passes share for rebuilding immutable HLO (the part of XLA's
HloComputation::ReplaceInstruction / HloPassInterface that a pass would otherwise repeat).

A pass states, per instruction, what should take its place (`Rule`); `rewrite_module` walks
every computation callees first, gives each instruction its rewritten operands and called
computations, asks the rule, and rebuilds only what changed. When no rule fires anywhere,
the very same module object comes back, which is how the pipeline knows nothing changed.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from jaxlite.xla.ir import (HloComputation, HloInstruction, HloModule, NameUniquer,
                            OpMetadata, reachable_computations)
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference import infer_shape

__all__ = [
    "RewriteContext",
    "Rule",
    "callees_first",
    "emit_with_operands",
    "module_names",
    "rewrite_computation",
    "rewrite_module",
]


class RewriteContext:
    """What a rule may use besides the instruction: fresh names and shape inference."""

    def __init__(self, names: NameUniquer | None, computation: HloComputation) -> None:
        self.names = names
        self.computation = computation
        # The metadata of the instruction being rewritten: what replaces it came from the
        # same user operation.
        self.metadata: OpMetadata | None = None

    def new(self, opcode: Opcode, operands: Iterable[HloInstruction], attrs: dict | None = None,
            called: Iterable[HloComputation] = (), shape: Shape | None = None,
            name: str | None = None) -> HloInstruction:
        """A new instruction; its shape is inferred when not given (or checked when given).

        `name` keeps an existing name: use it only for the instruction being replaced.
        """
        operands, called = tuple(operands), tuple(called)
        inferred = infer_shape(opcode, [o.shape for o in operands], attrs or {}, called,
                               shape, name)
        if shape is None:
            shape = inferred
        if name is None:
            assert self.names is not None, "a rule made an instruction without a name source"
            name = self.names(opcode.text)
        return HloInstruction(name, opcode, shape, operands,
                              attrs or {}, called, self.metadata)


# A rule sees an instruction whose operands and callees are already rewritten, and returns
# what replaces it: an instruction already in the new computation (one of its operands, say),
# a new instruction (whose new operands are added before it), or None to keep it.
Rule = Callable[[HloInstruction, RewriteContext], "HloInstruction | None"]


def module_names(module: HloModule) -> NameUniquer:
    """A name source that will not hand out any name the module already uses."""
    names = NameUniquer()
    for comp in module.computations:
        names.reserve(comp.name)
        for inst in comp.instructions:
            names.reserve(inst.name)
    return names


def callees_first(module: HloModule) -> list[HloComputation]:
    """The module's computations ordered so that every callee precedes its callers."""
    return reachable_computations(*module.computations)


def emit_with_operands(value: HloInstruction, emitted: set[int], out: list[HloInstruction]) -> None:
    """Append `value` and those of its (transitive) operands not yet emitted, operands first."""
    if id(value) in emitted:
        return
    if all(id(o) in emitted for o in value.operands):
        emitted.add(id(value))
        out.append(value)
        return
    stack = [(value, iter(value.operands))]
    while stack:
        node, operands = stack[-1]
        child = next(operands, None)
        if child is None:
            stack.pop()
            if id(node) not in emitted:
                emitted.add(id(node))
                out.append(node)
        elif id(child) not in emitted:
            stack.append((child, iter(child.operands)))


def rewrite_computation(comp: HloComputation, new_callee: dict[int, HloComputation],
                        rule: Rule | None, names: NameUniquer | None) -> HloComputation:
    """`comp` with its callees replaced per `new_callee` (ids of old computations -> new ones)
    and every instruction passed through `rule`; `comp` itself when nothing changed."""
    context = RewriteContext(names, comp)
    new_of: dict[int, HloInstruction] = {}
    out: list[HloInstruction] = []
    emitted: set[int] = set()
    for inst in comp.instructions:
        operands = tuple([new_of[id(o)] for o in inst.operands])
        changed = operands != inst.operands  # compares identity first: equal means same
        called = inst.called
        if called:
            called = tuple([new_callee.get(id(c), c) for c in called])
            changed = changed or any(a is not b for a, b in zip(called, inst.called))
        current = inst.replace(operands=operands, called=called) if changed else inst
        context.metadata = inst.metadata
        replacement = rule(current, context) if rule is not None else None
        if replacement is None:
            replacement = current
        emit_with_operands(replacement, emitted, out)
        new_of[id(inst)] = replacement
    root = new_of[id(comp.root)]
    if root is comp.root and len(out) == len(comp.instructions) and all(
            a is b for a, b in zip(out, comp.instructions)):
        return comp
    return HloComputation(comp.name, tuple(out), root)


def rewrite_module(module: HloModule, rule: Rule | None = None) -> HloModule:
    """`module` with `rule` applied to every instruction of every computation, callees
    first; the same object when no rule fired."""
    names = module_names(module)
    new_callee: dict[int, HloComputation] = {}
    changed = False
    for comp in callees_first(module):
        new = rewrite_computation(comp, new_callee, rule, names)
        if new is not comp:
            new_callee[id(comp)] = new
            changed = True
    if not changed:
        return module
    computations = tuple(new_callee.get(id(c), c) for c in module.computations)
    return HloModule(module.name, new_callee.get(id(module.entry), module.entry), computations,
                     module.num_partitions)
