"""Cases recorded from real JAX 0.10.2 by tools/gen_random_expected.py, and how to call the
jaxlite function each one names (shared by the tests of this directory)."""
from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np

import jaxlite.numpy as jnp
from jaxlite import lax, random
from jaxlite.nn import initializers

DATA_DIR = Path(__file__).parent / "data"
DATA = json.loads((DATA_DIR / "expected.json").read_text())
BULK = json.loads((DATA_DIR / "bulk_digests.json").read_text())["bulk"]


def decode(value):
    """A case's argument: {"array": values, "dtype": name} as an array, int lists as tuples."""
    if isinstance(value, dict) and "array" in value:
        return jnp.asarray(np.asarray(value["array"], value["dtype"]))
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return tuple(value)
    return value


def grid(args) -> np.ndarray:
    """The float32 grid ["linspace", lo, hi, n] of a `lax.*` case."""
    _, lo, hi, n = args
    return np.linspace(lo, hi, n, dtype=np.float32)


def call(case: dict, key):
    """The jaxlite value of a case, with `key` as its key."""
    fn = case["fn"]
    if fn.startswith("lax."):
        return getattr(lax, fn.split(".")[1])(grid(case["args"]))
    args = [decode(a) for a in case["args"]]
    kwargs = {k: decode(v) for k, v in case["kwargs"].items()}
    if fn.startswith("initializers."):
        factory = getattr(initializers, fn.split(".")[1])
        return factory(**kwargs)(key, *args)
    if fn.startswith("rbg."):
        rbg_key = random.key(case["seed"], impl="rbg")
        op = fn.split(".")[1]
        return random.key_data(rbg_key if op == "seed" else getattr(random, op)(rbg_key, *args))
    return getattr(random, fn)(key, *args, **kwargs)


def expected(case: dict) -> np.ndarray:
    """The recorded values of a case, in their dtype and shape."""
    spec = case["expected"]
    dtype = ml_dtypes.bfloat16 if spec["dtype"] == "bfloat16" else np.dtype(spec["dtype"])
    if spec["dtype"].startswith("complex"):
        values = [complex(re, im) for re, im in spec["values"]]
        return np.asarray(values, dtype).reshape(spec["shape"])
    if np.dtype(dtype).kind in "iub":
        return np.array(spec["values"], dtype).reshape(spec["shape"])
    return np.asarray(spec["values"]).astype(dtype).reshape(spec["shape"])


def ids(cases) -> list[str]:
    return [f"{i}-{c['fn']}-{c['seed']}" for i, c in enumerate(cases)]
