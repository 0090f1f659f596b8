"""SPMD programs (`num_partitions = N`) on the cpu backend: compiled once, run once per
partition in threads of their own, collectives computed in native code between them.

Checked against JAX's numbers for XLA's own per-device programs, and against
`evaluate_spmd` (the interpreter's `execute_partitions`) for each collective on 2, 4 and 8
partitions, several group layouts and dtypes, collectives inside loops and branches, and a
hand-written data-parallel training step.
"""
from __future__ import annotations

import ctypes
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from jaxlite.backends.base import CompileOptions
from jaxlite.backends.cpu import spmd_executable
from jaxlite.backends.cpu.client import CpuClient
from jaxlite.backends.cpu.spmd_executable import SpmdCpuExecutable
from jaxlite.config import config
from jaxlite.core import dtypes
from jaxlite.xla import collectives, evaluator_spmd
from jaxlite.xla.evaluator_spmd import evaluate_spmd
from jaxlite.xla.ir import HloModule
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.passes.spmd_partitioner import partition_module
from jaxlite.xla.text import parse_module

from cpu_testing import cpu_client, interpreter
from spmd_testing import block_of, random_arguments
from tests.xla.collective_programs import (FLAT, PERMUTE_PATTERNS, REDUCERS, all_gather_program,
                                           group_layouts, groups_text, permute_pattern,
                                           permute_program, program, reduce_scatter_program)

FIXTURES = Path(__file__).parents[2] / "xla" / "fixtures" / "collectives"
PROGRAMS = ["collectives_one_axis", "collectives_two_axes", "collectives_loop",
            "collectives_pmap"]
COUNTS = (2, 4, 8)
LAYOUTS = [(n, g) for n in COUNTS for g in group_layouts(n)]
LAYOUT_IDS = [f"{n}p-{groups_text(g)}" for n, g in LAYOUTS]


def combiner(name: str, opcode: str, element: str = "f32") -> str:
    """The HLO text of a scalar reducer `%name` (for `to_apply`)."""
    return (f"%{name} (a: {element}[], b: {element}[]) -> {element}[] {{\n"
            f"  %a = {element}[] parameter(0)\n  %b = {element}[] parameter(1)\n"
            f"  ROOT %r = {element}[] {opcode}(%a, %b)\n}}\n")


def spmd(module: HloModule, count: int) -> HloModule:
    return HloModule(module.name, module.entry, num_partitions=count)


def compile_cpu(module: HloModule) -> SpmdCpuExecutable:
    executable = cpu_client().compile(module, CompileOptions())
    assert isinstance(executable, SpmdCpuExecutable)
    return executable


def reference(module: HloModule, args) -> list[list[np.ndarray]]:
    """Each partition's results by the SPMD evaluator (as leaves)."""
    out = evaluate_spmd(module, args, module.num_partitions)
    return [list(r) if isinstance(r, tuple) else [r] for r in out]


def check(module: HloModule, args, exact: bool = True) -> list[list[np.ndarray]]:
    """Run `module` on the cpu backend and compare every partition's results with the
    evaluator's (bit for bit unless `exact` is False)."""
    got = compile_cpu(module).execute_partitions(args)
    want = reference(module, args)
    assert len(got) == len(want) == module.num_partitions
    for p, (ours, theirs) in enumerate(zip(got, want)):
        assert len(ours) == len(theirs)
        for k, (a, b) in enumerate(zip(ours, theirs)):
            assert a.dtype == b.dtype and a.shape == b.shape, (p, k, a.dtype, b.dtype)
            if exact:
                np.testing.assert_array_equal(a, b, err_msg=f"partition {p}, result {k}")
            else:
                np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5,
                                           err_msg=f"partition {p}, result {k}")
    return got


