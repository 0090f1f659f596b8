"""Sums keep their precision on every path: eager (numpy references), jit on the interpreter
backend and jit on the CPU backend (issue 11: a sequential float32 accumulator stalls at
2**24 per lane, a bfloat16 one at 32).

Bounds asserted, for a float sum of n terms (eps of float32, the accumulation type of
float16/bfloat16 too), relative to sum(|x|):
- eager and interpreter: pairwise, (16 + log2 n) eps;
- CPU backend: chunks of 16 terms per lane added as a pairwise tree, (24 + ceil(log2 n)) eps
  (see jaxlite/backends/cpu/codegen/reduction.py).
Those are worst-case bounds; rounding errors of random sign add up to about their square root
(in units of eps), which the tests assert on terms of one sign and similar size (0.1 to 0.11):
there a sequential accumulator drifts (100 to 600 eps measured before the fix) while the
blocked and pairwise orders stay within about 1 eps.

JAX 0.10.2's values below were recorded on CPU with /tmp/jaxvenv/bin/python, e.g.
    float(jax.jit(lambda: jnp.sum(jnp.broadcast_to(jnp.float32(1), (10**11,))))())
    float(jnp.full((4096,), 0.1, jnp.bfloat16).sum())
    float(jnp.full((100000,), 0.1, jnp.bfloat16).mean())
    float(jnp.full((70000,), 0.01, jnp.float16).sum())
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxlite
import jaxlite.numpy as jnp

EPS32 = float(np.finfo(np.float32).eps)

# JAX 0.10.2 (see the module docstring)
JAX_BF16_4096_TENTHS = 410.0
JAX_F16_4096_TENTHS = 409.5
JAX_F16_70000_HUNDREDTHS = 700.0
JAX_BF16_MEAN_100000_TENTHS = 0.10009765625
JAX_BF16_PATTERN_SUM = 225.0  # jnp.sum(((np.arange(4096) % 10 + 1) * 0.01).astype(bf16))
JAX_F16_PATTERN_SUM = 225.125  # the same in float16
JAX_ONES = {10**9: 1e9, 3 * 10**9 + 7: 3e9, 10**10: 1e10, 10**11: 99999997952.0}

MODES = {
    "eager": lambda f: f,
    "jit": lambda f: jaxlite.jit(f),
    "interpreter": lambda f: jaxlite.jit(f, backend="interpreter"),
}


def _bound(mode: str, n: int) -> float:
    """The worst-case relative error of a float32 sum of n terms (module docstring)."""
    if mode == "jit":
        return (24 + math.ceil(math.log2(n))) * EPS32
    return (16 + math.log2(n)) * EPS32


def _random_sign_bound(mode: str, n: int) -> float:
    return math.sqrt(_bound(mode, n) / EPS32) * EPS32


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype, n, value, expected", [
    (jnp.bfloat16, 4096, 0.1, JAX_BF16_4096_TENTHS),
    (jnp.float16, 4096, 0.1, JAX_F16_4096_TENTHS),
    (jnp.float16, 70000, 0.01, JAX_F16_70000_HUNDREDTHS),
])
def test_low_precision_sums_accumulate_in_float32(mode, dtype, n, value, expected):
    x = jnp.full((n,), value, dtype)
    out = MODES[mode](jnp.sum)(x)
    assert out.dtype == dtype
    assert float(out) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype, expected", [
    (jnp.bfloat16, JAX_BF16_PATTERN_SUM), (jnp.float16, JAX_F16_PATTERN_SUM)])
def test_low_precision_sums_of_unequal_terms(mode, dtype, expected):
    # Equal terms keep a 16-bit pairwise tree exact; these do not (bfloat16 tree: 226.0).
    x = ((np.arange(4096) % 10 + 1) * 0.01).astype(dtype)
    assert float(MODES[mode](jnp.sum)(x)) == expected


@pytest.mark.parametrize("mode", MODES)
def test_low_precision_mean_and_axis_sums(mode):
    x = jnp.full((100000,), 0.1, jnp.bfloat16)
    assert float(MODES[mode](jnp.mean)(x)) == JAX_BF16_MEAN_100000_TENTHS
    columns = MODES[mode](lambda a: jnp.sum(a, 0))(jnp.full((4096, 3), 0.1, jnp.bfloat16))
    np.testing.assert_array_equal(np.asarray(columns, np.float32), [410.0] * 3)


@pytest.mark.parametrize("n", sorted(JAX_ONES))
def test_jit_sum_of_broadcast_ones_matches_jax(n):
    # The broadcast is not materialized: 10**11 elements take about a second.
    out = jaxlite.jit(lambda: jnp.sum(jnp.broadcast_to(jnp.float32(1), (n,))))()
    assert float(out) == JAX_ONES[n]


def test_jit_sum_of_broadcast_ones_over_three_axes():
    out = jaxlite.jit(lambda: jnp.sum(jnp.broadcast_to(jnp.float32(1), (1000, 1000, 10000))))()
    assert float(out) == 1e10  # exactly representable in float32; JAX: 1e10


@pytest.mark.parametrize("mode", ["eager", "interpreter"])
def test_sum_of_many_ones_without_jit_compilation(mode):
    # eager: a stride-0 broadcast is counted; interpreter: a pairwise tree over 2**25 ones
    n = 2**25 + 5
    out = MODES[mode](lambda: jnp.sum(jnp.broadcast_to(jnp.float32(1), (n,))))()
    assert float(out) == float(np.float32(n))


def _check_positive_sum(mode, shape, axes):
    x = np.random.default_rng(0).uniform(0.1, 0.11, shape).astype(np.float32)
    out = np.asarray(MODES[mode](lambda a: jnp.sum(a, axes))(x), np.float64)
    exact = x.astype(np.float64).sum(axes)
    n = x.size // exact.size
    relative = np.max(np.abs(out - exact) / exact)
    assert relative <= _random_sign_bound(mode, n), (relative / EPS32, "eps")


@pytest.mark.parametrize("mode", MODES)
def test_activation_sized_sum_over_three_axes(mode):
    # (8, 112, 112, 64) summed over the first three: each of 64 columns has 100352 terms.
    # JAX 0.10.2's relative error on normal data (issue 11): 1.4e-7; jaxlite's was 1.1e-5.
    _check_positive_sum(mode, (8, 112, 112, 64), (0, 1, 2))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape, axes", [
    ((2**24 + 3,), (0,)),
    ((3, 2**21 + 1), (1,)),
    ((1000, 5000), (0, 1)),
    ((300000, 3), (0,)),
])
def test_long_positive_sums_within_bound(mode, shape, axes):
    _check_positive_sum(mode, shape, axes)


def test_vmapped_jit_row_sums_within_bound():
    x = np.random.default_rng(1).uniform(0.1, 0.11, (4, 2**22)).astype(np.float32)
    out = np.asarray(jaxlite.jit(jaxlite.vmap(jnp.sum))(x), np.float64)
    exact = x.astype(np.float64).sum(1)
    assert np.max(np.abs(out - exact) / exact) <= _random_sign_bound("jit", 2**22)


def test_complex_sum_within_bound():
    x = np.random.default_rng(2).uniform(0.1, 0.11, (2, 2**22)).astype(np.float32)
    z = (x[0] + 1j * x[1]).astype(np.complex64)
    out = complex(jaxlite.jit(jnp.sum)(z))
    exact = z.astype(np.complex128).sum()
    bound = _random_sign_bound("jit", 2**22)
    assert abs(out.real - exact.real) / exact.real <= bound
    assert abs(out.imag - exact.imag) / exact.imag <= bound


@pytest.mark.parametrize("mode", ["eager", "interpreter"])
@pytest.mark.parametrize("lhs_shape, rhs_shape", [((2**24,), (2**24,)), ((4, 2**20), (2**20, 3))])
def test_long_contractions_within_bound(mode, lhs_shape, rhs_shape):
    # numpy's own float dot accumulates almost sequentially (about 3000 eps for the first);
    # the references cut the contraction into chunks added pairwise (JAX: 0.47 eps).
    x = np.random.default_rng(3).uniform(0.1, 0.11, lhs_shape).astype(np.float32)
    y = np.ones(rhs_shape, np.float32)
    out = np.asarray(MODES[mode](jnp.dot)(x, y), np.float64)
    exact = x.astype(np.float64) @ y.astype(np.float64)
    k = lhs_shape[-1]
    assert np.max(np.abs(out - exact) / exact) <= _random_sign_bound(mode, k)


# ------------------------------------------------- equal terms: a tree keeps them exact
# A sequential accumulator makes the same rounding error at every step on equal terms, so its
# error grows with the count: jit(jnp.sum)(full(10**6, 0.1)) was 100000.265625 (34 ulp) with
# chunks of 256 sequential additions; JAX 0.10.2 gives 100000.0 (the exact sum rounded). In a
# pairwise tree equal partial sums add exactly, leaving the error of one chunk of 16 terms.

def _ulps(out: float, exact: float, dtype=np.float32) -> float:
    """Distance from the exact value in units in the last place of the result's type."""
    return abs(out - exact) / float(np.spacing(dtype(abs(exact))))


