"""Test record of solves.py: the custom_linear_solve primitive, on a diagonal system whose
solve divides (so the reference is b / d), with a transposed solve for reverse mode."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from records import Case, Record


def _values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    # Diagonals away from zero keep the system well conditioned.
    return (rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)).astype(dtype)


def _solve_case(rng: np.random.Generator, dtype: Any) -> Case:
    n = int(rng.integers(1, 5))

    def fun(d, b):
        return lax.custom_linear_solve(lambda x: d * x, b, lambda mv, y: y / d,
                                       transpose_solve=lambda vm, y: y / d)
    return Case(fun, lambda d, b: b / d, [_values(rng, (n,), dtype), _values(rng, (n,), dtype)],
                values=_values)


RECORDS = [
    Record("custom_linear_solve", _solve_case, dtypes=(np.float32,),
           notes="derivatives from the implicit function theorem (jvp, transpose)"),
]