def values(count: int, dims, dtype, seed: int = 0) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    out = []
    for _ in range(count):
        if dtype == np.bool_:
            x = rng.random(dims) < 0.5
        elif dtype.kind in "iu":
            x = rng.integers(0 if dtype.kind == "u" else -3, 4, dims).astype(dtype)
        elif dtype.kind == "c":
            x = (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(dtype)
        else:
            x = (rng.standard_normal(dims) * 3).astype(dtype)
        out.append([x])
    return out


# ------------------------------------------------------------ XLA's programs, JAX's numbers
@pytest.mark.parametrize("name", PROGRAMS)
def test_xla_per_device_programs_give_jax_numbers(name):
    module = parse_module((FIXTURES / f"{name}.hlo").read_text())
    assert module.num_partitions == 4
    data = np.load(FIXTURES / f"{name}.npz")
    outputs = sorted({key.split("_")[0] for key in data.files if key.startswith("out")})
    got = compile_cpu(module).execute_partitions([[data[f"arg0_dev{p}"]] for p in range(4)])
    for p in range(4):
        assert len(got[p]) == len(outputs)
        for value, out in zip(got[p], outputs):
            np.testing.assert_array_equal(value, data[f"{out}_dev{p}"],
                                          err_msg=f"{name}, partition {p}, {out}")


# ---------------------------------------------------------------- each collective alone
@pytest.mark.parametrize("reducer", sorted(REDUCERS))
@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_all_reduce(n, groups, reducer):
    element = REDUCERS[reducer][1]
    module = program(f"all-reduce(%x), {FLAT.format(groups=groups_text(groups))}, "
                     f"to_apply=%{reducer}_fn", f"{element}[5,3]", f"{element}[5,3]", reducer)
    dtype = module.entry.parameters[0].shape.dtype
    check(spmd(module, n), values(n, (5, 3), dtype))


@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_large_all_reduce_in_chunks(n, groups):
    # 21,003 elements: each member folds a chunk and writes it into every member's result
    # (the last chunk shorter); a small second operand is folded whole.
    module = parse_module(f"""HloModule m, num_partitions={n}
{combiner("add", "add", "bf16")}
ENTRY %main (x: bf16[3,7001], y: bf16[5]) -> (bf16[3,7001], bf16[5]) {{
  %x = bf16[3,7001] parameter(0)
  %y = bf16[5] parameter(1)
  ROOT %s = (bf16[3,7001], bf16[5]) all-reduce(%x, %y), {FLAT.format(groups=groups_text(groups))}, to_apply=%add
}}
""")
    rng = np.random.default_rng(n)
    check(module, [[rng.standard_normal((3, 7001)).astype(dtypes.bfloat16),
                    rng.standard_normal(5).astype(dtypes.bfloat16)] for _ in range(n)])


@pytest.mark.parametrize("dtype", ["bf16", "f16", "f64", "c64", "c128", "s8", "u32", "s64"])
def test_all_reduce_sums_every_dtype_as_the_evaluator(dtype):
    module = parse_module(f"""HloModule m, num_partitions=4
{combiner("sum", "add", dtype)}
ENTRY %main (x: {dtype}[37,3]) -> {dtype}[37,3] {{
  %x = {dtype}[37,3] parameter(0)
  ROOT %s = {dtype}[37,3] all-reduce(%x), {FLAT.format(groups="{{0,1,2,3}}")}, to_apply=%sum
}}
""")
    check(module, values(4, (37, 3), module.entry.parameters[0].shape.dtype))


def test_tuple_all_reduce_in_groups_of_different_sizes_with_a_combiner_of_several_ops():
    module = parse_module(f"""HloModule m, num_partitions=4
%mean (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %half = f32[] constant(0.5)
  %s = f32[] add(%a, %b)
  ROOT %r = f32[] multiply(%s, %half)
}}
ENTRY %main (x: f32[6], y: f32[2,2]) -> (f32[6], f32[2,2]) {{
  %x = f32[6] parameter(0)
  %y = f32[2,2] parameter(1)
  ROOT %t = (f32[6], f32[2,2]) all-reduce(%x, %y), {FLAT.format(groups="{{0,2,3},{1}}")}, to_apply=%mean
}}
""")
    args = [[np.arange(6, dtype=np.float32) * (p + 1), np.full((2, 2), p, np.float32)]
            for p in range(4)]
    got = check(module, args)
    np.testing.assert_array_equal(got[1][0], args[1][0])  # alone in its group
    np.testing.assert_array_equal(got[3][1], np.full((2, 2), 2.0, np.float32))  # ((0+2)/2+3)/2


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_all_gather(n, groups, dim):
    module = all_gather_program(groups, dim, "bf16")
    check(spmd(module, n), values(n, (3, 2), dtypes.bfloat16))


@pytest.mark.parametrize("reducer", ["add", "max"])
@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_reduce_scatter(n, groups, reducer):
    module = reduce_scatter_program(groups, reducer, 3)
    check(spmd(module, n), values(n, (2, 3 * len(groups[0])), np.float32))


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("n,groups", LAYOUTS, ids=LAYOUT_IDS)
def test_all_to_all_array_form(n, groups, dim):
    size = len(groups[0])
    dims = (2 * size, 3) if dim == 0 else (3, 2 * size)
    text = f"f32[{dims[0]},{dims[1]}]"
    module = program(f"all-to-all(%x), channel_id=1, replica_groups={groups_text(groups)}, "
                     f"dimensions={{{dim}}}", text, text)
    check(spmd(module, n), values(n, dims, np.float32))


@pytest.mark.parametrize("n", COUNTS)
def test_all_to_all_tuple_form(n):
    params = ", ".join(f"x{i}: s16[3]" for i in range(n))
    lines = "\n".join(f"  %x{i} = s16[3] parameter({i})" for i in range(n))
    shapes = ", ".join(["s16[3]"] * n)
    order = ",".join(str(i) for i in reversed(range(n)))
    module = parse_module(f"""HloModule m, num_partitions={n}
ENTRY %main ({params}) -> ({shapes}) {{
{lines}
  ROOT %a = ({shapes}) all-to-all({", ".join(f"%x{i}" for i in range(n))}), channel_id=1, replica_groups={{{{{order}}}}}
}}
""")
    args = [[np.arange(3, dtype=np.int16) + 10 * p + 100 * i for i in range(n)]
            for p in range(n)]
    check(module, args)


@pytest.mark.parametrize("n", COUNTS)
@pytest.mark.parametrize("pattern", PERMUTE_PATTERNS)
def test_collective_permute_and_zeros_where_nobody_sends(n, pattern):
    pairs = permute_pattern(pattern, n)
    module = permute_program(pairs, "c64[2,2]")
    got = check(spmd(module, n), values(n, (2, 2), np.complex64))
    senders = {t for _, t in pairs}
    assert all(not got[p][0].any() for p in range(n) if p not in senders)


def test_partition_id_and_replica_id():
    module = parse_module("""HloModule m, num_partitions=8
ENTRY %main () -> (u32[], u32[]) {
  %p = u32[] partition-id()
  %r = u32[] replica-id()
  ROOT %t = (u32[], u32[]) tuple(%p, %r)
}
""")
    got = check(module, [[] for _ in range(8)])
    assert [(int(p), int(r)) for p, r in got] == [(p, 0) for p in range(8)]


# --------------------------------------------------------------------- control flow
LOOP = """HloModule loop, num_partitions={n}
""" + combiner("add", "add").replace("{", "{{").replace("}", "}}") + """
%cond (s: (s32[], f32[8], f32[8])) -> pred[] {{
  %s = (s32[], f32[8], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %limit = s32[] constant(6)
  ROOT %lt = pred[] compare(%i, %limit), direction=LT
}}
%body (s: (s32[], f32[8], f32[8])) -> (s32[], f32[8], f32[8]) {{
  %s = (s32[], f32[8], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %x = f32[8] get-tuple-element(%s), index=1
  %acc = f32[8] get-tuple-element(%s), index=2
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %shifted = f32[8] collective-permute(%x), channel_id=1, source_target_pairs={pairs}
  %total = f32[8] all-reduce(%shifted), channel_id=2, replica_groups={{}}, to_apply=%add
  %half = f32[] constant(0.5)
  %halves = f32[8] broadcast(%half), dimensions={{}}
  %scaled = f32[8] multiply(%shifted, %halves)
  %acc2 = f32[8] add(%acc, %total)
  ROOT %t = (s32[], f32[8], f32[8]) tuple(%next, %scaled, %acc2)
}}
ENTRY %main (x: f32[8]) -> (f32[8], f32[8]) {{
  %x = f32[8] parameter(0)
  %zero = s32[] constant(0)
  %zero.f = f32[] constant(0)
  %zeros = f32[8] broadcast(%zero.f), dimensions={{}}
  %init = (s32[], f32[8], f32[8]) tuple(%zero, %x, %zeros)
  %w = (s32[], f32[8], f32[8]) while(%init), condition=%cond, body=%body
  %a = f32[8] get-tuple-element(%w), index=1
  %b = f32[8] get-tuple-element(%w), index=2
  ROOT %out = (f32[8], f32[8]) tuple(%a, %b)
}}
"""


@pytest.mark.parametrize("n", COUNTS)
def test_collectives_inside_a_while_loop_meet_each_iteration(n):
    pairs = groups_text([(i, (i + 1) % n) for i in range(n)])
    module = parse_module(LOOP.format(n=n, pairs=pairs))
    args = [[np.arange(8, dtype=np.float32) * 2 ** p] for p in range(n)]
    got = check(module, args)
    # Each iteration adds the sum over partitions (which rotation does not change) and
    # halves: sum_k total * 2^-k.
    total = sum(a[0] for a in args)
    np.testing.assert_allclose(got[0][1], total * sum(0.5 ** k for k in range(6)))


def test_collectives_inside_a_conditional_taken_alike_everywhere():
    module = parse_module("""HloModule m, num_partitions=4
""" + combiner("max", "maximum") + """
%high (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %m = f32[4] all-reduce(%x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%max
}
%low (x: f32[1]) -> f32[4] {
  %x = f32[1] parameter(0)
  ROOT %g = f32[4] all-gather(%x), channel_id=2, replica_groups={{0,1,2,3}}, use_global_device_ids=true, dimensions={0}
}
ENTRY %main (x: f32[4], flag: pred[]) -> f32[4] {
  %x = f32[4] parameter(0)
  %flag = pred[] parameter(1)
  %s = f32[1] slice(%x), slice={[1:2]}
  ROOT %c = f32[4] conditional(%flag, %x, %s), true_computation=%high, false_computation=%low
}
""")
    for flag in (True, False):
        got = check(module, [[np.arange(4, dtype=np.float32) * (p - 1.5), np.array(flag)]
                             for p in range(4)])
        expected = [-1.5, -0.5, 0.5, 1.5] if not flag else [0, -0.5, -1, -1.5]
        np.testing.assert_array_equal(got[0][0], np.array(expected, np.float32))


def test_partitions_that_diverge_end_with_a_diagnosis_instead_of_hanging(monkeypatch):
    # Only partition 0 takes the branch with the all-reduce: it waits for the others.
    module = parse_module("""HloModule m, num_partitions=2
""" + combiner("add", "add") + """
%meet (x: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  ROOT %lonely = f32[2] all-reduce(%x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
}
%skip (x: f32[2]) -> f32[2] {
  ROOT %x = f32[2] parameter(0)
}
ENTRY %main (x: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  %p = u32[] partition-id()
  %zero = u32[] constant(0)
  %first = pred[] compare(%p, %zero), direction=EQ
  ROOT %c = f32[2] conditional(%first, %x, %x), true_computation=%meet, false_computation=%skip
}
""")
    executable = compile_cpu(module)
    monkeypatch.setattr(executable, "collective_timeout", 1)
    with pytest.raises(RuntimeError) as info:
        executable.execute_partitions([[np.ones(2, np.float32)]] * 2)
    message = str(info.value)
    assert "diverged" in message and "partition 0 at %lonely" in message
    assert "partition 1 before its first collective" in message


def test_a_loop_whose_trip_count_differs_between_partitions_is_reported(monkeypatch):
    # Partition p runs p + 2 iterations, each with an all-reduce whose result the loop
    # carries: partition 1 waits at its third for partition 0, which has finished.
    module = parse_module("""HloModule m, num_partitions=2
""" + combiner("add", "add") + """
%cond (s: (u32[], f32[2])) -> pred[] {
  %s = (u32[], f32[2]) parameter(0)
  %i = u32[] get-tuple-element(%s), index=0
  %p = u32[] partition-id()
  %two = u32[] constant(2)
  %limit = u32[] add(%p, %two)
  ROOT %lt = pred[] compare(%i, %limit), direction=LT
}
%body (s: (u32[], f32[2])) -> (u32[], f32[2]) {
  %s = (u32[], f32[2]) parameter(0)
  %i = u32[] get-tuple-element(%s), index=0
  %x = f32[2] get-tuple-element(%s), index=1
  %one = u32[] constant(1)
  %next = u32[] add(%i, %one)
  %sum = f32[2] all-reduce(%x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
  ROOT %t = (u32[], f32[2]) tuple(%next, %sum)
}
ENTRY %main (x: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  %zero = u32[] constant(0)
  %init = (u32[], f32[2]) tuple(%zero, %x)
  %w = (u32[], f32[2]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[2] get-tuple-element(%w), index=1
}
""")
    executable = compile_cpu(module)
    monkeypatch.setattr(executable, "collective_timeout", 1)
    with pytest.raises(RuntimeError) as info:
        executable.execute_partitions([[np.ones(2, np.float32)]] * 2)
    assert "partition 0 at %sum, partition 1 at %sum" in str(info.value)


# ----------------------------------------- XLA's programs as jaxlite's partitioner cuts them
SPMD_FIXTURES = Path(__file__).parents[2] / "xla" / "fixtures" / "spmd"
PARTITIONED = sorted(p.name.split(".")[0] for p in SPMD_FIXTURES.glob("*.before.hlo"))


@pytest.mark.parametrize("name", PARTITIONED)
def test_partitioned_programs_run_as_the_evaluator_runs_them(name):
    """The programs of tests/xla/fixtures/spmd, partitioned by `partition_module`: dots
    with all-reduces and all-gathers, FSDP's all-to-alls, halos, loops."""
    module = parse_module((SPMD_FIXTURES / f"{name}.before.hlo").read_text())
    count = module.num_partitions
    partitioned = partition_module(module, count)
    args = random_arguments(module)
    blocks = [[block_of(p.attr("sharding"), a, k) for p, a in zip(module.entry.parameters, args)]
              for k in range(count)]
    got = compile_cpu(partitioned).execute_partitions(blocks)
    for k, (ours, theirs) in enumerate(zip(got, reference(partitioned, blocks))):
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4, equal_nan=True,
                                       err_msg=f"{name}, partition {k}")


