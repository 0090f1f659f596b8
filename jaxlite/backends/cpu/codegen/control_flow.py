"""Control flow as native code: while loops, conditionals and calls (mirrors XLA's CPU
IrEmitter for kWhile, kConditional and kCall). No Python runs between iterations.

Each called computation becomes a program function of its own (`program.py`) with its own
buffer assignment; its parameters are the caller's buffers; its temporaries live in the
scratch slice the caller's assignment reserved for the instruction (conditional, call).

- while: the loop state lives in the while's own result buffers, filled from the initial
  value. Each iteration calls the condition (its result goes to a stack byte) and, while it
  holds, the body. The body is compiled with its tuple parameter split into one parameter
  per element, each donated to the result element of the same position, so that buffer
  assignment lets the body write each new element into the state buffer it replaces (in
  place, or after the element's last read, or as a copy at its end): no copies between
  iterations; a value returned in two elements is copied into the second at the end. The
  temporaries of the condition and the body live in a region of the module's `extra` area
  of their own. (A state with nested tuples, or elements that trade places, a cycle of
  copies, keep the simple scheme: the body writes the new elements to regions of their
  own, copied into the state.)
- conditional: a branch (pred: true is branch 0; an index out of range takes the last
  branch) on the index; the chosen computation writes its results straight into the
  conditional's result buffers.
- call: like a conditional with one branch.
"""
from __future__ import annotations

from typing import Any

from jaxlite.backends.cpu import interrupt
from jaxlite.backends.cpu.codegen.program import ComputationPlan, plan_computation, result_moves
from jaxlite.xla.buffer_assignment import ALIGNMENT
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode

__all__ = ["emit_control_flow", "control_computations", "extra_bytes", "flat_body",
           "while_plans"]

_O = Opcode
_CONTROL = (_O.WHILE, _O.CONDITIONAL, _O.CALL)


def control_computations(module: HloModule) -> list[HloComputation]:
    """The entry and every computation it runs through while, conditional and call, each
    once, callers before callees."""
    order: list[HloComputation] = []
    seen: set[int] = set()
    stack = [module.entry]
    while stack:
        comp = stack.pop(0)
        if id(comp) in seen:
            continue
        seen.add(id(comp))
        order.append(comp)
        for inst in comp.instructions:
            if inst.opcode in _CONTROL:
                stack.extend(inst.called)
    return order


