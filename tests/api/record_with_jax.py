"""Record what real JAX 0.10.2 answers for the case modules of tests/api.

Run with JAX installed (not jaxlite), from the repository root, naming the cases:

    /tmp/jaxvenv/bin/python tests/api/record_with_jax.py experimental_extra
    /tmp/jaxvenv/bin/python tests/api/record_with_jax.py extend_primitives
    /tmp/jaxvenv/bin/python tests/api/record_with_jax.py robustness_indexing

Each runs `<name>_cases.py` on JAX (x64 off) with the namespace its cases expect and writes
tests/data/api/<name>_jax.json, which tests/api/test_<name>.py compares jaxlite against.
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.extend.random  # noqa: F401  (the primitives' cases read its impls)
import jax.numpy as jnp
from jax import lax
from jax.experimental import random as xrandom
from jax.experimental import rnn
from jax.experimental.sparse import linalg as splinalg
from jax.extend.core import primitives

sys.path.insert(0, str(Path(__file__).parent))
DATA = Path(__file__).resolve().parents[1] / "data" / "api"

NAMESPACES = {
    "experimental_extra": dict(jax=jax, jnp=jnp, xrandom=xrandom, rnn=rnn, splinalg=splinalg),
    "extend_primitives": dict(jax=jax, jnp=jnp, P=primitives),
    "robustness_indexing": dict(jax=jax, jnp=jnp, lax=lax),
}
# robustness_indexing has hundreds of cases: one per line keeps its diffs readable.
INDENT = {"robustness_indexing": 0}


def record(name: str) -> Path:
    cases = importlib.import_module(f"{name}_cases")
    expected = {"jax_version": jax.__version__,
                **cases.run_all(SimpleNamespace(**NAMESPACES[name]))}
    out = DATA / f"{name}_jax.json"
    out.write_text(json.dumps(expected, indent=INDENT.get(name, 1), sort_keys=True) + "\n")
    print(f"wrote {len(expected) - 1} cases to {out}")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in NAMESPACES:
        sys.exit(f"usage: record_with_jax.py {{{','.join(NAMESPACES)}}}")
    record(sys.argv[1])
