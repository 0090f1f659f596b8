"""Record what real JAX 0.10.2 does for the extension-API tests (tests/extend/).

Run with JAX installed (not jaxlite):

    /tmp/jaxvenv/bin/python tests/extend/record_jax_extend.py

It runs the cases of `extend_cases.py` on JAX and writes
tests/data/extend/jax_expected.json: what custom rules see (symbolic zeros, perturbed
flags), saved residuals per checkpoint policy (without JAX's source locations, which
jaxlite does not track), custom_vmap rule calls, linear_call values and api_util results.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
from jax import api_util
from jax.ad_checkpoint import checkpoint_name, print_saved_residuals
from jax.custom_batching import custom_vmap, sequential_vmap
from jax.custom_derivatives import SymbolicZero, linear_call

from extend_cases import run_all

OUT = Path(__file__).resolve().parents[1] / "data" / "extend" / "jax_expected.json"


def main() -> None:
    api = SimpleNamespace(jax=jax, jnp=jnp, api_util=api_util, checkpoint_name=checkpoint_name,
                          print_saved_residuals=print_saved_residuals, custom_vmap=custom_vmap,
                          sequential_vmap=sequential_vmap, SymbolicZero=SymbolicZero,
                          linear_call=linear_call)
    expected = {**run_all(api), "jax_version": jax.__version__}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
