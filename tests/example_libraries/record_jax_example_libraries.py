"""Record what real JAX 0.10.2 computes for the tests of jax.example_libraries.

Run with JAX installed (not jaxlite), from the repository root:

    /tmp/jaxvenv/bin/python tests/example_libraries/record_jax_example_libraries.py

It runs example_cases.py (stax models trained a few steps by each optimizer, schedules,
utilities, errors) on JAX and writes tests/data/example_libraries/jax_expected.json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax.example_libraries import optimizers, stax

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "experimental"))  # case_util
import example_cases  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "example_libraries" / "jax_expected.json"


def main() -> None:
    api = SimpleNamespace(jax=jax, jnp=jnp, optimizers=optimizers, stax=stax)
    expected = {"jax_version": jax.__version__, "cases": example_cases.run_all(api)}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
