"""Fusion and tiling: golden decisions on real programs, the pure decision rules alone, and
meaning preservation on random programs.

The golden programs are the HLO that real JAX 0.10.2 lowers for softmax over rows, layernorm,
an MLP forward and an MLP train step (tests/xla/fixtures/*.lowered.hlo); XLA's own fusion
counts for them come from the optimized fixtures (*.hlo). Values are compared bit for bit
with the unfused module on the evaluator: fusion never changes rounding.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxlite.xla.cost_model import duplication_allowed, vector_width
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import (
    ComputationBuilder,
    HloComputation,
    HloInstruction,
    HloModule,
    NameUniquer,
)
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion import FusionOptions, fuse, fusions_of
from jaxlite.xla.passes.fusion_decisions import (
    INPUT,
    LOOP,
    OUTPUT,
    Verdict,
    classify_group,
    producer_verdict,
)
from jaxlite.xla.passes.tiling import Tiling, assign_tiling, tiling_of
from jaxlite.xla.shape import Shape
from jaxlite.xla.shape_inference import infer_shape
from jaxlite.xla.text import format_value, parse_module, print_module
from jaxlite.xla.verifier import verify_module

sys.path.insert(0, str(Path(__file__).parent)) if str(Path(__file__).parent) not in sys.path \
    else None
from hlo_strategies import HloProgram, hlo_programs
from test_pass_properties import assert_same_values

FIXTURES = Path(__file__).parent / "fixtures"
F32 = np.dtype(np.float32)
NO_ROWS = FusionOptions(row_fusion=False)
NO_ROWS_NO_MULTI = FusionOptions(row_fusion=False, multi_output=False)


def _fixture(name: str) -> tuple[HloModule, list[np.ndarray]]:
    module = parse_module((FIXTURES / f"{name}.lowered.hlo").read_text())
    data = np.load(FIXTURES / f"{name}.npz")
    return module, [data[f"in_{i}"] for i in range(sum(k.startswith("in_") for k in data))]


def _xla_counts(name: str) -> tuple[int, int]:
    """(fusions, fusions + bare dots) in XLA's optimized entry computation."""
    text = (FIXTURES / f"{name}.hlo").read_text()
    entry = text[text.index("\nENTRY"):]
    fusions = entry.count(" fusion(")
    return fusions, fusions + entry.count(" dot(")


def _opcodes_everywhere(module: HloModule, opcode: Opcode) -> int:
    return sum(i.opcode is opcode for c in module.computations for i in c.instructions)


def _fused_and_checked(module: HloModule, args: list[np.ndarray],
                       options: FusionOptions | None = None) -> HloModule:
    """Fuse and tile; check validity, meaning, idempotence and the text round trip."""
    expected = evaluate_module(module, args)
    fused = fuse(module, options)
    assert fuse(fused, options) is fused, "fusion found more to do on its own output"
    tiled = assign_tiling(fused)
    assert assign_tiling(tiled) is tiled
    for result in (fused, tiled):
        verify_module(result)
        assert_same_values(expected, evaluate_module(result, args), "after fusion")
    text = print_module(tiled)
    back = parse_module(text)
    assert print_module(back) == text
    for before, after in zip(fusions_of(tiled), fusions_of(back)):
        assert tiling_of(after) == tiling_of(before) == after.attr("tiling")
    return tiled


def _entry_fusions(module: HloModule) -> list[HloInstruction]:
    return [i for i in module.entry.instructions if i.opcode is Opcode.FUSION]


# ------------------------------------------------------------------------- golden programs

def test_softmax_rows_become_one_row_fusion() -> None:
    module, args = _fixture("softmax")
    fused = _fused_and_checked(module, args)
    (fusion,) = _entry_fusions(fused)
    tiling = tiling_of(fusion)
    assert fusion.attr("kind") == INPUT and tiling.row_kernel
    assert tiling.reduced_dims == (1,) and tiling.tile_shape == (1, 32)
    assert tiling.vector_width == 16
    assert _xla_counts("softmax")[0] == 4


@pytest.mark.parametrize("options", [NO_ROWS, NO_ROWS_NO_MULTI])
def test_softmax_without_row_fusion_is_three_fusions(options: FusionOptions) -> None:
    module, args = _fixture("softmax")
    fused = _fused_and_checked(module, args, options)
    kinds = sorted(f.attr("kind") for f in _entry_fusions(fused))
    assert kinds == [INPUT, INPUT, LOOP]
    # exp feeds the sum and the division: computed in both, written nowhere.
    assert _opcodes_everywhere(fused, Opcode.EXP) == 2


