"""The scan_in_blocks pass (cumsum & co. as blocked scans, not quadratic windows) and the
accuracy of long running sums eagerly and under jit.

Measured with JAX 0.10.2 on this machine (/tmp/jaxvenv): `jit(jnp.cumsum)` of
`np.random.RandomState(0).rand(2**20).astype(np.float32)` is off by at most 0.0943 from the
float64 running sum (1.44 ulps of the total), and 2**24 elements take 0.44 s. Before this
pass jaxlite's jit took 1.4 s for 2**16 elements (quadratic; 2**24 never finished) and eager
mode was off by 16.2 for 2**20 (numpy's sequential float32 order).
"""
from __future__ import annotations

import hashlib

import ml_dtypes
import numpy as np
import pytest
from jaxlite.xla.text_parser import parse_module

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import HloModule
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.passes.cumulative_scan import BLOCK, cumulative_axis, scan_in_blocks

RNG = np.random.default_rng(0)
_COMBINE = {"add": "add", "multiply": "multiply", "maximum": "maximum", "minimum": "minimum"}


def _windows(module: HloModule) -> list[tuple[int, ...]]:
    return [tuple(i.attr("window")["size"]) for c in module.computations
            for i in c.instructions if i.opcode is Opcode.REDUCE_WINDOW]


def _running_module(dims: tuple[int, ...], axis: int, reverse: bool, op: str,
                    dtype: str = "f32", init: str = "0") -> HloModule:
    n = dims[axis]
    size = "x".join(str(n if d == axis else 1) for d in range(len(dims)))
    pad = "x".join(("0_%d" % (n - 1) if reverse else "%d_0" % (n - 1)) if d == axis else "0_0"
                   for d in range(len(dims)))
    shape = f"{dtype}[{','.join(map(str, dims))}]"
    return parse_module(f"""
HloModule running

%combine (a: {dtype}[], b: {dtype}[]) -> {dtype}[] {{
  %a = {dtype}[] parameter(0)
  %b = {dtype}[] parameter(1)
  ROOT %c = {dtype}[] {op}(%a, %b)
}}

ENTRY %main (x: {shape}) -> {shape} {{
  %x = {shape} parameter(0)
  %init = {dtype}[] constant({init})
  ROOT %r = {shape} reduce-window(%x, %init), window={{size={size} pad={pad}}}, to_apply=%combine
}}
""")


@pytest.mark.parametrize("dims,axis", [((33,), 0), ((100,), 0), ((1025,), 0), ((2, 70, 3), 1),
                                       ((3, 5000), 1), ((40, 2), 0)])
@pytest.mark.parametrize("reverse", [False, True])
def test_integer_running_sums_are_exact_after_the_rewrite(dims, axis, reverse):
    module = _running_module(dims, axis, reverse, "add", "s32")
    after = scan_in_blocks(module)
    assert after is not module
    assert max(max(w) for w in _windows(after)) <= BLOCK
    x = RNG.integers(-1000, 1000, dims).astype(np.int32)
    expected = np.flip(np.cumsum(np.flip(x, axis), axis), axis) if reverse else np.cumsum(x, axis)
    np.testing.assert_array_equal(evaluate_module(after, [x]), expected.astype(np.int32))


@pytest.mark.parametrize("op,init", [("maximum", "-inf"), ("minimum", "inf"),
                                     ("multiply", "1")])
@pytest.mark.parametrize("reverse", [False, True])
def test_other_combiners_agree_with_the_window(op, init, reverse):
    dims = (3, 300)
    module = _running_module(dims, 1, reverse, op, "f32", init)
    x = RNG.uniform(0.995, 1.005, dims).astype(np.float32)
    before = evaluate_module(module, [x])
    after = evaluate_module(scan_in_blocks(module), [x])
    if op == "multiply":  # regrouped products: a few roundings apart
        np.testing.assert_allclose(after, before, rtol=300 * np.finfo(np.float32).eps)
    else:  # max and min are exact in any order
        np.testing.assert_array_equal(after, before)


def test_short_and_other_windows_are_left_alone():
    short = _running_module((BLOCK,), 0, False, "add")
    assert scan_in_blocks(short) is short
    strided = parse_module("""
HloModule strided

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}

ENTRY %main (x: f32[100]) -> f32[50] {
  %x = f32[100] parameter(0)
  %init = f32[] constant(0)
  ROOT %r = f32[50] reduce-window(%x, %init), window={size=100 stride=2 pad=99_0}, to_apply=%add
}
""")
    assert cumulative_axis(strided.entry.root) is None
    assert scan_in_blocks(strided) is strided


