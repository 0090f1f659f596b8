"""Sharding propagation: every value of a program to be partitioned gets a sharding (mirrors
XLA's ShardingPropagation pass, in its SPMD mode).

Contract: `propagate_shardings(module, num_partitions)` returns the module with a `sharding`
attribute on every instruction of the entry computation and of the computations that
while, conditional and call run (tuple shardings, one leaf per array, on tuple values).
Computations applied elementwise (a reduce's `to_apply`, a sort's comparator) are left
alone, as in XLA. Values and shapes do not change; the partitioner reads the shardings.

Seeds are the shardings already there (the entry parameters, the root, `custom-call`s with
`custom_call_target="Sharding"`): they never change, except that a constraint's dimensions
listed in its `backend_config="unspecified_dims=[...]"` (JAX's P.UNCONSTRAINED) may be split
further. A Sharding custom-call becomes a
`copy` of its operand carrying its sharding (same name), as XLA leaves it for the
partitioner; other custom-calls produce replicated values. Entry parameters without a
sharding are replicated (their layout is the caller's).

The rest is a fixed point: sweep each computation forward (a value takes what its operands
propose, sharding_propagation_rules.forward) then backward (a value takes what its users
propose, `backward`), until nothing changes. A proposal replaces a value's sharding only
when it is more tiled, or when both combine into a more tiled one (tiles.better); so the
result does not depend on the sweep order, and more-specific layouts win as in XLA. Rounds
run at increasing aggressiveness (XLA's 0..3): early rounds skip proposals that usually cost
a reshard (a dot or a broadcast sharded from its operands rather than from its users).
Computations are swept callees first; a while's body parameter, body root, condition
parameter and the while itself hold one sharding, as do a conditional and its branches'
roots, and a branch's parameter sets its operand's (sharding_propagation_calls). Values
nothing proposes a sharding for end up replicated, and so do the program's results that a
propagated sharding would cut unevenly.
"""
from __future__ import annotations

import re

from jaxlite.xla.hlo_sharding import HloSharding
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.rewriting import RewriteContext, rewrite_module
from jaxlite.xla.passes.sharding_propagation_calls import call_graph
from jaxlite.xla.passes.sharding_propagation_rules import backward, forward
from jaxlite.xla.passes.sharding_propagation_tiles import better, refine
from jaxlite.xla.shape import Shape

__all__ = ["propagate_shardings"]

_LEVELS = (0, 1, 2, 3)
_NO_FORWARD = (Opcode.CONSTANT, Opcode.IOTA, Opcode.CUSTOM_CALL, Opcode.PARAMETER)


def propagate_shardings(module: HloModule, num_partitions: int) -> HloModule:
    """`module` with a sharding on every value the partitioner reads (see the module doc;
    XLA's ShardingPropagation, which jax.jit runs before partitioning)."""
    open_constraints: set[tuple[str, str]] = set()
    module = rewrite_module(module, lambda inst, ctx: _constraint_as_copy(
        inst, ctx, open_constraints))
    state = _Propagation(module, num_partitions, open_constraints)
    for level in _LEVELS:
        state.level = level
        while state.sweep():
            pass
    return state.annotated()


def _constraint_as_copy(inst: HloInstruction, ctx: RewriteContext,
                        open_constraints: set[tuple[str, str]]) -> HloInstruction | None:
    """A Sharding custom-call as a copy; those with `unspecified_dims` (JAX's
    P.UNCONSTRAINED) are noted in `open_constraints`: propagation may split those
    dimensions further."""
    if inst.opcode is Opcode.CUSTOM_CALL and inst.attr("target") == "Sharding":
        if re.search(r"unspecified_dims=\[\d", str(inst.attr("backend_config", ""))):
            open_constraints.add((ctx.computation.name, inst.name))
        return HloInstruction(inst.name, Opcode.COPY, inst.shape, inst.operands,
                              {"sharding": inst.attr("sharding")}, (), inst.metadata)
    return None


def leaf_shapes(shape: Shape) -> list[Shape]:
    """The arrays of a (nested) tuple shape in order: what a tuple sharding has one of."""
    if not shape.is_tuple:
        return [shape]
    return [leaf for part in shape.tuple_shapes for leaf in leaf_shapes(part)]


def _leaf_range(shape: Shape, index: int) -> range:
    """Where tuple element `index` of `shape` lies among its leaves."""
    start = sum(len(leaf_shapes(s)) for s in shape.tuple_shapes[:index])
    return range(start, start + len(leaf_shapes(shape.tuple_shapes[index])))


def _as_leaves(sharding: HloSharding, shape: Shape) -> tuple:
    """A tuple value's sharding as one per leaf (a single sharding applies to all)."""
    count = len(leaf_shapes(shape))
    if sharding.is_tuple and len(sharding.elements) == count:
        return tuple(sharding.elements)
    return (sharding,) * count


