"""`jax.interpreters.pxla`: JAX's multi-device compilation, of which 0.10.2 exports one name.

jaxlite compiles for one device, with `backends.base.CompileOptions`; XLA's compile options
proto has no counterpart, so `create_compile_options` says so.
"""
from __future__ import annotations

from typing import Any

__all__ = ["create_compile_options"]


def create_compile_options(computation: Any, tuple_args: Any, allow_prop_to_inputs: Any,
                           allow_prop_to_outputs: Any, backend: Any, np_dev: Any,
                           compiler_options: Any) -> Any:
    """Not available in jaxlite (mirrors `pxla.create_compile_options`): it builds XLA's
    CompileOptions proto for a sharded computation."""
    raise NotImplementedError(
        "jax.interpreters.pxla.create_compile_options builds XLA's CompileOptions proto for "
        "multi-device compilation; jaxlite compiles for one device with its own "
        "CompileOptions (jaxlite.backends.base).")
