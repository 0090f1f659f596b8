"""Cases run both by real JAX 0.10.2 (to record expected outputs) and by jaxlite (to
compare with them), for jax.scipy.special and jax.scipy.stats.

A case calls `J.scipy.<path>(*args, **kwargs)` for J = jax or jaxlite on fixed numpy
inputs: grids of edge values (0, -0, negative, inf, nan, poles) in both precisions, Python
scalars (weak types), integer and float32 arrays (promotion), and calls JAX rejects (the
exception type and message are recorded). `record_jax_special_stats.py`, run with JAX's
Python, stores the outputs in tests/data/scipy/special_stats_<mode>.npz/json;
`test_special_stats_jax.py` compares jaxlite with them.

`pointwise` cases call the function once per grid point (a list of scalar outputs): JAX's
expn and hypergeometric functions are vectorized loops that never return on an array
holding inf or nan beside finite values. A `deviation` names the elements where jaxlite
deliberately gives scipy's value instead of JAX's (JAX's approximations fail there), with
the reason; the test compares those elements with the given reference instead.

This module imports neither jax nor jaxlite.
"""
from __future__ import annotations

import importlib
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

CASE_MODULES = ["cases_special", "cases_stats"]
MODES = ("x64", "x32")


@dataclass
class Deviation:
    """Elements where jaxlite gives `reference(*args)` instead of JAX's value, and why."""

    reason: str
    where: Callable[..., np.ndarray]
    reference: Callable[..., Any]


@dataclass
class Case:
    id: str
    path: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    pointwise: bool = False
    deviation: Deviation | None = None
    rtol: dict[str, float] = field(default_factory=dict)
    modes: tuple[str, ...] = MODES
    # A method to call on the result, with its arguments (gaussian_kde's methods).
    method: str | None = None
    method_args: tuple = ()

    def function(self, J: Any) -> Callable[..., Any]:
        target = J.scipy
        for part in self.path.split("."):
            target = getattr(target, part)
        return target

    def call(self, J: Any) -> Any:
        fun = self.function(J)
        if self.method is not None:
            return getattr(fun(*self.args, **self.kwargs), self.method)(*self.method_args)
        if not self.pointwise:
            return fun(*self.args, **self.kwargs)
        grid = np.broadcast_arrays(*[np.asarray(a) for a in self.args])
        return [fun(*(g.ravel()[i] for g in grid), **self.kwargs)
                for i in range(grid[0].size)]


def grid(*values: Any) -> tuple[np.ndarray, ...]:
    """Every combination of the given value lists, as flat float64 arrays."""
    points = np.array(list(itertools.product(*values)), dtype=np.float64)
    return tuple(points[:, i].copy() for i in range(points.shape[1]))


EDGE = [-np.inf, -2.5, -1.0, -0.0, 0.0, 1e-3, 0.5, 1.0, 2.0, 7.5, 40.0, np.inf, np.nan]
EDGE2 = [-np.inf, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 30.0, np.inf, np.nan]
EDGE3 = [-1.0, 0.0, 0.5, 1.0, 2.5, np.inf, np.nan]


def all_cases() -> list[Case]:
    cases = []
    for name in CASE_MODULES:
        cases.extend(importlib.import_module(name).CASES)
    ids = [c.id for c in cases]
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, f"duplicate case ids: {duplicates}"
    return cases


def default_rtol(dtype: np.dtype) -> float:
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return 0.0
    return 1e-5 if dtype.itemsize * (2 if dtype.kind == "f" else 1) <= 8 else 1e-12
