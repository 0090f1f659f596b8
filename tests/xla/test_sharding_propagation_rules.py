"""Each rule of sharding propagation on a small hand-written module (the expected layouts
follow XLA's ShardingPropagation; the whole-program comparison with XLA's own dumps is in
test_sharding_propagation.py)."""
import pytest

from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.sharding_propagation import propagate_shardings
from jaxlite.xla.text_parser import parse_module

ROWS = "{devices=[4,1]<=[4]}"
COLS = "{devices=[1,4]<=[4]}"
REPLICATED = "{replicated}"
ADD = """
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""


def propagate(entry: str, n: int = 4, computations: str = "") -> dict[str, str]:
    """Sharding texts by instruction name, over every computation, after propagation."""
    text = f"HloModule m\n{computations}\nENTRY main {{\n{entry}\n}}\n"
    module = propagate_shardings(parse_module(text), n)
    return {inst.name: inst.attr("sharding").text() for comp in module.computations
            for inst in comp.instructions if inst.attr("sharding") is not None}


def test_elementwise_compare_select_convert_follow_the_sharded_operand():
    got = propagate(f"""
  p = f32[8,4] parameter(0), sharding={ROWS}
  q = f32[8,4] parameter(1), sharding={REPLICATED}
  c = pred[8,4] compare(p, q), direction=LT
  s = f32[8,4] select(c, p, q)
  ROOT r = s32[8,4] convert(s)""")
    assert got["c"] == got["s"] == got["r"] == ROWS


def test_elementwise_combines_row_and_column_partial_shardings():
    got = propagate("""
  p = f32[8,4] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  q = f32[8,4] parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  ROOT r = f32[8,4] multiply(p, q)""")
    assert got["r"] == "{devices=[2,2]<=[4]}"


def test_clamp_with_scalar_bounds():
    got = propagate(f"""
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  p = f32[8,4] parameter(0), sharding={COLS}
  ROOT r = f32[8,4] clamp(lo, p, hi)""")
    assert got["r"] == COLS and got["lo"] == got["hi"] == REPLICATED


def test_a_broadcast_takes_its_users_layout_and_its_scalar_stays_replicated():
    got = propagate(f"""
  p = f32[8,4] parameter(0), sharding={ROWS}
  c = f32[] constant(2)
  b = f32[8,4] broadcast(c), dimensions={{}}
  ROOT r = f32[8,4] multiply(p, b)""")
    assert got["b"] == ROWS and got["c"] == REPLICATED


def test_a_broadcast_of_a_sharded_operand_when_nothing_else_says():
    got = propagate("""
  p = f32[8] parameter(0), sharding={devices=[4]<=[4]}
  b = f32[4,8] broadcast(p), dimensions={1}
  ROOT r = f32[4,8] negate(b)""")
    assert got["b"] == got["r"] == COLS


def test_reduce_drops_the_reduced_dimension_into_replication():
    got = propagate("""
  p = f32[8,16] parameter(0), sharding={devices=[2,2]<=[4]}
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(p, z), dimensions={1}, to_apply=add_f32""", computations=ADD)
    assert got["r"] == "{devices=[2,2]<=[4] last_tile_dim_replicate}"
    assert "a" not in got  # the reducer is not annotated


def test_reduce_operand_from_its_user():
    got = propagate("""
  p = f32[8,16] parameter(0), sharding={replicated}
  e = f32[8,16] exponential(p)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(e, z), dimensions={1}, to_apply=add_f32,
    sharding={devices=[4]<=[4]}""".replace("\n    ", " "), computations=ADD)
    assert got["e"] == ROWS


def test_dot_contracting_sharded_on_both_sides_is_replicated_on_that_axis():
    # Megatron's second layer: the contracted dimension split over the "model" axis of a
    # 2x2 mesh; the result is a partial sum, laid out by rows over "data" only.
    got = propagate("""
  h = f32[8,16] parameter(0), sharding={devices=[2,2]<=[4]}
  w = f32[16,6] parameter(1), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  ROOT d = f32[8,6] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}""")
    assert got["d"] == "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"


def test_dot_batch_and_free_dimensions_follow_the_operands():
    got = propagate("""
  a = f32[4,8,6] parameter(0), sharding={devices=[4,1,1]<=[4]}
  b = f32[4,6,2] parameter(1), sharding={replicated}
  ROOT d = f32[4,8,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},
    lhs_contracting_dims={2}, rhs_contracting_dims={1}""".replace("\n    ", " "))
    assert got["d"] == "{devices=[4,1,1]<=[4]}"
    got = propagate(f"""
  a = f32[8,6] parameter(0), sharding={REPLICATED}
  b = f32[6,4] parameter(1), sharding={COLS}
  ROOT d = f32[8,4] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}""")
    assert got["d"] == COLS


def test_dot_operands_from_the_result():
    got = propagate(f"""
  a = f32[8,6] parameter(0), sharding={REPLICATED}
  x = f32[8,6] negate(a)
  b = f32[6,4] parameter(1), sharding={REPLICATED}
  y = f32[6,4] negate(b)
  ROOT d = f32[8,4] dot(x, y), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}},
    sharding={{devices=[2,2]<=[4]}}""".replace("\n    ", " "))
    assert got["x"] == "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
    assert got["y"] == "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"


def test_a_dot_operand_meets_the_other_operand_split_along_the_contraction():
    got = propagate(f"""
  p = f32[8,16] parameter(0), sharding={REPLICATED}
  x = f32[8,16] sine(p)
  w = f32[16,6] parameter(1), sharding={ROWS}
  ROOT d = f32[8,6] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}""")
    assert got["x"] == COLS and got["d"] == REPLICATED


def test_transpose_reshape_reverse_slice_pad():
    got = propagate(f"""
  p = f32[8,4] parameter(0), sharding={ROWS}
  t = f32[4,8] transpose(p), dimensions={{1,0}}
  r = f32[4,2,4] reshape(t)
  v = f32[8,4] reverse(p), dimensions={{0}}
  s = f32[4,4] slice(p), slice={{[2:6], [0:4]}}
  z = f32[] constant(0)
  d = f32[10,4] pad(p, z), padding=1_1x0_0
  ROOT out = (f32[4,2,4], f32[8,4], f32[4,4], f32[10,4]) tuple(r, v, s, d)""")
    assert got["t"] == COLS
    # The 4 column tiles of t split over the major parts of 8 = 2x4 (XLA's choice too).
    assert got["r"] == "{devices=[1,2,2]<=[4]}"
    assert got["v"] == "{devices=[4,1]3,2,1,0}"
    assert got["s"] == got["d"] == ROWS and got["z"] == REPLICATED
    assert got["out"] == "{" + ", ".join(
        ["{devices=[1,2,2]<=[4]}", "{devices=[4,1]3,2,1,0}", ROWS, REPLICATED]) + "}"
    # (10 padded rows do not split evenly in 4: that result leaves replicated)


def test_a_reshape_whose_blocks_do_not_carry_over_is_replicated():
    got = propagate(f"""
  p = f32[8,8] parameter(0), sharding={COLS}
  ROOT r = f32[64] reshape(p)""")
    assert got["r"] == REPLICATED


def test_concatenate_iota_and_constant_take_their_neighbours_layouts():
    got = propagate(f"""
  p = f32[8,4] parameter(0), sharding={COLS}
  i = f32[8,4] iota(), iota_dimension=0
  c = f32[8,4] concatenate(p, i), dimensions={{0}}
  k = f32[4] constant({{1, 2, 3, 4}})
  b = f32[16,4] broadcast(k), dimensions={{1}}
  ROOT s = f32[16,4] add(c, b)""".replace("f32[8,4] concatenate", "f32[16,4] concatenate"))
    assert got["i"] == got["c"] == got["b"] == got["s"] == COLS
    assert got["k"] == "{devices=[4]<=[4]}"


def test_dynamic_slice_replicates_the_sliced_dimension_only():
    got = propagate(f"""
  p = f32[8,8] parameter(0), sharding={{devices=[2,2]<=[4]}}
  i = s32[] parameter(1), sharding={REPLICATED}
  ROOT d = f32[8,4] dynamic-slice(p, i, i), dynamic_slice_sizes={{8,4}}""")
    assert got["d"] == "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"


def test_dynamic_update_slice_follows_its_base():
    got = propagate(f"""
  p = f32[8,8] parameter(0), sharding={ROWS}
  u = f32[8,2] parameter(1), sharding={REPLICATED}
  i = s32[] constant(0)
  ROOT d = f32[8,8] dynamic-update-slice(p, u, i, i)""")
    assert got["d"] == ROWS and got["i"] == REPLICATED


def test_gather_passes_whole_dimensions_and_index_dimensions_through():
    got = propagate(f"""
  p = f32[8,16] parameter(0), sharding={ROWS}
  i = s32[5] parameter(1), sharding={REPLICATED}
  ROOT g = f32[8,5] gather(p, i), offset_dims={{0}}, collapsed_slice_dims={{1}},
    start_index_map={{1}}, index_vector_dim=1, slice_sizes={{8,1}}""".replace("\n    ", " "))
    assert got["g"] == ROWS
    got = propagate(f"""
  p = f32[8,16] parameter(0), sharding={REPLICATED}
  i = s32[4] parameter(1), sharding={{devices=[4]<=[4]}}
  ROOT g = f32[4,16] gather(p, i), offset_dims={{1}}, collapsed_slice_dims={{0}},
    start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,16}}""".replace("\n    ", " "))
    assert got["g"] == ROWS


def test_sort_and_reduce_window_keep_the_operand_layout():
    got = propagate(f"""
  p = f32[8,4] parameter(0), sharding={COLS}
  q = s32[8,4] iota(), iota_dimension=0
  s = (f32[8,4], s32[8,4]) sort(p, q), dimensions={{0}}, to_apply=less
  z = f32[] constant(0)
  w = f32[8,4] reduce-window(p, z), window={{size=2x1 pad=1_0x0_0}}, to_apply=add_f32
  ROOT t = (f32[8,4], s32[8,4], f32[8,4]) tuple(s, w)""".replace(
        "tuple(s, w)", "tuple(g0, g1, w)").replace(
        "  ROOT t", "  g0 = f32[8,4] get-tuple-element(s), index=0\n"
                    "  g1 = s32[8,4] get-tuple-element(s), index=1\n  ROOT t"),
        computations=ADD + """
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
""")
    assert got["s"] == "{" + f"{COLS}, {COLS}" + "}"
    assert got["q"] == got["w"] == COLS


def test_convolution_batch_and_output_features():
    got = propagate("""
  x = f32[4,8,8,3] parameter(0), sharding={devices=[4,1,1,1]<=[4]}
  k = f32[3,3,3,8] parameter(1), sharding={replicated}
  ROOT c = f32[4,8,8,8] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f""".replace("\n    ", " "))
    assert got["c"] == "{devices=[4,1,1,1]<=[4]}"
    got = propagate("""
  x = f32[4,8,8,3] parameter(0), sharding={replicated}
  k = f32[3,3,3,8] parameter(1), sharding={devices=[1,1,1,4]<=[4]}
  ROOT c = f32[4,8,8,8] convolution(x, k), window={size=3x3 pad=1_1x1_1},
    dim_labels=b01f_01io->b01f""".replace("\n    ", " "))
    assert got["c"] == "{devices=[1,1,1,4]<=[4]}"


WHILE = """
body {
  t = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[8,4] get-tuple-element(t), index=1
  y = f32[8,4] sine(x)
  ROOT u = (s32[], f32[8,4]) tuple(j, y)
}
cond {
  t = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
"""


def propagate_loop(computations: str, init: str):
    """The module of a loop over (counter, x) from x = a parameter laid out as `init`,
    after propagation, and its while instruction."""
    text = f"""HloModule m
{computations}
ENTRY main {{
  p = f32[8,4] parameter(0), sharding={init}
  zero = s32[] constant(0)
  init = (s32[], f32[8,4]) tuple(zero, p)
  w = (s32[], f32[8,4]) while(init), condition=cond, body=body
  ROOT r = f32[8,4] get-tuple-element(w), index=1
}}
"""
    module = propagate_shardings(parse_module(text), 4)
    return module, next(i for i in module.entry.instructions if i.opcode is Opcode.WHILE)


def test_a_while_its_body_and_condition_share_one_sharding():
    module, w = propagate_loop(WHILE, ROWS)
    loop = "{" + f"{REPLICATED}, {ROWS}" + "}"
    comps = {c.name: c for c in module.computations}
    assert w.attr("sharding").text() == loop
    assert comps["body"].parameters[0].attr("sharding").text() == loop
    assert comps["body"].root.attr("sharding").text() == loop
    assert comps["cond"].parameters[0].attr("sharding").text() == loop
    assert module.entry.root.attr("sharding").text() == ROWS


def test_a_layout_found_inside_a_loop_body_reaches_the_loop():
    constrained = WHILE.replace(
        "y = f32[8,4] sine(x)", "s = f32[8,4] sine(x)\n  y = f32[8,4] custom-call(s), "
        f'custom_call_target="Sharding", sharding={COLS}')
    module, w = propagate_loop(constrained, REPLICATED)
    assert w.attr("sharding").text() == "{" + f"{REPLICATED}, {COLS}" + "}"
    assert module.entry.root.attr("sharding").text() == COLS


def test_conditional_branches_and_calls_link_parameters_and_roots():
    got = propagate(f"""
  p = f32[8,4] parameter(0), sharding={ROWS}
  b = pred[] parameter(1), sharding={REPLICATED}
  c = f32[8,4] conditional(b, p, p), true_computation=yes, false_computation=no
  ROOT k = f32[8,4] call(c), to_apply=twice""", computations="""
yes {
  a = f32[8,4] parameter(0)
  ROOT s = f32[8,4] sine(a)
}
no {
  a2 = f32[8,4] parameter(0)
  ROOT s2 = f32[8,4] cosine(a2)
}
twice {
  a3 = f32[8,4] parameter(0)
  ROOT s3 = f32[8,4] add(a3, a3)
}
""")
    for name in ("a", "s", "a2", "s2", "c", "a3", "s3", "k"):
        assert got[name] == ROWS, name


def test_sharding_constraints_become_copies_and_lay_out_their_operand():
    text = f"""HloModule m
ENTRY main {{
  p = f32[8,4] parameter(0), sharding={ROWS}
  s = f32[8,4] sine(p)
  c = f32[8,4] custom-call(s), custom_call_target="Sharding", sharding={COLS}
  ROOT e = f32[8,4] exponential(c)
}}
"""
    module = propagate_shardings(parse_module(text), 4)
    by_name = {i.name: i for i in module.entry.instructions}
    assert by_name["c"].opcode is Opcode.COPY
    assert by_name["c"].attr("sharding").text() == COLS
    assert by_name["s"].attr("sharding").text() == COLS  # as XLA: made where it is wanted
    assert by_name["e"].attr("sharding").text() == COLS


def test_annotations_are_kept_and_other_custom_calls_are_replicated():
    got = propagate(f"""
  p = f32[8,4] parameter(0), sharding={ROWS}
  q = f32[8,4] parameter(1)
  f = f32[8,4] custom-call(p), custom_call_target="my_kernel"
  a = f32[8,4] add(f, q)
  ROOT r = f32[8,4] negate(p), sharding={REPLICATED}""")
    assert got["q"] == got["f"] == got["a"] == got["r"] == REPLICATED
    assert got["p"] == ROWS


def test_manual_regions_stay_manual():
    got = propagate(f"""
  p = f32[8,4] parameter(0), sharding={ROWS}
  m = f32[2,4] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={{manual}}
  c = f32[] constant(2)
  b = f32[2,4] broadcast(c), dimensions={{}}
  x = f32[2,4] multiply(m, b)
  ROOT o = f32[8,4] custom-call(x), custom_call_target="SPMDShardToFullShape",
    sharding={ROWS}""".replace("\n    ", " "))
    assert got["x"] == got["b"] == "{manual}"


@pytest.mark.parametrize("n", [2, 8])
def test_partition_counts(n):
    got = propagate(f"""
  p = f32[8,16] parameter(0), sharding={{devices=[{n},1]<=[{n}]}}
  q = f32[16,4] parameter(1), sharding={{replicated}}
  d = f32[8,4] dot(p, q), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT t = f32[4,8] transpose(d), dimensions={{1,0}}""", n=n)
    assert got["d"] == f"{{devices=[{n},1]<=[{n}]}}"
    assert got["t"] == f"{{devices=[1,{n}]<=[{n}]}}"


def test_the_inputs_of_a_variadic_reduce_are_laid_out_alike():
    got = propagate(f"""
  p = f32[16,8] parameter(0), sharding={ROWS}
  i = s32[16,8] iota(), iota_dimension=0
  z = f32[] constant(0)
  y = s32[] constant(0)
  r = (f32[8], s32[8]) reduce(p, i, z, y), dimensions={{0}}, to_apply=argmax
  ROOT g = s32[8] get-tuple-element(r), index=1""", computations="""
argmax {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  gt = pred[] compare(a, c), direction=GT
  v = f32[] select(gt, a, c)
  w = s32[] select(gt, b, d)
  ROOT t = (f32[], s32[]) tuple(v, w)
}
""")
    assert got["i"] == ROWS
    assert got["r"] == "{" + f"{REPLICATED}, {REPLICATED}" + "}"


def test_results_cut_unevenly_leave_the_program_replicated():
    got = propagate("""
  p = f32[6,5] parameter(0), sharding={replicated}
  c = f32[6,5] custom-call(p), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
  e = f32[6,5] exponential(c)
  ROOT n = f32[6,5] negate(e)""")
    assert got["e"] == "{devices=[4,1]<=[4]}"  # inside the program, uneven tiles are fine
    assert got["n"] == REPLICATED


def test_a_constraint_with_unconstrained_dimensions_is_split_further_there_only():
    got = propagate("""
  p = f32[8,8] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  s = f32[8,8] sine(p)
  c = f32[8,8] custom-call(s), custom_call_target="Sharding",
    sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate},
    backend_config="unspecified_dims=[0]"
  ROOT e = f32[8,8] exponential(c)""".replace("\n    ", " "))
    assert got["c"] == got["s"] == got["e"] == "{devices=[2,2]<=[4]}"
    # A more tiled layout that would undo the constrained dimension is not taken.
    got = propagate("""
  p = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[8,8] custom-call(p), custom_call_target="Sharding",
    sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate},
    backend_config="unspecified_dims=[0]"
  ROOT e = f32[8,8] exponential(c)""".replace("\n    ", " "))
    assert got["c"] == "{devices=[1,2,2]<=[4] last_tile_dim_replicate}"
