"""Record real JAX's outputs for the cases of jax_cases.py (not a test; run by hand):

    cd tests/scipy && /tmp/jaxvenv/bin/python record_jax_scipy.py [x64|x32]

writes tests/data/scipy/jax_<mode>.npz (output leaves, key "<case id>|<leaf index>") and
jax_<mode>.json (per case: dtypes and weak types of the leaves, or the exception's type
and message). Run once per mode: JAX's 64-bit flag is set at start-up.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import jax

MODE = sys.argv[1] if len(sys.argv) > 1 else "x64"
jax.config.update("jax_enable_x64", MODE == "x64")

import jax.scipy.linalg  # noqa: E402,F401  (the modules the cases use)
import jax.scipy.optimize  # noqa: E402,F401
import jax.scipy.sparse.linalg  # noqa: E402,F401
import jax.scipy.fft  # noqa: E402,F401
import jax.scipy.signal  # noqa: E402,F401
import jax.scipy.integrate  # noqa: E402,F401
import jax.scipy.interpolate  # noqa: E402,F401
import jax.scipy.ndimage  # noqa: E402,F401
import jax.scipy.cluster.vq  # noqa: E402,F401
import jax.scipy.spatial.transform  # noqa: E402,F401
import jax.numpy  # noqa: E402,F401

from jax_cases import all_cases  # noqa: E402

OUT = Path(__file__).parents[1] / "data" / "scipy"


def record() -> None:
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, dict] = {}
    for case in all_cases():
        if MODE not in case.modes:
            continue
        try:
            leaves = jax.tree_util.tree_leaves(case.call(jax))
        except Exception as error:  # noqa: BLE001 (the exception is the record)
            meta[case.id] = {"error": type(error).__name__, "message": str(error)[:300]}
            continue
        entry = {"dtypes": [], "weak": []}
        for i, leaf in enumerate(leaves):
            value = np.asarray(leaf)
            arrays[f"{case.id}|{i}"] = value
            entry["dtypes"].append(value.dtype.name)
            entry["weak"].append(bool(getattr(leaf, "weak_type", False)))
        meta[case.id] = entry
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT / f"jax_{MODE}.npz", **arrays)
    (OUT / f"jax_{MODE}.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(f"{len(meta)} cases recorded in {MODE} mode")


if __name__ == "__main__":
    record()
