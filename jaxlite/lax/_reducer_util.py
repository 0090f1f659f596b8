"""What the general reductions (`reduce`, `reduce_window`) share: tracing the user's
reducer into a jaxpr over scalars, recognizing the monoids that have their own
primitives, and applying a scalar reducer elementwise to whole arrays.

Mirrors `jax._src.lax.lax._variadic_reduction_jaxpr` and `_get_monoid_reducer`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.trace import Tracer
from jaxlite.interpreters.batching import vmap_flat
from jaxlite.interpreters.staging import trace_to_jaxpr
from jaxlite.lax._control_flow_util import eval_closed, is_concrete, type_str
from jaxlite.lax.arithmetic import full
from jaxlite.lax.broadcast import reshape
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_unflatten


def reduction_jaxpr(computation: Callable[[Any, Any], Any], init_avals: Sequence[ShapedArray],
                    init_tree: PyTreeDef) -> tuple[ClosedJaxpr, PyTreeDef]:
    """`computation(a, b)` for two pytrees of scalars shaped like the initial values,
    traced into a jaxpr of the 2n scalars; and the pytree structure of its result."""
    out_trees: list[PyTreeDef] = []

    def flat(*leaves: Any) -> list[Any]:
        n = len(leaves) // 2
        a, b = tree_unflatten(init_tree, leaves[:n]), tree_unflatten(init_tree, leaves[n:])
        out, out_tree = tree_flatten(computation(a, b))
        out_trees.append(out_tree)
        return out
    scalars = [ShapedArray((), a.dtype, a.weak_type) for a in init_avals]
    closed = trace_to_jaxpr(flat, scalars + scalars)
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError("Reduction computations can't close over Tracers. "
                                  "Pass the traced value as an operand instead.")
    for out, init in zip(closed.out_avals, init_avals):
        if out.shape != () or out.dtype != init.dtype:
            raise TypeError(f"reduction computation must return scalars of the initial "
                            f"values' types {[type_str(a) for a in init_avals]}, got "
                            f"{[type_str(a) for a in closed.out_avals]}.")
    return closed, out_trees[0]


def flat_operands(name: str, operands: Any, init_values: Any
                  ) -> tuple[list[Any], list[Any], PyTreeDef]:
    """The leaves of `operands` and `init_values`, which must share one structure."""
    flat_ops, operand_tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if operand_tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{operand_tree} vs. {init_tree}")
    if not flat_ops and name == "reduce_window":
        raise ValueError("reduce_window must have at least one operand.")
    return flat_ops, flat_inits, init_tree


def identity_of(kind: str, dtype: Any) -> np.ndarray:
    """The identity of a monoid kind ('add', 'mul', 'max', 'min', 'and', 'or', 'xor')."""
    dtype = np.dtype(dtype)
    if kind in ("add", "or", "xor"):
        return np.zeros((), dtype)
    if kind == "mul":
        return np.ones((), dtype)
    if kind == "and":
        return np.array(-1).astype(dtype)
    largest = kind == "min"
    if dtype == np.bool_:
        return np.array(largest)
    if dtypes.is_inexact(dtype):
        return np.array(np.inf if largest else -np.inf, dtype)
    info = dtypes.iinfo(dtype)
    return np.array(info.max if largest else info.min, dtype)


def find_monoid(table: Sequence[tuple[Callable, str, Any]], computation: Callable,
                inits: Sequence[Any]) -> Any:
    """The entry (third item) of `table` whose function is `computation` and whose monoid
    kind has the one initial value as identity; None when none fits."""
    if len(inits) != 1:
        return None
    for function, kind, entry in table:
        if computation is function and is_identity(inits[0], kind):
            return entry
    return None


def is_identity(value: Any, kind: str) -> bool:
    """Whether the scalar `value` is known now to be the identity of `kind`."""
    if not is_concrete(value) or np.shape(value) != ():
        return False
    dtype = get_aval(value).dtype
    if kind in ("and", "or", "xor") and not (dtype == np.bool_ or dtypes.is_integer(dtype)):
        return False
    concrete = value.concrete_value() if isinstance(value, Tracer) else value
    return bool(np.asarray(concrete) == identity_of(kind, dtype))


def apply_elementwise(closed: ClosedJaxpr, *arrays: Any) -> list[Any]:
    """The scalar jaxpr `closed` applied to each position of arrays of one shape."""
    shape = tuple(get_aval(arrays[0]).shape)
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return [full(shape, 0, a.dtype) for a in closed.out_avals]
    flat = [reshape(a, (size,)) for a in arrays]
    outs = vmap_flat(lambda *xs: eval_closed(closed, *xs), size, flat, [0] * len(flat), 0)
    return [reshape(o, shape) for o in outs]


def apply_to_numpy(closed: ClosedJaxpr, *arrays: np.ndarray) -> list[np.ndarray]:
    """`apply_elementwise` on numpy arrays, with numpy arrays back (for references)."""
    return [np.asarray(o) for o in apply_elementwise(closed, *arrays)]
