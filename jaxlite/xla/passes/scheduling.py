"""Scheduling: the order in which instructions run, chosen to keep peak memory low (mirrors
XLA's HloMemoryScheduler with its list, DFS and post-order schedulers).

Contract: `schedule(module)` returns a module whose entry and control-flow bodies (while,
call, conditional) hold the same instructions in an order that is still topological
(operands before users), parameters first, with the same root; no value changes. Fused
computations, reduction combiners and comparators keep their order (it is the kernel's
business). For each computation it builds candidate orders and keeps the one with the
lowest `peak_live_bytes`, the original order included, so scheduling never raises the peak;
on a tie the original order stays. A candidate that would change the order of side effects
(host callbacks, control flow that runs them) is not taken, so that callbacks run in program
order. The module comes back unchanged (the same object) when
every computation keeps its order.

The candidates:
  - list scheduling: repeatedly run, among the ready instructions (all operands done), the
    one that frees the most bytes net: bytes of operand buffers it reads last, minus bytes
    of the buffers it defines (nothing for a result written in place over an operand that
    dies there, nothing for views); ties go to the earlier instruction in the original order;
  - depth-first post-order from the root, visiting first the operand that needs the most
    memory to compute, so that big subcomputations finish, and free their temporaries,
    before the next one starts.

The memory model is buffer assignment's (`jaxlite.xla.buffer_assignment`): the same buffers,
views and in-place rule; parameters and constants take no memory of the computation.
"""
from __future__ import annotations

import heapq

from jaxlite.xla.buffer_assignment import BufferModel, buffer_model, liveness
from jaxlite.xla.analysis import has_side_effects
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.rewriting import callees_first, rewrite_computation

__all__ = ["schedule", "peak_live_bytes", "list_schedule", "dfs_schedule"]

_CONTROL = (Opcode.WHILE, Opcode.CALL, Opcode.CONDITIONAL)


def peak_live_bytes(comp: HloComputation, model: BufferModel | None = None) -> int:
    """The most bytes of temporaries and results live at one step of `comp`'s instruction
    order (in-place writes shared; parameters and constants excluded; fragmentation and
    alignment ignored): what scheduling minimizes."""
    live = liveness(comp, (), model)
    change = [0] * (live.steps + 2)  # bytes allocated at each step, minus bytes freed
    for g, kind in live.kinds().items():
        if kind in ("temp", "output"):
            change[live.start[g]] += live.model.size[g]
            change[live.end[g] + 1] -= live.model.size[g]
    peak = usage = 0
    for delta in change:
        usage += delta
        peak = max(peak, usage)
    return peak


def schedule(module: HloModule) -> HloModule:
    """Reorder the entry and control-flow bodies to keep peak memory low (see above)."""
    scheduled = _scheduled_computations(module)
    new_callee: dict[int, HloComputation] = {}
    for comp in callees_first(module):
        if id(comp) not in scheduled:
            continue
        current = rewrite_computation(comp, new_callee, None, None)
        best = _best_order(current)
        if best is not current:
            new_callee[id(comp)] = best
        elif current is not comp:
            new_callee[id(comp)] = current
    if not new_callee:
        return module
    return HloModule(module.name, new_callee.get(id(module.entry), module.entry),
                     num_partitions=module.num_partitions)


def _scheduled_computations(module: HloModule) -> set[int]:
    result: set[int] = set()
    stack = [module.entry]
    while stack:
        comp = stack.pop()
        if id(comp) not in result:
            result.add(id(comp))
            stack.extend(c for i in comp.instructions if i.opcode in _CONTROL
                         for c in i.called)
    return result


def _best_order(comp: HloComputation) -> HloComputation:
    """`comp` in the candidate order with the lowest peak (itself on a tie). Candidates
    that would run side effects (host callbacks) in another order are not taken."""
    model = buffer_model(comp)
    best, best_peak = comp, peak_live_bytes(comp, model)
    effects = [i for i in comp.instructions if has_side_effects(i)]
    for order in (list_schedule(comp, model), dfs_schedule(comp, model)):
        if all(a is b for a, b in zip(order, comp.instructions)):
            continue
        if len(effects) > 1 and [i for i in order if has_side_effects(i)] != effects:
            continue
        candidate = HloComputation(comp.name, tuple(order), comp.root)
        peak = peak_live_bytes(candidate)
        if peak < best_peak:
            best, best_peak = candidate, peak
    return best


def _temporary(model: BufferModel, b: int) -> bool:
    """Whether buffer `b` takes memory that is freed when its last reader has run."""
    return b not in model.input_kind and b not in model.outputs


