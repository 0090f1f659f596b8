"""The divide_by_reciprocals pass, and jitted and eager division against JAX's numbers.

JAX 0.10.2 on the CPU (measured with /tmp/jaxvenv, 10,000 standard-normal float32 values):
`jit(lambda v: v / 3.0)`, `v / b` for a scalar argument b, `x / row` and `x / column` for
broadcast vectors, and eager `jnp.asarray(x) / 3.0` all give exactly `x * (1 / c)` computed
in the dtype (0 differences; about a third of the elements differ from the true quotient);
float16 and float64 likewise; a scalar divided by a scalar, a (1,) array by a scalar
argument, and an array by an array of the same shape give the true quotient.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hlo_testing import entry_lines, parse

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.passes.reciprocal_division import divide_by_reciprocals

RNG = np.random.default_rng(0)
X = RNG.standard_normal(10_000).astype(np.float32)


def _reciprocal_product(x: np.ndarray, c) -> np.ndarray:
    return x * (np.ones((), x.dtype) / np.asarray(c, x.dtype))


def test_a_constant_divisor_becomes_its_reciprocal():
    after = divide_by_reciprocals(parse("""
        %x = f32[4] parameter(0)
        %c = f32[] constant(3)
        %b = f32[4] broadcast(%c), dimensions={}
        ROOT %r = f32[4] divide(%x, %b)"""))
    # (constant folding then makes the small broadcast of 1/3 one constant)
    assert entry_lines(after) == [
        "%x = f32[4] parameter(0)",
        "%broadcast.1 = f32[4] constant({0.33333334, 0.33333334, 0.33333334, 0.33333334})",
        "ROOT %r = f32[4] multiply(%x, %broadcast.1)"]


def test_a_broadcast_divisor_becomes_the_broadcast_of_its_reciprocal():
    module = parse("""
        %x = f32[3,4] parameter(0)
        %y = f32[4] parameter(1)
        %b = f32[3,4] broadcast(%y), dimensions={1}
        ROOT %r = f32[3,4] divide(%x, %b)""")
    after = divide_by_reciprocals(module)
    assert [line.split(" = ")[1].split("(")[0] for line in entry_lines(after)] == [
        "f32[3,4] parameter", "f32[4] parameter", "f32[4] constant", "f32[4] divide",
        "f32[3,4] broadcast", "f32[3,4] multiply"]
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y = RNG.uniform(0.5, 5, 4).astype(np.float32)
    out = evaluate_module(after, [x, y])
    assert out.tobytes() == _reciprocal_product(x, y).tobytes()


@pytest.mark.parametrize("body", [
    # scalar by scalar, a broadcast that adds no element, array by array, other dtypes
    "%x = f32[] parameter(0)\n%y = f32[] parameter(1)\nROOT %r = f32[] divide(%x, %y)",
    "%x = f32[1] parameter(0)\n%y = f32[] parameter(1)\n"
    "%b = f32[1] broadcast(%y), dimensions={}\nROOT %r = f32[1] divide(%x, %b)",
    "%x = f32[4] parameter(0)\n%y = f32[4] parameter(1)\nROOT %r = f32[4] divide(%x, %y)",
    "%x = bf16[4] parameter(0)\n%c = bf16[] constant(3)\n"
    "%b = bf16[4] broadcast(%c), dimensions={}\nROOT %r = bf16[4] divide(%x, %b)",
    "%x = s32[4] parameter(0)\n%c = s32[] constant(3)\n"
    "%b = s32[4] broadcast(%c), dimensions={}\nROOT %r = s32[4] divide(%x, %b)",
])
def test_other_divisions_are_left_alone(body):
    module = parse(body)
    assert divide_by_reciprocals(module) is module


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_jit_divides_as_xla_does(dtype):
    x = X.astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        out = np.asarray(jax.jit(lambda v: v / 3.0)(x))
        by_argument = np.asarray(jax.jit(lambda v, c: v / c)(x, dtype(7)))
    assert out.tobytes() == _reciprocal_product(x, 3).tobytes()
    assert by_argument.tobytes() == _reciprocal_product(x, 7).tobytes()
    assert np.count_nonzero(out != x / dtype(3)) > len(x) // 10  # really not the quotient


def test_vectors_broadcast_along_rows_or_columns():
    x = RNG.standard_normal((200, 50)).astype(np.float32)
    row = RNG.uniform(0.5, 5, 50).astype(np.float32)
    column = RNG.uniform(0.5, 5, (200, 1)).astype(np.float32)
    divide = jax.jit(lambda a, b: a / b)
    assert np.asarray(divide(x, row)).tobytes() == _reciprocal_product(x, row).tobytes()
    assert np.asarray(divide(x, column)).tobytes() == _reciprocal_product(x, column).tobytes()
    same_shape = RNG.uniform(0.5, 5, (200, 50)).astype(np.float32)
    assert np.asarray(divide(x, same_shape)).tobytes() == (x / same_shape).tobytes()


def test_eager_division_by_a_broadcast_matches_jit():
    # JAX runs eager operations compiled, so its eager numbers are its jitted ones.
    x = jnp.asarray(X)
    assert np.asarray(x / 3.0).tobytes() == _reciprocal_product(X, 3).tobytes()
    assert np.asarray(lax.div(x, jnp.float32(3))).tobytes() == \
        _reciprocal_product(X, 3).tobytes()
    scalar = jnp.float32(X[5]) / jnp.float32(3)
    assert float(scalar) == float(X[5] / np.float32(3))
    assert np.asarray(jnp.asarray(X[:1]) / 3.0).tobytes() == (X[:1] / np.float32(3)).tobytes()
    bf16 = X[:100].astype(ml_dtypes.bfloat16)
    assert np.array_equal(np.asarray(jnp.asarray(bf16) / 3.0),
                          (bf16.astype(np.float32) / np.float32(3)).astype(ml_dtypes.bfloat16))
