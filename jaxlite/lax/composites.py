"""Functions whose meaning depends on what runs them: `composite` and `platform_dependent`.

Mirrors `jax.lax.composite`: a named operation defined by its decomposition, staged as one
`composite` equation carrying the decomposition's jaxpr (a backend could replace it with a
faster kernel; ours call the decomposition). As in JAX it has no derivative and no batching
rule: those raise JAX's errors, and `jax.custom_jvp` is the way to add them.

Mirrors `jax.lax.platform_dependent`: the branch for the platform the computation runs on.
jaxlite runs on the CPU (its `interpreter` backend computes the CPU's results), so the
`cpu` branch is taken, else `default`.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from jaxlite.config import config
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.primitive import Primitive
from jaxlite.core.trace import Tracer
from jaxlite.errors import UnexpectedTracerError
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.lax import _lowering_util as hlo
from jaxlite.lax._control_flow_util import eval_closed, trace_function
from jaxlite.tree_util import tree_flatten, tree_unflatten
from jaxlite.xla.ir import HloInstruction

__all__ = ["composite", "platform_dependent"]

composite_p = Primitive("composite", multiple_results=True)


def _composite_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr,
                             **params: Any) -> list[ShapedArray]:
    return list(jaxpr.out_avals)


def _composite_reference(*args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    return eval_closed(jaxpr, *args)


def _composite_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` "
                     "to add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _composite_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any],
                     **params: Any) -> Any:
    raise NotImplementedError("Batching rule for 'composite' not implemented")


def _composite_lower(ctx: LoweringContext, *args: HloInstruction, name: str,
                     jaxpr: ClosedJaxpr, **params: Any) -> list[HloInstruction]:
    return hlo.call_jaxpr(ctx, jaxpr, args, hlo.computation_name(name))


composite_p.abstract_eval = _composite_abstract_eval
composite_p.reference = _composite_reference
composite_p.jvp = _composite_jvp
composite_p.batch = _composite_batch
composite_p.lower = _composite_lower


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """`decomposition` as one named operation, `name`, of version `version`
    (mirrors `jax.lax.composite`).

    The returned function takes the decomposition's positional arguments (arrays) and
    keyword arguments (static attributes, which must not be traced values).
    """
    @functools.wraps(decomposition)
    def composite_fun(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(v, Tracer) for v in kwargs.values()):
            raise UnexpectedTracerError(
                "Found a JAX Tracer as an attribute in the decomposition for the composite "
                f"op '{name}'. This means that the decomposition function closes over a "
                "value that is involved in a JAX transformation. Any values that aren't "
                "explicitly known at compile time must be explicitly passed as arguments "
                "to the composite.\n\nNote: If you are passing jax arrays as attributes, "
                "use numpy arrays instead.")
        leaves, in_tree = tree_flatten(args)
        jaxpr, consts, out_tree = trace_function(
            functools.partial(decomposition, **kwargs), in_tree,
            [get_aval(x) for x in leaves])
        attributes = tuple((k, tuple(tree_flatten(v)[0]), tree_flatten(v)[1])
                           for k, v in kwargs.items())
        outs = composite_p.bind(*consts, *leaves, name=name, attributes=attributes,
                                version=version, jaxpr=jaxpr)
        return tree_unflatten(out_tree, outs)
    return composite_fun


# ---------------------------------------------------------------------- platform_dependent

def _current_platform() -> str:
    chosen = config.read("jax_platforms")
    platform = str(chosen).split(",")[0].strip().lower() if chosen else "cpu"
    # The interpreter is the reference of the cpu backend: it computes the CPU's values.
    return "cpu" if platform in ("", "interpreter") else platform


def platform_dependent(*args: Any, default: Callable | None = None,
                       **per_platform: Callable) -> Any:
    """`per_platform[platform](*args)` for the platform the computation runs on, else
    `default(*args)` (mirrors `jax.lax.platform_dependent`)."""
    if "gpu" in per_platform:
        raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    platform = _current_platform()
    branch = per_platform.get(platform, default)
    if branch is None:
        raise NotImplementedError(
            f"lax.platform_dependent has no branch for platform {platform} and no default "
            f"(branches for {sorted(per_platform)}); JAX fails in the same way when "
            "lowering.")
    return branch(*args)