def list_schedule(comp: HloComputation,
                  model: BufferModel | None = None) -> list[HloInstruction]:
    """The greedy list schedule of `comp` (see the module docstring)."""
    model = model or buffer_model(comp)
    position = {id(inst): n for n, inst in enumerate(comp.instructions)}
    users = comp.users()
    readers: dict[int, set[int]] = {b: set() for b in range(len(model.size))}
    for inst in comp.instructions:
        for b in model.reads[id(inst)]:
            readers[b].add(id(inst))
    waiting = {id(i): len(set(map(id, i.operands))) for i in comp.instructions}
    order = [i for i in comp.instructions if i.opcode is Opcode.PARAMETER]
    done = {id(p) for p in order}
    ready = {id(i): i for i in comp.instructions if not i.operands and id(i) not in done}
    for p in order:
        _release(p, users, waiting, done, ready)

    def net_freed(inst: HloInstruction) -> int:
        # A result written in place over a dying operand frees and allocates the same
        # bytes, so the in-place rule leaves this balance as it is.
        dying = {b for b in model.reads[id(inst)]
                 if _temporary(model, b) and readers[b] == {id(inst)}}
        defined = [b for b in model.defines[id(inst)] if b not in model.input_kind]
        unused = [b for b in defined if not readers[b] and b not in model.outputs]
        return (sum(model.size[b] for b in dying) + sum(model.size[b] for b in unused)
                - sum(model.size[b] for b in defined))

    # The ready instructions in a heap keyed (-net freed, position); an entry whose score
    # has changed since it was pushed is stale and skipped. Running an instruction changes
    # only the scores of the other readers of the buffers it read (a buffer may now die
    # with them), so only those are scored again: linear-ish rather than a scan of every
    # ready instruction per step (the greedy choice is the same: positions are distinct).
    score: dict[int, int] = {}
    heap: list[tuple[int, int, int]] = []

    def push(inst: HloInstruction) -> None:
        score[id(inst)] = value = net_freed(inst)
        heapq.heappush(heap, (-value, position[id(inst)], id(inst)))

    for inst in ready.values():
        push(inst)
    while ready:
        minus_value, _, key = heapq.heappop(heap)
        if key not in ready or score[key] != -minus_value:
            continue
        inst = ready.pop(key)
        order.append(inst)
        done.add(id(inst))
        rescore: dict[int, None] = {}
        for b in model.reads[id(inst)]:
            readers[b].discard(id(inst))
            rescore.update(dict.fromkeys(r for r in readers[b] if r in ready))
        for r in rescore:
            push(ready[r])
        _release(inst, users, waiting, done, ready)
        for user in dict.fromkeys(users[inst]):
            if id(user) in ready and id(user) not in score:
                push(user)  # ready from now on
    assert len(order) == len(comp.instructions), f"%{comp.name}: the schedule lost work"
    return order


def _release(inst: HloInstruction, users: dict, waiting: dict[int, int], done: set[int],
             ready: dict[int, HloInstruction]) -> None:
    """Count `inst` as done for its users; those with every operand done become ready."""
    for user in dict.fromkeys(users[inst]):
        waiting[id(user)] -= 1
        if waiting[id(user)] == 0 and id(user) not in done:
            ready[id(user)] = user


def dfs_schedule(comp: HloComputation,
                 model: BufferModel | None = None) -> list[HloInstruction]:
    """Depth-first post-order from the root, heaviest operand first (see above)."""
    model = model or buffer_model(comp)
    position = {id(inst): n for n, inst in enumerate(comp.instructions)}
    weight: dict[int, int] = {}
    for inst in comp.instructions:  # bytes defined in the operand cone (shared parts twice)
        own = sum(model.size[b] for b in model.defines[id(inst)] if _temporary(model, b))
        weight[id(inst)] = own + sum(weight[id(o)] for o in dict.fromkeys(inst.operands))
    order = [i for i in comp.instructions if i.opcode is Opcode.PARAMETER]
    visited = {id(p) for p in order}
    roots = [comp.root] + [i for i in reversed(comp.instructions) if i is not comp.root]
    for root in roots:
        if id(root) in visited:
            continue
        visited.add(id(root))
        stack = [(root, _heaviest_first(root, weight, position))]
        while stack:
            node, pending = stack[-1]
            child = next((o for o in pending if id(o) not in visited), None)
            if child is None:
                stack.pop()
                order.append(node)
            else:
                visited.add(id(child))
                stack.append((child, _heaviest_first(child, weight, position)))
    return order


def _heaviest_first(inst: HloInstruction, weight: dict[int, int],
                    position: dict[int, int]) -> list[HloInstruction]:
    return sorted(dict.fromkeys(inst.operands),
                  key=lambda o: (-weight[id(o)], position[id(o)]))