# ------------------------------------------------------------ a data-parallel train step
def train_step(n: int, batch: int, features: int, hidden: int) -> HloModule:
    """One SGD step of a linear layer with a squared loss, the batch split over n
    partitions: each computes its gradient, an all-reduce sums them (and the loss)."""
    b = batch // n
    everyone = "{{" + ",".join(map(str, range(n))) + "}}"
    return parse_module(f"""HloModule train_step, num_partitions={n}
{combiner("add", "add")}
ENTRY %main (w: f32[{features},{hidden}], x: f32[{b},{features}], y: f32[{b},{hidden}]) -> (f32[{features},{hidden}], f32[]) {{
  %w = f32[{features},{hidden}] parameter(0)
  %x = f32[{b},{features}] parameter(1)
  %y = f32[{b},{hidden}] parameter(2)
  %z = f32[{b},{hidden}] dot(%x, %w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  %t = f32[{b},{hidden}] tanh(%z)
  %err = f32[{b},{hidden}] subtract(%t, %y)
  %sq = f32[{b},{hidden}] multiply(%err, %err)
  %zero = f32[] constant(0)
  %local_loss = f32[] reduce(%sq, %zero), dimensions={{0,1}}, to_apply=%add
  %one = f32[] constant(1)
  %ones = f32[{b},{hidden}] broadcast(%one), dimensions={{}}
  %t2 = f32[{b},{hidden}] multiply(%t, %t)
  %dt = f32[{b},{hidden}] subtract(%ones, %t2)
  %dz = f32[{b},{hidden}] multiply(%err, %dt)
  %local_grad = f32[{features},{hidden}] dot(%x, %dz), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}
  %grad = f32[{features},{hidden}] all-reduce(%local_grad), channel_id=1, replica_groups={everyone}, use_global_device_ids=true, to_apply=%add
  %loss = f32[] all-reduce(%local_loss), channel_id=2, replica_groups={everyone}, use_global_device_ids=true, to_apply=%add
  %rate = f32[] constant({0.1 / batch})
  %rates = f32[{features},{hidden}] broadcast(%rate), dimensions={{}}
  %step = f32[{features},{hidden}] multiply(%grad, %rates)
  %w2 = f32[{features},{hidden}] subtract(%w, %step)
  ROOT %out = (f32[{features},{hidden}], f32[]) tuple(%w2, %loss)
}}
""")


