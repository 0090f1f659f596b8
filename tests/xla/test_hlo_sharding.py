"""HloSharding: XLA's text, tiles, and NamedSharding layouts (texts recorded from JAX 0.10.2's
`NamedSharding._to_xla_hlo_sharding` on a 2x2x2 mesh of forced host devices)."""
import numpy as np
import pytest

from jaxlite.xla.hlo_sharding import HloSharding, from_mesh_spec, parse_sharding
from jaxlite.xla.pipeline import optimize
from jaxlite.xla.text import print_module
from jaxlite.xla.text_parser import parse_module

JAX_TEXTS = [
    (("y", "x"), "{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"),
    (("x",), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
    ((None, "z"), "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"),
    ((("z", "x"),), "{devices=[4,1,2]<=[4,2]T(1,0) last_tile_dim_replicate}"),
    (("z", "y"), "{devices=[2,2,2]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}"),
    ((("y", "z"), "x"), "{devices=[4,2]<=[2,4]T(1,0)}"),
    ((), "{replicated}"),
]


@pytest.mark.parametrize("spec,text", JAX_TEXTS)
def test_mesh_spec_as_jax_lowers_it(spec, text):
    sharding = from_mesh_spec((2, 2, 2), ("x", "y", "z"), spec, 2)
    assert sharding.text() == text
    assert parse_sharding(text) == sharding


def test_listed_ids_read_as_the_same_sharding():
    listed = parse_sharding("{devices=[2,2]0,2,1,3}")
    assert listed == parse_sharding("{devices=[2,2]<=[2,2]T(1,0)}")
    assert listed.text() == "{devices=[2,2]<=[2,2]T(1,0)}"
    odd = parse_sharding("{devices=[2,2]3,1,0,2}")
    assert odd.text() == "{devices=[2,2]3,1,0,2}"


def test_tiles_blocks_and_padding():
    sharding = parse_sharding("{devices=[2,1,2]<=[4] last_tile_dim_replicate}")
    assert sharding.tiles_per_dim == (2, 1) and sharding.replication == 2
    assert sharding.tile_shape((5, 3)) == (3, 3)
    assert sharding.tile_index(3) == (1, 0)
    assert sharding.block_slices((5, 3), 2) == (slice(3, 5), slice(0, 3))
    value = np.arange(15).reshape(5, 3)
    blocks = [value[sharding.block_slices(value.shape, p)] for p in range(4)]
    assert np.array_equal(np.concatenate([blocks[0], blocks[2]]), value)
    assert np.array_equal(blocks[0], blocks[1])


def test_other_kinds_round_trip():
    for text in ["{replicated}", "{manual}", "{maximal device=3}",
                 "{{replicated}, {devices=[2]<=[2]}}"]:
        assert parse_sharding(text).text() == text
    assert HloSharding.tiled(np.zeros((1, 1), int)).is_replicated
    with pytest.raises(ValueError, match="cannot read the sharding"):
        parse_sharding("{devices=2}")


def test_instruction_shardings_and_partition_count_round_trip_in_hlo_text():
    text = """HloModule jit_f, entry_computation_layout={(f32[8,4]{1,0})->f32[8,4]{1,0}}, num_partitions=4

ENTRY %main.4 (Arg_0.1: f32[8,4]) -> f32[8,4] {
  %Arg_0.1 = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  %sine.2 = f32[8,4]{1,0} sine(%Arg_0.1), metadata={op_name="jit(f)/sin"}
  ROOT %custom-call.3 = f32[8,4]{1,0} custom-call(%sine.2), custom_call_target="Sharding", sharding={devices=[4,1]<=[4] metadata={op_name="c"}}
}
"""
    module = parse_module(text)
    assert module.num_partitions == 4
    param, _, root = module.entry.instructions
    assert param.attr("sharding").replication == 2
    assert root.attr("sharding") == HloSharding.iota_tiled((4, 1))
    again = parse_module(print_module(module))
    assert again.num_partitions == 4
    assert [i.attr("sharding") for i in again.entry.instructions] == [
        i.attr("sharding") for i in module.entry.instructions]
    assert "num_partitions=4" in print_module(module).splitlines()[0]


def test_the_pass_pipeline_keeps_the_partition_count():
    text = """HloModule spmd, num_partitions=2

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p: f32[4,3]) -> f32[3] {
  %p = f32[4,3]{1,0} parameter(0)
  %e = f32[4,3]{1,0} exponential(%p)
  %z = f32[] constant(0)
  %r = f32[3]{0} reduce(%e, %z), dimensions={0}, to_apply=%add
  ROOT %ar = f32[3]{0} all-reduce(%r), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
}
"""
    optimized = optimize(parse_module(text))
    assert optimized.num_partitions == 2
    assert "all-reduce" in print_module(optimized)