def _fits(sharding: HloSharding | None, shape: Shape) -> bool:
    """Whether `sharding` can lay out an array of `shape` (tiles for each dimension)."""
    return sharding is None or not sharding.is_tiled or \
        len(sharding.tiles_per_dim) == len(shape.dims)


def _even(sharding: HloSharding | None, shape: Shape) -> bool:
    """Whether every tile of `sharding` holds the same number of elements of `shape`."""
    return sharding is None or not sharding.is_tiled or all(
        d % t == 0 for d, t in zip(shape.dims, sharding.tiles_per_dim))


class _Propagation:
    """What is known so far: a sharding (or None) per array value, a tuple of them per tuple
    value; `fixed` values are seeds."""

    def __init__(self, module: HloModule, n: int,
                 open_constraints: set[tuple[str, str]] = frozenset()) -> None:
        self.module, self.n, self.level = module, n, 0
        self.open_constraints = open_constraints
        self.refined: set[int] = set()  # open constraints: split further, never undone
        self.graph = call_graph(module.entry)
        self.computations = self.graph.computations
        self.value: dict[int, object] = {}
        self.fixed: set[int] = set()
        self.users: dict[int, list[HloInstruction]] = {}
        for comp in self.computations:
            for inst, users in comp.users().items():
                self.users[id(inst)] = users
            for inst in comp.instructions:
                self._seed(inst, comp)
            for inst in comp.instructions:
                self._constrain_operand(inst)
        for comp in self.computations:
            for inst in comp.instructions:
                if id(inst) in self.fixed:
                    self._share(inst)

    def _seed(self, inst: HloInstruction, comp: HloComputation) -> None:
        sharding = inst.attr("sharding")
        if sharding is None and (inst.opcode is Opcode.CUSTOM_CALL or (
                inst.opcode is Opcode.PARAMETER and comp is self.module.entry)):
            sharding = HloSharding.replicate()
        if sharding is None:
            self.value[id(inst)] = (None,) * len(leaf_shapes(inst.shape)) \
                if inst.shape.is_tuple else None
            return
        self.value[id(inst)] = _as_leaves(sharding, inst.shape) \
            if inst.shape.is_tuple else sharding
        if (comp.name, inst.name) in self.open_constraints and not any(
                user.attr("target") == "SPMDFullToShardShape"
                for user in self.users[id(inst)]):  # a shard_map's input keeps its layout
            self.refined.add(id(inst))
        else:
            self.fixed.add(id(inst))

    def _constrain_operand(self, inst: HloInstruction) -> None:
        """A sharding constraint's operand starts out with the constraint's layout (XLA
        puts it there before propagating: the value is made where it is wanted)."""
        if inst.opcode is not Opcode.COPY or (
                id(inst) not in self.fixed and id(inst) not in self.refined):
            return
        operand = inst.operands[0]
        if self.value[id(operand)] is None and not operand.shape.is_tuple:
            self.value[id(operand)] = self.value[id(inst)]

    # ---- what rules see
    def of(self, inst: HloInstruction):
        return self.value.get(id(inst))

    # ---- one sweep
    def sweep(self) -> bool:
        changed = False
        for comp in self.computations:
            for inst in comp.instructions:
                changed |= self._offer(inst, self._from_operands(inst))
            for inst in reversed(comp.instructions):
                changed |= self._offer(inst, self._from_users(inst, comp))
        return changed

    def _offer(self, inst: HloInstruction, proposals) -> bool:
        """Improve `inst` with each proposal in turn; whether anything changed."""
        if id(inst) in self.fixed:
            return False
        changed = False
        for proposal in proposals:
            if proposal is None:
                continue
            current = self.value[id(inst)]
            if inst.shape.is_tuple:
                if not isinstance(proposal, tuple):
                    proposal = _as_leaves(proposal, inst.shape)
                leaves = list(current)
                for i, (leaf, shape) in enumerate(zip(proposal, leaf_shapes(inst.shape))):
                    new = better(leaves[i], leaf, len(shape.dims), self.n, self.level > 0) \
                        if _fits(leaf, shape) else None
                    if new is not None:
                        leaves[i], changed = new, True
                self.value[id(inst)] = tuple(leaves)
            elif id(inst) in self.refined:
                new = None if self.level == 0 or isinstance(proposal, tuple) else refine(
                    current, proposal, len(inst.shape.dims), self.n)
                if new is not None:
                    self.value[id(inst)], changed = new, True
            elif not isinstance(proposal, tuple) and _fits(proposal, inst.shape):
                new = better(current, proposal, len(inst.shape.dims), self.n, self.level > 0)
                if new is not None:
                    self.value[id(inst)], changed = new, True
        if changed:
            self._share(inst)
        return changed

    def _share(self, inst: HloInstruction) -> None:
        """Set the values related to `inst` across calls to its sharding (and theirs on)."""
        work = [inst]
        while work:
            source = work.pop()
            for member in self.graph.related.get(id(source), ()):
                if id(member) in self.fixed or self.of(member) == self.of(source):
                    continue
                self.value[id(member)] = self.of(source)
                work.append(member)

    # ---- proposals from operands
    def _from_operands(self, inst: HloInstruction) -> list:
        op = inst.opcode
        if op is Opcode.GET_TUPLE_ELEMENT:
            leaves = self.of(inst.operands[0])
            part = [leaves[i] for i in _leaf_range(inst.operands[0].shape, inst.attr("index"))]
            return [tuple(part) if inst.shape.is_tuple else part[0]]
        if op is Opcode.TUPLE:
            return [tuple(leaf for o in inst.operands for leaf in self._leaves(o))]
        if op is Opcode.PARAMETER:
            return self._parameter_from_caller(inst)
        if op is Opcode.WHILE:
            body = inst.called[1]
            return [self.of(body.root), self.of(body.parameters[0]),
                    self.of(inst.operands[0])]
        if op is Opcode.CALL:
            return [self.of(inst.called[0].root)]
        if op is Opcode.CONDITIONAL:
            return [self.of(branch.root) for branch in inst.called]
        if op in _NO_FORWARD:
            return []
        return [forward(inst, self)]

    def _leaves(self, inst: HloInstruction) -> tuple:
        value = self.of(inst)
        return value if inst.shape.is_tuple else (value,)

    def _parameter_from_caller(self, param: HloInstruction) -> list:
        link = self.graph.caller_of_parameter.get(id(param))
        if link is None:
            return []
        caller, k = link
        if caller.opcode is Opcode.WHILE:
            return [self.of(caller)]
        if caller.opcode is Opcode.CONDITIONAL and self.level < 1:
            # A branch's parameter first learns its layout from inside the branch (and then
            # sets the operand's, `_share`); the operand's only counts after (XLA's order).
            return []
        return [self.of(caller.operands[k])]

    # ---- proposals from users
    def _from_users(self, inst: HloInstruction, comp: HloComputation) -> list:
        proposals = []
        for user in self.users.get(id(inst), []):
            for k, operand in enumerate(user.operands):
                if operand is inst:
                    proposals.append(self._from_user(user, k, inst))
        caller = self.graph.caller_of_root.get(id(comp))
        if inst is comp.root and caller is not None:
            proposals.append(self.of(caller))
        return proposals

    def _from_user(self, user: HloInstruction, k: int, inst: HloInstruction):
        op = user.opcode
        if op is Opcode.TUPLE:
            start = sum(len(leaf_shapes(o.shape)) for o in user.operands[:k])
            part = self.of(user)[start:start + len(leaf_shapes(inst.shape))]
            return tuple(part) if inst.shape.is_tuple else part[0]
        if op is Opcode.GET_TUPLE_ELEMENT:
            leaves = [None] * len(leaf_shapes(inst.shape))
            part = self._leaves(user)
            for i, leaf in zip(_leaf_range(inst.shape, user.attr("index")), part):
                leaves[i] = leaf
            return tuple(leaves)
        if op is Opcode.WHILE:
            return self.of(user)
        if op is Opcode.CALL:
            return self.of(user.called[0].parameters[k])
        if op is Opcode.CONDITIONAL:
            if k == 0:
                return HloSharding.replicate()
            return self.of(user.called[k - 1].parameters[0])
        if op is Opcode.CUSTOM_CALL:
            return None
        return backward(user, k, self)

    # ---- the result
    def annotated(self) -> HloModule:
        final: dict[tuple[str, str], HloSharding] = {}
        for comp in self.computations:
            for inst in comp.instructions:
                final[(comp.name, inst.name)] = self._final(inst)

        def annotate(inst: HloInstruction, ctx: RewriteContext):
            sharding = final.get((ctx.computation.name, inst.name))
            if sharding is None or inst.attr("sharding") == sharding:
                return None
            return inst.replace(attrs={**inst.attrs, "sharding": sharding})
        return rewrite_module(self.module, annotate)

    def _final(self, inst: HloInstruction) -> HloSharding:
        leaves = self._leaves(inst)
        if inst is self.module.entry.root and id(inst) not in self.fixed:
            # The program's results go back to the caller as arrays in blocks: XLA only
            # lets a propagated layout out when it cuts them evenly.
            leaves = [leaf if _even(leaf, shape) else None
                      for leaf, shape in zip(leaves, leaf_shapes(inst.shape))]
        leaves = [leaf or HloSharding.replicate() for leaf in leaves]
        return HloSharding.tuple_of(leaves) if inst.shape.is_tuple else leaves[0]
