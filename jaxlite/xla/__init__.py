"""jaxlite's XLA-style compiler: HLO (`ir.py`), its text (`text.py`), passes, backends'
shared pieces. `parse_hlo(text)` reads HLO text as XLA and JAX print it."""
from __future__ import annotations

from jaxlite.xla.ir import HloModule
from jaxlite.xla.text_parser import parse_module as _parse_module

__all__ = ["parse_hlo"]


def parse_hlo(text: str) -> HloModule:
    """jaxlite's HLO module of HLO text (what `jax.jit(f).lower(x).as_text(dialect="hlo")`
    or `.compile().as_text()` prints); `jaxlite.export.from_stablehlo` reads StableHLO."""
    return _parse_module(text)
