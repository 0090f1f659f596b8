"""The primitive classes of `jax.extend.core`: a library's primitive, call primitives, and
primitives composed of jaxlite's operations."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core.linear_util import WrappedFun
from jaxlite.numpy import asarray
from jaxlite.core.primitive import Primitive as _CorePrimitive


class Primitive(_CorePrimitive):
    """A library's primitive (mirrors `jax.extend.core.Primitive`).

    Give it rules with `def_impl`, `def_abstract_eval`, `ad.primitive_jvps[p] = ...`,
    `ad.primitive_transposes[p] = ...`, `batching.primitive_batchers[p] = ...` and
    `mlir.register_lowering(p, mlir.lower_fun(impl, ...))`; set `multiple_results = True`
    for a primitive with several outputs.
    """

    def __init__(self, name: str) -> None:
        super().__init__(name, register=False)

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """Eager evaluation: `impl(*arrays, **params)`. jaxlite's eager interpreters (a
        scan or while loop run without jit) evaluate nested equations on numpy arrays;
        a library's impl gets them as jax Arrays, which it may use as such (`x.at[...]`)."""
        def impl_on_arrays(*args: Any, **params: Any) -> Any:
            return impl(*[asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a
                          for a in args], **params)
        impl_on_arrays.jax_rule = impl  # type: ignore[attr-defined]
        self.impl = impl_on_arrays
        return impl


class CallPrimitive(Primitive):
    """A primitive that calls a function (mirrors `jax.extend.core.CallPrimitive`).

    `bind(fun, *args, **params)` calls `fun` (a `WrappedFun` or a callable) on `args`
    under the current trace, so every transformation sees through the call.
    """

    multiple_results = True
    call_primitive = True

    def bind(self, fun: Any, *args: Any, **params: Any) -> Any:  # type: ignore[override]
        return call_impl(fun, *args, **params)


def call_impl(f: Any, *args: Any, **params: Any) -> Any:
    """Call `f` on `args`; the parameters belong to the call primitive (mirrors
    `jax.extend.core.call_impl`)."""
    return f.call_wrapped(*args) if isinstance(f, WrappedFun) else f(*args)


def composed_primitive(name: str, decomposition: Callable[..., Any],
                       multiple_results: bool = False) -> _CorePrimitive:
    """A primitive named `name` whose `bind(*args, **params)` evaluates
    `decomposition(*args, **params)` under the current trace.

    Transformations and backends see the decomposition's operations, so the primitive
    needs no rules of its own and never appears in a jaxpr; for the same reason it stays
    out of jaxlite's registry of primitives (whose members must have every rule).
    """
    prim = _CorePrimitive(name, multiple_results=multiple_results, register=False)

    def bind_with_trace(trace: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
        out = decomposition(*args, **params)
        return list(out) if multiple_results else out
    prim.def_bind_with_trace(bind_with_trace)
    prim.def_impl(decomposition)
    return prim
