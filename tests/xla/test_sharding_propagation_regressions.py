"""Sharding propagation on programs that broke it (found through jit and pmap)."""
from jaxlite.xla.hlo_sharding import HloSharding
from jaxlite.xla.passes.sharding_propagation import propagate_shardings
from jaxlite.xla.text_parser import parse_module

# pmap(out_axes=None) over 8 devices: the first device's row of a row-split value, squeezed.
FIRST_ROW = """HloModule first_row, num_partitions=8

ENTRY %main (Arg_0.0: f32[8,2]) -> f32[2] {
  %Arg_0.0 = f32[8,2]{1,0} parameter(0), sharding={replicated}
  %custom-call.1 = f32[8,2]{1,0} custom-call(%Arg_0.0), custom_call_target="Sharding", sharding={devices=[8,1]<=[8]}
  %slice.2 = f32[1,2]{1,0} slice(%custom-call.1), slice={[0:1], [0:2]}
  ROOT %reshape.3 = f32[2]{0} reshape(%slice.2), sharding={replicated}
}
"""


def test_a_split_dimension_of_size_one_reshaped_away():
    module = propagate_shardings(parse_module(FIRST_ROW), 8)
    shardings = {i.name: i.attr("sharding") for i in module.entry.instructions}
    assert shardings["reshape.3"] == HloSharding.replicate()
    assert shardings["custom-call.1"] == HloSharding.iota_tiled((8, 1))
