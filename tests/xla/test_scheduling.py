"""The passes of the compile tail around buffer assignment: the memory-aware scheduler
(jaxlite/xla/passes/scheduling.py) and layout assignment
(jaxlite/xla/passes/layout_assignment.py).

Scheduling: a crafted module whose given order keeps two large temporaries alive at once
gets an order that keeps one; on random modules (tests/xla/hlo_strategies.py) the schedule
is a valid topological order of the same instructions, computes the same values, and never
raises the peak of live bytes over the given order. Layouts: each rule on a small module,
and on random modules the values stay the same and a second run changes nothing.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from jaxlite.xla.buffer_assignment import assign_buffers, buffer_model
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import HloComputation, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion import fuse
from jaxlite.xla.passes.layout_assignment import assign_layouts, moves_no_data
from jaxlite.xla.passes.scheduling import (dfs_schedule, list_schedule, peak_live_bytes,
                                           schedule)
from jaxlite.xla.pipeline import SIMPLIFY, PipelineOptions, optimize
from jaxlite.xla.text import parse_module
from jaxlite.xla.verifier import verify_module

sys.path.insert(0, str(Path(__file__).parent)) if str(Path(__file__).parent) not in sys.path \
    else None
from hlo_strategies import HloProgram, hlo_programs  # noqa: E402

ADD = """
%add (add_x: f32[], add_y: f32[]) -> f32[] {
  %add_x = f32[] parameter(0)
  %add_y = f32[] parameter(1)
  ROOT %add_s = f32[] add(%add_x, %add_y)
}
"""


def module(entry: str, extra: str = ADD) -> HloModule:
    parsed = parse_module(f"HloModule m\n{extra}\n{entry}")
    verify_module(parsed)
    return parsed


TWO_REDUCTIONS = parse_module("HloModule m\n" + ADD + """
ENTRY %main (p: f32[64], q: f32[64]) -> (f32[], f32[]) {
  %p = f32[64]{0} parameter(0)
  %q = f32[64]{0} parameter(1)
  %z = f32[] constant(0)
  %a = f32[64,64]{1,0} broadcast(%p), dimensions={1}
  %b = f32[64,64]{1,0} broadcast(%q), dimensions={0}
  %ra = f32[] reduce(%a, %z), dimensions={0,1}, to_apply=%add
  %rb = f32[] reduce(%b, %z), dimensions={0,1}, to_apply=%add
  ROOT %t = (f32[], f32[]) tuple(%ra, %rb)
}
""")
BIG = 64 * 64 * 4


def names(comp: HloComputation) -> list[str]:
    return [i.name for i in comp.instructions]


def assert_valid_order(before: HloComputation, after: HloComputation) -> None:
    """The same instructions, operands before users, the same root; parameters first
    in a new order."""
    assert sorted(names(after)) == sorted(names(before))
    assert after.root.name == before.root.name
    seen: set[str] = set()
    for inst in after.instructions:
        assert all(o.name in seen for o in inst.operands), f"%{inst.name} before an operand"
        seen.add(inst.name)
    kinds = [i.opcode is Opcode.PARAMETER for i in after.instructions]
    assert after is before or kinds == sorted(kinds, reverse=True), "parameters come first"


def assert_same_values(before: HloModule, after: HloModule, args) -> None:
    expected, actual = evaluate_module(before, args), evaluate_module(after, args)
    pairs = zip(*(v if isinstance(v, tuple) else (v,) for v in (expected, actual)))
    for e, a in pairs:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(e))


def test_scheduling_finishes_one_large_temporary_before_the_next():
    before = TWO_REDUCTIONS
    after = schedule(before)
    verify_module(after)
    assert_valid_order(before.entry, after.entry)
    order = names(after.entry)
    assert order.index("ra") < order.index("b") or order.index("rb") < order.index("a")
    assert peak_live_bytes(before.entry) == 2 * BIG + 4  # %a, %b and %ra
    assert peak_live_bytes(after.entry) == BIG + 8       # one of them, both sums
    assert assign_buffers(after).temp_size_in_bytes < assign_buffers(before).temp_size_in_bytes
    args = [np.arange(64, dtype=np.float32), np.ones(64, np.float32)]
    assert_same_values(before, after, args)


def test_a_good_order_is_kept_as_it_is():
    good = schedule(TWO_REDUCTIONS)
    assert schedule(good) is good


def test_control_flow_bodies_are_scheduled():
    body = """
