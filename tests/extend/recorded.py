"""Running the shared cases (`extend_cases.py`) on jaxlite and comparing them with what
JAX 0.10.2 did (tests/data/extend/jax_expected.json, from record_jax_extend.py)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import api_util
from jaxlite.ad_checkpoint import checkpoint_name, print_saved_residuals
from jaxlite.custom_batching import custom_vmap, sequential_vmap
from jaxlite.custom_derivatives import SymbolicZero, linear_call

import extend_cases

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data" / "extend" /
                       "jax_expected.json").read_text())
API = SimpleNamespace(jax=jax, jnp=jnp, api_util=api_util, checkpoint_name=checkpoint_name,
                      print_saved_residuals=print_saved_residuals, custom_vmap=custom_vmap,
                      sequential_vmap=sequential_vmap, SymbolicZero=SymbolicZero,
                      linear_call=linear_call)


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Where `got` differs from `want`; floats agree within float32 rounding (1e-6)."""
    if isinstance(want, dict) and isinstance(got, dict):
        return [d for k in sorted(set(got) | set(want))
                for d in differences(got.get(k), want.get(k), f"{path}.{k}")]
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want))
                for d in differences(g, w, f"{path}[{i}]")]
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if abs(got - want) <= 1e-6 * max(1.0, abs(want)):
            return []
    return [] if got == want else [f"{path}: jaxlite {got!r}, JAX {want!r}"]


def check(case: str, allowed: dict[str, str] | None = None) -> None:
    """Run `case` on jaxlite and assert it matches JAX, except at the paths in `allowed`
    (each with the reason jaxlite differs)."""
    got = json.loads(json.dumps(extend_cases.CASES[case](API)))
    found = differences(got, EXPECTED[case], case)
    unexpected = [d for d in found if d.split(":")[0] not in (allowed or {})]
    assert not unexpected, "\n".join(unexpected)