@pytest.mark.parametrize("n", [10**3, 10**4, 10**5, 10**6, 4 * 10**6])
def test_jit_sum_of_equal_terms_within_4_ulp(n):
    x = np.full(n, 0.1, np.float32)
    out = float(jaxlite.jit(jnp.sum)(x))
    assert _ulps(out, x.astype(np.float64).sum()) <= 4, out


@pytest.mark.parametrize("shape, axis", [((4096, 1024), 1), ((1024, 4096), 0), ((16, 300000), 1)])
def test_jit_row_and_column_sums_of_equal_terms_within_4_ulp(shape, axis):
    x = np.full(shape, 0.1, np.float32)
    out = np.asarray(jaxlite.jit(lambda a: jnp.sum(a, axis))(x), np.float64)
    exact = float(x.astype(np.float64).sum(axis)[0])
    assert max(_ulps(v, exact) for v in out) <= 4


def test_jit_mean_of_long_rows_of_equal_terms():
    # layernorm's and softmax's statistics over a long axis; before: 2e-6 off (17 eps)
    x = np.full((256, 100000), 0.1, np.float32)
    out = np.asarray(jaxlite.jit(lambda a: jnp.mean(a, 1))(x), np.float64)
    assert max(_ulps(v, float(np.float32(0.1))) for v in out) <= 4


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 3 * 10**6), value=st.floats(0.015625, 128.0, width=32))
def test_jit_sums_of_equal_terms_within_bound(n, value):
    # 16 sequential additions of equal terms are off by at most about 4.2 eps; the tree's
    # unequal partial sums (n not a power of two) add a few roundings of 0.5 ulp
    x = np.full(n, value, np.float32)
    out = float(jaxlite.jit(jnp.sum)(x))
    exact = x.astype(np.float64).sum()
    assert abs(out - exact) <= 8 * EPS32 * exact, (out, exact)


def test_jit_product_of_equal_terms_near_one():
    # a product's roundings correlate along a sequential chain just as a sum's do:
    # before, 58799 eps off for 10**6 factors (JAX 0.10.2: 3928 eps)
    x = np.full(10**6, 1 + 2.0**-20, np.float32)
    out = float(jaxlite.jit(jnp.prod)(x))
    exact = float(np.prod(x.astype(np.float64)))
    assert abs(out - exact) / exact <= 2500 * EPS32