def train_arguments(n: int, batch: int, features: int, hidden: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(np.float32)
    x = rng.standard_normal((batch, features)).astype(np.float32)
    y = rng.standard_normal((batch, hidden)).astype(np.float32)
    b = batch // n
    return [[w, x[p * b:(p + 1) * b], y[p * b:(p + 1) * b]] for p in range(n)]


@pytest.mark.parametrize("n", COUNTS)
def test_data_parallel_train_step_matches_the_evaluator_and_one_partition(n):
    module = train_step(n, 64, 24, 16)
    args = train_arguments(n, 64, 24, 16)
    got = check(module, args, exact=False)
    for p in range(1, n):  # every partition holds the same new weights and loss
        np.testing.assert_array_equal(got[p][0], got[0][0])
        np.testing.assert_array_equal(got[p][1], got[0][1])
    whole = cpu_client().compile(train_step(1, 64, 24, 16), CompileOptions())
    w, loss = whole.execute_arrays(train_arguments(1, 64, 24, 16)[0])
    np.testing.assert_allclose(got[0][0], w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0][1], loss, rtol=1e-5)


def test_the_train_step_keeps_its_collectives_and_fuses_around_them():
    optimized = compile_cpu(train_step(2, 64, 24, 16)).hlo_module()
    opcodes = [i.opcode for i in optimized.entry.instructions]
    assert opcodes.count(Opcode.ALL_REDUCE) == 2
    assert Opcode.FUSION in opcodes
    for inst in optimized.entry.instructions:
        if inst.opcode is Opcode.ALL_REDUCE:  # its reducer is left unfused, scalar
            assert all(i.opcode is not Opcode.FUSION for i in inst.called[0].instructions)