def _softmax_text(rows: int, cols: int) -> str:
    text = (FIXTURES / "softmax.lowered.hlo").read_text()
    return (text.replace("8,32", f"{rows},{cols}").replace("[8]", f"[{rows}]")
            .replace("[8,1]", f"[{rows},1]"))


def test_softmax_rows_too_long_for_l1_stay_three_fusions() -> None:
    module = parse_module(_softmax_text(2, 9000))
    args = [np.random.default_rng(0).normal(size=(2, 9000)).astype(np.float32)]
    fused = _fused_and_checked(module, args)
    assert len(_entry_fusions(fused)) == 3
    assert not any(tiling_of(f).row_kernel for f in _entry_fusions(fused))


def test_softmax_of_the_design_page_is_tiled_by_rows_over_threads() -> None:
    fused = assign_tiling(fuse(parse_module(_softmax_text(4096, 1024))))
    (fusion,) = _entry_fusions(fused)
    assert tiling_of(fusion) == Tiling(
        iteration_shape=(4096, 1024), loop_order=(0, 1), tile_shape=(1, 1024),
        vector_width=16, parallel_dims=(0,), reduced_dims=(1,), row_kernel=True)


def test_layernorm_becomes_one_row_fusion() -> None:
    module, args = _fixture("layernorm")
    assert len(_entry_fusions(_fused_and_checked(module, args))) == 1
    fused = _fused_and_checked(module, args, NO_ROWS)
    assert len(_entry_fusions(fused)) == 3 == _xla_counts("layernorm")[0]


def test_dot_bias_tanh_is_one_output_fusion() -> None:
    module, args = _fixture("mlp_forward")
    fused = _fused_and_checked(module, args)
    fusions = _entry_fusions(fused)
    assert [f.attr("kind") for f in fusions] == [OUTPUT, OUTPUT]
    assert not any(i.opcode is Opcode.DOT for i in fused.entry.instructions)
    first = {i.opcode for i in fusions[0].called[0].instructions}
    assert {Opcode.DOT, Opcode.ADD, Opcode.TANH, Opcode.BROADCAST} <= first
    assert tiling_of(fusions[0]).k_tile == 16
    assert len(fusions) <= _xla_counts("mlp_forward")[0]


def test_mlp_train_step_needs_fewer_kernels_than_xla() -> None:
    module, args = _fixture("mlp_train_step")
    fused = _fused_and_checked(module, args)
    fusions = _entry_fusions(fused)
    dots = [i for i in fused.entry.instructions if i.opcode is Opcode.DOT]
    xla_fusions, xla_kernels = _xla_counts("mlp_train_step")
    assert len(fusions) == 7 and len(dots) == 3
    assert len(fusions) <= xla_fusions and len(fusions) + len(dots) <= xla_kernels
    assert any(f.shape.is_tuple for f in fusions), "the loss and its gradient share a fusion"
    without = _entry_fusions(_fused_and_checked(module, args, NO_ROWS_NO_MULTI))
    assert len(without) == 8


# ------------------------------------------------------------------- hand-built programs

class _Builder:
    """A computation builder that infers shapes (for short hand-built modules)."""

    def __init__(self, name: str = "main", names: NameUniquer | None = None) -> None:
        self.names = names or NameUniquer()
        self.b = ComputationBuilder(name, self.names)

    def param(self, *dims: int) -> HloInstruction:
        return self.b.parameter(Shape(F32, dims), "p")

    def const(self, value: float) -> HloInstruction:
        return self.b.add(Opcode.CONSTANT, Shape(F32, ()),
                          attrs={"literal": np.asarray(value, F32)})

    def op(self, opcode: Opcode, *operands: HloInstruction, shape: Shape | None = None,
           called: tuple[HloComputation, ...] = (), **attrs: Any) -> HloInstruction:
        shape = infer_shape(opcode, [o.shape for o in operands], attrs, called, shape)
        return self.b.add(opcode, shape, operands, attrs, called)

    def bcast(self, x: HloInstruction, dims: tuple[int, ...], mapping: tuple[int, ...]
              ) -> HloInstruction:
        return self.op(Opcode.BROADCAST, x, shape=Shape(F32, dims), dimensions=mapping)

    def reduce(self, x: HloInstruction, dims: tuple[int, ...], combiner: Opcode,
               init: float) -> HloInstruction:
        comb = _Builder(combiner.text, self.names)
        a, b = comb.b.parameter(Shape(F32, ()), "a"), comb.b.parameter(Shape(F32, ()), "b")
        computation = comb.b.build(comb.op(combiner, a, b))
        return self.op(Opcode.REDUCE, x, self.const(init), called=(computation,),
                       dimensions=dims)

    def module(self, *outputs: HloInstruction) -> HloModule:
        root = outputs[0] if len(outputs) == 1 else self.op(Opcode.TUPLE, *outputs)
        return HloModule("m", self.b.build(root))