def _aligned(size: int) -> int:
    return -(-size // ALIGNMENT) * ALIGNMENT


def _aligned_sum(sizes: list[int]) -> int:
    return sum(_aligned(size) for size in sizes)


def flat_body(body: HloComputation) -> HloComputation | None:
    """A while body whose tuple parameter is split into one parameter per element (so that
    buffer assignment can let each result element live in its parameter's buffer), or None
    when the state holds nested tuples."""
    (param,) = body.parameters
    shapes = param.shape.tuple_shapes or ()
    if any(s.is_tuple for s in shapes) or body.root.opcode is not _O.TUPLE:
        return None
    elements = [HloInstruction(f"{param.name}.{i}", _O.PARAMETER, shape, attrs={"number": i})
                for i, shape in enumerate(shapes)]
    new: dict[int, HloInstruction] = {}
    instructions: list[HloInstruction] = list(elements)
    whole: HloInstruction | None = None
    for inst in body.instructions:
        if inst is param:
            continue
        if inst.opcode is _O.GET_TUPLE_ELEMENT and inst.operands[0] is param:
            new[id(inst)] = elements[inst.attr("index")]
            continue
        if any(o is param for o in inst.operands) and whole is None:
            whole = HloInstruction(param.name, _O.TUPLE, param.shape, tuple(elements))
            instructions.append(whole)
        operands = tuple(whole if o is param else new.get(id(o), o) for o in inst.operands)
        copy = inst if operands == inst.operands else inst.replace(operands=operands)
        new[id(inst)] = copy
        instructions.append(copy)
    return HloComputation(f"{body.name}.flat", tuple(instructions), new[id(body.root)])


def while_plans(inst: HloInstruction) -> tuple[ComputationPlan, ComputationPlan, bool]:
    """The condition's plan, the body's plan, and whether the body is flat: its results
    then live in the loop state's own buffers (each parameter donated to its result)."""
    cond = plan_computation(inst.called[0])
    body = flat_body(inst.called[1])
    if body is None:
        return cond, plan_computation(inst.called[1]), False
    count = len(body.parameters)
    plan = plan_computation(body, tuple(range(count)))
    # The loop hands the body its state as both parameters and results: leaf k must be
    # matched with parameter k. Results that trade places would need a temporary.
    in_state = all(key == ("param", k) for k, (key, _, _) in enumerate(plan.targets))
    if not in_state or result_moves(plan) is None:
        return cond, plan_computation(inst.called[1]), False
    return cond, plan, True


def _while_regions(inst: HloInstruction, plans: tuple[ComputationPlan, ComputationPlan, bool]
                   ) -> list[int]:
    """Sizes of the while loop's regions of the extra area: the temporaries of its
    computations, then (a body that is not flat) the new state elements it computes."""
    cond, body, flat = plans
    sizes = [max(cond.assignment.temp_size_in_bytes, body.assignment.temp_size_in_bytes)]
    if not flat:
        shapes = inst.shape.tuple_shapes if inst.shape.is_tuple else (inst.shape,)
        sizes += [s.nbytes for s in shapes or ()]
    return sizes


def extra_bytes(module: HloModule) -> int:
    """The size of the regions while loops keep their computations' temporaries in (and,
    when the body is not flat, its results)."""
    return sum(_aligned_sum(_while_regions(inst, while_plans(inst)))
               for comp in control_computations(module)
               for inst in comp.instructions if inst.opcode is _O.WHILE)


def emit_control_flow(builder: Any, state: Any, inst: HloInstruction) -> None:
    """Emit `inst` (while, conditional or call) into the program being emitted."""
    if inst.opcode is _O.WHILE:
        _while(builder, state, inst)
    elif inst.opcode is _O.CONDITIONAL:
        _conditional(builder, state, inst)
    else:
        _call(builder, state, inst)


def _program(builder: Any, comp: HloComputation,
             plan: ComputationPlan | None = None) -> tuple[str, ComputationPlan]:
    programs = builder.programs
    if id(comp) not in programs:
        plan = plan or plan_computation(comp)
        name = builder.program_name(comp.name)
        programs[id(comp)] = (name, plan)
        builder.program.emit(plan, name)
    return programs[id(comp)]


def _scratch(state: Any, inst: HloInstruction, plans: list[ComputationPlan]) -> str:
    need = max((p.assignment.temp_size_in_bytes for p in plans), default=0)
    if need == 0:
        return "null"
    reserved = state.plan.assignment.scratch.get(inst.name)
    if reserved is None or reserved.size < need:
        raise AssertionError(f"{inst.name}: its computations need {need} bytes of "
                             f"temporaries, buffer assignment reserved "
                             f"{0 if reserved is None else reserved.size}")
    return state.ptr(reserved)


def _table(state: Any, pointers: list[str], hint: str) -> str:
    fb = state.fb
    if not pointers:
        return "null"
    table = fb.alloca(f"[{len(pointers)} x ptr]", 8, hint)
    for k, p in enumerate(pointers):
        slot = fb.op(f"getelementptr inbounds ptr, ptr {table}, i64 {k}", hint)
        fb.do(f"store ptr {p}, ptr {slot}, align 8")
    return table


def _invoke(state: Any, name: str, params: list[str], outs: list[str], scratch: str) -> None:
    fb = state.fb
    ptab, otab = _table(state, params, "args"), _table(state, outs, "results")
    fb.do(f"call void @{name}(ptr {ptab}, ptr {otab}, ptr {scratch}, ptr %consts, "
          f"ptr %extra, i64 %threads)")


def _leaf_pointers(state: Any, inst: HloInstruction) -> list[str]:
    return [state.ptr(s) for s in state.slices(inst)]


def _region(builder: Any, state: Any, size: int) -> str:
    if size == 0:
        return "null"
    offset = builder.extra_offset(_aligned(size))
    return state.fb.op(f"getelementptr inbounds i8, ptr %extra, i64 {offset}", "region")


def _while(builder: Any, state: Any, inst: HloInstruction) -> None:
    fb = state.fb
    plans = while_plans(inst)
    cond_plan, body_plan, flat = plans
    cond_name, _ = _program(builder, inst.called[0], cond_plan)
    body_key = body_plan.comp if flat else inst.called[1]
    body_name, _ = _program(builder, body_key, body_plan)
    sizes = _while_regions(inst, plans)
    scratch = _region(builder, state, sizes[0])
    loop_state = list(state.slices(inst))
    state_ptrs = [state.ptr(s) for s in loop_state]
    for dest, src, s in zip(state_ptrs, _leaf_pointers(state, inst.operands[0]), loop_state):
        state.copy(dest, src, s.size)
    outs, moved = list(state_ptrs), []
    if not flat:  # new elements go to regions of their own, then into the state
        outs = [_region(builder, state, size) for size in sizes[1:]]
        moved = [(p, o, s.size) for p, o, s in zip(state_ptrs, outs, loop_state) if s.size]
    flag = fb.alloca("i8", 1, "cond")
    head, body, done = fb.label("while.head"), fb.label("while.body"), fb.label("while.done")
    test = fb.label("while.cond")
    fb.br(head)
    fb.start(head)
    # Ctrl-C leaves the loop (and the run, whose results are then dropped): `interrupt`.
    interrupt.poll_head(fb, done, test)
    fb.start(test)
    if getattr(builder, "spmd", None) is not None:  # an SPMD run whose partitions diverged
        checked = fb.label("while.met")
        builder.poll_spmd_abort(fb, done, checked)
        fb.start(checked)
    _invoke(state, cond_name, state_ptrs, [flag], scratch)
    value = fb.op(f"load i8, ptr {flag}, align 1", "c")
    go = fb.op(f"icmp ne i8 {value}, 0", "c")
    fb.cond_br(go, body, done)
    fb.start(body)
    _invoke(state, body_name, state_ptrs, outs, scratch)
    for dest, src, size in moved:
        state.copy(dest, src, size, check=False)
    fb.br(head)
    fb.start(done)


def _conditional(builder: Any, state: Any, inst: HloInstruction) -> None:
    fb = state.fb
    programs = [_program(builder, comp) for comp in inst.called]
    scratch = _scratch(state, inst, [plan for _, plan in programs])
    results = _leaf_pointers(state, inst)
    index = inst.operands[0]
    where = state.ptr(state.slices(index)[0])
    blocks = [fb.label(f"branch{k}.") for k in range(len(programs))]
    done = fb.label("branch.done")
    if index.shape.dtype.kind == "b":
        value = fb.op(f"load i8, ptr {where}, align 1", "c")
        taken = fb.op(f"icmp ne i8 {value}, 0", "c")
        fb.cond_br(taken, blocks[0], blocks[1] if len(blocks) > 1 else done)
    else:
        bits = index.shape.dtype.itemsize * 8
        value = fb.op(f"load i{bits}, ptr {where}, align {bits // 8}", "c")
        cases = " ".join(f"i{bits} {k}, label %{b}" for k, b in enumerate(blocks[:-1]))
        fb.do(f"switch i{bits} {value}, label %{blocks[-1]} [ {cases} ]")
    for k, ((name, _), block) in enumerate(zip(programs, blocks)):
        fb.start(block)
        _invoke(state, name, _leaf_pointers(state, inst.operands[k + 1]), results, scratch)
        fb.br(done)
    fb.start(done)


def _call(builder: Any, state: Any, inst: HloInstruction) -> None:
    name, plan = _program(builder, inst.called[0])
    scratch = _scratch(state, inst, [plan])
    params = [p for o in inst.operands for p in _leaf_pointers(state, o)]
    _invoke(state, name, params, _leaf_pointers(state, inst), scratch)
