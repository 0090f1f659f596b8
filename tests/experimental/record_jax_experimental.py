"""Record what real JAX 0.10.2 answers for the tests of jax.experimental (checkify, ...).

Run with JAX installed (not jaxlite), from the repository root:

    /tmp/jaxvenv/bin/python tests/experimental/record_jax_experimental.py

It runs the case modules beside this file on JAX and writes
tests/data/experimental/jax_expected.json, one section per module.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import checkify, jet, ode

sys.path.insert(0, str(Path(__file__).parent))
import checkify_cases  # noqa: E402
import jet_cases  # noqa: E402
import ode_cases  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "experimental" / "jax_expected.json"


def main() -> None:
    api = SimpleNamespace(jax=jax, jnp=jnp, lax=lax, checkify=checkify, ode=ode, jet=jet)
    expected = {"jax_version": jax.__version__, "checkify": checkify_cases.run_all(api),
                "ode": ode_cases.run_all(api), "jet": jet_cases.run_all(api)}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
