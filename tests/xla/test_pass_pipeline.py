"""The pipeline (its order, fixed points, verification after every pass, per-pass dumps) and
the analyses the passes consult (uses, liveness, fingerprints, cost estimates).
"""
from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

from jaxlite.config import config
from jaxlite.xla import analysis
from jaxlite.xla.ir import HloComputation, HloModule
from jaxlite.xla.pipeline import (
    PIPELINE,
    SIMPLIFY,
    PipelineOptions,
    fixed_point,
    optimize,
    pass_name,
)
from jaxlite.xla.text import parse_module
from jaxlite.xla.verifier import HloVerificationError

from hlo_testing import ADD, ADD_AGAIN, MAX, check, parse

# ------------------------------------------------------------------------------ pipeline

SOFTMAX_LIKE = """
    %x = f32[4,8] parameter(0)
    %one = f32[] constant(1)
    %ones = f32[4,8] broadcast(%one), dimensions={}
    %x1 = f32[4,8] multiply(%x, %ones)
    %ninf = f32[] constant(-inf)
    %m = f32[4] reduce(%x1, %ninf), dimensions={1}, to_apply=%max
    %mb = f32[4,8] broadcast(%m), dimensions={0}
    %d = f32[4,8] subtract(%x1, %mb)
    %e = f32[4,8] exponential(%d)
    %z = f32[] constant(-0)
    %s = f32[4] reduce(%e, %z), dimensions={1}, to_apply=%add
    %s2 = f32[4] reduce(%e, %z), dimensions={1}, to_apply=%again
    %sb = f32[4,8] broadcast(%s2), dimensions={0}
    %t1 = f32[8,4] transpose(%sb), dimensions={1,0}
    %t2 = f32[4,8] transpose(%t1), dimensions={1,0}
    %unused = f32[4,8] negate(%e)
    ROOT %r = f32[4,8] divide(%e, %t2)"""


def test_pipeline_simplifies_to_a_fixed_point() -> None:
    after = check(SIMPLIFY, SOFTMAX_LIKE, """
        %x = f32[4,8] parameter(0)
        %ninf = f32[] constant(-inf)
        %m = f32[4] reduce(%x, %ninf), dimensions={1}, to_apply=%max
        %mb = f32[4,8] broadcast(%m), dimensions={0}
        %d = f32[4,8] subtract(%x, %mb)
        %e = f32[4,8] exponential(%d)
        %z = f32[] constant(-0)
        %s = f32[4] reduce(%e, %z), dimensions={1}, to_apply=%add
        %sb = f32[4,8] broadcast(%s), dimensions={0}
        ROOT %r = f32[4,8] divide(%e, %sb)""", ADD + ADD_AGAIN + MAX)
    assert [c.name for c in after.computations] == ["add", "max", "main"]
    assert SIMPLIFY(after) is after
    optimized = optimize(after)
    assert optimize(optimized) is optimized


def test_fixed_point_repeats_until_nothing_changes() -> None:
    calls = []

    def shrink(module: HloModule) -> HloModule:
        calls.append(len(module.entry.instructions))
        instructions = module.entry.instructions
        if len(instructions) <= 2:
            return module
        kept = instructions[:-2] + (instructions[-1].replace(operands=(instructions[-3],)),)
        return module.with_entry(HloComputation("main", kept, kept[-1]))
    module = parse("""
        %x = f32[] parameter(0)
        %a = f32[] negate(%x)
        %b = f32[] negate(%a)
        %c = f32[] negate(%b)
        ROOT %d = f32[] negate(%c)""")
    group = fixed_point(shrink, name="shrink_all")
    result = group(module)
    assert calls == [5, 4, 3, 2] and len(result.entry.instructions) == 2
    assert group(result) is result
    with pytest.warns(RuntimeWarning, match="shrink_all"):
        fixed_point(shrink, max_iterations=1, name="shrink_all")(module)


def test_pipeline_is_listed_in_order() -> None:
    assert [pass_name(p) for p in PIPELINE] == [
        "inline_calls", "canonicalize_convolutions", "simplify", "scan_in_blocks",
        "divide_by_reciprocals", "assign_layouts", "fuse", "assign_tiling", "schedule"]
    assert [p.__name__ for p in SIMPLIFY.passes] == [
        "simplify_algebra", "fold_constants", "eliminate_common_subexpressions",
        "eliminate_dead_code"]


