"""Whether an array can exist before it is made (mirrors XLA's allocation failures).

Eager results that numpy would make lazily (a broadcast scalar is a zero-stride view) must
still be arrays that could exist, as in JAX: `jnp.zeros((10**6, 10**6))` fails at once
with JAX's `JaxRuntimeError` ("RESOURCE_EXHAUSTED: Out of memory allocating ... bytes.")
instead of succeeding and failing later, and a size whose bytes overflow int64 says so
(JAX's XLA aborts the process there). The limit is the machine's physical memory, read
once: an array larger than that can never be allocated, while smaller ones stay as cheap
as before (a product of the shape per result).
"""
from __future__ import annotations

import math
import os
from typing import Any, Iterable, Iterator

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr
from jaxlite.errors import JaxRuntimeError

__all__ = ["INT64_MAX", "MEMORY_BYTES", "allocation_error", "out_of_memory", "staged_avals"]

INT64_MAX = 2**63 - 1


def _physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):  # no sysconf: only int64 overflow is refused
        return INT64_MAX


MEMORY_BYTES = _physical_memory()


def out_of_memory(nbytes: int | None, what: str) -> JaxRuntimeError:
    """JAX's out-of-memory error for `nbytes` (None: unknown), naming `what` was being
    allocated."""
    size = "" if nbytes is None else f" {nbytes} bytes"
    return JaxRuntimeError(
        f"RESOURCE_EXHAUSTED: Out of memory allocating{size}. ({what}; this machine has "
        f"{MEMORY_BYTES} bytes of memory)")


def allocation_error(avals: Iterable[ShapedArray],
                     limit: int | None = None) -> JaxRuntimeError | None:
    """The error that allocating arrays of `avals` must raise, or None when each fits in
    `limit` bytes (default: the machine's memory)."""
    limit = MEMORY_BYTES if limit is None else limit
    for aval in avals:
        shape = getattr(aval, "shape", None)
        dtype = getattr(aval, "dtype", None)
        if not shape or dtype is None or dtypes.is_extended(dtype):
            continue
        size = math.prod(shape)
        nbytes = size * max(np.dtype(dtype).itemsize, 1)
        if nbytes <= limit:
            continue
        what = f"an array of shape {tuple(shape)} and dtype {np.dtype(dtype).name}"
        if nbytes > INT64_MAX:
            return JaxRuntimeError(
                f"INVALID_ARGUMENT: overflow in static extent product: dimensions="
                f"[{', '.join(map(str, shape))}]. ({what} would take {nbytes} bytes, more "
                f"than a 64-bit size can count)")
        return out_of_memory(nbytes, what)
    return None


def staged_avals(jaxpr: Jaxpr) -> Iterator[Any]:
    """The abstract values of every intermediate of `jaxpr`, those of the jaxprs in its
    equations' parameters (loop bodies, branches, calls) included."""
    for eqn in jaxpr.eqns:
        for var in eqn.outvars:
            yield var.aval
        for value in eqn.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(inner, ClosedJaxpr):
                    yield from staged_avals(inner.jaxpr)
                elif isinstance(inner, Jaxpr):
                    yield from staged_avals(inner)
