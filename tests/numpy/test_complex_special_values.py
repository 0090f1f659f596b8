"""Complex exp, log, sqrt, sign, expm1, log1p, sin, cos, sinh, cosh, tan, tanh, the
inverse trigonometric and hyperbolic functions and reciprocal (complex division by a signed
zero) give JAX 0.10.2's values at special inputs.

numpy and the C library follow C99 Annex G (exp(inf + infj) is inf + NaNj, sqrt(-1.5 - 0j)
is -1.2247j); XLA does not (NaN + NaNj; +1.2247j). The expected values were recorded from
JAX by tests/numpy/record_complex_special_values.py into
tests/data/complex_special_values.json: the 64 inputs a + bj with a, b in {0, -0, 1.5, -1.5,
1e30, inf, -inf, nan}, and random finite inputs, checked in every mode: eager (the
primitives' numpy references), jit on the cpu backend (generated code) and jit on the
interpreter (the HLO evaluator).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp

DATA = json.loads((pathlib.Path(__file__).parent.parent / "data" /
                   "complex_special_values.json").read_text())
FUNCTIONS = ["exp", "log", "sqrt", "sign", "expm1", "log1p", "sin", "cos", "sinh", "cosh",
             "tan", "tanh", "arcsin", "arcsinh", "arctan", "arctanh",
             "arccos", "arccosh", "reciprocal"]
MODES = {"eager": lambda f: f, "jit": lambda f: jaxlite.jit(f, backend="cpu"),
         "jit_interpreter": lambda f: jaxlite.jit(f, backend="interpreter")}


def _complex(pairs, dtype):
    parts = np.array([[float(re), float(im)] for re, im in pairs])
    out = np.empty(len(pairs), dtype)
    out.real, out.imag = parts[:, 0], parts[:, 1]
    return out


def _same_part(got, want, ulps, eps):
    """NaN, infinities and zeros (with their sign) exactly; finite values within `ulps`."""
    both_nan = np.isnan(got) & np.isnan(want)
    exact = (got == want) & (np.signbit(got) == np.signbit(want))
    finite = np.isfinite(got) & np.isfinite(want) & (got != 0) & (want != 0)
    with np.errstate(invalid="ignore"):
        close = finite & (np.abs(got - want) <= ulps * eps * np.abs(want))
    return both_nan | exact | close


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_special_inputs_match_jax(name, mode):
    z = _complex(DATA["special"]["inputs"], np.complex64)
    want = _complex(DATA["special"][name], np.complex64)
    got = np.asarray(MODES[mode](getattr(jnp, name))(jnp.asarray(z)))
    assert got.dtype == np.complex64
    eps = np.finfo(np.float32).eps
    ok = _same_part(got.real, want.real, 4, eps) & _same_part(got.imag, want.imag, 4, eps)
    bad = [f"{z[i]}: got {got[i]}, JAX {want[i]}" for i in np.nonzero(~ok)[0]]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sign", "sin", "cos", "tan", "tanh",
                                  "arcsin", "arcsinh", "arctan", "arctanh", "arccos",
                                  "arccosh", "reciprocal"])
def test_random_finite_inputs_within_a_few_ulps_of_jax(name, dtype, mode):
    """|ours - JAX| <= 8 eps |JAX| (norm-wise; plus the smallest normal number, as XLA's
    cpu code flushes subnormal results to zero); non-finite parts (overflow) exactly."""
    entry = DATA[f"random_{dtype}"]
    z, want = _complex(entry["inputs"], dtype), _complex(entry[name], dtype)
    with jaxlite.enable_x64(dtype == "complex128"):
        got = np.asarray(MODES[mode](getattr(jnp, name))(jnp.asarray(z)))
    assert got.dtype == np.dtype(dtype)
    eps = np.finfo(got.real.dtype).eps
    finite = np.isfinite(want.real) & np.isfinite(want.imag)
    error = np.abs(got[finite] - want[finite])
    tiny = np.finfo(got.real.dtype).tiny
    assert np.all(error <= 8 * eps * np.abs(want[finite]) + tiny), (z[finite], got[finite],
                                                                     want[finite])
    for part in (np.real, np.imag):
        assert np.all(_same_part(part(got[~finite]), part(want[~finite]), 8, eps))


def test_expm1_and_log1p_of_random_inputs_near_jax():
    """expm1 and log1p keep numpy's formulas for finite inputs (JAX's expm1 loses digits
    where sin(b/2) is large relative to the result, numpy's log1p where |z| << 1): checked
    only on inputs of moderate size, to 64 eps norm-wise."""
    entry = DATA["random_complex64"]
    z = _complex(entry["inputs"], np.complex64)
    moderate = (np.abs(z) > 0.5) & (np.abs(z) < 20)
    for name in ["expm1", "log1p"]:
        want = _complex(entry[name], np.complex64)[moderate]
        for mode in MODES.values():
            got = np.asarray(mode(getattr(jnp, name))(jnp.asarray(z[moderate])))
            assert np.all(np.abs(got - want) <= 64 * np.finfo(np.float32).eps * np.abs(want))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["sinh", "cosh"])
def test_sinh_cosh_of_random_inputs_keep_numpy_accuracy(name, dtype, mode):
    """JAX's exp(z + log 1/2) -+ exp(-z + log 1/2) cancels where re z is small; jaxlite keeps
    numpy's (the C library's) accurate finite values: within 8 eps of numpy norm-wise, and
    JAX's overflow to infinity exactly."""
    entry = DATA[f"random_{dtype}"]
    z, jax_values = _complex(entry["inputs"], dtype), _complex(entry[name], dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
    with jaxlite.enable_x64(dtype == "complex128"):
        got = np.asarray(MODES[mode](getattr(jnp, name))(jnp.asarray(z)))
    eps = np.finfo(got.real.dtype).eps
    finite = np.isfinite(want.real) & np.isfinite(want.imag)
    error = np.abs(got[finite] - want[finite])
    assert np.all(error <= 8 * eps * np.abs(want[finite]) + np.finfo(got.real.dtype).tiny)
    for part in (np.real, np.imag):
        assert np.all(_same_part(part(got[~finite]), part(jax_values[~finite]), 8, eps))


@pytest.mark.parametrize("mode", ["eager", "jit", "interpreter"])
def test_a_complex_base_of_one_gives_one_whatever_the_exponent(mode):
    # JAX 0.10.2: (1 + 0j) ** w and (1 - 0j) ** w are 1 + 0j for all 64 exponents with parts
    # in {0, -0, 1, -1, 2.5, inf, -inf, nan} (a fuzzer finding: jaxlite gave nan + nanj for
    # non-finite ones), as XLA's power does
    parts = [0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan]
    w = np.array([complex(a, b) for a in parts for b in parts], np.complex64)
    run = {"eager": jnp.power, "jit": jaxlite.jit(jnp.power),
           "interpreter": jaxlite.jit(jnp.power, backend="interpreter")}[mode]
    for base in (complex(1, 0), complex(1, -0.0)):
        out = np.asarray(run(jnp.full(w.shape, base, jnp.complex64), jnp.asarray(w)))
        np.testing.assert_array_equal(out, np.ones_like(w))
        assert not np.signbit(out.imag).any()


@pytest.mark.parametrize("mode", ["eager", "jit", "interpreter"])
def test_complex64_power_at_large_and_infinite_bases_matches_jax(mode):
    # Recorded from JAX 0.10.2 (jit(lax.pow), complex64): XLA computes complex64 powers in
    # float32, so |x| ** y overflows where float64 would not, and +inf to a real power is
    # inf or 0. jaxlite computed in float64 and gave nan+nanj for (inf+0j) ** 2.5 and a NaN
    # real part for (1e30j) ** 2 (`1j * im` multiplied inf by 0).
    cases = [((np.inf, 0.0), (2.5, 0.0), (np.inf, 0.0)),
             ((np.inf, -0.0), (-1.0, 0.0), (0.0, 0.0)),
             ((np.inf, 0.0), (-np.inf, 0.0), (0.0, 0.0)),
             ((0.0, 1e30), (2.0, 0.0), (-np.inf, -np.inf)),
             ((0.0, 1e30), (2.0, 1.0), (-np.inf, np.inf)),
             ((0.0, 1e30), (-1.0, 0.0), (-4.371139e-38, -1e-30)),
             ((1e30, 0.0), (2.5, 0.0), (np.inf, np.nan)),
             ((0.0, -2.5), (1e30, 0.0), (np.inf, np.inf))]
    x = np.array([complex(*c[0]) for c in cases], np.complex64)
    y = np.array([complex(*c[1]) for c in cases], np.complex64)
    want = np.array([complex(*c[2]) for c in cases], np.complex64)
    run = {"eager": jnp.power, "jit": jaxlite.jit(jnp.power),
           "interpreter": jaxlite.jit(jnp.power, backend="interpreter")}[mode]
    got = np.asarray(run(jnp.asarray(x), jnp.asarray(y)))
    for part in (np.real, np.imag):
        np.testing.assert_allclose(part(got), part(want), rtol=4 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_inverse_trig_thresholds_match_jax(dtype, mode):
    """Around the magnitudes where XLA's arcsin and arctanh switch formulas (arcsin(x + NaNj)
    is (NaN, log 2|x|) from |x| = sqrt(max float) / 8; arctanh(x - 0j) has a +pi/2
    imaginary part past one float above 4 / eps**2), and the rotations arcsinh, arctan."""
    entry = DATA[f"thresholds_{dtype}"]
    z = _complex(entry["inputs"], dtype)
    eps = np.finfo(dtype).eps
    with jaxlite.enable_x64(dtype == "complex128"):
        for name in ["arcsin", "arcsinh", "arctan", "arctanh", "arccos", "arccosh"]:
            want = _complex(entry[name], dtype)
            got = np.asarray(MODES[mode](getattr(jnp, name))(jnp.asarray(z)))
            ok = _same_part(got.real, want.real, 4, eps) & _same_part(got.imag, want.imag, 4, eps)
            assert ok.all(), (name, z[~ok], got[~ok], want[~ok])
