"""The kernel interpreter's semantics (shuffles, barriers, shared memory, atomics, vector
accesses, C arithmetic) and the undefined behaviour it reports, on hand-written kernels."""
from __future__ import annotations

import numpy as np
import pytest

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu.kernel_interpreter import KernelError, run_kernel

THREAD, BLOCK = ir.Builtin("thread"), ir.Builtin("block")
c = ir.index_const


def _b(op, a, b):
    return ir.Binary(op, a, b)


def block_sum_kernel(warp: int = 32, block: int = 128, barrier: bool = True) -> ir.Kernel:
    """out[0] += the sum of x[0:n] (grid stride, shuffles, shared memory, an atomic)."""
    x, out = ir.Buffer("x", "float32"), ir.Buffer("out", "float32")
    partials = ir.Buffer("partials", "float32", "shared", block // warp)
    acc, i, n = ir.Var("acc", "float32"), ir.Var("i", "int32"), ir.Var("n", "int32")
    first = _b("add", _b("mul", BLOCK, ir.Builtin("block_dim")), THREAD)
    step = _b("mul", ir.Builtin("block_dim"), ir.Builtin("grid_dim"))
    body = [ir.Let(acc, ir.Const(0.0, "float32")),
            ir.For(i, first, n, step, (ir.Assign(acc, _b("add", acc, ir.Load(x, i))),))]
    offset = warp // 2
    while offset:
        other = ir.Var(f"other{offset}", "float32")
        body += [ir.Shuffle(other, "xor", acc, offset), ir.Assign(acc, _b("add", acc, other))]
        offset //= 2
    lane_zero = _b("eq", _b("rem", THREAD, c(warp)), c(0))
    body += [ir.If(lane_zero, (ir.Store(partials, _b("div", THREAD, c(warp)), acc),))]
    body += [ir.Barrier()] if barrier else []
    total = ir.Load(partials, c(0))
    for w in range(1, block // warp):
        total = _b("add", total, ir.Load(partials, c(w)))
    body += [ir.If(_b("eq", THREAD, c(0)), (ir.AtomicAdd(out, c(0), total),))]
    return ir.Kernel("block_sum", (x, out, n), tuple(body), grid=3, block=block,
                     warp_size=warp, shared=(partials,))


@pytest.mark.parametrize("warp", [32, 64])
def test_block_sum_with_shuffles_shared_memory_and_atomics(warp):
    x = np.arange(1000, dtype=np.float32) / 7
    out = np.zeros(1, np.float32)
    run_kernel(block_sum_kernel(warp), {"x": x, "out": out}, {"n": 1000})
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-6)


def test_missing_barrier_is_a_shared_memory_race():
    x, out = np.ones(256, np.float32), np.zeros(1, np.float32)
    with pytest.raises(KernelError) as error:
        run_kernel(block_sum_kernel(barrier=False), {"x": x, "out": out}, {"n": 256})
    assert str(error.value).startswith("race on shared partials[1]: thread 32 writes")


def _one_block(body, warp=32, block=32, buffers=(), shared=()):
    return ir.Kernel("k", tuple(buffers), tuple(body), grid=1, block=block, warp_size=warp,
                     shared=tuple(shared))


@pytest.mark.parametrize("warp", [32, 64])
def test_shuffle_down_keeps_its_own_value_past_the_warp_end(warp):
    out = ir.Buffer("out", "int32")
    got = ir.Var("got", "int32")
    body = [ir.Shuffle(got, "down", _b("mul", THREAD, c(10)), 3), ir.Store(out, THREAD, got)]
    result = np.zeros(warp, np.int32)
    run_kernel(_one_block(body, warp, warp, [out]), {"out": result})
    lanes = np.arange(warp)
    np.testing.assert_array_equal(result, np.where(lanes + 3 < warp, lanes + 3, lanes) * 10)


def test_shuffle_in_a_branch_only_some_lanes_take_is_divergent():
    out = ir.Buffer("out", "int32")
    got = ir.Var("got", "int32")
    body = [ir.If(_b("lt", THREAD, c(16)), (ir.Shuffle(got, "xor", THREAD, 1),
                                             ir.Store(out, THREAD, got)))]
    with pytest.raises(KernelError) as error:
        run_kernel(_one_block(body, buffers=[out]), {"out": np.zeros(32, np.int32)})
    assert "divergent shuffle" in str(error.value)


def test_barrier_in_a_branch_only_some_threads_take_is_divergent():
    body = [ir.If(_b("lt", THREAD, c(32)), (ir.Barrier(),))]
    with pytest.raises(KernelError) as error:
        run_kernel(_one_block(body, block=64), {})
    assert "divergent barrier" in str(error.value)


def test_shared_memory_written_before_a_barrier_is_read_after_it():
    out = ir.Buffer("out", "int32")
    tile = ir.Buffer("tile", "int32", "shared", 64)
    # reverse 64 values through shared memory
    body = [ir.Store(tile, THREAD, _b("mul", THREAD, THREAD)), ir.Barrier(),
            ir.Store(out, THREAD, ir.Load(tile, _b("sub", c(63), THREAD)))]
    result = np.zeros(64, np.int32)
    run_kernel(_one_block(body, block=64, buffers=[out], shared=[tile]), {"out": result})
    np.testing.assert_array_equal(result, (63 - np.arange(64)) ** 2)


def test_two_threads_writing_one_global_element_race():
    out = ir.Buffer("out", "int32")
    body = [ir.Store(out, _b("div", THREAD, c(2)), THREAD)]
    with pytest.raises(KernelError) as error:
        run_kernel(_one_block(body, buffers=[out]), {"out": np.zeros(16, np.int32)})
    assert str(error.value) == ("race on global out[0]: written by block 0 thread 0 and "
                                "block 0 thread 1")


def test_out_of_bounds_and_misaligned_accesses_are_errors():
    out = ir.Buffer("out", "float32")
    lanes = tuple(ir.Var(f"x{k}", "float32") for k in range(4))
    with pytest.raises(KernelError) as error:
        past_the_end = ir.Store(out, _b("add", THREAD, c(1)), ir.Const(1.0, "float32"))
        run_kernel(_one_block([past_the_end], buffers=[out]), {"out": np.zeros(32, np.float32)})
    assert str(error.value) == "access of out[32:33] out of bounds (size 32)"
    misaligned = [ir.If(_b("eq", THREAD, c(0)), (ir.VectorLoad(lanes, out, c(2)),))]
    with pytest.raises(KernelError) as error:
        run_kernel(_one_block(misaligned, buffers=[out]), {"out": np.zeros(8, np.float32)})
    assert str(error.value) == "vector access of 4 elements at out[2] is not aligned"


def test_a_vector_access_to_a_buffer_starting_off_its_boundary_is_an_error():
    # (index 0 of x[1:]: aligned by index, but a GPU faults on the address)
    out = ir.Buffer("out", "float32")
    lanes = tuple(ir.Var(f"x{k}", "float32") for k in range(4))
    load = [ir.If(_b("eq", THREAD, c(0)), (ir.VectorLoad(lanes, out, c(0)),))]
    whole = np.zeros(9, np.float32)
    run_kernel(_one_block(load, buffers=[out]), {"out": whole[:8]})
    with pytest.raises(KernelError) as error:
        run_kernel(_one_block(load, buffers=[out]), {"out": whole[1:]})
    assert str(error.value).startswith("vector access of 4 elements at out[0] is not "
                                       "aligned: the buffer starts at address 0x")


def test_vector_load_and_store_move_consecutive_elements():
    source, target = ir.Buffer("src", "bfloat16"), ir.Buffer("dst", "bfloat16")
    lanes = tuple(ir.Var(f"x{k}", "bfloat16") for k in range(8))
    base = _b("mul", THREAD, c(8))
    body = [ir.VectorLoad(lanes, source, base),
            ir.VectorStore(target, base, tuple(reversed(lanes)))]
    bf16 = ir.dtype_of("bfloat16")
    src = np.arange(256).astype(bf16)
    dst = np.zeros(256, bf16)
    run_kernel(_one_block(body, buffers=[source, target]), {"src": src, "dst": dst})
    np.testing.assert_array_equal(dst.reshape(32, 8), src.reshape(32, 8)[:, ::-1])


def _scalar(expr: ir.Expr):
    out = ir.Buffer("out", expr.dtype)
    result = np.zeros(1, ir.dtype_of(expr.dtype))
    body = [ir.If(_b("eq", THREAD, c(0)), (ir.Store(out, c(0), expr),))]
    run_kernel(_one_block(body, buffers=[out]), {"out": result})
    return result[0]


def test_c_arithmetic():
    i = lambda v: ir.Const(v, "int32")  # noqa: E731
    assert _scalar(_b("div", i(-7), i(2))) == -3        # truncates toward zero
    assert _scalar(_b("rem", i(-7), i(2))) == -1
    assert _scalar(_b("add", i(2**31 - 1), i(1))) == -2**31  # wraps
    assert _scalar(ir.Cast(ir.Const(-2.9, "float32"), "int32")) == -2
    assert _scalar(ir.Cast(ir.Const(300, "int32"), "uint8")) == 44
    nan = ir.Const(float("nan"), "float32")
    assert np.isnan(_scalar(_b("max", nan, ir.Const(1.0, "float32"))))
    assert _scalar(ir.Unary("round", ir.Const(-2.5, "float32"))) == -3.0
    assert _scalar(ir.Unary("rint", ir.Const(-2.5, "float32"))) == -2.0


@pytest.mark.parametrize("expr, message", [
    (_b("div", ir.Const(1, "int32"), ir.Const(0, "int32")), "integer division by zero"),
    (_b("shl", ir.Const(1, "int32"), ir.Const(32, "int32")), "shift by 32 of a 32-bit value"),
    (ir.Cast(ir.Const(3e9, "float32"), "int32"), "cast of 3000000000.0 to int32 is out"),
])
def test_undefined_arithmetic_is_an_error(expr, message):
    with pytest.raises(KernelError) as error:
        _scalar(expr)
    assert str(error.value).startswith(message)


def test_ir_types_are_checked_when_built():
    with pytest.raises(TypeError) as error:
        _b("add", ir.Const(1, "int32"), ir.Const(1.0, "float32"))
    assert str(error.value).startswith("add of int32 and float32")
    with pytest.raises(ValueError) as error:
        ir.Kernel("k", (), (), grid=1, block=48)
    assert str(error.value) == "a block of 48 threads is not a whole number of 32-lane warps"