def _random_args(module: HloModule, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=p.shape.dims).astype(p.shape.dtype)
            for p in module.entry.parameters]


def test_an_exp_feeding_ten_consumers_is_computed_once() -> None:
    b = _Builder()
    x = b.param(4, 8)
    e = b.op(Opcode.EXP, x)
    outs = [b.op(Opcode.ADD, e, b.bcast(b.const(float(k)), (4, 8), ())) for k in range(10)]
    module = b.module(*outs)
    fused = _fused_and_checked(module, _random_args(module))
    assert _opcodes_everywhere(fused, Opcode.EXP) == 1
    # The ten consumers read the same exp: multi-output fusion makes them one loop.
    assert len(_entry_fusions(fused)) == 2


def test_reductions_and_dots_are_never_duplicated() -> None:
    b = _Builder()
    x, w = b.param(4, 8), b.param(8, 8)
    row_max = b.bcast(b.reduce(x, (1,), Opcode.MAXIMUM, -np.inf), (4, 8), (0,))
    d = b.op(Opcode.DOT, x, w, lhs_contracting=(1,), rhs_contracting=(0,), lhs_batch=(),
             rhs_batch=())
    mixed = b.op(Opcode.ADD, d, row_max)
    module = b.module(b.op(Opcode.EXP, mixed), b.op(Opcode.NEGATE, mixed), d)
    fused = _fused_and_checked(module, _random_args(module))
    assert _opcodes_everywhere(fused, Opcode.REDUCE) == 1
    assert _opcodes_everywhere(fused, Opcode.DOT) == 1


def test_sibling_reductions_share_one_multi_output_fusion() -> None:
    b = _Builder()
    x = b.param(6, 16)
    total = b.reduce(x, (1,), Opcode.ADD, 0.0)
    squares = b.reduce(b.op(Opcode.MULTIPLY, x, x), (1,), Opcode.ADD, 0.0)
    module = b.module(total, squares)
    (fusion,) = _entry_fusions(_fused_and_checked(module, _random_args(module)))
    assert fusion.shape.is_tuple and fusion.called[0].root.opcode is Opcode.TUPLE
    single = _fused_and_checked(module, _random_args(module), NO_ROWS_NO_MULTI)
    assert len(_entry_fusions(single)) == 2


def test_a_row_result_read_along_columns_is_no_row_fusion() -> None:
    b = _Builder()
    x = b.param(8, 8)
    sums = b.reduce(x, (1,), Opcode.ADD, 0.0)
    module = b.module(b.op(Opcode.SUBTRACT, x, b.bcast(sums, (8, 8), (1,))))
    fused = _fused_and_checked(module, _random_args(module))
    assert len(_entry_fusions(fused)) == 2


def test_while_bodies_are_fused_and_lone_ops_wrapped() -> None:
    names = NameUniquer()
    state = Shape.tuple([Shape(np.dtype(np.int32), ()), Shape(F32, (4, 8))])
    cond = _Builder("cond", names)
    s = cond.b.parameter(state, "s")
    i = cond.op(Opcode.GET_TUPLE_ELEMENT, s, index=0)
    limit = cond.b.add(Opcode.CONSTANT, i.shape, attrs={"literal": np.asarray(3, np.int32)})
    cond_comp = cond.b.build(cond.op(Opcode.COMPARE, i, limit, direction="LT"))
    body = _Builder("body", names)
    s = body.b.parameter(state, "s")
    i, v = body.op(Opcode.GET_TUPLE_ELEMENT, s, index=0), body.op(
        Opcode.GET_TUPLE_ELEMENT, s, index=1)
    one = body.b.add(Opcode.CONSTANT, i.shape, attrs={"literal": np.asarray(1, np.int32)})
    v2 = body.op(Opcode.TANH, body.op(Opcode.MULTIPLY, v, body.bcast(body.const(0.5), (4, 8),
                                                                     ())))
    body_comp = body.b.build(body.op(Opcode.TUPLE, body.op(Opcode.ADD, i, one), v2))
    main = _Builder("main", names)
    x = main.param(4, 8)
    zero = main.b.add(Opcode.CONSTANT, i.shape, attrs={"literal": np.asarray(0, np.int32)})
    loop = main.op(Opcode.WHILE, main.op(Opcode.TUPLE, zero, x), called=(cond_comp, body_comp))
    module = main.module(main.op(Opcode.GET_TUPLE_ELEMENT, loop, index=1))
    fused = _fused_and_checked(module, _random_args(module))
    new_body = next(i for i in fused.entry.instructions if i.opcode is Opcode.WHILE).called[1]
    kinds = [i.attr("kind") for i in new_body.instructions if i.opcode is Opcode.FUSION]
    assert kinds == [LOOP, LOOP]


