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
             "tan", "tanh", "arcsin", "arcsinh", "arctan", "arctanh",
             "arccos", "arccosh", "reciprocal"]
SPECIAL = [0.0, -0.0, 1.5, -1.5, 1e30, np.inf, -np.inf, np.nan]
OUT = pathlib.Path(__file__).parent.parent / "data" / "complex_special_values.json"


def _random_inputs(rng, n):
    magnitude = 10.0 ** rng.uniform(-30, 30, (2, n)) * rng.choice([-1, 1], (2, n))
    normal = rng.normal(size=(2, n)) * 3
    wide = np.stack([rng.uniform(-100, 100, n), rng.uniform(-10, 10, n)])
    parts = np.concatenate([magnitude, normal, wide], axis=1)
    return parts[0] + 1j * parts[1]


def _threshold_inputs(dtype):
    """Floats around the magnitudes where XLA's arcsin (x + NaNj: sqrt(max) / 8) and arctanh
    (x - 0j: 4 / eps**2; +-1 + bj: b = sqrt(tiny)) change formulas, placed so that each of arcsin, arcsinh, arctan
    and arctanh meets them (arcsinh and arctan rotate their argument by i)."""
    real = np.finfo(dtype).dtype.type
    around = []
    for edge in [np.sqrt(np.finfo(real).max) / 8, real(4) / np.finfo(real).eps ** 2]:
        floats = [np.nextafter(real(edge), real(0)), real(edge)]
        for _ in range(3):
            floats.append(np.nextafter(floats[-1], real(np.inf)))
        around += floats
    zs = []
    for x in around:
        for sign in [1, -1]:
            zs += [complex(sign * x, np.nan), complex(np.nan, sign * x),
                   complex(sign * x, -0.0), complex(-0.0, sign * x)]
    # arctanh(+-1 + bj) is +-inf + ... where b*b is at most the smallest normal float
    root_tiny = np.sqrt(np.finfo(real).tiny)
    for b in [root_tiny, np.nextafter(root_tiny, real(1)), np.nextafter(root_tiny, real(0))]:
        for sign in [1, -1]:
            zs += [complex(sign, b), complex(sign, -b), complex(b, sign), complex(-b, sign)]
    out = np.empty(len(zs), dtype)
    out.real, out.imag = [z.real for z in zs], [z.imag for z in zs]
    return out


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
    for dtype in ["complex64", "complex128"]:
        jax.config.update("jax_enable_x64", dtype == "complex128")
        x = _threshold_inputs(dtype)
        entry = {"inputs": _pairs(x)}
        for name in ["arcsin", "arcsinh", "arctan", "arctanh", "arccos", "arccosh"]:
            entry[name] = _pairs(jax.jit(getattr(jnp, name))(x))
        record[f"thresholds_{dtype}"] = entry
    OUT.write_text(json.dumps(record, indent=0) + "\n")


if __name__ == "__main__":
    main()