%body (carry: (f32[64], f32[64])) -> (f32[64], f32[64]) {
  %carry = (f32[64]{0}, f32[64]{0}) parameter(0)
  %u = f32[64]{0} get-tuple-element(%carry), index=0
  %v = f32[64]{0} get-tuple-element(%carry), index=1
  %zero = f32[] constant(0)
  %bu = f32[64,64]{1,0} broadcast(%u), dimensions={1}
  %bv = f32[64,64]{1,0} broadcast(%v), dimensions={0}
  %su = f32[64]{0} reduce(%bu, %zero), dimensions={0}, to_apply=%add
  %sv = f32[64]{0} reduce(%bv, %zero), dimensions={1}, to_apply=%add
  ROOT %next = (f32[64]{0}, f32[64]{0}) tuple(%su, %sv)
}
"""
    m = parse_module("HloModule m\n" + ADD + body + """
ENTRY %main (p: (f32[64], f32[64])) -> (f32[64], f32[64]) {
  %p = (f32[64]{0}, f32[64]{0}) parameter(0)
  ROOT %c = (f32[64]{0}, f32[64]{0}) call(%p), to_apply=%body
}
""")
    after = schedule(m)
    verify_module(after)
    callee = after.entry.root.called[0]
    before_body = m.entry.root.called[0]
    assert_valid_order(before_body, callee)
    assert peak_live_bytes(callee) < peak_live_bytes(before_body)
    args = [(np.arange(64, dtype=np.float32), np.ones(64, np.float32))]
    assert_same_values(m, after, args)


def test_scheduling_lowers_the_mlp_train_steps_temporaries():
    text = (Path(__file__).parent / "fixtures" / "mlp_train_step.lowered.hlo").read_text()
    simplified = optimize(parse_module(text), PipelineOptions(verify=True, passes=(SIMPLIFY,)))
    fused = fuse(assign_layouts(simplified))
    scheduled = schedule(fused)
    assert peak_live_bytes(scheduled.entry) < peak_live_bytes(fused.entry)
    assert (assign_buffers(scheduled).temp_size_in_bytes
            < assign_buffers(fused).temp_size_in_bytes)


@settings(max_examples=100)
@given(hlo_programs(max_operations=20))
def test_scheduling_never_raises_the_peak(program: HloProgram):
    for before in (program.module, fuse(assign_layouts(program.module))):
        after = schedule(before)
        verify_module(after)
        assert_valid_order(before.entry, after.entry)
        assert peak_live_bytes(after.entry) <= peak_live_bytes(before.entry)
        assert (after is before) == (names(after.entry) == names(before.entry))
        assert_same_values(program.module, after, program.args)
        for candidate in (list_schedule(before.entry), dfs_schedule(before.entry)):
            assert_valid_order(before.entry, HloComputation(
                before.entry.name, tuple(candidate), before.entry.root))



def greedy_by_scan(comp: HloComputation) -> list[str]:
    """The list schedule as first written: every step scores every ready instruction and
    runs the best ((net bytes freed, earlier position) largest). list_schedule keeps the
    ready ones in a heap and rescores only those whose operand buffers changed readers."""
    model = buffer_model(comp)
    position = {id(i): n for n, i in enumerate(comp.instructions)}
    readers = {b: set() for b in range(len(model.size))}
    for inst in comp.instructions:
        for b in model.reads[id(inst)]:
            readers[b].add(id(inst))
    temporary = lambda b: b not in model.input_kind and b not in model.outputs  # noqa: E731

    def net_freed(inst):
        dying = {b for b in model.reads[id(inst)]
                 if temporary(b) and readers[b] == {id(inst)}}
        defined = [b for b in model.defines[id(inst)] if b not in model.input_kind]
        unused = [b for b in defined if not readers[b] and b not in model.outputs]
        return (sum(model.size[b] for b in dying) + sum(model.size[b] for b in unused)
                - sum(model.size[b] for b in defined))

    order = [i for i in comp.instructions if i.opcode is Opcode.PARAMETER]
    done = {id(i) for i in order}
    while len(order) < len(comp.instructions):
        ready = [i for i in comp.instructions if id(i) not in done
                 and all(id(o) in done for o in i.operands)]
        inst = max(ready, key=lambda i: (net_freed(i), -position[id(i)]))
        order.append(inst)
        done.add(id(inst))
        for b in model.reads[id(inst)]:
            readers[b].discard(id(inst))
    return [i.name for i in order]


def test_list_schedule_equals_the_greedy_scan_on_the_mlp_train_step():
    text = (Path(__file__).parent / "fixtures" / "mlp_train_step.lowered.hlo").read_text()
    simplified = optimize(parse_module(text), PipelineOptions(verify=True, passes=(SIMPLIFY,)))
    for comp in (simplified.entry, fuse(assign_layouts(simplified)).entry):
        assert [i.name for i in list_schedule(comp)] == greedy_by_scan(comp)


@settings(max_examples=60)
@given(hlo_programs(max_operations=20))
def test_list_schedule_equals_the_greedy_scan(program: HloProgram):
    for module in (program.module, fuse(assign_layouts(program.module))):
        assert [i.name for i in list_schedule(module.entry)] == greedy_by_scan(module.entry)


# ---------------------------------------------------------------------------- layouts

def layouts(m: HloModule) -> dict[str, tuple[int, ...] | None]:
    return {i.name: i.shape.layout for c in m.computations for i in c.instructions
            if not i.shape.is_tuple}


def test_a_dot_read_through_a_transpose_is_written_transposed():
    m = module("""
