"""Dead code elimination (mirrors XLA's HloDCE).

Contract: `eliminate_dead_code(module)` removes from every computation the instructions
that its root does not need, keeping every parameter (a computation's signature never
changes) and every side-effecting instruction (custom-calls) with what they read; then it
drops the computations that the entry no longer calls, directly or transitively. Surviving
instructions keep their names, objects (where their operands survive unchanged) and order.
Values are untouched, bit for bit. It returns the same module object when there is nothing
to remove.
"""
from __future__ import annotations

from jaxlite.xla.analysis import live_instructions
from jaxlite.xla.ir import HloComputation, HloModule, reachable_computations
from jaxlite.xla.passes.rewriting import callees_first, rewrite_computation

__all__ = ["eliminate_dead_code"]


def _without_dead(comp: HloComputation) -> HloComputation:
    live = live_instructions(comp)
    if len(live) == len(comp.instructions):
        return comp
    return HloComputation(comp.name, tuple(live), comp.root)


def eliminate_dead_code(module: HloModule) -> HloModule:
    """`module` without unused instructions and uncalled computations (see the module doc)."""
    new_callee: dict[int, HloComputation] = {}
    changed = False
    for comp in callees_first(module):
        # Removing an instruction only changes its own computation; callers are rebuilt
        # with the new callee by `rewrite_computation`, whose rule is the identity.
        pruned = _without_dead(rewrite_computation(comp, new_callee, None, names=None))
        if pruned is not comp:
            new_callee[id(comp)] = pruned
            changed = True
    entry = new_callee.get(id(module.entry), module.entry)
    reachable = {id(c) for c in reachable_computations(entry)}
    computations = tuple(new_callee.get(id(c), c) for c in module.computations)
    kept = tuple(c for c in computations if id(c) in reachable)
    if not changed and len(kept) == len(module.computations):
        return module
    return HloModule(module.name, entry, kept, module.num_partitions)
