"""Test records of tokens.py: create_token and after_all give empty bool arrays (jaxlite's
tokens) whatever they are given."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlite import lax
from records import Case, Record


def _token(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    return np.zeros((0,), np.bool_)


def _create_case(rng: np.random.Generator, dtype: Any) -> Case:
    return Case(lambda: lax.create_token(), lambda: np.zeros((0,), np.bool_), [])


def _after_all_case(rng: np.random.Generator, dtype: Any) -> Case:
    count = int(rng.integers(0, 3))
    return Case(lambda *ts: lax.after_all(*ts), lambda *ts: np.zeros((0,), np.bool_),
                [_token(rng, (0,), np.bool_) for _ in range(count)], values=_token)


RECORDS = [
    Record("create_token", _create_case, dtypes=(np.bool_,), grad=False, vmap=False),
    Record("after_all", _after_all_case, dtypes=(np.bool_,), grad=False, vmap=False,
           notes="tokens cannot be batched (a batched bool[0] is no token), as in JAX"),
]
