"""The generated GEMM (jaxlite/backends/cpu/gemm*.py) against numpy.

Random shapes (1..300 in each dimension), every transposition, batch dims, explicit strides,
float32 and float64, alpha/beta, fused epilogues, empty sizes, the per-range entry point and
buffers between guard pages. The tolerance is the forward error bound of a length-k dot
product in the dtype: |C - ref| <= eps * ((k + 2) |alpha| (|A| @ |B|) + ...).
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import functools
import itertools
import mmap

import llvmlite.binding as llvm
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from llvmlite import ir

from jaxlite.backends.cpu import llvm_target
from jaxlite.backends.cpu.gemm_plan import LANES
from jaxlite.backends.cpu.gemm import (
    Epilogue,
    GemmBlocking,
    GemmSpec,
    bias_add,
    build_gemm,
    chain,
    emit_gemm,
    plan_gemm,
    relu,
    scale,
    scale_by,
    vector_call,
)

# Compiled modules stay alive for the whole session: they are few, and an execution engine
# must not be freed while another one still uses the shared target machine.
_MODULES: list[llvm_target.CompiledModule] = []
_CTYPES = {"ptr": ctypes.c_void_p, "i64": ctypes.c_int64, "float32": ctypes.c_float,
           "float64": ctypes.c_double}


@functools.cache
def _compile(spec: GemmSpec) -> llvm_target.CompiledModule:
    module = llvm_target.compile_ir(emit_gemm(spec))
    _MODULES.append(module)
    return module


def _function(module: llvm_target.CompiledModule, name: str, params: list[tuple[str, str]]):
    return module.function(name, None, *[_CTYPES[kind] for _, kind in params])


def _scratch(nbytes: int) -> np.ndarray:
    raw = np.zeros(nbytes + 64, np.uint8)
    offset = -raw.ctypes.data % 64
    return raw[offset:offset + nbytes]


def _pointer(value):
    return value.ctypes.data if isinstance(value, np.ndarray) else value


def run_gemm(spec: GemmSpec, a: np.ndarray, b: np.ndarray, c: np.ndarray, *extra,
             chunks: list[tuple[int, int]] | None = None,
             module: llvm_target.CompiledModule | None = None) -> np.ndarray:
    """Call the GEMM of `spec` on the buffers (in place on `c`); by ranges if `chunks`."""
    plan = plan_gemm(spec)
    module = module or _compile(spec)
    scratch = _scratch(plan.scratch_bytes)
    operands = [_pointer(x) for x in (a, b, c, *extra)]
    if chunks is None:
        fn = _function(module, plan.full_name, plan.full_params())
        fn(*operands, *([scratch.ctypes.data] if spec.scratch == "argument" else []))
    else:
        fn = _function(module, plan.range_name, plan.range_params())
        for start, end in chunks:
            fn(*operands, scratch.ctypes.data, start, end)
    return c


def _operands(rng, batch, m, n, k, dtype, transpose_a, transpose_b):
    a_shape = (batch, k, m) if transpose_a else (batch, m, k)
    b_shape = (batch, n, k) if transpose_b else (batch, k, n)
    a = rng.uniform(-1, 1, a_shape).astype(dtype)
    b = rng.uniform(-1, 1, b_shape).astype(dtype)
    op_a = np.swapaxes(a, 1, 2) if transpose_a else a
    op_b = np.swapaxes(b, 1, 2) if transpose_b else b
    return a, b, op_a, op_b


def assert_gemm_close(got, op_a, op_b, expected, dtype, *, alpha=1.0, beta=0.0, c0=None):
    """|got - expected| within the dtype's error bound for the product of op_a and op_b.

    A length-k sum of products in any order is within k * u * (|A| @ |B|) of the exact value
    (u = eps / 2, first order); the float64 reference has the same bound for float64, so
    k * eps covers both, plus a few roundings for alpha, beta and the epilogue.
    """
    eps = np.finfo(dtype).eps
    k = op_a.shape[-1]
    magnitude = np.matmul(np.abs(op_a).astype(np.float64), np.abs(op_b).astype(np.float64))
    bound = (k + 2) * abs(alpha) * magnitude + np.abs(expected)
    if c0 is not None:
        bound = bound + 2 * abs(beta) * np.abs(c0)
    bound = eps * bound + np.finfo(dtype).tiny
    error = np.abs(got.astype(np.float64) - expected)
    worst = np.unravel_index(np.argmax(error - bound), error.shape) if error.size else ()
    assert np.all(error <= bound), (
        f"error {error[worst]} > bound {bound[worst]} at {worst}; got {got[worst]}, "
        f"expected {expected[worst]}")


def _reference(op_a, op_b, alpha=1.0, beta=0.0, c0=None):
    product = np.matmul(op_a.astype(np.float64), op_b.astype(np.float64))
    out = alpha * product
    if beta != 0.0:
        out = out + beta * c0.astype(np.float64)
    return out


def check_random_gemm(m, n, k, dtype, transpose_a, transpose_b, batch=1, seed=0, **spec_kw):
    rng = np.random.default_rng(seed)
    a, b, op_a, op_b = _operands(rng, batch, m, n, k, dtype, transpose_a, transpose_b)
    spec = GemmSpec("gemm", m, n, k, dtype=dtype, batch=batch, transpose_a=transpose_a,
                    transpose_b=transpose_b, **spec_kw)
    c0 = rng.uniform(-1, 1, (batch, m, n)).astype(dtype)
    got = run_gemm(spec, a, b, c0.copy())
    alpha, beta = spec.alpha, spec.beta
    expected = _reference(op_a, op_b, alpha, beta, c0)
    assert_gemm_close(got, op_a, op_b, expected, dtype, alpha=alpha, beta=beta, c0=c0)


@given(m=st.integers(1, 300), n=st.integers(1, 300), k=st.integers(1, 300),
       dtype=st.sampled_from(["float32", "float64"]), transpose_a=st.booleans(),
       transpose_b=st.booleans(), batch=st.integers(1, 3))
def test_random_shapes_against_numpy(m, n, k, dtype, transpose_a, transpose_b, batch):
    check_random_gemm(m, n, k, dtype, transpose_a, transpose_b, batch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("shape", [(1, 1, 1), (37, 53, 29), (130, 97, 600), (8, 48, 512)])
def test_transpositions(shape, transpose_a, transpose_b, dtype):
    check_random_gemm(*shape, dtype, transpose_a, transpose_b)


@pytest.mark.parametrize("shape", [(1, 300, 7), (300, 1, 7), (1, 1, 300), (17, 3, 1),
                                   (9, 49, 2), (16, 48, 1040)])
def test_thin_and_edge_shapes(shape):
    check_random_gemm(*shape, "float32", False, False, batch=2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (False, True),
                                                      (True, False), (True, True)])
@pytest.mark.parametrize("shape", [(1, 70, 130), (70, 1, 130), (3, 200, 40), (1, 1, 77),
                                   (1, 33, 1), (5, 1, 17)])
def test_matrix_vector_and_few_row_shapes(shape, transpose_a, transpose_b, dtype):
    """The swapped (n == 1), dot-product (one row, B along k) and unpacked-B paths."""
    check_random_gemm(*shape, dtype, transpose_a, transpose_b, batch=2, alpha=0.5, beta=-1.0)


@pytest.mark.parametrize("shape, transpose_a, transpose_b, swapped, dot_form, pack_b", [
    ((70, 1, 130), False, False, True, True, False),
    ((70, 1, 130), True, False, True, False, False),
    ((1, 70, 130), False, True, False, True, False),
    ((1, 70, 130), False, False, False, False, False),
    ((3, 200, 40), False, False, False, False, False),
    ((30, 200, 40), False, False, False, False, True),
])
def test_plan_picks_the_matrix_vector_paths(shape, transpose_a, transpose_b, swapped, dot_form,
                                            pack_b):
    plan = plan_gemm(GemmSpec("paths", *shape, transpose_a=transpose_a,
                              transpose_b=transpose_b))
    assert (plan.swapped, plan.dot_form, plan.pack_b) == (swapped, dot_form, pack_b)


def test_matrix_vector_with_an_epilogue_is_not_swapped():
    spec = GemmSpec("mv_bias", 50, 1, 30, epilogue=bias_add())
    assert not plan_gemm(spec).swapped
    rng = np.random.default_rng(9)
    _, _, op_a, op_b = _operands(rng, 1, 50, 1, 30, "float32", False, False)
    bias = np.array([0.25], np.float32)
    got = run_gemm(spec, op_a[0], op_b[0], np.zeros((50, 1), np.float32), bias)
    assert_gemm_close(got, op_a[0], op_b[0], _reference(op_a[0], op_b[0]) + 0.25, "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_alpha_beta_over_several_k_blocks(dtype):
    blocking = GemmBlocking(kc=32, mc=16, nc=48)
    check_random_gemm(45, 70, 100, dtype, False, True, batch=2, alpha=-1.5, beta=0.25,
                      blocking=blocking)


@pytest.mark.parametrize("blocking", [GemmBlocking(mr=12, nv=2), GemmBlocking(mr=4, nv=6),
                                      GemmBlocking(mr=1, nv=1, kc=7, mc=5, nc=20, unroll=2),
                                      GemmBlocking(mr=6, nv=4, kc=64, mc=30, nc=128,
                                                   prefetch_c=False)])
def test_other_blockings(blocking):
    check_random_gemm(61, 150, 140, "float32", True, False, blocking=blocking)


def test_explicit_strides_for_views_and_middle_batch_dims():
    rng = np.random.default_rng(1)
    batch, m, n, k = 3, 21, 35, 19
    a_buffer = rng.uniform(-1, 1, (m, batch, k + 4)).astype(np.float32)   # batch in the middle
    op_a = np.moveaxis(a_buffer[:, :, :k], 1, 0)
    b_buffer = rng.uniform(-1, 1, (batch, n + 2, k)).astype(np.float32)   # B^T, padded rows
    op_b = np.swapaxes(b_buffer[:, :n, :], 1, 2)
    c_buffer = np.full((batch, m, n + 5), 7.0, np.float32)                # padded rows of C
    spec = GemmSpec("strided", m, n, k, batch=batch,
                    a_strides=(k + 4, batch * (k + 4), 1), b_strides=((n + 2) * k, 1, k),
                    c_strides=(m * (n + 5), n + 5, 1))
    run_gemm(spec, a_buffer, b_buffer, c_buffer)
    expected = _reference(op_a, op_b)
    assert_gemm_close(c_buffer[:, :, :n], op_a, op_b, expected, "float32")
    assert np.all(c_buffer[:, :, n:] == 7.0), "wrote into the padding of C"


def test_bias_and_relu_epilogue():
    rng = np.random.default_rng(2)
    m, n, k = 50, 77, 33
    _, _, op_a, op_b = _operands(rng, 1, m, n, k, "float32", False, False)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    spec = GemmSpec("bias_relu", m, n, k, epilogue=chain(bias_add(), relu()))
    got = run_gemm(spec, op_a[0], op_b[0], np.zeros((m, n), np.float32), bias)
    product = _reference(op_a[0], op_b[0])
    expected = np.maximum(product + bias, 0.0)
    assert_gemm_close(got, op_a[0], op_b[0], expected, "float32")
    assert np.all(got >= 0.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scale_epilogues_with_several_k_blocks_and_beta(dtype):
    rng = np.random.default_rng(3)
    m, n, k = 40, 30, 90
    _, _, op_a, op_b = _operands(rng, 1, m, n, k, dtype, True, False)
    c0 = rng.uniform(-1, 1, (m, n)).astype(dtype)
    factor = np.array(-3.0, dtype)
    epilogue = chain(scale(0.5), scale_by("s", dtype), bias_add("row_bias", axis="row"))
    row_bias = rng.uniform(-1, 1, m).astype(dtype)
    spec = GemmSpec("scaled", m, n, k, dtype=dtype, transpose_a=True, beta=1.0,
                    epilogue=epilogue, blocking=GemmBlocking(kc=32))
    a_buffer = np.ascontiguousarray(op_a[0].T)
    got = run_gemm(spec, a_buffer, op_b[0], c0.copy(), float(factor), row_bias)
    expected = (_reference(op_a[0], op_b[0], 1.0, 1.0, c0) * 0.5 * -3.0) + row_bias[:, None]
    assert_gemm_close(got, op_a[0], op_b[0], expected, dtype, alpha=1.5, beta=1.5, c0=c0)


def test_epilogue_calls_a_vector_function_defined_in_the_same_module():
    module = ir.Module(name="with_math")
    vector = ir.VectorType(ir.FloatType(), LANES["float32"])  # the host's vectors
    fn = ir.Function(module, ir.FunctionType(vector, [vector]), name="test_vsquare")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    builder.ret(builder.fmul(fn.args[0], fn.args[0]))
    spec = GemmSpec("squared", 19, 40, 5, epilogue=vector_call("test_vsquare"))
    build_gemm(module, spec)
    compiled = llvm_target.compile_ir(str(module))
    _MODULES.append(compiled)
    rng = np.random.default_rng(4)
    _, _, op_a, op_b = _operands(rng, 1, 19, 40, 5, "float32", False, False)
    got = run_gemm(spec, op_a[0], op_b[0], np.zeros((19, 40), np.float32), module=compiled)
    product = _reference(op_a[0], op_b[0])
    np.testing.assert_allclose(got, product ** 2, rtol=1e-5, atol=1e-6)


def test_several_gemms_share_one_module():
    module = ir.Module(name="executable")
    specs = [GemmSpec("first", 20, 30, 40), GemmSpec("second", 9, 1, 17, dtype="float64"),
             GemmSpec("third", 1, 50, 33, transpose_b=True, epilogue=relu())]
    for spec in specs:
        build_gemm(module, spec)
    compiled = llvm_target.compile_ir(str(module))
    _MODULES.append(compiled)
    rng = np.random.default_rng(11)
    for spec in specs:
        a, b, op_a, op_b = _operands(rng, 1, spec.m, spec.n, spec.k, spec.dtype,
                                     spec.transpose_a, spec.transpose_b)
        got = run_gemm(spec, a, b, np.zeros((1, spec.m, spec.n), spec.dtype), module=compiled)
        expected = _reference(op_a, op_b)
        if spec.epilogue is not None:
            expected = np.maximum(expected, 0.0)
        assert_gemm_close(got, op_a, op_b, expected, spec.dtype)


def test_epilogue_calls_a_vector_function_linked_in_from_another_module():
    spec = GemmSpec("plus_one", 9, 20, 3, epilogue=vector_call("test_vplus_one"))
    gemm_module = llvm.parse_assembly(emit_gemm(spec))
    library = llvm.parse_assembly("""
        define <16 x float> @test_vplus_one(<16 x float> %x) {
          %y = fadd <16 x float> %x, splat (float 1.0)
          ret <16 x float> %y
        }""")
    gemm_module.link_in(library)
    compiled = llvm_target.compile_ir(str(gemm_module))
    _MODULES.append(compiled)
    rng = np.random.default_rng(5)
    _, _, op_a, op_b = _operands(rng, 1, 9, 20, 3, "float32", False, False)
    got = run_gemm(spec, op_a[0], op_b[0], np.zeros((9, 20), np.float32), module=compiled)
    np.testing.assert_allclose(got, _reference(op_a[0], op_b[0]) + 1.0, rtol=1e-5, atol=1e-6)


def test_custom_epilogue_sees_rows_columns_and_the_batch():
    def emit(ctx, x, row, col):
        b = ctx.builder
        lanes = ctx.ops.lanes
        lane = ir.Constant(ir.VectorType(ir.IntType(64), lanes), list(range(lanes)))
        index = b.add(b.mul(ctx.batch, ir.Constant(ir.IntType(64), 1000)),
                      b.mul(row, ir.Constant(ir.IntType(64), 100)))
        index_vector = b.add(_splat_i64(b, index, lanes), b.add(lane, _splat_i64(b, col, lanes)))
        return b.fadd(x, b.sitofp(index_vector, ctx.ops.vector))

    batch, m, n, k = 2, 11, 21, 4
    spec = GemmSpec("indexed", m, n, k, batch=batch, epilogue=Epilogue(emit, (), "index"))
    rng = np.random.default_rng(6)
    a, b, op_a, op_b = _operands(rng, batch, m, n, k, "float32", False, False)
    got = run_gemm(spec, a, b, np.zeros((batch, m, n), np.float32))
    grid = (1000 * np.arange(batch)[:, None, None] + 100 * np.arange(m)[None, :, None]
            + np.arange(n)[None, None, :])
    expected = _reference(op_a, op_b) + grid
    assert_gemm_close(got, op_a, op_b, expected, "float32")


def _splat_i64(b: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    vector = ir.VectorType(ir.IntType(64), lanes)
    one = b.insert_element(ir.Constant(vector, None), value, ir.Constant(ir.IntType(32), 0))
    return b.shuffle_vector(one, ir.Constant(vector, None),
                            ir.Constant(ir.VectorType(ir.IntType(32), lanes), [0] * lanes))


@pytest.mark.parametrize("m, n, k, batch", [(0, 5, 3, 1), (4, 0, 3, 1), (4, 5, 0, 2),
                                            (4, 5, 3, 0), (0, 0, 0, 1)])
def test_empty_sizes(m, n, k, batch):
    spec = GemmSpec("empty", m, n, k, batch=batch, beta=0.5,
                    epilogue=chain(bias_add(), scale(2.0)))
    a = np.ones((max(batch, 1), m, k), np.float32)
    b = np.ones((max(batch, 1), k, n), np.float32)
    c = np.full((max(batch, 1), m, n), 3.0, np.float32)
    bias = np.arange(max(n, 1), dtype=np.float32)
    run_gemm(spec, a, b, c, bias)
    if batch and m and n:   # k == 0: C = epilogue(beta * C)
        np.testing.assert_array_equal(c, np.broadcast_to(2.0 * (1.5 + bias[:n]), c.shape))
    else:
        assert np.all(c == 3.0)


@pytest.mark.parametrize("m, n", [(30, 400), (400, 30)])
def test_ranges_cover_the_work_items_in_any_split(m, n):
    rng = np.random.default_rng(7)
    batch, k = 3, 17
    spec = GemmSpec("ranged", m, n, k, batch=batch, blocking=GemmBlocking(mc=16, nc=96))
    plan = plan_gemm(spec)
    assert plan.split_dim == ("n" if n > m else "m")
    assert plan.items > 3 * batch
    a, b, op_a, op_b = _operands(rng, batch, m, n, k, "float32", False, False)
    cuts = sorted({0, plan.items, *rng.integers(0, plan.items, 5).tolist()})
    chunks = list(itertools.pairwise(cuts))[::-1]
    got = run_gemm(spec, a, b, np.zeros((batch, m, n), np.float32), chunks=chunks)
    assert_gemm_close(got, op_a, op_b, _reference(op_a, op_b), "float32")
    empty = run_gemm(spec, a, b, np.zeros((batch, m, n), np.float32), chunks=[(4, 4), (5, 2)])
    assert not empty.any()


def test_ranges_run_concurrently_on_threads_with_their_own_scratch():
    rng = np.random.default_rng(10)
    batch, m, n, k = 2, 64, 500, 70
    spec = GemmSpec("threaded", m, n, k, batch=batch, transpose_b=True)
    plan = plan_gemm(spec)
    fn = _function(_compile(spec), plan.range_name, plan.range_params())
    a, b, op_a, op_b = _operands(rng, batch, m, n, k, "float32", False, True)
    c = np.zeros((batch, m, n), np.float32)
    cuts = np.linspace(0, plan.items, 5).astype(int)

    def work(start: int, end: int) -> None:
        scratch = _scratch(plan.scratch_bytes)   # one scratch per worker
        fn(a.ctypes.data, b.ctypes.data, c.ctypes.data, scratch.ctypes.data, start, end)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(work, cuts[:-1], cuts[1:]))
    assert_gemm_close(c, op_a, op_b, _reference(op_a, op_b), "float32")


def test_stack_scratch():
    check_random_gemm(33, 65, 20, "float32", False, True, scratch="stack")


def test_plan_reports_scratch_and_signature():
    spec = GemmSpec("sig", 100, 200, 300, dtype="float64", epilogue=bias_add())
    plan = plan_gemm(spec)
    assert plan.full_params() == [("a", "ptr"), ("b", "ptr"), ("c", "ptr"), ("bias", "ptr"),
                                  ("scratch", "ptr")]
    assert plan.range_params()[-2:] == [("start", "i64"), ("end", "i64")]
    block = plan.blocking
    assert plan.scratch_bytes >= (block.mc + block.nc * plan.pack_b) * block.kc * 8
    text = emit_gemm(spec)
    assert 'define void @"sig"' in text and 'define void @"sig.range"' in text
    assert f"llvm.fma.v{LANES['float64']}f64" in text


def test_bad_specs_raise_teaching_errors():
    with pytest.raises(TypeError, match="int32"):
        plan_gemm(GemmSpec("bad", 2, 2, 2, dtype="int32"))
    with pytest.raises(ValueError, match="unit column stride"):
        plan_gemm(GemmSpec("bad", 2, 2, 2, c_strides=(4, 1, 2)))
    with pytest.raises(ValueError, match="transpose_a=False"):
        plan_gemm(GemmSpec("bad", 2, 2, 2, transpose_a=True, a_strides=(4, 1, 2)))
    with pytest.raises(ValueError, match="blocking.unroll=0"):
        plan_gemm(GemmSpec("bad", 2, 2, 2, blocking=GemmBlocking(unroll=0)))
    with pytest.raises(ValueError, match="m=-1"):
        plan_gemm(GemmSpec("bad", -1, 2, 2))
    with pytest.raises(ValueError, match="argument 'x'"):
        chain(scale_by("x"), scale_by("x"))


PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class GuardedBuffer:
    """An array whose first (or last) byte touches a PROT_NONE page: stray accesses fault."""

    def __init__(self, shape: tuple[int, ...], dtype: str, at_end: bool):
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        body = -(-max(nbytes, 1) // PAGE) * PAGE
        self.map = mmap.mmap(-1, body + 2 * PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        for page in (base, base + PAGE + body):
            assert _libc.mprotect(page, PAGE, 0) == 0
        offset = PAGE + (body - nbytes if at_end else 0)
        self.array = np.frombuffer(self.map, dtype, count=int(np.prod(shape)),
                                   offset=offset).reshape(shape)


@pytest.mark.parametrize("at_end", [False, True])
@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, True),
                                                      (False, True)])
@pytest.mark.parametrize("m, n, k", [(19, 37, 13), (1, 37, 13), (37, 1, 21)])
def test_no_access_outside_the_buffers(m, n, k, at_end, transpose_a, transpose_b):
    rng = np.random.default_rng(8)
    batch = 2
    a, b, op_a, op_b = _operands(rng, batch, m, n, k, "float32", transpose_a, transpose_b)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    guarded = [GuardedBuffer(x.shape, "float32", at_end) for x in (a, b, bias)]
    c = GuardedBuffer((batch, m, n), "float32", at_end)
    for buffer, value in zip(guarded, (a, b, bias)):
        buffer.array[...] = value
    c.array[...] = 1.0
    with_bias = n > 1   # a matrix-vector product is swapped only without an epilogue
    spec = GemmSpec("guarded", m, n, k, batch=batch, transpose_a=transpose_a,
                    transpose_b=transpose_b, beta=1.0,
                    epilogue=bias_add() if with_bias else None)
    extra = [guarded[2].array] if with_bias else []
    run_gemm(spec, guarded[0].array, guarded[1].array, c.array, *extra)
    expected = _reference(op_a, op_b) + 1.0 + (bias if with_bias else 0.0)
    assert_gemm_close(c.array, op_a, op_b, expected, "float32", beta=1.0,
                      c0=np.ones_like(c.array))
