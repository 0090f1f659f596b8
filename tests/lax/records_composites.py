"""Test record of composites.py: the composite primitive computes its decomposition (it has
no derivative or batching rule, as in JAX: see test_composites.py)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from records import Case, Record, standard_values


def _fma_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3))))
    fma = lax.composite(lambda x, y, *, bias: x * y + bias, name="test.fma")
    return Case(lambda x, y: fma(x, y, bias=2), lambda x, y: (x * y + 2).astype(dtype),
                [standard_values(rng, shape, dtype), standard_values(rng, shape, dtype)])


RECORDS = [
    Record("composite", _fma_case, dtypes=(np.float32, np.int32), grad=False, vmap=False,
           notes="JAX raises for jvp and vmap of a composite; so does jaxlite"),
]
