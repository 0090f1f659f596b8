"""Sharding propagation against XLA's own pass, and each rule on small modules.

The fixtures (tests/xla/fixtures/sharding_propagation/, written by its generate.py with
JAX 0.10.2 and the GSPMD partitioner) hold, for JAX programs over 2-, 4- and 8-device
meshes, XLA's module just before and just after its `sharding-propagation` pass. We run
ours on the first and compare every instruction with the second.
"""
import pathlib
import re

import numpy as np
import pytest

from jaxlite.xla.hlo_sharding import HloSharding, parse_sharding
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.sharding_propagation import propagate_shardings
from jaxlite.xla.passes.sharding_propagation_tiles import (map_dims, merge, replicate_dims,
                                                           reshape_grid)
from jaxlite.xla.text import print_module
from jaxlite.xla.text_parser import parse_module

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "sharding_propagation"
PROGRAMS = sorted(p.name[:-len(".before.hlo")] for p in FIXTURES.glob("*.before.hlo"))


def _by_place(module):
    """(computation, instruction name) -> instruction; a Sharding constraint XLA turned into
    a `copy` (named `copy`) is also found as (computation, 'copy of', operand name)."""
    found = {}
    for comp in module.computations:
        for inst in comp.instructions:
            found[(comp.name, inst.name)] = inst
            if inst.opcode is Opcode.COPY:
                found[(comp.name, "copy of", inst.operands[0].name)] = inst
    return found


def compare_with_xla(name):
    """(agreeing, compared, [differences], [XLA-only]) of our propagation and XLA's on one
    program. XLA-only: instructions of reducer computations XLA annotates and we leave
    alone (see XLA_ONLY)."""
    before = parse_module((FIXTURES / f"{name}.before.hlo").read_text())
    after = parse_module((FIXTURES / f"{name}.after.hlo").read_text())
    ours = _by_place(propagate_shardings(before, after.num_partitions))
    agree, compared, differences, xla_only = 0, 0, [], []
    renamed = {}  # XLA's name of a constraint turned copy -> ours (the constraint's)
    for comp in after.computations:
        for inst in comp.instructions:
            xla = inst.attr("sharding")
            mine = ours.get((comp.name, inst.name))
            if mine is None:
                operand = inst.operands[0].name
                mine = ours[(comp.name, "copy of", renamed.get(operand, operand))]
                renamed[inst.name] = mine.name
            if mine.attr("sharding") is None:
                if xla is not None:
                    xla_only.append(inst.name)
                continue  # a reducer's computation
            compared += 1
            # XLA leaves a reduce's init constant unannotated, which its partitioner reads
            # as replicated: ours says so explicitly.
            expected = HloSharding.replicate() if xla is None else xla
            if mine.attr("sharding") == expected:
                agree += 1
            else:
                differences.append((inst.name, expected.text(), mine.attr("sharding")))
    return agree, compared, differences, xla_only


# Inside a shard_map over one of two mesh axes, XLA also annotates the root of the
# all-reduce's reducer computation (`add.2`, an f32[] add). Reducers run elementwise on
# scalars and the partitioner never reads their shardings, so we leave them alone.
XLA_ONLY = {"shard_map_partial_4": ["add.2"]}


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_instruction_as_xla_propagates(name):
    agree, compared, differences, xla_only = compare_with_xla(name)
    assert differences == []
    assert agree == compared > 0
    assert xla_only == XLA_ONLY.get(name, [])


def test_the_oracle_covers_the_programs_of_the_brief():
    assert len(PROGRAMS) == 58
    for layout in ("dp", "megatron", "fsdp"):
        assert f"mlp_forward_{layout}" in PROGRAMS and f"mlp_train_step_{layout}" in PROGRAMS
    counts = [compare_with_xla(name)[1] for name in PROGRAMS]
    assert sum(counts) == 989


@pytest.mark.parametrize("name", ["mlp_train_step_megatron", "mlp_train_step_fsdp",
                                  "fori_loop_2"])
def test_the_result_prints_and_reads_back(name):
    before = parse_module((FIXTURES / f"{name}.before.hlo").read_text())
    module = propagate_shardings(before, 4)
    again = parse_module(print_module(module))
    for comp, comp_again in zip(module.computations, again.computations):
        for a, b in zip(comp.instructions, comp_again.instructions):
            assert a.attr("sharding") == b.attr("sharding"), a.name


