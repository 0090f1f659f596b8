"""The memory-aware scheduler (jaxlite/xla/passes/scheduling.py).

A crafted module whose given order keeps two large temporaries alive at once gets an order
that keeps one; on random modules (tests/xla/hlo_strategies.py) the schedule is a valid
topological order of the same instructions, computes the same values, and never raises the
peak of live bytes over the given order.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings

from jaxlite.xla.buffer_assignment import assign_buffers
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import HloComputation, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion import fuse
from jaxlite.xla.passes.layout_assignment import assign_layouts
from jaxlite.xla.passes.scheduling import (dfs_schedule, list_schedule, peak_live_bytes,
                                           schedule)
from jaxlite.xla.pipeline import PipelineOptions, optimize
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
    fused = fuse(assign_layouts(optimize(parse_module(text), PipelineOptions(verify=True))))
    scheduled = schedule(fused)
    assert peak_live_bytes(scheduled.entry) < peak_live_bytes(fused.entry)
    assert (assign_buffers(scheduled).temp_size_in_bytes
            < assign_buffers(fused).temp_size_in_bytes)


@settings(max_examples=60)
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