def test_the_pipeline_neither_folds_nor_fuses_collectives():
    # Constant operands, a partition-id in arithmetic, a collective feeding fusible work and
    # two equal all-reduces: each partition still gets its own values.
    module = parse_module("""HloModule m, num_partitions=4
""" + combiner("add", "add") + """
ENTRY %main (x: f32[4]) -> (f32[4], f32[4], f32[2], u32[]) {
  %x = f32[4] parameter(0)
  %c = f32[4] constant({1, 2, 3, 4})
  %total = f32[4] all-reduce(%c), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%add
  %again = f32[4] all-reduce(%c), channel_id=2, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%add
  %sum = f32[4] add(%total, %again)
  %g = f32[8] all-gather(%x), channel_id=3, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, dimensions={0}
  %e = f32[8] exponential(%g)
  %s = f32[2] slice(%e), slice={[3:5]}
  %p = u32[] partition-id()
  %ten = u32[] constant(10)
  %q = u32[] multiply(%p, %ten)
  %neg = f32[4] negate(%x)
  ROOT %t = (f32[4], f32[4], f32[2], u32[]) tuple(%sum, %neg, %s, %q)
}
""")
    got = check(module, values(4, (4,), np.float32), exact=False)
    np.testing.assert_array_equal(got[2][0], np.array([8, 16, 24, 32], np.float32))
    assert [int(r[3]) for r in got] == [0, 10, 20, 30]
    optimized = compile_cpu(module).hlo_module()
    kept = [i.opcode for i in optimized.entry.instructions if i.opcode.kind is Kind.COLLECTIVE]
    assert kept.count(Opcode.ALL_GATHER) == 1 and Opcode.PARTITION_ID in kept
    assert Opcode.ALL_REDUCE in kept