def test_verify_after_every_pass_names_the_pass() -> None:
    def break_shapes(module: HloModule) -> HloModule:
        root = module.entry.root
        bad = root.replace(shape=root.shape.with_dims((7,)))
        return module.with_entry(HloComputation(
            "main", module.entry.instructions[:-1] + (bad,), bad))
    module = parse("""
        %x = f32[3] parameter(0)
        ROOT %r = f32[3] negate(%x)""")
    with pytest.raises(HloVerificationError, match="after pass break_shapes"):
        optimize(module, PipelineOptions(verify=True, passes=(break_shapes,)))
    assert optimize(module, {"passes": (break_shapes,)}).entry.root.shape.dims == (7,)
    with pytest.raises(TypeError, match="unknown pipeline options"):
        optimize(module, {"verfy": True})
    # Any object with some of the fields (a backend's CompileOptions) works too.
    compile_options = types.SimpleNamespace(verify=True, dump_dir=None, donated=(0,))
    with pytest.raises(HloVerificationError):
        optimize(module, types.SimpleNamespace(**vars(compile_options), passes=[break_shapes]))


def test_dump_dir_writes_numbered_files_after_every_pass(tmp_path: Path) -> None:
    module = parse(SOFTMAX_LIKE, ADD + ADD_AGAIN + MAX)
    with config.override("jaxlite_dump_dir", str(tmp_path / "config")):
        final = optimize(module)
    files = sorted(p.name for p in (tmp_path / "config").iterdir())
    assert files[0] == "m.0000.input.txt"
    assert files[1:3] == ["m.0001.inline_calls.txt", "m.0002.canonicalize_convolutions.txt"]
    assert files[3:7] == ["m.0003.simplify_algebra.txt", "m.0004.fold_constants.txt",
                          "m.0005.eliminate_common_subexpressions.txt",
                          "m.0006.eliminate_dead_code.txt"]
    # After the simplification rounds come the other passes, one file each, in order.
    tail = [name.split(".", 2)[2] for name in files[-6:]]
    assert tail == ["scan_in_blocks.txt", "divide_by_reciprocals.txt", "assign_layouts.txt",
                    "fuse.txt", "assign_tiling.txt", "schedule.txt"]
    simplify_files = files[3:-6]
    # The last round of the fixed point changed nothing: its files repeat the round before.
    assert len(simplify_files) % 4 == 0
    last_round = (tmp_path / "config" / simplify_files[-1]).read_text()
    assert last_round == (tmp_path / "config" / simplify_files[-5]).read_text()
    assert parse_module((tmp_path / "config" / files[-1]).read_text()).entry.root.name == \
        final.entry.root.name
    optimize(module, PipelineOptions(dump_dir=str(tmp_path / "option")))
    assert sorted(p.name for p in (tmp_path / "option").iterdir()) == files


# ------------------------------------------------------------------------------ analysis

def test_uses_users_and_liveness() -> None:
    module = parse("""
        %x = f32[3] parameter(0)
        %unused = f32[3] parameter(1)
        %a = f32[3] add(%x, %x)
        %dead = f32[3] negate(%a)
        ROOT %r = f32[3] multiply(%a, %x)""")
    names = {i.name: i for i in module.entry.instructions}
    counts = analysis.use_counts(module.entry)
    assert {n: counts[i] for n, i in names.items()} == {
        "x": 3, "unused": 0, "a": 2, "dead": 0, "r": 0}
    assert [u.name for u in analysis.users(module.entry)[names["x"]]] == ["a", "r"]
    assert [i.name for i in analysis.live_instructions(module.entry)] == [
        "x", "unused", "a", "r"]


def test_fingerprints_ignore_names_only() -> None:
    add = parse("ROOT %c = f32[] constant(0)", ADD + ADD_AGAIN + MAX)
    comps = {c.name: c for c in add.computations}
    fingerprint = analysis.computation_fingerprint
    assert fingerprint(comps["add"]) == fingerprint(comps["again"])
    assert fingerprint(comps["add"]) != fingerprint(comps["max"])
    assert analysis.freeze_attr(np.float32(0.0)) != analysis.freeze_attr(np.float32(-0.0))
    assert analysis.freeze_attr(1) != analysis.freeze_attr(1.0) != analysis.freeze_attr(True)


def test_cost_estimates() -> None:
    module = parse("""
        %a = f32[8,16] parameter(0)
        %b = f32[16,4] parameter(1)
        %d = f32[8,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
        %e = f32[8,4] exponential(%d)
        %z = f32[] constant(0)
        ROOT %r = f32[8] reduce(%e, %z), dimensions={1}, to_apply=%add""", ADD)
    by_name = {i.name: analysis.instruction_cost(i) for i in module.entry.instructions}
    assert by_name["d"].flops == 2 * 8 * 4 * 16
    assert by_name["d"].bytes_accessed == 4 * (8 * 16 + 16 * 4 + 8 * 4)
    assert by_name["e"] == analysis.Cost(0, 32, 4 * 64)
    assert by_name["r"].flops == 32
    total = analysis.module_cost(module)
    assert total.flops == 2 * 8 * 4 * 16 + 32 and total.transcendentals == 32
