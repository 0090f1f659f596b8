"""Record what real JAX 0.10.2 answers for tests/experimental/sparse_cases.py.

Run with JAX installed (not jaxlite), from the repository root:

    /tmp/jaxvenv/bin/python tests/experimental/record_jax_sparse.py
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import sparse

sys.path.insert(0, str(Path(__file__).parent))
import sparse_cases  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "experimental" / "jax_sparse_expected.json"


def main() -> None:
    warnings.simplefilter("ignore")
    api = SimpleNamespace(jax=jax, jnp=jnp, lax=lax, sparse=sparse)
    expected = {"jax_version": jax.__version__, "cases": sparse_cases.run_all(api)}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