ENTRY %main (a: f32[8,4], b: f32[8,16], w: f32[16,4]) -> f32[16,4] {
  %a = f32[8,4]{1,0} parameter(0)
  %b = f32[8,16]{1,0} parameter(1)
  %w = f32[16,4]{1,0} parameter(2)
  %d = f32[4,16]{1,0} dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %t = f32[16,4]{0,1} transpose(%d), dimensions={1,0}
  ROOT %u = f32[16,4]{1,0} subtract(%w, %t)
}
""", "")
    laid = assign_layouts(m)
    verify_module(laid)
    chosen = layouts(laid)
    assert chosen["d"] == (0, 1) and chosen["t"] == (1, 0)  # the transpose moves no data
    assert moves_no_data(next(i for i in laid.entry.instructions if i.name == "t"))
    assert assign_layouts(laid) is laid
    args = [np.arange(32, dtype=np.float32).reshape(8, 4), np.ones((8, 16), np.float32),
            np.ones((16, 4), np.float32)]
    np.testing.assert_array_equal(evaluate_module(laid, args), evaluate_module(m, args))
    # Fused, the subtraction can now write over the dot's result.
    fused = fuse(laid)
    a = assign_buffers(fused)
    root = fused.entry.root.name
    assert a.in_place.get(root) == "d"


def test_parameters_and_results_stay_row_major():
    m = module("""
ENTRY %main (p: f32[4,8]) -> (f32[8,4], f32[4,8]) {
  %p = f32[4,8]{0,1} parameter(0)
  %e = f32[4,8]{0,1} exponential(%p)
  %t = f32[8,4]{0,1} transpose(%e), dimensions={1,0}
  ROOT %r = (f32[8,4]{0,1}, f32[4,8]{0,1}) tuple(%t, %e)
}
""", "")
    laid = assign_layouts(m)
    assert set(layouts(laid).values()) == {(1, 0)}
    assert all(s.layout == (1, 0) for s in laid.entry.root.shape.tuple_shapes)


def test_a_transpose_read_by_a_dot_becomes_a_bitcast():
    m = module("""
