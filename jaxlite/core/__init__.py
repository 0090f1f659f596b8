"""The core of jaxlite: abstract values, primitives, traces and jaxprs.

Under the import hook this package is also `jax.core`, so it exports the names of JAX
0.10.2's `jax.core` (and no others: libraries test for names to tell JAX versions apart).
Its submodules hold the implementation; this file imports only from them.
"""
from typing import Any, Union

from jaxlite.core.avals import AbstractValue, ShapedArray, max_dim, min_dim
from jaxlite.core.jaxpr import Literal as _Literal, Var as _Var, eval_jaxpr
from jaxlite.core.trace import Trace, Tracer
from jaxlite.core.trace_state import ensure_compile_time_eval, eval_context

# JAX's type aliases.
Atom = Union[_Var, _Literal]
ParamDict = dict[str, Any]
Value = Any

__all__ = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
           "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "max_dim", "min_dim"]
