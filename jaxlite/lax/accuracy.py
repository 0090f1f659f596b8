"""Requested accuracies of transcendental functions: `Tolerance` and `AccuracyMode`.

Mirrors `jax.lax.Tolerance` and `jax.lax.AccuracyMode`, the `accuracy` argument of
`lax.exp`, `log`, `sin`, `tanh`, ... That argument lets an accelerator pick a cheaper
implementation; JAX's CPU computes the same values whatever it says, and so does jaxlite,
which checks the argument and otherwise ignores it.
"""
from __future__ import annotations

import enum
from typing import Any

__all__ = ["Tolerance", "AccuracyMode"]


class Tolerance:
    """Tolerances a function's implementation must meet: (atol and rtol) or (atol and
    ulps) (mirrors `jax.lax.Tolerance`)."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0) -> None:
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps


class AccuracyMode(enum.Enum):
    """The most accurate implementation, or the platform's default
    (mirrors `jax.lax.AccuracyMode`)."""

    HIGHEST = 1
    DEFAULT = 2


def check_accuracy(accuracy: Any) -> None:
    """Refuse an `accuracy` argument that is neither None, a Tolerance nor an AccuracyMode,
    with JAX's NotImplementedError."""
    if accuracy is not None and not isinstance(accuracy, (Tolerance, AccuracyMode)):
        raise NotImplementedError(f"Accuracy {accuracy} not supported")
