"""Helpers of the cpu backend tests: one shared client, modules from HLO text, and running a
module on the cpu backend and on the interpreter (the judge) with the same arguments.

Floating-point results are compared with a tolerance per dtype that covers what the cpu
backend may legitimately do differently: reassociate reductions and dot products (vector
accumulators), and compute transcendentals with its own math library (a few ulp); integers
and booleans must match exactly, NaN where the interpreter has NaN.
"""
from __future__ import annotations

import functools
import textwrap

import numpy as np

from jaxlite.backends.base import CompileOptions
from jaxlite.backends.cpu.client import CpuClient
from jaxlite.backends.interpreter import InterpreterClient
from jaxlite.core import dtypes
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import parse_module

__all__ = ["cpu_client", "interpreter", "module", "run_cpu", "run_interpreter", "compare",
           "assert_same", "values_for", "TOLERANCE"]

TOLERANCE = {
    np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-5, np.dtype(np.float16): 2e-3,
    np.dtype(dtypes.bfloat16): 2e-2,
}


@functools.lru_cache(maxsize=None)
def cpu_client() -> CpuClient:
    return CpuClient()


@functools.lru_cache(maxsize=None)
def interpreter() -> InterpreterClient:
    return InterpreterClient()


def module(body: str, computations: str = "") -> HloModule:
    """A module whose entry computation holds the instructions `body` (HLO text)."""
    return parse_module(f"HloModule m\n{textwrap.dedent(computations)}\nENTRY %main {{\n"
                        f"{textwrap.dedent(body)}\n}}\n")


def run_cpu(m: HloModule, args: list[np.ndarray], **options: object) -> list[np.ndarray]:
    client = cpu_client()
    executable = client.compile(m, CompileOptions(**options))  # type: ignore[arg-type]
    with np.errstate(all="ignore"):
        outs = executable.execute([client.buffer_from_numpy(np.array(a)) for a in args])
    return [np.asarray(o.to_numpy()) for o in outs]


def run_interpreter(m: HloModule, args: list[np.ndarray]) -> list[np.ndarray]:
    client = interpreter()
    executable = client.compile(m, CompileOptions())
    with np.errstate(all="ignore"):
        outs = executable.execute([client.buffer_from_numpy(np.array(a)) for a in args])
    return [np.asarray(o.to_numpy()) for o in outs]


def assert_same(actual: np.ndarray, expected: np.ndarray, what: str = "",
                tolerance: float | None = None) -> None:
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    tol = TOLERANCE.get(actual.dtype) if tolerance is None else tolerance
    if tol is None:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def compare(m: HloModule, args: list[np.ndarray], tolerance: float | None = None) -> None:
    """The cpu backend computes what the interpreter computes."""
    expected = run_interpreter(m, args)
    actual = run_cpu(m, args)
    assert len(actual) == len(expected)
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert_same(a, e, f"output {k}", tolerance)


def values_for(dtype: object, shape: tuple[int, ...], rng: np.random.Generator,
               specials: bool = True) -> np.ndarray:
    """Arguments of a dtype: small values, and the awkward ones (zeros, extremes, inf, NaN,
    -0.0) mixed in."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(max(info.min, -9), min(info.max, 9) + 1, shape).astype(dtype)
        pool = np.array([0, 1, info.max, info.min, -1 if info.min < 0 else 2], dtype)
    else:
        values = rng.uniform(-4, 4, shape).astype(dtype)
        pool = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 0.5]).astype(dtype)
    if specials and values.size:
        mask = rng.random(shape) < 0.15
        values[mask] = rng.choice(pool, size=int(mask.sum()))
    return values
