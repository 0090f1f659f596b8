"""Records of the primitives of differentiation itself (add_any is in records_structural)."""
from __future__ import annotations

import numpy as np

from jaxlite import lax
from records import Case, Record, standard_values


def _stop_gradient_case(rng: np.random.Generator, dtype) -> Case:
    shape = tuple(rng.integers(0, 4, rng.integers(0, 3)))
    return Case(lax.stop_gradient, lambda x: x, [standard_values(rng, shape, dtype)])


RECORDS = [
    # Its derivative is zero by definition, which finite differences cannot confirm: the
    # zero gradient is checked in tests/test_transformations.py instead.
    Record("stop_gradient", _stop_gradient_case,
           dtypes=(np.float32, np.float16, np.complex64), grad=False),
]