# ---------------------------------------------------------------- no Python at all
# What an SPMD program's code may call: the runtime, LLVM's intrinsics, the C library.
RUNTIME_CALLS = ("jl_spmd_barrier", "jl_parallel_for", "jl_interrupt_here", "llvm.", "malloc",
                 "free")


def test_no_python_runs_at_a_collective(monkeypatch):
    module = parse_module(LOOP.format(n=4, pairs=groups_text([(i, (i + 1) % 4)
                                                             for i in range(4)])))
    executable = compile_cpu(module)
    # The code calls nothing outside the runtime (no trampoline into Python)...
    declared = [line.split("@", 1)[1].split("(", 1)[0]
                for line in executable.text("llvm").splitlines() if line.startswith("declare")]
    assert "jl_spmd_barrier" in declared
    assert all(name.startswith(RUNTIME_CALLS) for name in declared), declared

    def python_path(*args, **kwargs):
        raise AssertionError("a collective ran through Python")
    for name in ("device_groups", "permute_pairs"):
        monkeypatch.setattr(collectives, name, python_path)
    monkeypatch.setattr(evaluator_spmd._Rendezvous, "exchange", python_path)
    # ...and the whole run is one foreign call in which no Python function runs: a callback
    # on the calling thread (partition 0's) would show as a call inside `invoke_all`.
    events: list[tuple[str, str, str]] = []

    def profile(frame, event, arg):
        if event in ("call", "return"):
            events.append((threading.current_thread().name, event, frame.f_code.co_name))
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        got = executable.execute_partitions([[np.arange(8, dtype=np.float32) * p]
                                             for p in range(4)])
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    assert {t for t, _, _ in events} == {threading.current_thread().name}
    calls = [(e, n) for _, e, n in events]
    start = calls.index(("call", "invoke_all"))
    assert calls[start + 1] == ("return", "invoke_all"), calls[start:start + 5]
    assert got[3][1].any()


