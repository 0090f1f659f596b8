"""Test records: how each primitive is exercised by the shared primitive tests.

Every primitive in the registry has a `Record` in one of the `records_*.py` modules of this
folder (collected by `all_records`). A record draws one `Case`: a jaxlite function of array
arguments, the numpy function it must agree with, and the arguments. The shared tests in
`test_primitives.py` then check values against numpy, gradients against finite differences,
vmap against a loop and jit against eager, for every record.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

Shape = tuple[int, ...]


def standard_values(rng: np.random.Generator, shape: Shape, dtype: Any) -> np.ndarray:
    """Values every dtype can hold exactly enough: small integers, normal floats."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(0, 10, shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-10, 10, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@dataclass
class Case:
    """One concrete use of a primitive.

    fun : jaxlite function of the array arguments (static parameters closed over).
    reference : numpy function of the same arguments giving the expected result.
    args : the arguments, numpy arrays.
    values : draws new arguments of a given shape and dtype within the function's domain
        (used to make more batch members for vmap, and to restrict domains: log > 0, ...).
    grad_argnums : positions of the arguments to differentiate (default: every inexact one).
    """

    fun: Callable[..., Any]
    reference: Callable[..., Any]
    args: Sequence[np.ndarray]
    values: Callable[[np.random.Generator, Shape, Any], np.ndarray] = standard_values
    grad_argnums: Sequence[int] | None = None


@dataclass
class Record:
    """How to test one primitive.

    primitive : the primitive's registered name.
    make_case : draws a Case for a given dtype from a numpy Generator.
    dtypes : dtypes to test values with (grads always use float64 versions).
    grad : whether the primitive is differentiable (jvp and vjp checked numerically).
    grad_dtype : dtype used for the finite-difference checks.
    vmap : whether to check batching against a loop.
    vmap_axes : which in_axes to test (each argument mapped along that axis).
    """

    primitive: str
    make_case: Callable[[np.random.Generator, Any], Case]
    dtypes: Sequence[Any] = (np.float32,)
    grad: bool = True
    grad_dtype: Any = np.float64
    vmap: bool = True
    vmap_axes: Sequence[int | None] = (0, 1, -1, None)
    notes: str = ""
    extra: dict = field(default_factory=dict)


def all_records() -> dict[str, Record]:
    """Every record of every records_*.py module in this folder, by primitive name."""
    records: dict[str, Record] = {}
    folder = Path(__file__).parent
    for info in pkgutil.iter_modules([str(folder)]):
        if info.name.startswith("records_"):
            module = importlib.import_module(info.name)
            for record in module.RECORDS:
                if record.primitive in records:
                    raise ValueError(f"two records for primitive {record.primitive}")
                records[record.primitive] = record
    return records
