"""Elementary functions and activations at +-0, +-tiny, +-large, +-inf and NaN against JAX.

The expected values are JAX 0.10.2's, recorded under jit on CPU by
`record_extreme_values.py` (/tmp/jaxvenv/bin/python tests/backends/cpu/record_extreme_values.py)
into tests/data/extreme_values.json. A special value of JAX's (NaN, +-inf, +-0 with its sign,
+-1) must be matched exactly; any other within 2 ulp. Checked under jit (the CPU backend's
vector math library), under jit on the interpreter backend (the HLO evaluator) and eagerly.

Two documented differences are accepted, each narrowly:
- XLA's CPU code flushes subnormal results and intermediates to zero (FTZ), and so does
  jaxlite's compiled CPU code, but its eager mode and interpreter backend keep IEEE gradual
  underflow, and a vector function may round to a subnormal where XLA's rounds past it.
  Where JAX gives +-0, a result of the same sign below 2**-100
  (float32) / 2**-1000 (float64) is accepted (e.g. exp(-88) = 6.05e-39, JAX 0).
- Where XLA's kernel is less accurate than 2 ulp (exp2, sinh, cosh, lgamma, digamma, the
  erfc tail in exact gelu, float64 tanh near 19), a value within 2 ulp of the mpmath
  reference (50 digits) is accepted instead; JAX's specials still must match exactly.
"""
from __future__ import annotations

import json
import os

import mpmath
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from tests.backends.cpu.extreme_value_cases import (
    F32_INPUTS, F64_INPUTS, F64_NAMES, binary_cases, pairs, unary_cases)

_DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "extreme_values.json")
with open(_DATA) as _fh:
    RECORDED = json.load(_fh)
UINT = {"float32": np.uint32, "float64": np.uint64}
INPUTS = {"float32": F32_INPUTS, "float64": F64_INPUTS}


def expected(dtype: str, name: str) -> np.ndarray:
    return np.array([int(h, 16) for h in RECORDED[dtype][name]], UINT[dtype]).view(dtype)


FLUSH_LIMIT = {"float32": 2.0 ** -100, "float64": 2.0 ** -1000}
mpmath.mp.dps = 50
# Higher-precision references for the functions whose XLA kernels are less accurate.
REFERENCE = {
    "exp2": lambda x: mpmath.power(2, x),
    "sinh": mpmath.sinh,
    "cosh": mpmath.cosh,
    "tanh": mpmath.tanh,
    "lgamma": lambda x: mpmath.log(abs(mpmath.gamma(x))),
    "digamma": mpmath.digamma,
    # float32 only: erfc of the rounded argument -x * float32(sqrt(1/2)) that JAX and
    # jaxlite both form (JAX's erfc is ~11 ulp off at 6.7, jaxlite's within 1.4).
    "gelu_exact": lambda x: x / 2 * mpmath.erfc(
        float(-np.float32(x) * np.float32(np.sqrt(0.5)))),
    "mish": lambda x: x * mpmath.tanh(mpmath.log1p(mpmath.exp(x))),
}
# 1 + tanh(x) cancels: its ulps are those of tanh's value near 1, not of the small sum.
# gelu is 0.5 x (1 + tanh(...)): the same cancellation, scaled by 0.5 |x| (one ulp of a
# correctly rounded tanh near -1 moves gelu(-3) by about 200 of its own ulps).
ULP_FLOOR = {"one_plus_tanh": lambda x: 1.0, "gelu": lambda x: 0.5 * abs(float(x))}


def _within(g, w, ulps, dtype, floor=0.0):
    unit = np.spacing(np.maximum(np.abs(w), floor).astype(dtype))
    return np.isfinite(g) and abs(g - w) <= ulps * unit


def _close_to_reference(name, args, g, dtype):
    if name not in REFERENCE or not np.isfinite(g):
        return False
    exact = REFERENCE[name](*(mpmath.mpf(float(a)) for a in args))
    return _within(g, np.dtype(dtype).type(float(exact)), 2, dtype)


def mismatches(got, want, dtype, name="", args=()):
    """Indices where `got` is not `want`: exact for specials, else within 2 ulp (module doc)."""
    got = np.asarray(got, dtype)
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        if np.isnan(w) or np.isnan(g):
            ok = np.isnan(w) and np.isnan(g)
        elif w == 0 and np.signbit(g) == np.signbit(w) and abs(g) < FLUSH_LIMIT[dtype]:
            ok = True  # XLA flushed a subnormal to zero
        elif np.isinf(w) or w == 0 or abs(w) == 1:
            ok = g == w and np.signbit(g) == np.signbit(w)
        else:
            floor = ULP_FLOOR[name](*(a[i] for a in args)) if name in ULP_FLOOR else 0.0
            ok = _within(g, w, 2, dtype, floor) or _close_to_reference(
                name, [a[i] for a in args], g, dtype)
        if not ok:
            bad.append(i)
    return bad


def _report(name, args, got, want, bad):
    rows = [f"  {tuple(float(a[i]) for a in args)}: got {got[i]!r}, JAX {want[i]!r}"
            for i in bad]
    return f"{name}: {len(bad)} disagreements\n" + "\n".join(rows)


UNARY = [(dt, name) for dt in ("float32", "float64") for name, _ in unary_cases(jaxlite)
         if dt == "float32" or name in F64_NAMES]
BINARY = [(dt, name) for dt in ("float32", "float64") for name, _ in binary_cases(jaxlite)
          if dt == "float32" or name in F64_NAMES]


@pytest.fixture
def x64(dtype):
    if dtype != "float64":
        yield
        return
    with jaxlite.enable_x64(True):
        yield


def _run(f, args, mode):
    if mode == "jit":
        return np.asarray(jaxlite.jit(f)(*args))
    if mode == "jit_interpreter":
        return np.asarray(jaxlite.jit(f, backend="interpreter")(*args))
    return np.asarray(f(*args))


@pytest.mark.parametrize("mode", ["jit", "jit_interpreter", "eager"])
@pytest.mark.parametrize("dtype,name", UNARY)
def test_unary_extreme_values(dtype, name, mode, x64):
    f = dict(unary_cases(jaxlite))[name]
    x = jnp.asarray(np.array(INPUTS[dtype], dtype))
    want = expected(dtype, name)
    got = _run(f, [x], mode)
    assert got.dtype == np.dtype(dtype)
    bad = mismatches(got, want, dtype, name, [np.asarray(x)])
    assert not bad, _report(name, [np.asarray(x)], got, want, bad)


@pytest.mark.parametrize("mode", ["jit", "jit_interpreter", "eager"])
@pytest.mark.parametrize("dtype,name", BINARY)
def test_binary_extreme_values(dtype, name, mode, x64):
    f = dict(binary_cases(jaxlite))[name]
    xs, ys = (np.array(v, dtype) for v in pairs())
    want = expected(dtype, name)
    got = _run(f, [jnp.asarray(xs), jnp.asarray(ys)], mode)
    bad = mismatches(got, want, dtype, name, [xs, ys])
    assert not bad, _report(name, [xs, ys], got, want, bad)
