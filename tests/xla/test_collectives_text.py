"""The collectives in HLO text (printing, parsing, XLA's iota groups), their shape rules and
verifier errors, their StableHLO form, and the JAX-generated fixtures: XLA's per-device
programs parse and, run by evaluate_spmd, give the numbers JAX gave on 4 devices."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jaxlite.xla import stablehlo
from jaxlite.xla.collectives import iota_replica_groups
from jaxlite.xla.evaluator_spmd import evaluate_spmd
from jaxlite.xla.ir import HloModule
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.pipeline import optimize
from jaxlite.xla.text import parse_module, print_module
from jaxlite.xla.verifier import HloVerificationError, verify_module

from tests.xla.collective_programs import program

FIXTURES = Path(__file__).parent / "fixtures" / "collectives"
PROGRAMS = ("collectives_one_axis", "collectives_two_axes", "collectives_loop",
            "collectives_pmap")

LINES = [
    ("all-reduce(%x), channel_id=1, replica_groups={{0,1},{2,3}}, "
     "use_global_device_ids=true, to_apply=%add_fn", "f32[4,2]", "f32[4,2]", "add"),
    ("all-reduce(%x), replica_groups={}, to_apply=%max_fn", "f32[4,2]", "f32[4,2]", "max"),
    ("all-gather(%x), channel_id=3, replica_groups={{0,2},{1,3}}, dimensions={1}, "
     "use_global_device_ids=true", "f32[4,2]", "f32[4,4]", None),
    ("reduce-scatter(%x), channel_id=1, replica_groups={{0,1,2,3}}, "
     "use_global_device_ids=true, dimensions={0}, to_apply=%add_fn", "f32[4,2]", "f32[1,2]",
     "add"),
    ("all-to-all(%x), channel_id=1, replica_groups={{0,1}}, dimensions={0}", "f32[4,2]",
     "f32[4,2]", None),
    ("collective-permute(%x), channel_id=1, source_target_pairs={{0,1},{1,0}}", "f32[4,2]",
     "f32[4,2]", None),
]


@pytest.mark.parametrize("line,operand,result,reducer", LINES)
def test_text_round_trip_is_exact(line, operand, result, reducer):
    module = program(line, operand, result, reducer)
    verify_module(module)
    text = print_module(module)
    assert f"ROOT %c = {result}" in text
    assert line in text, text
    again = parse_module(text)
    assert print_module(again) == text
    assert dict(again.entry.root.attrs) == dict(module.entry.root.attrs)


def test_replica_groups_and_pairs_read_as_tuples():
    module = program(LINES[0][0], "f32[4,2]", "f32[4,2]", "add")
    attrs = module.entry.root.attrs
    assert attrs["replica_groups"] == ((0, 1), (2, 3))
    assert attrs["channel_id"] == 1 and attrs["use_global_device_ids"] is True
    permute = program(LINES[5][0], "f32[4,2]", "f32[4,2]").entry.root
    assert permute.attrs["source_target_pairs"] == ((0, 1), (1, 0))
    assert [c.name for c in module.entry.root.called] == ["add_fn"]


@pytest.mark.parametrize("text,groups", [
    ("[2,2]<=[4]", ((0, 1), (2, 3))),
    ("[2,2]<=[2,2]T(1,0)", ((0, 2), (1, 3))),
    ("[1,8]<=[8]", (tuple(range(8)),)),
    ("[4,2]<=[2,4]T(1,0)", ((0, 4), (1, 5), (2, 6), (3, 7))),
])
def test_iota_replica_groups(text, groups):
    assert iota_replica_groups(text) == groups
    module = program(f"all-gather(%x), channel_id=1, replica_groups={text}, dimensions={{0}}, "
                     f"use_global_device_ids=true", "f32[2]", f"f32[{2 * len(groups[0])}]")
    assert module.entry.root.attrs["replica_groups"] == groups


def test_new_opcodes_are_collectives():
    names = {op.text for op in Opcode if op.kind is Kind.COLLECTIVE}
    assert names == {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                     "collective-permute", "partition-id", "replica-id"}


@pytest.mark.parametrize("line,operand,result,reducer,message", [
    ("reduce-scatter(%x), channel_id=1, replica_groups={{0,1,2}}, use_global_device_ids=true,"
     " dimensions={0}, to_apply=%add_fn", "f32[4]", "f32[1]", "add",
     "dimension 0 of operand f32[4]{0} must be divisible by the group size 3"),
    ("all-gather(%x), channel_id=1, replica_groups={{0,1},{2}}, dimensions={0}, "
     "use_global_device_ids=true", "f32[4]", "f32[8]", None,
     "replica groups must have one size, got [2, 1]"),
    ("all-gather(%x), channel_id=1, replica_groups={{0,1},{1,2}}, dimensions={0}, "
     "use_global_device_ids=true", "f32[4]", "f32[8]", None, "id 1 appears twice"),
    ("all-gather(%x), channel_id=1, replica_groups={{0,1}}, dimensions={2}, "
     "use_global_device_ids=true", "f32[4]", "f32[8]", None,
     "dimensions (2,) must be distinct dimensions in [0, 1)"),
    ("all-gather(%x), channel_id=1, replica_groups={{0,1}}, dimensions={0}, "
     "use_global_device_ids=true", "f32[4]", "f32[4]", None, "the shape f32[8]{0} inferred"),
    ("all-to-all(%x), channel_id=1, replica_groups={{0,1,2}}, dimensions={0}", "f32[4]",
     "f32[4]", None, "the split dimension 0 of operand f32[4]{0} must be divisible"),
    ("collective-permute(%x), channel_id=1, source_target_pairs={{0,1},{2,1}}", "f32[4]",
     "f32[4]", None, "each target may appear once, got [1, 1]"),
    ("all-reduce(%x), channel_id=1, replica_groups={{0,1}}, to_apply=%and_fn", "f32[4]",
     "f32[4]", "and", "the to_apply computation %and_fn must take (f32[], f32[])"),
])
def test_verifier_names_the_instruction_and_the_rule(line, operand, result, reducer, message):
    module = program(line, operand, result, reducer)
    with pytest.raises(HloVerificationError) as info:
        verify_module(module)
    text = str(info.value)
    assert "instruction %c" in text and message in text, text


def test_group_size_comes_from_the_declared_shape_without_groups():
    ok = program("all-gather(%x), replica_groups={}, dimensions={0}", "f32[3]", "f32[12]")
    verify_module(ok)
    bad = program("all-gather(%x), replica_groups={}, dimensions={0}", "f32[3]", "f32[10]")
    with pytest.raises(HloVerificationError) as info:
        verify_module(bad)
    assert "does not fit operand f32[3]{0} along dimension 0" in str(info.value)


def _fixture_results(name: str):
    data = np.load(FIXTURES / f"{name}.npz")
    args = [[data[f"arg0_dev{d}"]] for d in range(4)]
    outputs = sorted({key.split("_")[0] for key in data.files if key.startswith("out")})
    expected = [[data[f"{out}_dev{d}"] for out in outputs] for d in range(4)]
    return args, expected


@pytest.mark.parametrize("suffix", [".hlo", ".lowered.hlo"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_fixtures_parse_verify_and_print_back(name, suffix):
    module = parse_module((FIXTURES / f"{name}{suffix}").read_text())
    verify_module(module)
    text = print_module(module)
    assert print_module(parse_module(text)) == text
    used = {i.opcode for c in module.computations for i in c.instructions}
    assert used & {Opcode.ALL_REDUCE, Opcode.COLLECTIVE_PERMUTE}


@pytest.mark.parametrize("name", PROGRAMS)
def test_xla_per_device_programs_give_jax_numbers(name):
    module = parse_module((FIXTURES / f"{name}.hlo").read_text())
    args, expected = _fixture_results(name)
    results = evaluate_spmd(module, args, 4)
    for device in range(4):
        got = results[device] if isinstance(results[device], tuple) else (results[device],)
        assert len(got) == len(expected[device])
        for value, want in zip(got, expected[device]):
            np.testing.assert_array_equal(value, want, err_msg=f"{name}, device {device}")


def test_stablehlo_spells_collectives_as_jax_does():
    lowered = parse_module((FIXTURES / "collectives_one_axis.lowered.hlo").read_text())
    body = next(c for c in lowered.computations if "manual_computation_body" in c.name)
    text = stablehlo.print_module(HloModule("m", body))
    assert ('"stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64, channel_handle = '
            '#stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = '
            'dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids = unit}>') in text
    assert ("source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>"
            in text)
    assert ("concat_dimension = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : "
            "tensor<1x4xi64>, split_count = 4 : i64, split_dimension = 0 : i64" in text)
    assert '"stablehlo.partition_id"() : () -> tensor<ui32>' in text
    assert text.count('"stablehlo.all_reduce"') == 3 and "stablehlo.reduce_scatter" in text


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_optimization_pipeline_keeps_each_devices_values(name):
    """Passes treat collectives as opaque (never folded: their value depends on the device)."""
    module = optimize(parse_module((FIXTURES / f"{name}.hlo").read_text()))
    used = {i.opcode for c in module.computations for i in c.instructions}
    assert Opcode.COLLECTIVE_PERMUTE in used or Opcode.ALL_REDUCE in used
    args, expected = _fixture_results(name)
    results = evaluate_spmd(module, args, 4)
    for device in range(4):
        got = results[device] if isinstance(results[device], tuple) else (results[device],)
        for value, want in zip(got, expected[device], strict=True):
            np.testing.assert_array_equal(value, want, err_msg=f"{name}, device {device}")