def test_nothing_to_fuse_returns_the_same_module() -> None:
    b = _Builder()
    x, w = b.param(2, 3), b.param(3, 4)
    module = b.module(b.op(Opcode.DOT, x, w, lhs_contracting=(1,), rhs_contracting=(0,),
                           lhs_batch=(), rhs_batch=()))
    assert fuse(module) is module
    assert assign_tiling(module) is module


# ------------------------------------------------------------------------ pure decisions

def test_duplication_rules_of_the_cost_model() -> None:
    b = _Builder()
    x = b.param(4, 8)
    e, n, k = b.op(Opcode.EXP, x), b.op(Opcode.NEGATE, x), b.bcast(b.const(1.0), (4, 8), ())
    assert duplication_allowed(e, 2, 1, False)
    assert not duplication_allowed(e, 3, 0, False)
    assert not duplication_allowed(e, 2, 2, False)
    assert duplication_allowed(n, 10, 9, False)
    assert not duplication_allowed(n, 2, 0, True)
    assert duplication_allowed(k, 10, 9, True)


def test_producer_verdicts() -> None:
    b = _Builder()
    x, w = b.param(4, 8), b.param(8, 2)
    e = b.op(Opcode.EXP, x)
    d = b.op(Opcode.DOT, e, w, lhs_contracting=(1,), rhs_contracting=(0,), lhs_batch=(),
             rhs_batch=())
    neg = b.op(Opcode.NEGATE, e)
    r = b.reduce(e, (1,), Opcode.ADD, 0.0)

    def verdict(producer: HloInstruction, users: list, inside: list, copies: int = 0,
                owned: bool = True) -> Verdict:
        return producer_verdict(producer, users, inside, False, copies, owned, 2).verdict
    assert verdict(e, [neg], [neg]) is Verdict.MOVE
    assert verdict(e, [d, neg], [neg]) is Verdict.REFUSE  # written for the dot anyway
    assert verdict(e, [d], [d]) is Verdict.REFUSE  # a GEMM reads its operands from memory
    assert verdict(e, [neg, r], [neg]) is Verdict.DUPLICATE
    assert verdict(r, [neg], [neg], owned=False) is Verdict.REFUSE
    assert verdict(r, [neg, d], [neg]) is Verdict.REFUSE


def test_group_classification() -> None:
    b = _Builder()
    x, w, bias = b.param(4, 8), b.param(8, 2), b.param(2)
    d = b.op(Opcode.DOT, x, w, lhs_contracting=(1,), rhs_contracting=(0,), lhs_batch=(),
             rhs_batch=())
    biased = b.op(Opcode.ADD, d, b.bcast(bias, (4, 2), (1,)))
    act = b.op(Opcode.TANH, biased)
    group = [d, biased.operands[1], biased, act]
    assert classify_group([act], group, None).kind == OUTPUT
    r = b.reduce(x, (1,), Opcode.MAXIMUM, -np.inf)
    back = b.bcast(r, (4, 8), (0,))
    shifted = b.op(Opcode.SUBTRACT, x, back)
    members = [r.operands[1], r, back, shifted]
    assert classify_group([shifted], members, None).kind is None
    row = classify_group([shifted], members, 32 * 1024)
    assert row.kind == INPUT and row.row is not None and row.row.row_elements == 8
    assert classify_group([shifted], members, 16).kind is None


