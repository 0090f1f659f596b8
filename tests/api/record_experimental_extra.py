"""Record what real JAX 0.10.2 answers for tests/api/test_experimental_extra.py.

Run with JAX installed (not jaxlite), from the repository root:

    /tmp/jaxvenv/bin/python tests/api/record_experimental_extra.py

It runs experimental_extra_cases.py on JAX and writes
tests/data/api/experimental_extra_jax.json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax.experimental import random as xrandom
from jax.experimental import rnn
from jax.experimental.sparse import linalg as splinalg

sys.path.insert(0, str(Path(__file__).parent))
import experimental_extra_cases  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "api" / "experimental_extra_jax.json"


def main() -> None:
    api = SimpleNamespace(jax=jax, jnp=jnp, xrandom=xrandom, rnn=rnn, splinalg=splinalg)
    expected = {"jax_version": jax.__version__, **experimental_extra_cases.run_all(api)}
    OUT.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
