"""The HLO collectives on 2, 4 and 8 devices (evaluator_spmd), against numpy: each device's
result as XLA defines it, for several replica-group layouts and every reducer."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxlite.xla.evaluator import HloEvaluationError
from jaxlite.xla.evaluator_spmd import evaluate_spmd
from jaxlite.xla.text import parse_module
from jaxlite.xla.verifier import verify_module

from tests.xla.collective_programs import (FLAT, PERMUTE_PATTERNS, REDUCERS, all_gather_program,
                                           group_layouts, group_of, groups_text, permute_pattern,
                                           permute_program, program, reduce_scatter_program,
                                           reference_reduce)

DEVICE_COUNTS = (2, 4, 8)
LAYOUTS = [(n, g) for n in DEVICE_COUNTS for g in group_layouts(n)]
LAYOUT_IDS = [f"{n}dev-{groups_text(g)}" for n, g in LAYOUTS]


def _inputs(n: int, dims, element: str = "f32", seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if element == "pred":
        return [rng.random(dims) < 0.5 for _ in range(n)]
    if element == "s32":
        return [rng.integers(-3, 4, dims).astype(np.int32) for _ in range(n)]
    return [rng.integers(-8, 8, dims).astype(np.float32) / 4 for _ in range(n)]


def _run(module, xs):
    verify_module(module)
    return evaluate_spmd(module, [[x] for x in xs], len(xs))


@pytest.mark.parametrize("reducer", sorted(REDUCERS))
@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_all_reduce(n, groups, reducer):
    element = REDUCERS[reducer][1]
    attrs = FLAT.format(groups=groups_text(groups))
    module = program(f"all-reduce(%x), {attrs}, to_apply=%{reducer}_fn",
                     f"{element}[3,2]", f"{element}[3,2]", reducer)
    xs = _inputs(n, (3, 2), element)
    outs = _run(module, xs)
    for d in range(n):
        expected = reference_reduce(reducer, [xs[m] for m in group_of(groups, d)])
        np.testing.assert_array_equal(outs[d], expected.astype(outs[d].dtype))


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_all_gather_concatenates_the_group_in_group_order(n, groups, dim):
    module = all_gather_program(groups, dim)
    xs = _inputs(n, (3, 2))
    outs = _run(module, xs)
    for d in range(n):
        expected = np.concatenate([xs[m] for m in group_of(groups, d)], axis=dim)
        np.testing.assert_array_equal(outs[d], expected)


@pytest.mark.parametrize("reducer", ["add", "max"])
@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_reduce_scatter_gives_each_member_its_block_of_the_reduction(n, groups, reducer):
    size = len(groups[0])
    module = reduce_scatter_program(groups, reducer, 8)
    xs = _inputs(n, (2, 8 * size))
    outs = _run(module, xs)
    for d in range(n):
        group = group_of(groups, d)
        total = reference_reduce(reducer, [xs[m] for m in group])
        position = group.index(d)
        np.testing.assert_array_equal(outs[d], total[:, 8 * position:8 * (position + 1)])


@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_all_to_all_array_form_exchanges_blocks(n, groups):
    size = len(groups[0])
    module = program(f"all-to-all(%x), channel_id=1, replica_groups={groups_text(groups)}, "
                     f"dimensions={{0}}", f"f32[{2 * size},3]", f"f32[{2 * size},3]")
    xs = _inputs(n, (2 * size, 3))
    outs = _run(module, xs)
    for d in range(n):
        group = group_of(groups, d)
        me = group.index(d)
        # Block j of the result is what member j held as its block `me`.
        expected = np.concatenate([xs[m][2 * me:2 * me + 2] for m in group])
        np.testing.assert_array_equal(outs[d], expected)


def test_all_to_all_tuple_form_sends_operand_i_to_member_i():
    text = """HloModule m
ENTRY %main (x: f32[2], y: f32[2]) -> (f32[2], f32[2]) {
  %x = f32[2] parameter(0)
  %y = f32[2] parameter(1)
  ROOT %a = (f32[2], f32[2]) all-to-all(%x, %y), channel_id=1, replica_groups={{1,0}}
}
"""
    module = parse_module(text)
    verify_module(module)
    args = [[np.array([d, 10 + d], np.float32), np.array([20 + d, 30 + d], np.float32)]
            for d in range(2)]
    outs = evaluate_spmd(module, args, 2)
    # Group order (1, 0): device 1 is member 0, device 0 is member 1.
    for d, member in ((0, 1), (1, 0)):
        senders = (1, 0)
        for i, sender in enumerate(senders):
            np.testing.assert_array_equal(outs[d][i], args[sender][member])


@pytest.mark.parametrize("n", DEVICE_COUNTS)
@pytest.mark.parametrize("pattern", PERMUTE_PATTERNS)
def test_collective_permute_and_zeros_where_nobody_sends(n, pattern):
    pairs = permute_pattern(pattern, n)
    module = permute_program(pairs, "s32[2]")
    xs = [np.array([d, 100 * d + 7], np.int32) for d in range(n)]
    outs = _run(module, xs)
    received = {t: s for s, t in pairs}
    for d in range(n):
        expected = xs[received[d]] if d in received else np.zeros(2, np.int32)
        np.testing.assert_array_equal(outs[d], expected)


def test_partition_and_replica_ids_follow_the_device_layout():
    text = """HloModule m
