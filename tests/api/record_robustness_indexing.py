"""Record what real JAX 0.10.2 answers for tests/api/test_robustness_indexing.py.

Run with JAX installed (not jaxlite), from the repository root:

    /tmp/jaxvenv/bin/python tests/api/record_robustness_indexing.py

It runs robustness_indexing_cases.py on JAX (x64 off) and writes
tests/data/api/robustness_indexing_jax.json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, str(Path(__file__).parent))
import robustness_indexing_cases  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "api" / "robustness_indexing_jax.json"


def main() -> None:
    api = SimpleNamespace(jax=jax, jnp=jnp, lax=lax)
    expected = {"jax_version": jax.__version__, **robustness_indexing_cases.run_all(api)}
    OUT.write_text(json.dumps(expected, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(expected) - 1} cases to {OUT}")


if __name__ == "__main__":
    main()
