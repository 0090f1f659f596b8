"""Record what real JAX 0.10.2 answers for tests/api/test_extend_primitives.py.

Run with JAX installed (not jaxlite), from the repository root:

    /tmp/jaxvenv/bin/python tests/api/record_extend_primitives.py

It runs extend_primitives_cases.py on JAX and writes
tests/data/api/extend_primitives_jax.json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.extend.random  # noqa: F401  (the cases read jax.extend.random's impls)
import jax.numpy as jnp
from jax.extend.core import primitives

sys.path.insert(0, str(Path(__file__).parent))
import extend_primitives_cases  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "api" / "extend_primitives_jax.json"


def main() -> None:
    api = SimpleNamespace(jax=jax, jnp=jnp, P=primitives)
    expected = {"jax_version": jax.__version__, **extend_primitives_cases.run_all(api)}
    OUT.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