ENTRY %main () -> (u32[], u32[]) {
  %p = u32[] partition-id()
  %r = u32[] replica-id()
  ROOT %t = (u32[], u32[]) tuple(%p, %r)
}
"""
    module = parse_module(text)
    verify_module(module)
    outs = evaluate_spmd(module, [[] for _ in range(6)], 6, num_replicas=2)
    assert [(int(p), int(r)) for p, r in outs] == [(d % 3, d // 3) for d in range(6)]
    assert all(p.dtype == np.uint32 for p, _ in outs)


@pytest.mark.parametrize("attrs,num_replicas,expected_groups", [
    # No channel: groups of replicas, formed once per partition (2 replicas x 2 partitions).
    ("replica_groups={{0,1}}", 2, [(0, 2), (1, 3)]),
    # A channel without global ids on all-reduce: replicas, each with all its partitions.
    ("channel_id=1, replica_groups={{0},{1}}", 2, [(0, 1), (2, 3)]),
    # A channel and global ids: the ids are devices.
    ("channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true", 2,
     [(0, 3), (1, 2)]),
    # No groups at all: everyone (one replica, four partitions, cross-partition ids).
    ("channel_id=1, replica_groups={}, use_global_device_ids=true", 1, [(0, 1, 2, 3)]),
])
def test_all_reduce_group_modes(attrs, num_replicas, expected_groups):
    module = program(f"all-reduce(%x), {attrs}, to_apply=%add_fn", "f32[]", "f32[]", "add")
    xs = [np.float32(10 ** d) for d in range(4)]
    outs = evaluate_spmd(module, [[x] for x in xs], 4, num_replicas=num_replicas)
    for d in range(4):
        assert float(outs[d]) == sum(xs[m] for m in group_of(expected_groups, d))


def test_collectives_meet_inside_a_while_loop_on_every_iteration():
    text = """HloModule loop
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%cond (cs: (s32[], f32[2])) -> pred[] {
  %cs = (s32[], f32[2]) parameter(0)
  %ci = s32[] get-tuple-element(%cs), index=0
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(%ci, %three), direction=LT
}
%body (st: (s32[], f32[2])) -> (s32[], f32[2]) {
  %st = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%st), index=0
  %v = f32[2] get-tuple-element(%st), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %shifted = f32[2] collective-permute(%v), channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}
  %summed = f32[2] all-reduce(%shifted), channel_id=2, replica_groups={{0,1}, {2}}, use_global_device_ids=true, to_apply=%add
  ROOT %t = (s32[], f32[2]) tuple(%next, %summed)
}
ENTRY %main (x: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[2]) tuple(%zero, %x)
  %w = (s32[], f32[2]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[2] get-tuple-element(%w), index=1
}
"""
    module = parse_module(text)
    verify_module(module)
    xs = [np.array([d + 1, 10 * (d + 1)], np.float32) for d in range(3)]
    values = list(xs)
    for _ in range(3):
        shifted = [values[2], values[0], values[1]]
        values = [shifted[0] + shifted[1], shifted[0] + shifted[1], shifted[2]]
    outs = evaluate_spmd(module, [[x] for x in xs], 3)
    for d in range(3):
        np.testing.assert_array_equal(outs[d], values[d])


def test_diverging_devices_are_reported_not_hung():
    text = """HloModule diverge
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%reduce_branch (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %r = f32[] all-reduce(%x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
}
%skip_branch (y: f32[]) -> f32[] {
  ROOT %y = f32[] parameter(0)
}
ENTRY %main (v: f32[]) -> f32[] {
  %v = f32[] parameter(0)
  %id = u32[] partition-id()
  %zero = u32[] constant(0)
  %first = pred[] compare(%id, %zero), direction=EQ
  ROOT %c = f32[] conditional(%first, %v, %v), true_computation=%reduce_branch, false_computation=%skip_branch
}
"""
    module = parse_module(text)
    with pytest.raises(HloEvaluationError) as info:
        evaluate_spmd(module, [[np.float32(1)], [np.float32(2)]], 2, timeout=0.5)
    message = str(info.value)
    assert message.startswith("device 0:"), message
    assert "for devices [1], which never reached it" in message


def test_groups_naming_missing_devices_fail_with_the_instruction():
    module = program("all-reduce(%x), channel_id=1, replica_groups={{0,5}}, "
                     "use_global_device_ids=true, to_apply=%add_fn", "f32[]", "f32[]", "add")
    with pytest.raises(HloEvaluationError) as info:
        evaluate_spmd(module, [[np.float32(d)] for d in range(2)], 2)
    message = str(info.value)
    assert "%c (all-reduce)" in message and "ids must be below 2" in message, message


@settings(max_examples=25, deadline=None)
@given(dims=st.lists(st.integers(1, 3), min_size=1, max_size=3), n=st.sampled_from([2, 4]),
       data=st.data())
def test_all_gather_then_reduce_scatter_is_the_group_sum(dims, n, data):
    """reduce-scatter(add) of an all-gather gives n times each device's own block."""
    dim = data.draw(st.integers(0, len(dims) - 1))
    gathered = list(dims)
    gathered[dim] *= n
    shape = ",".join(map(str, dims))
    big = ",".join(map(str, gathered))
    text = f"""HloModule m
%add (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}}
ENTRY %main (x: f32[{shape}]) -> f32[{shape}] {{
  %x = f32[{shape}] parameter(0)
  %g = f32[{big}] all-gather(%x), channel_id=1, replica_groups={{}}, dimensions={{{dim}}}, use_global_device_ids=true
  ROOT %r = f32[{shape}] reduce-scatter(%g), channel_id=2, replica_groups={{}}, use_global_device_ids=true, dimensions={{{dim}}}, to_apply=%add
}}
"""
    module = parse_module(text)
    xs = _inputs(n, tuple(dims), seed=len(dims) + dim)
    outs = _run(module, xs)
    for d in range(n):
        np.testing.assert_array_equal(outs[d], xs[d] * n)
