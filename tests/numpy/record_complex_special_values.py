"""Record JAX 0.10.2's complex elementary functions at special and random inputs.

Run with real JAX: `/tmp/jaxvenv/bin/python tests/numpy/record_complex_special_values.py`;
writes tests/data/complex_special_values.json, read by test_complex_special_values.py.
Special inputs: a + bj with a, b in {0, -0, 1.5, -1.5, 1e30, inf, -inf, nan} (complex64).
Random finite inputs (complex64 and complex128): normal, magnitudes 1e-30..1e30 per part,
and real parts up to +-100 (exp's overflow region). Values are JAX's jit results (eager
gives the same), each part as repr(float) so that signed zeros and NaNs survive JSON.
"""
import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

FUNCTIONS = ["exp", "log", "sqrt", "sign", "expm1", "log1p", "sin", "cos", "sinh", "cosh",
             "tan", "tanh", "arcsin", "arcsinh", "reciprocal"]
SPECIAL = [0.0, -0.0, 1.5, -1.5, 1e30, np.inf, -np.inf, np.nan]
OUT = pathlib.Path(__file__).parent.parent / "data" / "complex_special_values.json"


def _random_inputs(rng, n):
    magnitude = 10.0 ** rng.uniform(-30, 30, (2, n)) * rng.choice([-1, 1], (2, n))
    normal = rng.normal(size=(2, n)) * 3
    wide = np.stack([rng.uniform(-100, 100, n), rng.uniform(-10, 10, n)])
    parts = np.concatenate([magnitude, normal, wide], axis=1)
    return parts[0] + 1j * parts[1]


def _pairs(values):
    return [[repr(float(v.real)), repr(float(v.imag))] for v in np.asarray(values).ravel()]


def main():
    rng = np.random.default_rng(20261202)
    record = {"special": {"inputs": [[repr(a), repr(b)] for a in SPECIAL for b in SPECIAL]}}
    z = np.array([complex(a, b) for a in SPECIAL for b in SPECIAL], np.complex64)
    for name in FUNCTIONS:
        record["special"][name] = _pairs(jax.jit(getattr(jnp, name))(z))
    for dtype in ["complex64", "complex128"]:
        jax.config.update("jax_enable_x64", dtype == "complex128")
        x = _random_inputs(rng, 40).astype(dtype)
        entry = {"inputs": _pairs(x)}
        for name in FUNCTIONS:
            entry[name] = _pairs(jax.jit(getattr(jnp, name))(x))
        record[f"random_{dtype}"] = entry
    OUT.write_text(json.dumps(record, indent=0) + "\n")


if __name__ == "__main__":
    main()
