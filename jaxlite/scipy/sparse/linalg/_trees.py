"""Vector arithmetic on pytrees of arrays, for the iterative solvers (JAX's helpers of the
same meaning): sums of products over all leaves, at the highest precision."""
from __future__ import annotations

import operator
from functools import partial
from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
import jaxlite.numpy as jnp
from jaxlite.tree_util import Partial, tree_leaves, tree_map

__all__ = ["vdot_real", "vdot", "norm", "scale", "add", "sub", "identity",
           "as_operator", "precise_dot"]


def precise_dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _vdot_real_part(x: Any, y: Any) -> Any:
    """Re <x, y> without forming complex products."""
    result = jnp.vdot(x.real, y.real, precision=lax.Precision.HIGHEST)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += jnp.vdot(x.imag, y.imag, precision=lax.Precision.HIGHEST)
    return result


def vdot_real(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def vdot(x: Any, y: Any) -> Any:
    """<x, y> = sum conj(x) y over all leaves."""
    return sum(tree_leaves(tree_map(partial(jnp.vdot, precision=lax.Precision.HIGHEST),
                                    x, y)))


def norm(x: Any) -> Any:
    leaves = tree_leaves(x)
    return jnp.sqrt(sum(_vdot_real_part(leaf, leaf) for leaf in leaves))


def scale(scalar: Any, tree: Any) -> Any:
    return tree_map(partial(operator.mul, scalar), tree)


add = partial(tree_map, operator.add)
sub = partial(tree_map, operator.sub)


@Partial
def identity(x: Any) -> Any:
    return x


def as_operator(f: Any) -> Callable[[Any], Any]:
    """A function x -> A x from a function, a square matrix, or an object with @."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, jnp.ndarray)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return partial(precise_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")
