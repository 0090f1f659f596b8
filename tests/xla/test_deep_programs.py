"""Deep programs: chains of thousands of operations compile and give the right numbers
(they raised RecursionError in the cpu code generator's recursive walks, and the fusion
planner split them into thousands of tiny overlapping fusions)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.backends.cpu.codegen.input_kernel import emit_input_fusion
from jaxlite.backends.cpu.codegen.kernel import KernelContext
from jaxlite.backends.cpu.codegen.loop_kernel import (emit_loop_fusion,
                                                     emit_loop_fusion_uncached)
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.fusion import fuse, fusions_of
from jaxlite.xla.passes.layout_assignment import (preserves_memory_order,
                                                  reads_only_at_written_offset)
from jaxlite.xla.pipeline import optimize
from jaxlite.xla.shape import Shape

_F32 = Shape(np.dtype(np.float32), (64,))


def _chain(n: int):
    """The program of the bug report: tanh(x) - 0.1 and sin(x) * 0.5 + x, alternating."""
    def f(x):
        for i in range(n):
            x = jnp.sin(x) * 0.5 + x if i % 2 else jnp.tanh(x) - 0.1
        return x
    return f


def _numpy_chain(n: int, x: np.ndarray) -> np.ndarray:
    for i in range(n):
        x = (np.sin(x) * np.float32(0.5) + x if i % 2 else np.tanh(x) - np.float32(0.1))
    return x.astype(np.float32)


def _chain_module(n: int) -> HloModule:
    """An HLO chain of `n` steps x -> tanh(x) - c -> sin(s) * h + s, built directly."""
    x = HloInstruction("x", Opcode.PARAMETER, _F32, attrs={"number": 0})
    scalar = Shape(np.dtype(np.float32), ())
    c = HloInstruction("c", Opcode.CONSTANT, scalar, attrs={"literal": np.float32(0.1)})
    h = HloInstruction("h", Opcode.CONSTANT, scalar, attrs={"literal": np.float32(0.5)})
    bc = HloInstruction("bc", Opcode.BROADCAST, _F32, (c,), {"dimensions": ()})
    bh = HloInstruction("bh", Opcode.BROADCAST, _F32, (h,), {"dimensions": ()})
    out = [x, c, h, bc, bh]
    value = x
    for i in range(n):
        def op(name: str, opcode: Opcode, *operands: HloInstruction) -> HloInstruction:
            inst = HloInstruction(f"{name}.{i}", opcode, _F32, operands)
            out.append(inst)
            return inst
        if i % 2:
            value = op("add", Opcode.ADD,
                       op("mul", Opcode.MULTIPLY, op("sin", Opcode.SIN, value), bh), value)
        else:
            value = op("sub", Opcode.SUBTRACT, op("tanh", Opcode.TANH, value), bc)
    return HloModule("chain", HloComputation("main", tuple(out), value))


def test_deep_chain_fuses_into_few_disjoint_fusions() -> None:
    module = _chain_module(2000)
    fused = fuse(module)
    fusions = fusions_of(fused)
    # About one fusion per 128 fusible instructions (5,000 here), no fragments, no copies
    # of the chain in two fusions.
    assert 20 <= len(fusions) <= 60
    fused_work = sum(1 for f in fusions for i in f.called[0].instructions
                     if i.opcode in (Opcode.SIN, Opcode.TANH))
    assert fused_work == 2000
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    np.testing.assert_array_equal(evaluate_module(fused, [x]), evaluate_module(module, [x]))


def test_short_chain_is_one_fusion() -> None:
    fusions = fusions_of(fuse(_chain_module(40)))
    assert len(fusions) == 1


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_chain_of_2000_ops_compiles_and_matches_numpy(backend: str) -> None:
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    got = np.asarray(jaxlite.jit(_chain(2000), backend=backend)(x))
    # The map is a contraction near its fixed point, so rounding differences between
    # libraries (a few ulp per op) do not accumulate along the chain.
    np.testing.assert_allclose(got, _numpy_chain(2000, x), rtol=2e-6, atol=2e-6)


def _reference_reads_in_place(fusion: HloInstruction, k: int) -> bool:
    """The walk `reads_only_at_written_offset` made per operand before it kept one answer
    per fused computation."""
    fused = fusion.called[0]
    param = fused.parameters[k]
    users = fused.users()
    stack, seen = [param], set()
    while stack:
        value = stack.pop()
        if id(value) not in seen:
            seen.add(id(value))
            for user in users[value]:
                if not all(preserves_memory_order(user, j)
                           for j, o in enumerate(user.operands) if o is value):
                    return False
                stack.append(user)
    return True


def test_in_place_answers_match_the_walk() -> None:
    x = np.ones((8, 16), np.float32)
    programs = [lambda a, b: jnp.tanh(a) * b + a.T.reshape(8, 16),
                lambda a, b: jnp.sin(a[::-1]) + b,
                lambda a, b: jnp.exp(a) * b.sum(axis=1, keepdims=True),
                lambda a, b: jnp.broadcast_to(a[:, :1], (8, 16)) - b]
    checked = 0
    for f in programs:
        for fusion in fusions_of(optimize(jaxlite.jit(f).lower(x, x)._lowered.module)):
            if fusion.attr("kind") not in ("kLoop", "kInput") or \
                    fusion.called[0].root.shape.is_tuple:
                continue
            for k in range(len(fusion.operands)):
                if fusion.called[0].parameters[k].shape == fusion.operands[k].shape:
                    assert reads_only_at_written_offset(fusion, k) == \
                        _reference_reads_in_place(fusion, k)
                    checked += 1
    assert checked >= 4
def test_grad_of_deep_chain() -> None:
    n = 400
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    got = np.asarray(jaxlite.jit(jaxlite.grad(lambda v: _chain(n)(v).sum()))(x))
    # d/dx of the chain by the chain rule, in float64.
    v, d = x.astype(np.float64), np.ones(64)
    for i in range(n):
        if i % 2:
            d, v = d * (np.cos(v) * 0.5 + 1), np.sin(v) * 0.5 + v
        else:
            d, v = d * (1 - np.tanh(v) ** 2), np.tanh(v) - 0.1
    np.testing.assert_allclose(got, d, rtol=1e-3, atol=1e-30)


def test_repeated_fusions_share_one_emitted_kernel() -> None:
    """Loop kernels are memoized per module by structure (an optimizer's update of each
    layer's parameters is one fusion per layer); the memo's kernel is the one a fresh
    emission of each fusion gives."""
    def update(params, grads):
        return [jnp.tanh(p - 0.01 * g) for p, g in zip(params, grads)]
    params = [np.full((8, 32), k, np.float32) for k in range(4)]
    module = optimize(jaxlite.jit(update).lower(params, params)._lowered.module)
    ctx = KernelContext()
    loops = [i for i in fusions_of(module) if i.attr("kind") == "kLoop"]
    kernels = [emit_loop_fusion(ctx, i, True) for i in loops]
    assert len({id(k) for k in kernels}) == 1 < len(loops)
    for fusion, kernel in zip(loops, kernels):
        assert emit_loop_fusion_uncached(ctx, fusion, True) == kernel


def test_repeated_reduction_fusions_share_one_emitted_kernel() -> None:
    def row_sums(params):
        return [jnp.exp(p).sum(axis=1) for p in params]
    params = [np.full((8, 32), k, np.float32) for k in range(4)]
    module = optimize(jaxlite.jit(row_sums).lower(params)._lowered.module)
    ctx = KernelContext()
    inputs = [i for i in fusions_of(module) if i.attr("kind") == "kInput"]
    kernels = [emit_input_fusion(ctx, i, True) for i in inputs]
    assert len({id(k) for k in kernels}) < len(inputs)
    for fusion, kernel in zip(inputs, kernels):
        assert emit_input_fusion.__wrapped__(ctx, fusion, True) == kernel
