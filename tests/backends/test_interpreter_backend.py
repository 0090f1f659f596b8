"""The interpreter backend through the runtime interface: buffers, compilation, execution,
texts, cost and memory analysis, donation, errors."""
from __future__ import annotations

import numpy as np
import pytest

from jaxlite.backends.base import CompileOptions, MemoryAnalysis
from jaxlite.backends.interpreter import InterpreterBuffer, InterpreterClient
from jaxlite.xla.ir import ComputationBuilder, HloModule, NameUniquer
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
from jaxlite.xla.verifier import HloVerificationError

F32 = np.dtype(np.float32)


@pytest.fixture
def client():
    return InterpreterClient()


def module_of(build, name="m"):
    """A module whose entry `build(builder)` fills and returns the root of."""
    builder = ComputationBuilder("main", NameUniquer())
    return HloModule(name, builder.build(build(builder)))


def add_and_scale(b):
    shape = Shape(F32, (2, 3))
    x, y = b.parameter(shape, "x"), b.parameter(shape, "y")
    total = b.add(Opcode.ADD, shape, (x, y))
    return b.add(Opcode.TUPLE, Shape.tuple([shape, shape]),
                 (total, b.add(Opcode.MULTIPLY, shape, (total, x))))


def dot_tanh_sum(b):
    lhs = b.parameter(Shape(F32, (4, 8)), "a")
    rhs = b.parameter(Shape(F32, (8, 16)), "b")
    dot = b.add(Opcode.DOT, Shape(F32, (4, 16)), (lhs, rhs),
                {"lhs_contracting": (1,), "rhs_contracting": (0,), "lhs_batch": (),
                 "rhs_batch": ()})
    tanh = b.add(Opcode.TANH, Shape(F32, (4, 16)), (dot,))
    zero = b.add(Opcode.CONSTANT, Shape(F32, ()), attrs={"literal": np.array(0, F32)})
    reducer_builder = ComputationBuilder("add_f32", b.names)
    scalar = Shape(F32, ())
    p, q = reducer_builder.parameter(scalar, "p"), reducer_builder.parameter(scalar, "q")
    reducer = reducer_builder.build(reducer_builder.add(Opcode.ADD, scalar, (p, q)))
    return b.add(Opcode.REDUCE, Shape(F32, (16,)), (tanh, zero), {"dimensions": (0,)},
                 called=(reducer,))


def test_the_client(client):
    assert client.platform == "interpreter"
    assert "numpy" in client.platform_version
    (device,) = client.devices()
    assert device.client is client and device.id == 0 and device.platform == "interpreter"
    assert repr(device) == "InterpreterDevice(id=0)"
    assert client.device_count() == 1 and client.local_devices() == [device]


def test_buffers_wrap_numpy_arrays_without_copying(client):
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    buffer = client.buffer_from_numpy(array)
    assert isinstance(buffer, InterpreterBuffer)
    assert buffer.to_numpy() is array and not array.flags.writeable
    assert buffer.shape == (2, 3) and buffer.dtype == np.float32 and buffer.nbytes == 24
    assert buffer.device is client.devices()[0]
    assert buffer.is_ready() and buffer.block_until_ready() is buffer
    assert "float32[2,3]" in repr(buffer)
    assert not buffer.is_deleted()
    buffer.delete()
    assert buffer.is_deleted() and "deleted" in repr(buffer)
    with pytest.raises(RuntimeError, match="deleted"):
        buffer.to_numpy()


def test_buffers_belong_to_the_clients_devices(client):
    other = InterpreterClient()
    with pytest.raises(ValueError, match="does not belong"):
        client.buffer_from_numpy(np.zeros(2), other.devices()[0])


def test_compile_and_execute(client):
    executable = client.compile(module_of(add_and_scale), CompileOptions())
    assert executable.client is client and executable.num_parameters == 2
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    outs = executable.execute([client.buffer_from_numpy(x.copy()),
                               client.buffer_from_numpy(y)])
    assert len(outs) == 2 and all(isinstance(o, InterpreterBuffer) for o in outs)
    np.testing.assert_array_equal(outs[0].to_numpy(), x + 1)
    np.testing.assert_array_equal(outs[1].to_numpy(), (x + 1) * x)


