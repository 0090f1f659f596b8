"""The few array operations that transformations themselves need, filled in by `lax`.

Differentiation has to make zeros and add tangents; batching has to move and broadcast the
batch axis. Those are `lax` primitives, but the transformations sit below `lax` in the import
order, so `lax` registers implementations here when it is imported (a named registry, like
the operator table).
"""
from __future__ import annotations

from typing import Any, Callable

# name -> function; filled by jaxlite.lax at import time. Names and signatures:
#   zeros(aval) -> array of zeros with the aval's shape and dtype
#   add_any(x, y) -> x + y for tangents and cotangents of equal shape and dtype
#   moveaxis(x, src: int, dst: int) -> x with axis src moved to position dst
#   broadcast_axis(x, size: int, axis: int) -> x with a new axis of `size` inserted at `axis`
#   convert(x, dtype) -> x converted to dtype
#   reduce_sum(x, axes) -> x summed over `axes` (vmap's sum_match)
ARRAY_OPS: dict[str, Callable[..., Any]] = {}


def array_op(name: str) -> Callable[..., Any]:
    try:
        return ARRAY_OPS[name]
    except KeyError:
        raise RuntimeError(f"Array operation '{name}' is not registered: import jaxlite.lax "
                           "before using transformations.") from None
