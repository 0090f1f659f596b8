"""Code generation of the cpu backend against the interpreter.

Generated programs (tests/xla/hlo_strategies.py: every opcode, dtype and layout it covers),
then hand-written modules that reach what small generated arrays do not: every elementwise
opcode for every dtype at sizes around the vector width (odd sizes, empty and scalar
shapes), row, column, full and middle reductions, row kernels (softmax, layernorm),
movement, dots with any dimension numbers, non-default layouts, and control flow.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import jaxlite as jax
import jaxlite.lax as lax
import jaxlite.numpy as jnp
from cpu_testing import (assert_same, compare, cpu_client, interpreter, module, run_cpu,
                         values_for)
from hlo_strategies import hlo_programs
from jaxlite.tree_util import tree_leaves
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder

CPU = cpu_client().devices()[0]


def jit_both(f, *args, tolerance=None):
    """`f` jitted on the cpu backend and on the interpreter give the same values."""
    expected = jax.jit(f, device=interpreter().devices()[0])(*args)
    actual = jax.jit(f, device=CPU)(*args)
    flat_e, flat_a = tree_leaves(expected), tree_leaves(actual)
    assert len(flat_e) == len(flat_a)
    for k, (a, e) in enumerate(zip(flat_a, flat_e)):
        assert_same(np.asarray(a), np.asarray(e), f"output {k}", tolerance)


# ----------------------------------------------------------------- generated programs

@settings(max_examples=40)
@given(hlo_programs())
def test_generated_programs_match_the_interpreter(program):
    compare(program.module, [np.asarray(a) for a in program.args])


# --------------------------------------------------------------- elementwise opcodes

FLOAT_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                "remainder", "atan2"]
FLOAT_UNARY = ["negate", "abs", "sign", "floor", "ceil", "round-nearest-even",
               "round-nearest-afz", "sqrt", "rsqrt", "exponential", "log", "tanh", "logistic",
               "sine", "cosine", "exponential-minus-one", "log-plus-one", "cbrt", "tan",
               "erf"]
INT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and",
              "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic",
              "power"]
INT_UNARY = ["negate", "abs", "sign", "not", "popcnt"]
PRED_BINARY = ["and", "or", "xor", "maximum", "minimum"]
DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]
XLA_TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": "bfloat16",
             "s8": np.int8, "u8": np.uint8, "s16": np.int16, "s32": np.int32,
             "s64": np.int64, "u32": np.uint32, "pred": np.bool_}


def _elementwise_body(t: str, dims: str) -> str:
    s = f"{t}[{dims}]"
    pred = f"pred[{dims}]"
    lines = [f"%x = {s} parameter(0)", f"%y = {s} parameter(1)", f"%p = {pred} parameter(2)"]
    outs = []

    def add(name: str, text: str) -> None:
        lines.append(f"%{name} = {text}")
        outs.append(name)
    if t == "pred":
        binary, unary = PRED_BINARY, ["not"]
    elif t in ("f32", "f64", "f16", "bf16"):
        binary, unary = FLOAT_BINARY, FLOAT_UNARY
        add("finite", f"{pred} is-finite(%x)")
        add("to_s32", f"s32[{dims}] convert(%x)")
        add("to_u8", f"u8[{dims}] convert(%x)")
        add("to_f64", f"f64[{dims}] convert(%x)")
        add("total", f"{pred} compare(%x, %y), direction=LT, type=TOTALORDER")
    else:
        binary, unary = INT_BINARY, INT_UNARY
        add("to_f32", f"f32[{dims}] convert(%x)")
        add("to_s16", f"s16[{dims}] convert(%x)")
    for k, op in enumerate(binary):
        add(f"b{k}", f"{s} {op}(%x, %y)")
    for k, op in enumerate(unary):
        add(f"u{k}", f"{s} {op}(%x)")
    for direction in DIRECTIONS:
        add(f"c{direction}", f"{pred} compare(%x, %y), direction={direction}")
    add("sel", f"{s} select(%p, %x, %y)")
    add("to_pred", f"{pred} convert(%x)")
    if t != "pred":
        add("clamp", f"{s} clamp(%y, %x, %y)")
    shapes = ", ".join(_shape_of(line) for line in lines if line.split(" = ")[0][1:] in outs)
    lines.append(f"ROOT %out = ({shapes}) tuple({', '.join('%' + o for o in outs)})")
    return "\n".join(lines)


def _shape_of(line: str) -> str:
    return line.split(" = ")[1].split(" ")[0]


@pytest.mark.parametrize("t", list(XLA_TYPES))
@pytest.mark.parametrize("dims", ["", "0", "17", "3,37"])
def test_every_elementwise_opcode_for_every_dtype(t, dims):
    rng = np.random.default_rng(len(t) + len(dims))
    shape = tuple(int(d) for d in dims.split(",")) if dims else ()
    dtype = jnp.bfloat16 if XLA_TYPES[t] == "bfloat16" else XLA_TYPES[t]
    args = [values_for(dtype, shape, rng), values_for(dtype, shape, rng),
            values_for(np.bool_, shape, rng)]
    compare(module(_elementwise_body(t, dims)), args)


def test_integer_edge_cases_divide_shift_and_power():
    m = module("""
    %x = s32[12] parameter(0)
    %y = s32[12] parameter(1)
    %d = s32[12] divide(%x, %y)
    %r = s32[12] remainder(%x, %y)
    %l = s32[12] shift-left(%x, %y)
    %a = s32[12] shift-right-arithmetic(%x, %y)
    %g = s32[12] shift-right-logical(%x, %y)
    %p = s32[12] power(%x, %y)
    ROOT %t = (s32[12], s32[12], s32[12], s32[12], s32[12], s32[12]) tuple(%d, %r, %l, %a, %g, %p)
    """)
    x = np.array([7, -7, 0, -2**31, -2**31, 5, 1, -1, 3, -3, 2, 9], np.int32)
    y = np.array([0, 2, 0, -1, 1, 33, -5, -3, -1, 32, 31, 3], np.int32)
    compare(m, [x, y])


# ------------------------------------------------------------------------ reductions

@pytest.mark.parametrize("shape", [(1000,), (17, 33), (5, 7, 19), (64, 129)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_reductions_over_every_set_of_axes(shape, dtype):
    rng = np.random.default_rng(0)
    x = values_for(dtype, shape, rng, specials=False)
    axes_sets = [a for a in _subsets(len(shape)) if a]

    def f(x):
        outs = []
        for axes in axes_sets:
            outs.append(jnp.sum(x, axis=axes))
            outs.append(jnp.max(x, axis=axes))
        return outs
    tolerance = 2e-2 if dtype == np.float16 else None
    jit_both(f, x, tolerance=tolerance)


def _subsets(n):
    return [tuple(d for d in range(n) if mask >> d & 1) for mask in range(1 << n)]


@pytest.mark.parametrize("columns", [1, 7, 16, 17, 100, 1024, 1500])
def test_row_kernels_softmax_and_layernorm(columns):
    rng = np.random.default_rng(columns)
    x = rng.standard_normal((9, columns)).astype(np.float32)
    g = rng.standard_normal(columns).astype(np.float32)

    def softmax(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)

    def layernorm(x, g):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        xc = x - mu
        var = jnp.mean(xc * xc, axis=-1, keepdims=True)
        return xc / jnp.sqrt(var + 1e-5) * g, var
    jit_both(softmax, x)
    jit_both(layernorm, x, g)


def test_variadic_reductions_argmax_and_argmin():
    x = np.random.default_rng(3).standard_normal((13, 37)).astype(np.float32)
    x[2, 5] = np.nan
    jit_both(lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), jnp.argmax(x)), x)


def test_reduction_with_initial_value_other_than_the_identity():
    m = module("""
    %x = f32[40,19] parameter(0)
    %init = f32[] constant(2.5)
    ROOT %r = f32[40] reduce(%x, %init), dimensions={1}, to_apply=%add
    """, """
    %add (a: f32[], b: f32[]) -> f32[] {
      %a = f32[] parameter(0)
      %b = f32[] parameter(1)
      ROOT %s = f32[] add(%a, %b)
    }""")
    compare(m, [np.random.default_rng(1).standard_normal((40, 19)).astype(np.float32)])


# -------------------------------------------------------------------------- movement

def test_movement_inside_loops():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 35)).astype(np.float32)
    y = rng.standard_normal((35, 6)).astype(np.float32)

    def f(x, y):
        t = jnp.transpose(y) * 2.0 + x
        b = jnp.broadcast_to(x[:, :1], (6, 35)) - x
        r = jnp.reshape(x, (3, 70)) + 1.0
        s = x[1:5:2, 3:34:3]
        c = jnp.concatenate([x, y.T, x[:, :3]], axis=1)
        p = lax.pad(x, np.float32(-1), [(2, -1, 1), (-3, 4, 0)])
        v = lax.rev(x, (0, 1)) * 3.0
        i = lax.broadcasted_iota(jnp.int32, (6, 35), 1) + lax.broadcasted_iota(jnp.int32,
                                                                                 (6, 35), 0)
        return t, b, r, s, c, p, v, i
    jit_both(f, x, y)


def test_dynamic_slices_updates_gathers_and_scatters():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((20, 33)).astype(np.float32)
    u = rng.standard_normal((4, 33)).astype(np.float32)
    idx = np.array([3, 0, 19, 7, 7], np.int32)

    v = rng.standard_normal((5, 33)).astype(np.float32)
    gather = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                        start_index_map=(0,))
    scatter = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))

    def f(x, u, i, v):
        a = lax.dynamic_slice(x, (i[0], np.int32(2)), (5, 17))
        b = lax.dynamic_update_slice(x, u, (i[2], np.int32(0)))
        c = lax.gather(x, i[:, None], gather, slice_sizes=(1, 33))
        d = lax.scatter_add(x, i[:, None], v, scatter)
        e = lax.scatter(x, i[:, None] - 2, v, scatter)
        return a, b, c, d, e
    jit_both(f, x, u, idx, v)


def test_bitcast_convert_between_sizes():
    x = np.arange(-5, 19, dtype=np.float32)
    jit_both(lambda x: (lax.bitcast_convert_type(x, jnp.uint8),
                        lax.bitcast_convert_type(lax.bitcast_convert_type(x, jnp.uint16),
                                                 jnp.float32)), x)


# ------------------------------------------------------------------------------ dots

@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (17, 33, 65), (64, 3, 31), (5, 130, 2)])
def test_dots_of_odd_sizes_and_transposed_operands(m, k, n):
    rng = np.random.default_rng(m * k * n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)

    def f(a, b):
        return (a @ b, (b.T @ a.T), jnp.tanh(a @ b + 1.0),
                lax.dot_general(a, b.T, (((1,), (1,)), ((), ()))))
    jit_both(f, a, b, tolerance=1e-4)


def test_batched_dot_general_and_integer_dots():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 7, 5)).astype(np.float64)
    b = rng.standard_normal((5, 3, 9)).astype(np.float64)
    i = rng.integers(-5, 5, (4, 6)).astype(np.int32)
    j = rng.integers(-5, 5, (6, 3)).astype(np.int32)
    jit_both(lambda a, b, i, j: (lax.dot_general(a, b, (((2,), (0,)), ((0,), (1,)))), i @ j),
             a, b, i, j)


def test_non_default_layouts_dot_transposed_and_reduced():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((33, 20)).astype(np.float32)
    b = rng.standard_normal((20, 17)).astype(np.float32)
    x = rng.standard_normal((19, 40)).astype(np.float32)
    jit_both(lambda a, b, x: (jnp.transpose(a @ b) * 2.0, jnp.sum(jnp.transpose(x), axis=1)),
             a, b, x, tolerance=1e-4)


# ---------------------------------------------------------------------- control flow

def test_while_loops_conditionals_and_scans():
    x = np.linspace(-1, 1.5, 37).astype(np.float32)

    def f(x):
        a = lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i.astype(jnp.float32), x)
        b = lax.while_loop(lambda c: c[1] < 7, lambda c: (c[0] + 1.0, c[1] + 2), (x, 0))
        c = lax.cond(jnp.sum(x) > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
        d = lax.switch(jnp.int32(5), [lambda v: v + 1.0, lambda v: v * 3.0], x)
        e = lax.scan(lambda c, v: (c + v, c * v), jnp.float32(0), x)
        return a, b, c, d, e
    jit_both(f, x)


@pytest.mark.parametrize("seed", range(4))
def test_while_bodies_whose_results_trade_buffers(seed):
    # Regression: a result placed in a donated parameter's buffer that another result is
    # then copied into; and state elements that swap places (a cycle of moves).
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, 1 + seed)).astype(np.float32)
    y = rng.standard_normal((1, 1 + seed)).astype(np.float32)

    def f(x, y):
        def cell(c, _):
            a, b = c
            return (a * y + 0.5 * b, jnp.sin(b)), a + b
        carry, ys = lax.scan(cell, (x, x * 0.5), None, length=1 + seed)
        swapped = lax.fori_loop(0, 3, lambda i, c: (c[1], c[0] * 2.0), (x, y))
        return carry, ys, swapped
    jit_both(f, x, y)


def test_results_that_are_parameters_constants_or_the_same_value_twice():
    x = np.arange(6, dtype=np.float32)
    jit_both(lambda x: (x, jnp.float32(3.0) * jnp.ones(4), x * 2, x * 2, jnp.reshape(x * 2,
                                                                                  (2, 3))), x)


def test_empty_and_scalar_shapes():
    jit_both(lambda x, y: (x * 2, jnp.sum(x), y + 1, jnp.sum(y)),
             np.zeros((0, 5), np.float32), np.float32(3))


def test_run_returns_fresh_arrays_and_leaves_arguments_alone():
    x = np.arange(40, dtype=np.float32)
    before = x.copy()
    out = run_cpu(module("""
    %x = f32[40] parameter(0)
    ROOT %y = f32[40] negate(%x)
    """), [x])[0]
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(out, -before)


# ------------------------------------------------- sort, windows, select-and-scatter

_COMPARATORS = """
%less (a0: f32[], b0: f32[], a1: s32[], b1: s32[]) -> pred[] {
  %a0 = f32[] parameter(0)
  %b0 = f32[] parameter(1)
  %a1 = s32[] parameter(2)
  %b1 = s32[] parameter(3)
  ROOT %lt = pred[] compare(%a0, %b0), direction=LT, type=TOTALORDER
}
%ge (x: f32[], y: f32[]) -> pred[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %c = pred[] compare(%x, %y), direction=GE
}
%add (p: f32[], q: f32[]) -> f32[] {
  %p = f32[] parameter(0)
  %q = f32[] parameter(1)
  ROOT %s = f32[] add(%p, %q)
}
"""


def _sort_attrs(dim: int) -> str:
    return f"dimensions={{{dim}}}, is_stable=true, to_apply=%less"


@pytest.mark.parametrize("dims,dim", [((5, 37), 1), ((300,), 0), ((4, 3, 6), 0), ((2, 1), 1)])
def test_sort_is_stable_with_payload(dims, dim):
    rng = np.random.default_rng(len(dims))
    text = ",".join(map(str, dims))
    m = module(f"""
    %x = f32[{text}] parameter(0)
    %i = s32[{text}] parameter(1)
    ROOT %s = (f32[{text}], s32[{text}]) sort(%x, %i), {_sort_attrs(dim)}
    """, _COMPARATORS)
    x = rng.integers(-3, 4, dims).astype(np.float32)  # many ties: stability shows
    x.flat[::7] = np.nan
    compare(m, [x, np.arange(int(np.prod(dims)), dtype=np.int32).reshape(dims)])


def test_reduce_window_and_select_and_scatter():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 9)).astype(np.float32)
    x[0, :3] = x[0, 3]  # ties: the first of equals is selected
    pool = "window={size=2x3 stride=2x2 pad=0_1x1_1}"
    dilated = "window={size=3x2 pad=1_1x0_1 rhs_dilate=2x1}"
    m = module(f"""
    %x = f32[8,9] parameter(0)
    %src = f32[4,5] parameter(1)
    %zero = f32[] constant(0)
    %ninf = f32[] constant(-inf)
    %w = f32[4,5] reduce-window(%x, %ninf), {pool}, to_apply=%add
    %d = f32[6,9] reduce-window(%x, %zero), {dilated}, to_apply=%add
    %s = f32[8,9] select-and-scatter(%x, %src, %zero), {pool}, select=%ge, scatter=%add
    ROOT %t = (f32[4,5], f32[6,9], f32[8,9]) tuple(%w, %d, %s)
    """, _COMPARATORS)
    compare(m, [x, rng.standard_normal((4, 5)).astype(np.float32)])


def test_convolutions_with_padding_dilation_and_groups():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 9, 10, 4)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 6)).astype(np.float32)
    v = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)

    def f(x, w, v):
        grouped = lax.conv_general_dilated(x, w, (1, 2), "SAME", rhs_dilation=(2, 1),
                                           feature_group_count=2,
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
        dilated = lax.conv_general_dilated(x, v, (2, 1), [(1, 0), (2, 1)],
                                           lhs_dilation=(2, 1),
                                           dimension_numbers=("NHWC", "HWIO", "NCHW"))
        # Through im2col and the GEMM: NHWC/HWIO, padding, stride, window dilation, and
        # blocks of pixels that do not divide the result.
        plain = lax.conv_general_dilated(x, jnp.concatenate([w, w], axis=2), (2, 1),
                                         [(2, 1), (0, 2)], rhs_dilation=(1, 2),
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return grouped, dilated, plain
    jit_both(f, x, w, v, tolerance=1e-4)


def test_large_convolution_blocks_through_the_gemm():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((3, 37, 29, 16)).astype(np.float32)
    w = rng.standard_normal((3, 3, 16, 24)).astype(np.float32)
    f = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",  # noqa: E731
                                              dimension_numbers=("NHWC", "HWIO", "NHWC"))
    assert "gemm." in jax.jit(f, device=CPU).lower(x, w).compile().runtime_executable().text(
        "llvm")
    jit_both(f, x, w, tolerance=1e-4)


def test_fresh_names_of_digit_ending_hints_never_collide():
    builder = FunctionBuilder("f", [])
    names = []
    for _ in range(120):
        names += [builder.fresh("p1"), builder.fresh("p")]
    assert len(set(names)) == len(names)