def test_a_single_result_is_one_buffer(client):
    executable = client.compile(module_of(dot_tanh_sum), CompileOptions())
    a = np.full((4, 8), 0.01, np.float32)
    b = np.ones((8, 16), np.float32)
    (out,) = executable.execute([client.buffer_from_numpy(a), client.buffer_from_numpy(b)])
    np.testing.assert_allclose(out.to_numpy(), np.tanh(a @ b).sum(0), rtol=1e-6)


def test_execute_checks_its_arguments(client):
    executable = client.compile(module_of(add_and_scale), CompileOptions())
    good = client.buffer_from_numpy(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="takes 2 arguments, got 1"):
        executable.execute([good])
    wrong = client.buffer_from_numpy(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"argument 1 \(y.*\) expects f32\[2,3\]"):
        executable.execute([good, wrong])
    wrong_type = client.buffer_from_numpy(np.zeros((2, 3), np.int32))
    with pytest.raises(ValueError, match="argument 1"):
        executable.execute([good, wrong_type])
    gone = client.buffer_from_numpy(np.zeros((2, 3), np.float32))
    gone.delete()
    with pytest.raises(RuntimeError, match="argument 1 is a deleted buffer"):
        executable.execute([good, gone])


def test_donated_buffers_are_deleted(client):
    options = CompileOptions(donated_parameters=(1,))
    executable = client.compile(module_of(add_and_scale), options)
    x = client.buffer_from_numpy(np.ones((2, 3), np.float32))
    y = client.buffer_from_numpy(np.ones((2, 3), np.float32))
    outs = executable.execute([x, y])
    assert not x.is_deleted() and y.is_deleted()
    np.testing.assert_array_equal(outs[0].to_numpy(), np.full((2, 3), 2.0))
    with pytest.raises(ValueError, match="out of range"):
        client.compile(module_of(add_and_scale), CompileOptions(donated_parameters=(2,)))


def test_texts_before_and_after_the_passes(client):
    executable = client.compile(module_of(add_and_scale, "texts"), CompileOptions())
    hlo = executable.text("hlo")
    assert hlo.startswith("HloModule texts") and "ENTRY" in hlo and "add(" in hlo
    assert "ENTRY" in executable.text("optimized_hlo")
    assert executable.text() == executable.text("optimized_hlo")
    assert executable.hlo_module(optimized=False).name == "texts"
    with pytest.raises(ValueError, match="no stage 'llvm'.*'hlo', 'optimized_hlo'"):
        executable.text("llvm")
    with pytest.raises(ValueError, match="not a known stage"):
        executable.text("bogus")


def test_cost_analysis(client):
    costs = client.compile(module_of(dot_tanh_sum), CompileOptions()).cost_analysis()
    assert {"flops", "transcendentals", "bytes accessed"} <= set(costs)
    # dot: 2*4*16*8 multiply-adds; reduce over 4 rows of 16: 48 additions by XLA's count
    # (one per element reduced into an existing value), 64 by one per input element
    assert 2 * 4 * 16 * 8 + 48 <= costs["flops"] <= 2 * 4 * 16 * 8 + 64
    assert costs["transcendentals"] == 4 * 16
    unoptimized = client.compile(module_of(add_and_scale), CompileOptions())
    # add reads 2 and writes 1 f32[2,3], multiply the same: 6 * 24 bytes
    if unoptimized.hlo_module().entry.instructions == \
            unoptimized.hlo_module(optimized=False).entry.instructions:
        assert unoptimized.cost_analysis()["bytes accessed"] == 6 * 24
    assert unoptimized.cost_analysis()["bytes accessed0{}"] == 24


def test_memory_analysis(client):
    stats = client.compile(module_of(add_and_scale), CompileOptions()).memory_analysis()
    assert isinstance(stats, MemoryAnalysis)
    assert (stats.argument_size_in_bytes, stats.output_size_in_bytes,
            stats.alias_size_in_bytes, stats.temp_size_in_bytes) == (48, 48, 0, 0)
    assert stats.peak_memory_in_bytes == 96
    donated = client.compile(module_of(add_and_scale),
                             CompileOptions(donated_parameters=(0, 1))).memory_analysis()
    assert donated.alias_size_in_bytes == 48


def test_verification_after_the_passes(client):
    def wrong_shape(b):
        x = b.parameter(Shape(F32, (2, 3)), "x")
        return b.add(Opcode.NEGATE, Shape(F32, (3, 2)), (x,))
    with pytest.raises(HloVerificationError, match="negate"):
        client.compile(module_of(wrong_shape), CompileOptions(verify=True))