def test_tiling_text_round_trip_and_widths() -> None:
    tiling = Tiling((4, 1024), (0, 1), (1, 1024), 16, (0,), (1,), True)
    assert tiling.to_text() == format_value(tiling)
    assert Tiling.from_text(tiling.to_text()) == tiling
    assert Tiling.from_mapping(dict(tiling)) == tiling
    assert vector_width(np.float32) == 16 and vector_width(np.float64) == 8
    with pytest.raises(ValueError, match="unknown fields"):
        Tiling.from_mapping({**tiling, "warp": 32})


# ----------------------------------------------------------------- random programs

_UNARY = (Opcode.EXP, Opcode.TANH, Opcode.NEGATE, Opcode.ABS, Opcode.LOGISTIC)
_BINARY = (Opcode.ADD, Opcode.SUBTRACT, Opcode.MULTIPLY, Opcode.MAXIMUM)


@st.composite
def fusion_programs(draw: Callable) -> HloProgram:
    """Random programs made of the motifs fusion cares about: elementwise chains with fan-out,
    row, column and full reductions broadcast back (softmax-like), dots with epilogues."""
    rows, cols, n = draw(st.integers(1, 5)), draw(st.integers(1, 6)), draw(st.integers(1, 3))
    b = _Builder()
    values = [b.param(rows, cols)]
    w, bias = b.param(cols, n), b.param(n)

    def pick(dims: tuple[int, ...]) -> HloInstruction:
        return draw(st.sampled_from([v for v in values if v.shape.dims == dims][::-1]))
    for _ in range(draw(st.integers(1, 10))):
        motif = draw(st.sampled_from(["unary", "binary", "row", "column", "full", "dot",
                                      "fan"]))
        x = pick((rows, cols))
        if motif == "unary":
            values.append(b.op(draw(st.sampled_from(_UNARY)), x))
        elif motif == "binary":
            values.append(b.op(draw(st.sampled_from(_BINARY)), x, pick((rows, cols))))
        elif motif in ("row", "column", "full"):
            axes, keep = {"row": ((1,), (0,)), "column": ((0,), (1,)), "full": ((0, 1), ())}[
                motif]
            combiner = draw(st.sampled_from([Opcode.ADD, Opcode.MAXIMUM]))
            reduced = b.reduce(x, axes, combiner, 0.0 if combiner is Opcode.ADD else -np.inf)
            values.append(b.op(draw(st.sampled_from(_BINARY)), pick((rows, cols)),
                               b.bcast(reduced, (rows, cols), keep)))
        elif motif == "dot":
            d = b.op(Opcode.DOT, x, w, lhs_contracting=(1,), rhs_contracting=(0,),
                     lhs_batch=(), rhs_batch=())
            out = b.op(Opcode.TANH, b.op(Opcode.ADD, d, b.bcast(bias, (rows, n), (1,))))
            values.append(b.op(Opcode.DOT, out, w, lhs_contracting=(1,), rhs_contracting=(1,),
                               lhs_batch=(), rhs_batch=()))
        else:
            e = b.op(Opcode.EXP, x)
            values.extend(b.op(draw(st.sampled_from(_BINARY)), e, pick((rows, cols)))
                          for _ in range(draw(st.integers(2, 4))))
    extra = draw(st.lists(st.sampled_from(values), max_size=3))
    module = b.module(values[-1], *extra) if extra else b.module(values[-1])
    return HloProgram(module, tuple(_random_args(module, draw(st.integers(0, 99)))))


def _check_program(program: HloProgram, options: FusionOptions | None = None) -> None:
    verify_module(program.module)
    fused = _fused_and_checked(program.module, list(program.args), options)
    for op in (Opcode.REDUCE, Opcode.DOT):  # never duplicated (merging may share equal ones)
        assert _opcodes_everywhere(fused, op) <= _opcodes_everywhere(program.module, op)
    for fusion in fusions_of(fused):
        assert fusion.attr("kind") in (LOOP, INPUT, OUTPUT) and tiling_of(fusion) is not None
        assert fusion.shape == fusion.called[0].root.shape


@settings(max_examples=150, deadline=None)
@given(fusion_programs(), st.sampled_from([None, NO_ROWS, NO_ROWS_NO_MULTI]))
def test_fusion_preserves_meaning_on_fusion_motifs(program: HloProgram,
                                                   options: FusionOptions | None) -> None:
    _check_program(program, options)


@settings(max_examples=150, deadline=None)
@given(hlo_programs())
def test_fusion_preserves_meaning_on_random_programs(program: HloProgram) -> None:
    _check_program(program)