def test_partition_threads_share_the_cores(monkeypatch):
    assert spmd_executable.partition_threads(8, 2) == 4
    assert spmd_executable.partition_threads(2, 8) == 1
    monkeypatch.setattr(spmd_executable, "partition_threads", lambda threads, n: 1)
    module = spmd(program("all-reduce(%x), channel_id=1, replica_groups={{0,1}}, "
                          "use_global_device_ids=true, to_apply=%add_fn", "f32[3]", "f32[3]",
                          "add"), 2)
    check(module, values(2, (3,), np.float32))


def test_compile_caches_keep_each_partition_count_apart():
    def summed(n: int) -> HloModule:
        return spmd(program("all-reduce(%x), channel_id=1, replica_groups={}, "
                            "to_apply=%add_fn", "f32[5]", "f32[5]", "add"), n)
    for n in (2, 4):
        args = values(n, (5,), np.float32, seed=n)
        got = compile_cpu(summed(n)).execute_partitions(args)
        np.testing.assert_array_equal(got[n - 1][0], sum(a[0] for a in args))
    # A fresh client (a new process, as far as the caches go) finds the program on disk.
    client = CpuClient()
    executable = client.compile(summed(4), CompileOptions())
    assert client.stats["disk_hits"] == 1 and client.stats["llvm_compiles"] == 0
    assert isinstance(executable, SpmdCpuExecutable) and executable.num_partitions == 4
    args = values(4, (5,), np.float32, seed=9)
    got = executable.execute_partitions(args)
    np.testing.assert_array_equal(got[0][0], sum(a[0] for a in args))


