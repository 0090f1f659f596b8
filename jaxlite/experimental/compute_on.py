"""`jax.experimental.compute_on`: run part of a program on another kind of compute unit
(the host's CPU beside an accelerator, a TPU SparseCore, a GPU stream).

jaxlite's one device is the CPU that is also the host, so every compute type runs where it
always does; `compute_on` checks its argument as JAX does and remembers the innermost
compute type (`current_compute_type`), and `compute_on2` checks the memory spaces of its
outputs, which on one CPU are all the same memory.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator

from jaxlite._namespaces import MemorySpace
from jaxlite.api_util import flatten_axes
from jaxlite.tree_util import tree_flatten

__all__ = ["compute_on", "compute_on2"]

_VALID = ("device_host", "device", "tpu_sparsecore")
_state = threading.local()


def current_compute_type() -> str | None:
    """The compute type of the innermost `compute_on` block, or None outside one."""
    return getattr(_state, "compute_type", None)


def _check_compute_type(compute_type: Any) -> None:
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    if compute_type not in _VALID and not compute_type.startswith("gpu_stream:"):
        raise ValueError(
            f"Invalid compute type {compute_type}. Current supported values are "
            "`device_host`, `device`, `tpu_sparsecore`, and `gpu_stream:#`.")


@contextlib.contextmanager
def compute_on(compute_type: str) -> Iterator[None]:
    """Run the enclosed computation on `compute_type` (mirrors
    `jax.experimental.compute_on.compute_on`); a context manager or a decorator.

    On jaxlite's CPU device the computation runs as usual, with the same results."""
    _check_compute_type(compute_type)
    previous = current_compute_type()
    _state.compute_type = compute_type
    try:
        yield
    finally:
        _state.compute_type = previous


def compute_on2(f: Callable[..., Any] | None = None, *, compute_type: str,
                out_memory_spaces: Any, compiler_options: dict | None = None) -> Any:
    """Wrap `f` to run on `compute_type` with its outputs in `out_memory_spaces` (a
    `jax.memory.Space`, or a pytree prefix of the outputs) (mirrors
    `jax.experimental.compute_on.compute_on2`); usable as a decorator with keywords."""
    if f is None:
        return lambda g: compute_on2(g, compute_type=compute_type,
                                     out_memory_spaces=out_memory_spaces,
                                     compiler_options=compiler_options)
    _check_compute_type(compute_type)

    def wrapped(*args: Any) -> Any:
        with compute_on(compute_type):
            out = f(*args)
        _, out_tree = tree_flatten(out)
        spaces = flatten_axes("compute_on out_memory_spaces", out_tree, out_memory_spaces)
        if not all(isinstance(space, MemorySpace) for space in spaces):
            # JAX's abstract evaluation asserts the same.
            raise AssertionError(
                "compute_on2: out_memory_spaces must give a jax.memory.Space per output, "
                f"got {out_memory_spaces!r}")
        return out
    return wrapped