def test_every_sharding_text_in_xla_dumps_reads_back():
    texts = set()
    for path in FIXTURES.glob("*.hlo"):
        for line in path.read_text().splitlines():
            match = re.search(r"sharding=(\{.*?\})(?:, metadata|, \w+=|$)", line)
            if match:
                texts.add(match.group(1))
    assert len(texts) > 30
    for text in texts:
        sharding = parse_sharding(text)
        if "<=" in text or "devices" not in text:
            assert sharding.text() == text
        else:  # XLA sometimes lists the ids of an iota ({devices=[4,1]0,1,2,3})
            assert parse_sharding(sharding.text()) == sharding


# ------------------------------------------------------------------ tile grids

def test_replicating_a_dimension_moves_its_tiles_into_the_copies():
    grid = np.arange(4).reshape(2, 2, 1)  # {devices=[2,2]<=[4]}
    assert replicate_dims(grid, [0]).tolist() == [[[0, 2], [1, 3]]]
    assert replicate_dims(grid, [1]).tolist() == [[[0, 1]], [[2, 3]]]


def test_mapping_dimensions_transposes_inserts_and_folds():
    grid = np.arange(8).reshape(4, 2, 1)
    assert map_dims(grid, [1, 0]).shape == (2, 4, 1)
    assert map_dims(grid, [None, 0]).reshape(-1).tolist() == list(range(8))
    assert map_dims(grid, [1]).tolist() == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_merging_combines_compatible_partial_layouts():
    rows = parse_sharding("{devices=[2,1,2]<=[4] last_tile_dim_replicate}")
    cols = parse_sharding("{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}")
    grid = merge(rows.tile_assignment, cols.tile_assignment)
    assert HloSharding.tiled(grid, True).text() == "{devices=[2,2]<=[4]}"
    other_cols = parse_sharding("{devices=[1,2,2]<=[4] last_tile_dim_replicate}")
    assert merge(rows.tile_assignment, other_cols.tile_assignment) is None


def test_reshape_grids():
    split = reshape_grid(np.arange(4).reshape(4, 1), (8,), (4, 2))
    assert split.shape == (4, 1, 1)
    split = reshape_grid(np.arange(4).reshape(4, 1), (8,), (2, 4))
    assert split.shape == (2, 2, 1)
    merged = reshape_grid(np.arange(4).reshape(4, 1, 1), (4, 3), (12,))
    assert merged.shape == (4, 1)
    # The minor of two merged dimensions cannot keep its tiles: it is replicated.
    blocked = reshape_grid(np.arange(4).reshape(1, 4, 1), (2, 8), (16,))
    assert blocked.shape == (1, 4)
    uneven = reshape_grid(np.arange(4).reshape(4, 1), (6,), (2, 3))
    assert uneven.shape == (1, 1, 4)


def test_subgroup_shardings_of_partly_manual_programs():
    text = "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}"
    sharding = parse_sharding(text)
    assert sharding.has_manual_subgroup and sharding.subgroups == ("manual", "replicated")
    assert sharding.tiles_per_dim == (1, 1) and sharding.replication == 4
    assert sharding.text() == text and parse_sharding(sharding.text()) == sharding
    scalar = parse_sharding("{devices=[2,2]<=[4] last_tile_dims={manual, replicated}}")
    assert scalar.tiles_per_dim == () and scalar != sharding
    # Replicated subgroups alone are XLA's last_tile_dim_replicate.
    plain = parse_sharding("{devices=[2,1,2]<=[4] last_tile_dims={replicated}}")
    assert plain.text() == "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
    assert not plain.has_manual_subgroup
    with pytest.raises(ValueError) as error:
        parse_sharding("{devices=[2,2]<=[4] last_tile_dims={maximal}}")
    assert "subgroups are manual or replicated" in str(error.value)


@pytest.mark.parametrize("name", ["attention_heads_8", "cond_4", "shard_map_partial_4"])
def test_propagating_again_changes_nothing(name):
    before = parse_module((FIXTURES / f"{name}.before.hlo").read_text())
    once = propagate_shardings(before, before.num_partitions)
    assert propagate_shardings(once, once.num_partitions) is once