ENTRY %main (a: f32[16,8], b: f32[16,4]) -> f32[8,4] {
  %a = f32[16,8]{1,0} parameter(0)
  %b = f32[16,4]{1,0} parameter(1)
  %t = f32[8,16]{1,0} transpose(%a), dimensions={1,0}
  ROOT %d = f32[8,4]{1,0} dot(%t, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""", "")
    laid = assign_layouts(m)
    t = next(i for i in laid.entry.instructions if i.name == "t")
    assert t.shape.layout == (0, 1) and moves_no_data(t)
    a = assign_buffers(laid)
    assert a.slices["t"] == a.slices["a"]  # no copy


@pytest.mark.parametrize("reduced, free", [((0,), True), ((1,), False)])
def test_a_transpose_read_by_reductions_becomes_a_bitcast_when_rows_stay_minor(reduced,
                                                                              free):
    kept = 1 - reduced[0]
    dims = (8, 16)
    m = module(f"""
ENTRY %main (a: f32[16,8]) -> f32[{dims[kept]}] {{
  %a = f32[16,8]{{1,0}} parameter(0)
  %t = f32[8,16]{{1,0}} transpose(%a), dimensions={{1,0}}
  %z = f32[] constant(0)
  ROOT %r = f32[{dims[kept]}]{{0}} reduce(%t, %z), dimensions={{{reduced[0]}}}, to_apply=%add
}}
""")
    t = next(i for i in assign_layouts(m).entry.instructions if i.name == "t")
    assert moves_no_data(t) is free


def test_a_bitcast_keeps_its_layouts():
    m = module("""
ENTRY %main (p: f32[4,8]) -> f32[8,4] {
  %p = f32[4,8]{1,0} parameter(0)
  %e = f32[4,8]{0,1} exponential(%p)
  %b = f32[8,4]{1,0} bitcast(%e)
  ROOT %n = f32[8,4]{1,0} negate(%b)
}
""", "")
    laid = assign_layouts(m)
    assert layouts(laid)["e"] == (0, 1)  # its layout is what the bitcast means
    args = [np.arange(32, dtype=np.float32).reshape(4, 8)]
    np.testing.assert_array_equal(evaluate_module(laid, args), evaluate_module(m, args))


def test_fusions_sharing_a_computation_get_their_own_layouts():
    m = module("""
%f (x: f32[8,8]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0)
  %t = f32[8,8]{0,1} transpose(%x), dimensions={1,0}
  ROOT %e = f32[8,8]{1,0} exponential(%t)
}

ENTRY %main (p: f32[8,8]) -> (f32[8,8], f32[8,8]) {
  %p = f32[8,8]{1,0} parameter(0)
  %d = f32[8,8]{1,0} dot(%p, %p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %f1 = f32[8,8]{1,0} fusion(%d), kind=kLoop, calls=%f
  %f2 = f32[8,8]{1,0} fusion(%p), kind=kLoop, calls=%f
  ROOT %r = (f32[8,8]{1,0}, f32[8,8]{1,0}) tuple(%f1, %f2)
}
""", "")
    laid = assign_layouts(m)
    verify_module(laid)  # names stay unique
    f1, f2 = laid.entry.root.operands
    assert f1.called[0] is not f2.called[0]
    assert f1.called[0].parameters[0].shape.layout == (0, 1)  # as %d is now stored
    assert f2.called[0].parameters[0].shape.layout == (1, 0)
    assert set(layouts(laid).values()) == {(0, 1), (1, 0)}
    args = [np.arange(64, dtype=np.float32).reshape(8, 8) / 64]
    for e, x in zip(evaluate_module(m, args), evaluate_module(laid, args)):
        np.testing.assert_array_equal(x, e)
    assert assign_layouts(laid) is laid


@settings(max_examples=60)
@given(hlo_programs())
def test_layout_assignment_keeps_values_and_is_idempotent(program: HloProgram):
    expected = evaluate_module(program.module, program.args)
    for before in (program.module, fuse(program.module)):
        laid = assign_layouts(before)
        verify_module(laid)
        actual = evaluate_module(laid, program.args)
        for e, x in zip(*(v if isinstance(v, tuple) else (v,) for v in (expected, actual))):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(e))
        assert assign_layouts(laid) is laid
