"""Write tests/data/linalg_dtypes.json: result dtypes of jax.numpy.linalg, from real JAX.

Run once with JAX 0.10.2 installed (`/tmp/jaxvenv/bin/python tools/gen_linalg_dtypes.py`).
For every case of `linalg_cases.CASES` (shared with tests/numpy/test_linalg.py) and every
input dtype, it records the dtypes of the outputs (a list, for tuples) or the name of the
exception, with x64 off and on.
"""
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "numpy"))
from linalg_cases import CASES, INPUT_DTYPES, case_inputs  # noqa: E402


def outcome(fn, args):
    try:
        out = fn(*args)
    except Exception as error:  # noqa: BLE001 (recording which error JAX raises)
        return type(error).__name__
    return [str(leaf.dtype) for leaf in jax.tree_util.tree_leaves(out)]


def main():
    table = {}
    for x64 in (False, True):
        jax.config.update("jax_enable_x64", x64)
        for name, (call, _) in CASES.items():
            for dtype in INPUT_DTYPES:
                args = [jnp.asarray(a) for a in case_inputs(name, np.dtype(dtype))]
                table[f"{name}|{dtype}|x64={x64}"] = outcome(lambda *a: call(jnp.linalg, *a),
                                                              args)
    path = ROOT / "tests" / "data" / "linalg_dtypes.json"
    lines = [f"{json.dumps(key)}: {json.dumps(table[key])}" for key in sorted(table)]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {len(table)} entries to {path}")


if __name__ == "__main__":
    main()
