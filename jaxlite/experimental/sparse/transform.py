"""`sparsify`: run a function written for dense arrays on sparse arguments
(mirrors `jax.experimental.sparse.sparsify`).

The function is traced to a jaxpr with each sparse argument standing as a dense value of
its shape; the jaxpr is then evaluated with the sparse values where they flow, each
equation that touches one going through the sparse rule of its primitive. A primitive
without a rule raises JAX's NotImplementedError. `use_tracer=True` (JAX's SparseTracer
mode) gives the same results through the same evaluator.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from jaxlite import numpy as jnp
from jaxlite.core.jaxpr import Literal
from jaxlite.experimental.sparse import _operators, bcoo_shape
from jaxlite.experimental.sparse._base import JAXSparse
from jaxlite.experimental.sparse.bcoo import (BCOO, bcoo_dot_general, bcoo_reduce_sum,
                                              bcoo_todense, bcoo_transpose)
from jaxlite.transforms.tracing import ShapeDtypeStruct, make_jaxpr
from jaxlite.tree_util import tree_flatten, tree_unflatten


class SparseTracer:
    """A sparse value inside `sparsify` (mirrors `jax.experimental.sparse.SparseTracer`;
    jaxlite's sparsify evaluates a jaxpr, so user code does not meet these)."""

    def __init__(self, trace: Any, *, spvalue: Any):
        self._trace, self._spvalue = trace, spvalue


def _is_sparse(x: Any) -> bool:
    return isinstance(x, JAXSparse)


def _on_data(fun: Callable[[Any], Any]) -> Callable[..., Any]:
    """The rule of an elementwise primitive that maps zero to zero: apply it to the data."""
    return lambda x, **params: x._with_data(fun(x.data))


def _dot_general(x: Any, y: Any, *, dimension_numbers: Any,
                 preferred_element_type: Any = None, **params: Any) -> Any:
    return bcoo_dot_general(x, y, dimension_numbers=dimension_numbers,
                            preferred_element_type=preferred_element_type)


def _reduce_sum(x: Any, *, axes: Any, **params: Any) -> Any:
    out = bcoo_reduce_sum(x, axes=axes)
    return bcoo_todense(out) if out.ndim == 0 else out


def _integer_pow(x: Any, *, y: int) -> Any:
    if y <= 0:
        raise NotImplementedError(f"sparse rule for integer_pow with non-positive "
                                  f"exponent {y} is not implemented because it would "
                                  "result in dense output.")
    return x._with_data(x.data ** y)


_RULES: dict[str, Callable[..., Any]] = {
    "mul": lambda x, y: _operators.multiply(x, y),
    "add": lambda x, y: _operators.add(x, y),
    "sub": lambda x, y: _operators.add(x, y, negate_rhs=True),
    "div": lambda x, y: _operators.divide(x, y),
    "neg": _on_data(lambda d: -d),
    "abs": _on_data(jnp.abs),
    "sin": _on_data(jnp.sin),
    "tan": _on_data(jnp.tan),
    "sqrt": _on_data(jnp.sqrt),
    "tanh": _on_data(jnp.tanh),
    "sign": _on_data(jnp.sign),
    "expm1": _on_data(jnp.expm1),
    "log1p": _on_data(jnp.log1p),
    "imag": _on_data(jnp.imag),
    "real": _on_data(jnp.real),
    "conj": _on_data(jnp.conj),
    "integer_pow": _integer_pow,
    "convert_element_type": lambda x, *, new_dtype, **p: x.astype(new_dtype),
    "copy": lambda x: x,
    "dot_general": _dot_general,
    "reduce_sum": _reduce_sum,
    "transpose": lambda x, *, permutation: bcoo_transpose(x, permutation=permutation),
    "reshape": lambda x, *, new_sizes, dimensions=None, **p: bcoo_shape.bcoo_reshape(
        x, new_sizes=new_sizes, dimensions=dimensions),
    "squeeze": lambda x, *, dimensions: bcoo_shape.bcoo_squeeze(x, dimensions=dimensions),
    "rev": lambda x, *, dimensions: bcoo_shape.bcoo_rev(x, dimensions),
    "broadcast_in_dim": lambda x, *, shape, broadcast_dimensions, **p:
        bcoo_shape.bcoo_broadcast_in_dim(x, shape=shape,
                                         broadcast_dimensions=broadcast_dimensions),
    "concatenate": lambda *xs, dimension: bcoo_shape.bcoo_concatenate(
        xs, dimension=dimension),
    "slice": lambda x, *, start_indices, limit_indices, strides: bcoo_shape.bcoo_slice(
        x, start_indices=start_indices, limit_indices=limit_indices, strides=strides),
}

# Primitives whose result would be dense (JAX names this case in its message).
_DENSIFYING = {"add", "sub", "exp", "log", "cos", "eq", "ne", "ge", "gt", "le", "lt",
               "xor", "atan2", "acos", "acosh", "cosh", "exp2", "logistic"}


def _apply_sparse(eqn: Any, values: list) -> Any:
    name = eqn.primitive.name
    inner = eqn.params.get("jaxpr")
    if name in ("jit", "pjit", "closed_call") and hasattr(inner, "consts"):
        return _eval_sparse(inner, values)
    if any(isinstance(v, JAXSparse) and not isinstance(v, BCOO) for v in values):
        raise NotImplementedError(f"sparsify: jaxlite's rules take BCOO arrays; got "
                                  f"{[type(v).__name__ for v in values]} for {name}.")
    rule = _RULES.get(name)
    if rule is None or (name in ("add", "sub") and not all(map(_is_sparse, values))):
        if name in _DENSIFYING:
            raise NotImplementedError(
                f"sparse rule for {name} is not implemented because it would result in "
                "dense output. If this is your intent, use sparse.todense() to convert "
                "your arguments to dense matrices.")
        raise NotImplementedError(f"sparse rule for {name} is not implemented.")
    out = rule(*values, **eqn.params)
    return list(out) if eqn.primitive.multiple_results else [out]


def _eval_sparse(closed: Any, args: list) -> list:
    env: dict[Any, Any] = {}

    def read(atom: Any) -> Any:
        return np.asarray(atom.value) if isinstance(atom, Literal) else env[atom]
    for var, value in zip(closed.jaxpr.constvars, closed.consts):
        env[var] = value
    for var, value in zip(closed.jaxpr.invars, args):
        env[var] = value
    for eqn in closed.jaxpr.eqns:
        values = [read(a) for a in eqn.invars]
        if any(map(_is_sparse, values)):
            outs = _apply_sparse(eqn, values)
        else:
            outs = eqn.primitive.bind(*values, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
        for var, value in zip(eqn.outvars, outs):
            env[var] = value
    return [read(v) for v in closed.jaxpr.outvars]


def sparsify(f: Callable, use_tracer: bool = False) -> Callable:
    """`f` made to accept BCOO arrays wherever it takes arrays, with sparse results
    where the sparse rules give them (mirrors `jax.experimental.sparse.sparsify`)."""
    @functools.wraps(f)
    def sparsified(*args: Any, **kwargs: Any) -> Any:
        leaves, in_tree = tree_flatten(args, is_leaf=_is_sparse)
        stand_ins = [ShapeDtypeStruct(x.shape, x.dtype) if _is_sparse(x) else x
                     for x in leaves]
        out_tree_box: list = []

        def flat(*flat_args: Any) -> Any:
            out = f(*tree_unflatten(in_tree, flat_args), **kwargs)
            out_leaves, out_tree = tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_leaves
        closed = make_jaxpr(flat)(*stand_ins)
        dense_leaves = [x for x in leaves]
        outs = _eval_sparse(closed, dense_leaves)
        return tree_unflatten(out_tree_box[-1], outs)
    return sparsified