def test_a_computation_that_is_not_one_binary_op_combines_through_a_reduce():
    x = RNG.standard_normal((2, 200)).astype(np.float32)
    for reverse in (False, True):
        f = jax.jit(lambda v: lax.cumlogsumexp(v, axis=1, reverse=reverse))
        hlo = f.lower(x).compile().as_text()
        assert "reduce(" in hlo
        ref = np.logaddexp.accumulate(np.flip(x, 1) if reverse else x, axis=1,
                                      dtype=np.float64)
        ref = np.flip(ref, 1) if reverse else ref
        np.testing.assert_allclose(np.asarray(f(x)), ref, rtol=20 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("mode", ["eager", "jit", "interpreter"])
def test_a_long_float32_running_sum_is_as_accurate_as_jax(mode):
    x = np.random.RandomState(0).rand(2 ** 20).astype(np.float32)
    run = {"eager": jnp.cumsum, "jit": jax.jit(jnp.cumsum),
           "interpreter": jax.jit(jnp.cumsum, backend="interpreter")}[mode]
    exact = np.cumsum(x.astype(np.float64))
    error = float(np.max(np.abs(np.asarray(run(x)) - exact)))
    # JAX: 0.0943 (1.44 ulps of the total); numpy's sequential float32 order: 16.2
    assert error <= 2 * np.finfo(np.float32).eps * exact[-1]


# SHA-256 (first 32 hex digits) of JAX 0.10.2's results on X (its recording script: the
# same calls with `from jax import lax`, X as below, the digest of np.asarray(out).tobytes()).
X = np.random.default_rng(0).standard_normal(5000).astype(np.float32)
JAX_DIGESTS = {
    "cumsum 20": "51b7529bd665b436bede4b617b419ee1",
    "cumsum 257": "e1c9bcec08951f0f664e784cd517d4c6",
    "cumsum 5000": "f97c64180c120702a1185948c3a8465f",
    "reverse cumsum 33": "7b8dd0aa971999162da1ac3dc8fbf649",
    "reverse cumsum 5000": "d1b2480bd322bf7763663d4ca8e1381f",
    "cumsum (2, 2500) axis 1": "560f45a09425a014c5af1c76a0ce2250",
    "cumsum (250, 20) axis 0": "cb7868ec3e839196d5fe4e32de6e20a4",
    "bfloat16 cumsum 3000": "53e3d1f1d029b1abe32ca52490520697",
    "float16 reverse cumsum 3000": "3bc5bc1613e3bf15d24534417eab6fba",
    "cumprod 1000": "42fe42c6acd2ffdd289c330369b04a15",
}
CASES = {
    "cumsum 20": (lambda v: lax.cumsum(v), X[:20]),
    "cumsum 257": (lambda v: lax.cumsum(v), X[:257]),
    "cumsum 5000": (lambda v: lax.cumsum(v), X),
    "reverse cumsum 33": (lambda v: lax.cumsum(v, reverse=True), X[:33]),
    "reverse cumsum 5000": (lambda v: lax.cumsum(v, reverse=True), X),
    "cumsum (2, 2500) axis 1": (lambda v: lax.cumsum(v, axis=1), X.reshape(2, 2500)),
    "cumsum (250, 20) axis 0": (lambda v: lax.cumsum(v, axis=0), X.reshape(250, 20)),
    "bfloat16 cumsum 3000": (lambda v: lax.cumsum(v), X[:3000].astype(ml_dtypes.bfloat16)),
    "float16 reverse cumsum 3000": (lambda v: lax.cumsum(v, reverse=True),
                                    X[:3000].astype(np.float16)),
    "cumprod 1000": (lambda v: lax.cumprod(v), np.float32(1) + X[:1000] * np.float32(0.01)),
}


@pytest.mark.parametrize("mode", ["eager", "jit", "interpreter"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_running_reductions_are_jax_bit_for_bit(case, mode):
    f, x = CASES[case]
    run = {"eager": f, "jit": jax.jit(f), "interpreter": jax.jit(f, backend="interpreter")}[mode]
    out = np.asarray(run(x))
    assert out.dtype == x.dtype and out.shape == x.shape
    assert hashlib.sha256(out.tobytes()).hexdigest()[:32] == JAX_DIGESTS[case]


def test_grad_and_vmap_of_a_long_cumsum():
    x = RNG.standard_normal(3000).astype(np.float32)
    w = RNG.standard_normal(3000).astype(np.float32)
    g = jax.jit(jax.grad(lambda v: jnp.dot(jnp.cumsum(v), w)))(x)
    # d/dv_j sum_i w_i * cumsum(v)_i = sum_{i >= j} w_i
    np.testing.assert_allclose(np.asarray(g), np.cumsum(w[::-1].astype(np.float64))[::-1],
                               rtol=1e-4, atol=1e-4)
    xs = RNG.standard_normal((4, 3000)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(jnp.cumsum))(xs)),
                                  np.stack([np.asarray(jax.jit(jnp.cumsum)(r)) for r in xs]))
