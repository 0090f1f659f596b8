"""Cases run both by real JAX 0.10.2 (to record expected outputs) and by jaxlite (to
compare with them): the harness of the jaxlite.scipy modules other than special and stats.

A case is a function of the top-level module J (`jax` or `jaxlite`) that calls
J.scipy.<module>.<name> on fixed numpy inputs. `record_jax_scipy.py`, run with JAX's
Python, stores each case's output leaves (values, dtypes, weak types) or its exception
(type and message) in tests/data/scipy/, once with 64-bit mode on ("x64") and once off
("x32"); `test_jax_agreement.py` runs the same cases on jaxlite and compares. This module
imports neither jax nor jaxlite: the case modules (`jax_cases_<module>.py`) hold numpy
inputs and functions of J only.
"""
from __future__ import annotations

import importlib
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

CASE_MODULES = ["jax_cases_linalg", "jax_cases_optimize", "jax_cases_sparse",
                "jax_cases_fft", "jax_cases_signal", "jax_cases_misc", "jax_cases_grads"]
MODES = ("x64", "x32")


@dataclass
class JaxCase:
    """One call to compare.

    id : unique name ("<module>.<function>/<variant>").
    call : J -> result (a pytree of arrays), or raises.
    rtol : relative tolerance per mode (default by the output dtype: 2e-5 for 32-bit
        floats, 1e-12 for 64-bit; integers and bools exactly); atol is rtol times the
        largest magnitude of the expected output, or `atol` of the mode if larger (for
        outputs that are rounding noise around zero, as gradients at a minimum).
    gauge : numpy function of the output leaves giving the values to compare, for
        outputs defined only up to signs or phases (eigenvectors, singular vectors).
    modes : which of "x64" and "x32" to run.
    jit : also compare `J.jit(lambda: call(J))()` (jaxlite only).
    """

    id: str
    call: Callable[[Any], Any]
    rtol: dict[str, float] = field(default_factory=dict)
    atol: dict[str, float] = field(default_factory=dict)
    gauge: Callable[[list[np.ndarray]], list[np.ndarray]] | None = None
    modes: tuple[str, ...] = MODES
    jit: bool = False


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded by the name, so that inputs are stable across runs."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(name: str, shape: tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
    rng = rng_for(name)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def all_cases() -> list[JaxCase]:
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
    return 2e-5 if dtype.itemsize * (2 if dtype.kind == "f" else 1) <= 8 else 1e-12
