"""Records JAX 0.10.2's outputs for the extreme-value table (tests/data/extreme_values.json).

Run with real JAX (never imported by jaxlite):
    /tmp/jaxvenv/bin/python tests/backends/cpu/record_extreme_values.py
Values are stored as the hex of their bits (uint32 / uint64), computed under jit on CPU.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
from extreme_value_cases import (  # noqa: E402
    F32_INPUTS, F64_INPUTS, F64_NAMES, binary_cases, pairs, unary_cases)

UINT = {np.float32: np.uint32, np.float64: np.uint64}


def bits(a, dtype):
    return [format(int(v), "x") for v in np.asarray(a, dtype).view(UINT[dtype])]


def main():
    out = {"jax_version": jax.__version__, "float32": {}, "float64": {}}
    for dtype, inputs, key in ((np.float32, F32_INPUTS, "float32"),
                               (np.float64, F64_INPUTS, "float64")):
        x = np.array(inputs, dtype)
        for name, f in unary_cases(jax):
            if key == "float64" and name not in F64_NAMES:
                continue
            out[key][name] = bits(jax.jit(f)(x), dtype)
        xs, ys = pairs()
        for name, f in binary_cases(jax):
            if key == "float64" and name not in F64_NAMES:
                continue
            out[key][name] = bits(jax.jit(f)(np.array(xs, dtype), np.array(ys, dtype)), dtype)
    path = os.path.join(os.path.dirname(__file__), "..", "..", "data", "extreme_values.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
