"""Buffer assignment (jaxlite/xla/buffer_assignment.py).

Hand-built modules check liveness, reuse of dead buffers, in-place writes, views, donation
and the scratch space of loops; random modules (tests/xla/hlo_strategies.py) check that no
two buffers live at the same time overlap in memory; and the golden test compares our
temporary bytes with XLA's `memory_analysis()` for the same programs, recorded by
tests/xla/fixtures/generate_memory.py in `memory_<name>.json`.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxlite.xla.buffer_assignment import (BufferAssignment, assign_buffers, buffer_model,
                                           liveness)
from jaxlite.xla.ir import HloModule
from jaxlite.xla.passes.fusion import fuse
from jaxlite.xla.passes.layout_assignment import assign_layouts
from jaxlite.xla.passes.scheduling import schedule
from jaxlite.xla.pipeline import PIPELINE, FixedPoint, PipelineOptions, optimize, pass_name
from jaxlite.xla.text import parse_module
from jaxlite.xla.verifier import verify_module

sys.path.insert(0, str(Path(__file__).parent)) if str(Path(__file__).parent) not in sys.path \
    else None
from hlo_strategies import HloProgram, hlo_programs  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
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


def ranges(assignment: BufferAssignment, name: str) -> list[tuple[int, int]]:
    return [(r.start, r.end) for r in assignment.live_ranges[name]]


# ------------------------------------------------------------------------ liveness

LIVENESS = module("""
ENTRY %main (p: f32[8,8]) -> (f32[8,8], f32[8]) {
  %p = f32[8,8]{1,0} parameter(0)
  %z = f32[] constant(0)
  %r = f32[8]{0} reduce(%p, %z), dimensions={1}, to_apply=%add
  %b = f32[8,8]{1,0} broadcast(%r), dimensions={0}
  %d = f32[8,8]{1,0} dot(%b, %p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %r2 = f32[8]{0} reduce(%d, %z), dimensions={0}, to_apply=%add
  ROOT %t = (f32[8,8]{1,0}, f32[8]{0}) tuple(%d, %r2)
}
""")


def test_kernel_scratch_is_reserved_during_its_step_only():
    sizes = {"r": 1024, "d": 1024}
    plain = assign_buffers(LIVENESS)
    a = assign_buffers(LIVENESS, scratch=lambda inst: sizes.get(inst.name, 0))
    assert plain.temp_size_in_bytes == 256 and not plain.scratch
    assert {name: s.size for name, s in a.scratch.items()} == sizes
    step = {name: t for t, name in enumerate(a.schedule)}
    for name, reserved in a.scratch.items():
        for value, slices in a.slices.items():
            for s, live in zip(slices, a.live_ranges[value]):
                if live.start <= step[name] <= live.end and s.allocation == \
                        reserved.allocation:
                    assert (s.offset + s.size <= reserved.offset
                            or reserved.offset + reserved.size <= s.offset), (name, value)
    # %d's scratch sits beside %b (read by the dot); %r's reuses that space, as %b and %d's
    # scratch do not exist yet at step 2.
    assert a.temp_size_in_bytes == 256 + 1024


def test_live_ranges_run_from_definition_to_last_read():
    a = assign_buffers(LIVENESS)
    assert a.schedule == ("p", "z", "r", "b", "d", "r2", "t")
    assert ranges(a, "p") == [(0, 4)]      # parameters from step 0; last read by the dot
    assert ranges(a, "r") == [(2, 3)]
    assert ranges(a, "b") == [(3, 4)]
    assert ranges(a, "d") == [(4, 7)]      # results live to the end (step 7)
    assert ranges(a, "t") == [(4, 7), (5, 7)]
    assert a.slices["t"] == (a.slices["d"][0], a.slices["r2"][0])  # a tuple is a view


def test_sizes_and_kinds_of_allocations():
    a = assign_buffers(LIVENESS)
    kinds = {x.index: x.kind for x in a.allocations}
    assert kinds[a.slices["p"][0].allocation] == "parameter"
    assert kinds[a.slices["z"][0].allocation] == "constant"
    assert kinds[a.slices["d"][0].allocation] == "output"
    assert kinds[a.slices["b"][0].allocation] == "temp"
    assert (a.argument_size_in_bytes, a.output_size_in_bytes) == (256, 288)
    # %r dies before either result exists, so it waits in %r2's result allocation; %b is
    # read by the dot that writes %d, so it needs the arena.
    assert a.slices["r"][0].allocation == a.slices["r2"][0].allocation
    assert a.temp_size_in_bytes == 256


# ------------------------------------------------------------------ reuse and views

REUSE = module("""
ENTRY %main (p: f32[64]) -> f32[] {
  %p = f32[64]{0} parameter(0)
  %z = f32[] constant(0)
  %a = f32[64,64]{1,0} broadcast(%p), dimensions={1}
  %s1 = f32[64]{0} reduce(%a, %z), dimensions={0}, to_apply=%add
  %b = f32[64,64]{1,0} broadcast(%s1), dimensions={0}
  ROOT %s2 = f32[] reduce(%b, %z), dimensions={0,1}, to_apply=%add
}
""")


def test_dead_buffers_are_reused():
    a = assign_buffers(REUSE)
    big = 64 * 64 * 4
    assert a.slices["a"][0] == a.slices["b"][0]  # %a is dead when %b is written
    assert a.temp_size_in_bytes == big + 256     # %s1 overlaps both
    assert a.temp_size_in_bytes < 2 * big + 256


def test_arena_offsets_are_aligned():
    for alignment in (64, 256):
        a = assign_buffers(LIVENESS, alignment=alignment)
        assert all(s.offset % alignment == 0 for sl in a.slices.values() for s in sl)


VIEWS = module("""
ENTRY %main (p: f32[8,8]) -> f32[64] {
  %p = f32[8,8]{1,0} parameter(0)
  %e = f32[8,8]{1,0} exponential(%p)
  %r = f32[64]{0} reshape(%e)
  %t = (f32[64]{0}, f32[8,8]{1,0}) tuple(%r, %e)
  %g = f32[64]{0} get-tuple-element(%t), index=0
  ROOT %n = f32[64]{0} negate(%g)
}
""")


def test_views_share_their_operand_buffer():
    a = assign_buffers(VIEWS)
    e = a.slices["e"][0]
    assert a.slices["r"] == a.slices["g"] == (e,)
    assert a.slices["t"] == (e, e)
    assert a.in_place == {"n": "e"}  # the negate reads %e's memory where it writes
    assert a.temp_size_in_bytes == 0


# ----------------------------------------------------------------------- in place

def chain(body: str, params: str = "p: f32[64]", result: str = "f32[64]",
          extra: str = ADD) -> BufferAssignment:
    return assign_buffers(module(f"ENTRY %main ({params}) -> {result} {{\n{body}\n}}", extra))


def test_elementwise_writes_over_an_operand_that_dies_there():
    a = chain("""
  %p = f32[64]{0} parameter(0)
  %a = f32[64]{0} exponential(%p)
  %b = f32[64]{0} negate(%a)
  ROOT %c = f32[64]{0} add(%b, %p)""")
    assert a.in_place == {"b": "a", "c": "b"}   # never over the parameter
    assert a.slices["a"] == a.slices["b"] == a.slices["c"]
    assert ranges(a, "a") == [(1, 4)]
    assert a.temp_size_in_bytes == 0


def test_no_write_over_an_operand_read_later():
    a = chain("""
  %p = f32[64]{0} parameter(0)
  %a = f32[64]{0} exponential(%p)
  %b = f32[64]{0} negate(%a)
  ROOT %c = f32[64]{0} add(%a, %b)""")
    assert "b" not in a.in_place and a.in_place["c"] in ("a", "b")
    assert a.slices["a"] != a.slices["b"]


@pytest.mark.parametrize("body, why", [
    ("""  %p = f32[8,8]{1,0} parameter(0)
  %a = f32[8,8]{1,0} exponential(%p)
  ROOT %b = f32[8,8]{0,1} negate(%a)""", "another layout: memory orders differ"),
    ("""  %p = f32[8,8]{1,0} parameter(0)
  %a = f32[8,8]{1,0} exponential(%p)
  ROOT %b = f64[8,8]{1,0} convert(%a)""", "another element size"),
    ("""  %p = f32[8,8]{1,0} parameter(0)
  %a = f32[8,8]{1,0} exponential(%p)
  ROOT %b = f32[8,8]{1,0} transpose(%a), dimensions={1,0}""", "not elementwise"),
])
def test_no_write_over_an_operand_read_elsewhere(body, why):
    result = body.split("ROOT %b = ")[1].split(" ")[0]
    a = chain(body, "p: f32[8,8]", result)
    assert "b" not in a.in_place, why


def test_updates_write_over_the_array_they_update():
    # A scan stacks its outputs with one dynamic-update-slice per iteration: written in
    # place, it moves one slice, not the whole stack.
    a = chain("""
  %p = f32[16,8]{1,0} parameter(0)
  %u = f32[1,8]{1,0} parameter(1)
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  %a = f32[16,8]{1,0} exponential(%p)
  %d = f32[16,8]{1,0} dynamic-update-slice(%a, %u, %i, %z)
  %idx = s32[2,1]{1,0} constant({{1},{3}})
  %top = f32[2,8]{1,0} slice(%d), slice={[0:2], [0:8]}
  %v = f32[2,8]{1,0} exponential(%top)
  ROOT %s = f32[16,8]{1,0} scatter(%d, %idx, %v), update_window_dims={1}, """
              """inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, """
              """to_apply=%add""", "p: f32[16,8], u: f32[1,8], i: s32[]", "f32[16,8]")
    assert a.in_place == {"d": "a", "v": "top", "s": "d"}
    assert a.slices["a"] == a.slices["d"] == a.slices["s"]
    kept = chain("""
  %p = f32[16,8]{1,0} parameter(0)
  %u = f32[1,8]{1,0} parameter(1)
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  %a = f32[16,8]{1,0} exponential(%p)
  %d = f32[16,8]{1,0} dynamic-update-slice(%a, %u, %i, %z)
  ROOT %r = f32[16,8]{1,0} add(%d, %a)""", "p: f32[16,8], u: f32[1,8], i: s32[]",
                 "f32[16,8]")
    assert "d" not in kept.in_place            # %a is read after the update
    donated = assign_buffers(module("""
ENTRY %main (p: f32[16,8], u: f32[1,8], i: s32[]) -> f32[16,8] {
  %p = f32[16,8]{1,0} parameter(0)
  %u = f32[1,8]{1,0} parameter(1)
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  ROOT %d = f32[16,8]{1,0} dynamic-update-slice(%p, %u, %i, %z)
}"""), donated_parameters=(0,))
    assert donated.in_place == {"d": "p"}      # the update of a donated loop state


LOOP = """
%loop (x1: f32[8,8], y1: f32[8,8]) -> f32[8,8] {
  %x1 = f32[8,8]{1,0} parameter(0)
  %y1 = f32[8,8]{1,0} parameter(1)
  %e1 = f32[8,8]{1,0} exponential(%x1)
  ROOT %s1 = f32[8,8]{1,0} subtract(%e1, %y1)
}

%loop_t (x2: f32[8,8], y2: f32[8,8]) -> f32[8,8] {
  %x2 = f32[8,8]{1,0} parameter(0)
  %y2 = f32[8,8]{1,0} parameter(1)
  %t2 = f32[8,8]{1,0} transpose(%x2), dimensions={1,0}
  ROOT %s2 = f32[8,8]{1,0} subtract(%t2, %y2)
}

%loop_tl (x3: f32[8,8], y3: f32[8,8]) -> f32[8,8] {
  %x3 = f32[8,8]{0,1} parameter(0)
  %y3 = f32[8,8]{1,0} parameter(1)
  %t3 = f32[8,8]{1,0} transpose(%x3), dimensions={1,0}
  ROOT %s3 = f32[8,8]{1,0} subtract(%t3, %y3)
}
"""


@pytest.mark.parametrize("fused, layout, kind, expected", [
    ("loop", "{1,0}", "kLoop", True),
    ("loop", "{1,0}", "kOutput", False),   # a GEMM may use its result before the epilogue
    ("loop_t", "{1,0}", "kLoop", False),   # reads %a transposed
    ("loop_tl", "{0,1}", "kLoop", True),   # ... unless %a is stored transposed
])
def test_fusion_writes_over_an_operand_it_reads_at_the_same_offset(fused, layout, kind,
                                                                   expected):
    a = chain(f"""
  %p = f32[8,8]{{1,0}} parameter(0)
  %q = f32[8,8]{{1,0}} parameter(1)
  %a = f32[8,8]{layout} dot(%p, %q), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT %f = f32[8,8]{{1,0}} fusion(%a, %q), kind={kind}, calls=%{fused}""",
              "p: f32[8,8], q: f32[8,8]", "f32[8,8]", LOOP)
    assert (a.in_place.get("f") == "a") is expected
    assert (a.slices["a"] == a.slices["f"]) is expected


# ------------------------------------------------------------------------- donation

SGD = module("""
ENTRY %main (w: f32[64], g: f32[64]) -> (f32[64], f32[]) {
  %w = f32[64]{0} parameter(0)
  %g = f32[64]{0} parameter(1)
  %m = f32[64]{0} multiply(%g, %g)
  %u = f32[64]{0} subtract(%w, %m)
  %z = f32[] constant(0)
  %n = f32[] reduce(%u, %z), dimensions={0}, to_apply=%add
  ROOT %t = (f32[64]{0}, f32[]) tuple(%u, %n)
}
""")


def test_a_donated_parameter_holds_the_result_matched_with_it():
    plain = assign_buffers(SGD)
    assert plain.alias_size_in_bytes == 0 and plain.in_place == {"u": "m"}
    donated = assign_buffers(SGD, donated_parameters=(0,))
    assert donated.donated_outputs == {0: 0}
    assert donated.alias_size_in_bytes == 256
    assert donated.in_place == {"u": "w"}          # written over the donated input
    assert donated.slices["u"] == donated.slices["w"] == donated.slices["t"][:1]
    labels = {x.index: x.label for x in donated.allocations}
    assert labels[donated.slices["w"][0].allocation] == "parameter 0 (donated)"
    # %m no longer has the result's buffer to die into: a temporary now.
    assert (plain.temp_size_in_bytes, donated.temp_size_in_bytes) == (0, 256)


def test_a_result_whose_donated_parameter_is_read_later_is_copied_at_the_end():
    late = module("""
ENTRY %main (w: f32[64]) -> (f32[64], f32[]) {
  %w = f32[64]{0} parameter(0)
  %u = f32[64]{0} exponential(%w)
  %z = f32[] constant(0)
  %n = f32[] reduce(%w, %z), dimensions={0}, to_apply=%add
  ROOT %t = (f32[64]{0}, f32[]) tuple(%u, %n)
}
""")
    a = assign_buffers(late, donated_parameters=(0,))
    assert a.alias_size_in_bytes == 256
    assert a.slices["t"][0] == a.slices["w"][0]     # returned in the parameter's buffer
    assert ranges(a, "t")[0] == (6, 6)               # ... by a copy at the end
    assert a.temp_size_in_bytes == 256               # %u waits in the arena
    assert "result {0} is returned in donated parameter 0" in a.to_text()


def test_donation_matches_results_by_type_and_dimensions_in_order():
    a = assign_buffers(SGD, donated_parameters=(0, 1))
    assert a.donated_outputs == {0: 0}      # one f32[64] result; the f32[] matches nothing
    assert a.alias_size_in_bytes == 256


# ------------------------------------------------------------------- nested computations

WHILE = """
%cond (c: (s32[], f32[64])) -> pred[] {
  %c = (s32[], f32[64]{0}) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %k = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %k), direction=LT
}