def test_a_large_all_reduce_splits_over_each_partitions_threads():
    n, size = 2, 1 << 22  # large enough for `jl_parallel_for` (program.PARALLEL_WORK)
    with config.override("jaxlite_cpu_threads", 4):
        executable = compile_cpu(spmd(program(
            "all-reduce(%x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, "
            "to_apply=%max_fn", f"f32[{size}]", f"f32[{size}]", "max"), n))
        assert executable.threads == 2
        assert "jl_parallel_for(ptr @kernel" in executable.text("llvm")
        args = values(n, (size,), np.float32)
        got = executable.execute_partitions(args)
    for p in range(n):
        np.testing.assert_array_equal(got[p][0], np.maximum(args[0][0], args[1][0]))


def test_runs_from_several_threads_at_once_keep_to_their_own_partitions():
    executable = compile_cpu(train_step(4, 64, 24, 16))
    runs = [train_arguments(4, 64, 24, 16, seed=k) for k in range(3)]
    alone = [executable.execute_partitions(args) for args in runs]
    together: dict[int, list] = {}

    def run(k: int) -> None:
        for _ in range(5):
            together[k] = executable.execute_partitions(runs[k])
    threads = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k in range(3):
        for p in range(4):
            np.testing.assert_array_equal(together[k][p][0], alone[k][p][0])


def test_collectives_of_a_program_on_one_partition():
    """Without num_partitions, a collective's groups hold one partition: no rendezvous."""
    module = parse_module("""HloModule m
""" + combiner("add", "add") + """
ENTRY %main (x: f32[2,3]) -> (f32[2,3], f32[2,3], f32[2,3], f32[2,3], u32[]) {
  %x = f32[2,3] parameter(0)
  %s = f32[2,3] all-reduce(%x), channel_id=1, replica_groups={{0}}, use_global_device_ids=true, to_apply=%add
  %g = f32[2,3] all-gather(%x), channel_id=2, replica_groups={}, dimensions={1}
  %a = f32[2,3] all-to-all(%x), channel_id=3, replica_groups={{0}}, dimensions={0}
  %c = f32[2,3] collective-permute(%x), channel_id=4, source_target_pairs={{0,0}}
  %p = u32[] partition-id()
  ROOT %t = (f32[2,3], f32[2,3], f32[2,3], f32[2,3], u32[]) tuple(%s, %g, %a, %c, %p)
}
""")
    executable = cpu_client().compile(module, CompileOptions())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (got,) = executable.execute_partitions([[x]])  # the same call as SPMD programs take
    for value, want in zip(got, evaluate_spmd(module, [[x]], 1)[0]):
        np.testing.assert_array_equal(value, want)
    assert [int(got[4])] == [0] and np.array_equal(got[0], x)


# -------------------------------------------------------------------- the interpreter
def test_the_interpreter_runs_partitions_with_the_spmd_evaluator():
    module = parse_module((FIXTURES / "collectives_one_axis.hlo").read_text())
    data = np.load(FIXTURES / "collectives_one_axis.npz")
    args = [[data[f"arg0_dev{p}"]] for p in range(4)]
    executable = interpreter().compile(module, CompileOptions())
    got = executable.execute_partitions(args)
    ours = compile_cpu(module).execute_partitions(args)
    for p in range(4):
        for a, b in zip(got[p], ours[p]):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError) as info:
        executable.execute_partitions(args[:3])
    assert "runs on 4 partitions, got arguments for 3" in str(info.value)


def test_errors_name_the_partitions():
    module = spmd(program("all-reduce(%x), channel_id=1, replica_groups={{0,1}}, "
                          "use_global_device_ids=true, to_apply=%add_fn", "f32[3]", "f32[3]",
                          "add"), 2)
    executable = compile_cpu(module)
    with pytest.raises(ValueError) as info:
        executable.execute_partitions([[np.zeros(3, np.float32)]])
    assert "runs on 2 partitions, got arguments for 1" in str(info.value)
    with pytest.raises(NotImplementedError) as info:
        executable.execute_arrays([np.zeros(3, np.float32)])
    assert "run it with execute_partitions" in str(info.value)