%body (carry: (s32[], f32[64])) -> (s32[], f32[64]) {
  %carry = (s32[], f32[64]{0}) parameter(0)
  %count = s32[] get-tuple-element(%carry), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%count, %one)
  %v = f32[64]{0} get-tuple-element(%carry), index=1
  %big = f32[64,64]{1,0} broadcast(%v), dimensions={1}
  %zero_f = f32[] constant(0)
  %sum = f32[64]{0} reduce(%big, %zero_f), dimensions={0}, to_apply=%add
  ROOT %out = (s32[], f32[64]{0}) tuple(%next, %sum)
}
"""


def test_a_loop_reserves_the_temporaries_of_its_body():
    m = module("""
ENTRY %main (p: f32[64]) -> f32[64] {
  %p = f32[64]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[64]{0}) tuple(%zero, %p)
  %loop = (s32[], f32[64]{0}) while(%init), condition=%cond, body=%body
  ROOT %r = f32[64]{0} get-tuple-element(%loop), index=1
}
""", ADD + WHILE)
    a = assign_buffers(m)
    assert a.scratch["loop"].size == 64 * 64 * 4   # the body's broadcast
    assert a.temp_size_in_bytes >= 64 * 64 * 4
    assert "scratch of %loop" in a.to_text()


def test_to_text_lists_sizes_allocations_and_values():
    text = assign_buffers(SGD).to_text()
    assert text.startswith("BufferAssignment of m (7 steps): temp 0 B, arguments 512 B, "
                           "outputs 260 B, aliased 0 B")
    assert "allocation 1: parameter 0, 256 B" in text
    assert "%u: 256 B at 0, live 2..7, in place of %m" in text


# ---------------------------------------------------------------- property: no overlap

def _buffer_groups(m: HloModule, donated: tuple[int, ...]) -> dict[str, list[int]]:
    """For each instruction, the buffer group (liveness representative) of each array."""
    model = buffer_model(m.entry)
    live = liveness(m.entry, donated, model)

    def flat(refs: Any) -> list[int]:
        return [refs] if isinstance(refs, int) else [b for r in refs for b in flat(r)]
    return {i.name: [live.group[b] for b in flat(model.refs[id(i)])]
            for i in m.entry.instructions}


def assert_no_overlap(m: HloModule, donated: tuple[int, ...] = ()) -> BufferAssignment:
    a = assign_buffers(m, donated)
    groups = _buffer_groups(m, donated)
    entries = []
    for name, slices in a.slices.items():
        for leaf, (s, r) in enumerate(zip(slices, a.live_ranges[name])):
            entries.append((name, groups[name][leaf], s, r))
    entries += [(name, ("scratch", name), s, None) for name, s in a.scratch.items()]
    step = {name: t for t, name in enumerate(a.schedule)}
    for i, (n1, g1, s1, r1) in enumerate(entries):
        r1 = r1 or type(a.live_ranges[n1][0])(step[n1], step[n1])
        for n2, g2, s2, r2 in entries[i + 1:]:
            r2 = r2 or type(a.live_ranges[n2][0])(step[n2], step[n2])
            if g1 == g2 or s1.allocation != s2.allocation or not r1.overlaps(r2):
                continue
            assert (s1.offset + s1.size <= s2.offset or s2.offset + s2.size <= s1.offset), (
                f"%{n1} {s1} {r1} overlaps %{n2} {s2} {r2}\n{a.to_text()}")
    sizes = {x.index: x.size for x in a.allocations}
    assert all(s.offset + s.size <= sizes[s.allocation] for _, _, s, _ in entries)
    return a


@settings(max_examples=100)
@given(hlo_programs(), st.data())
def test_buffers_live_at_the_same_time_never_overlap(program: HloProgram, data):
    params = [p.attr("number") for p in program.module.entry.parameters]
    donated = tuple(data.draw(st.lists(st.sampled_from(params), unique=True)))
    assert_no_overlap(program.module, donated)
    assert_no_overlap(schedule(program.module), donated)
    assert_no_overlap(schedule(fuse(assign_layouts(program.module))), donated)


# ------------------------------------------------------------------ golden: XLA's bytes

def _flat_passes(passes: Any) -> list[Any]:
    return [q for p in passes for q in (_flat_passes(p.passes) if isinstance(p, FixedPoint)
                                        else [p])]


def compile_like_the_backend(text: str) -> HloModule:
    """The pipeline's passes, then those of ours it does not list yet, in XLA's order."""
    m = optimize(parse_module(text), PipelineOptions(verify=True))
    present = {pass_name(p) for p in _flat_passes(PIPELINE)}
    for p in (assign_layouts, fuse, schedule):
        if pass_name(p) not in present:
            m = p(m)
            verify_module(m)
    return m


def memory_cases() -> list[Any]:
    cases = []
    for name in ("mlp_train_step", "softmax", "layernorm"):
        data = json.loads((FIXTURES / f"memory_{name}.json").read_text())
        for variant in ("fixture", "donated", "large"):
            if variant in data:
                cases.append(pytest.param(name, data[variant], id=f"{name}-{variant}"))
    return cases


@pytest.mark.parametrize("name, record", memory_cases())
def test_temporary_bytes_are_at_most_xlas(name, record):
    text = record.get("lowered_hlo") or (FIXTURES / record["hlo"]).read_text()
    m = compile_like_the_backend(text)
    params = [f"{p.shape.dtype.name}{list(p.shape.dims)}" for p in m.entry.parameters]
    assert params == record["parameters"]
    ours = assert_no_overlap(m, tuple(record["donated_parameters"]))
    xla = record["memory_analysis"]
    assert ours.argument_size_in_bytes == xla["argument_size_in_bytes"]
    assert ours.alias_size_in_bytes == xla["alias_size_in_bytes"]
    # XLA also counts the result tuple's table of pointers, 8 bytes per element.
    root = m.entry.root.shape
    table = 8 * len(root.tuple_shapes or ()) if root.is_tuple else 0
    assert ours.output_size_in_bytes + table == xla["output_size_in_bytes"]
    assert ours.temp_size_in_bytes <= xla["temp_size_in_bytes"], ours.to_text()
