"""Products and diagonals: dot, matmul, vdot, inner, outer, tensordot, diagonal, trace.

Mirrors the contraction functions of `jax.numpy`. Each one promotes its operands to a
common dtype and contracts with a single `lax.dot_general`, whose accumulation dtype
(`preferred_element_type`) is the promoted dtype unless the caller asks for another one,
as in JAX (int8 with int8 gives int8; pass `preferred_element_type=jnp.int32` to widen).
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

import jaxlite.lax as lax
from jaxlite.numpy._placement import accepts_placement
from jaxlite.core import dtypes
from jaxlite.numpy._promotion import (broadcast_shapes, canonicalize_axis, check_arraylike,
                                      convert, ensure_array, promote_dtypes, promote_shapes,
                                      user_dtype)
from jaxlite.numpy._reductions import sum as _sum
from jaxlite.numpy._shape import moveaxis, ravel, stack

__all__ = ["cross", "dot", "matmul", "matvec", "vecmat", "vdot", "vecdot", "inner", "outer", "kron",
           "tensordot", "diagonal", "trace"]


def _promote_for_product(fun_name: str, a: Any, b: Any, preferred: Any
                         ) -> tuple[Any, Any, np.dtype, bool]:
    """The operands in their common dtype, the accumulation dtype, and the weak flag."""
    check_arraylike(fun_name, a, b)
    dtype, weak = dtypes.promotion_type(a, b)
    a, b = convert(a, dtype, weak), convert(b, dtype, weak)
    if preferred is None:
        return a, b, dtype, weak
    return a, b, user_dtype(preferred, fun_name), False


def _finish(out: Any, dtype: np.dtype, weak: bool) -> Any:
    return lax._convert_element_type(out, dtype, weak_type=weak)


def _contract(a: Any, b: Any, contracting: tuple[Sequence[int], Sequence[int]],
              batch: tuple[Sequence[int], Sequence[int]], precision: Any,
              dtype: np.dtype, weak: bool) -> Any:
    dims = ((tuple(contracting[0]), tuple(contracting[1])), (tuple(batch[0]), tuple(batch[1])))
    out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=dtype)
    return _finish(out, dtype, weak)


def _scalar_product(fun_name: str, a: Any, b: Any, dtype: np.dtype, weak: bool) -> Any:
    a, b = promote_shapes(fun_name, convert(a, dtype), convert(b, dtype))
    product = lax.bitwise_and(a, b) if dtype == np.bool_ else lax.mul(a, b)
    return _finish(product, dtype, weak)


@accepts_placement("out_sharding")
def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Dot product (mirrors `jax.numpy.dot`).

    Scalars multiply; otherwise the last axis of `a` is contracted with the second-to-last
    axis of `b` (its only axis when `b` is 1-d), the remaining axes in order a's, then b's.
    """
    a, b, dtype, weak = _promote_for_product("dot", a, b, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product("dot", a, b, dtype, weak)
    b_axis = 0 if b.ndim == 1 else b.ndim - 2
    return _contract(a, b, ((a.ndim - 1,), (b_axis,)), ((), ()), precision, dtype, weak)


def _matmul_plan(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> dict[str, Any]:
    """How matmul maps broadcast batch axes onto one dot_general.

    Batch positions where both operands have the same size become dot_general batch axes;
    where one operand has size 1 (or lacks the axis) that axis is squeezed away and the
    other operand's axis becomes a free axis of the product. Axes are labelled ("b", i)
    for batch position i, "row", "col" and "k" (the contracted one).
    """
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    a_batch = () if a_vec else a_shape[:-2]
    b_batch = () if b_vec else b_shape[:-2]
    nb = max(len(a_batch), len(b_batch))
    batch_shape = broadcast_shapes("matmul", a_batch, b_batch)
    a_labels = [("b", i + nb - len(a_batch)) for i in range(len(a_batch))]
    b_labels = [("b", i + nb - len(b_batch)) for i in range(len(b_batch))]
    a_labels += ["k"] if a_vec else ["row", "k"]
    b_labels += ["k"] if b_vec else ["k", "col"]
    a_size = dict(zip(a_labels, a_shape))
    b_size = dict(zip(b_labels, b_shape))
    a_drop, b_drop, shared = [], [], []
    for i in range(nb):
        label = ("b", i)
        in_a, in_b = label in a_size, label in b_size
        if in_a and in_b and a_size[label] == b_size[label]:
            shared.append(label)
        elif in_a and a_size[label] == batch_shape[i] and (not in_b or b_size[label] == 1):
            if in_b:
                b_drop.append(label)
        elif in_a:
            a_drop.append(label)
    return {"a_vec": a_vec, "b_vec": b_vec, "nb": nb, "shared": shared,
            "a_labels": a_labels, "b_labels": b_labels, "a_drop": a_drop, "b_drop": b_drop}


@accepts_placement("out_sharding")
def matmul(a: Any, b: Any, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Matrix product with numpy's broadcasting of leading batch axes (`jnp.matmul`).

    A 1-d `a` acts as a row vector and a 1-d `b` as a column vector, and the added axis is
    removed from the result. Scalars are rejected, as in numpy.
    """
    a, b, dtype, weak = _promote_for_product("matmul", a, b, preferred_element_type)
    for position, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul input operand {position} must have ndim at least 1, "
                             "but it has ndim 0")
    plan = _matmul_plan(a.shape, b.shape)
    a_labels = [label for label in plan["a_labels"] if label not in plan["a_drop"]]
    b_labels = [label for label in plan["b_labels"] if label not in plan["b_drop"]]
    a = lax.squeeze(a, [plan["a_labels"].index(label) for label in plan["a_drop"]])
    b = lax.squeeze(b, [plan["b_labels"].index(label) for label in plan["b_drop"]])
    shared = plan["shared"]
    contracting = ((a_labels.index("k"),), (b_labels.index("k"),))
    batch = ([a_labels.index(label) for label in shared],
             [b_labels.index(label) for label in shared])
    out = _contract(a, b, contracting, batch, precision, dtype, weak)
    out_labels = (shared + [label for label in a_labels if label not in shared + ["k"]]
                  + [label for label in b_labels if label not in shared + ["k"]])
    wanted = [("b", i) for i in range(plan["nb"])]
    wanted += [] if plan["a_vec"] else ["row"]
    wanted += [] if plan["b_vec"] else ["col"]
    return lax.transpose(out, [out_labels.index(label) for label in wanted])


def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix-vector products over broadcast batch axes: (..., m, n) by (..., n) gives
    (..., m) (mirrors `jax.numpy.matvec`)."""
    check_arraylike("matvec", x1, x2)
    x2 = ensure_array(x2)
    if x2.ndim == 0 or np.ndim(x1) < 2:
        raise ValueError(f"matvec needs a matrix and a vector, got shapes {np.shape(x1)} "
                         f"and {x2.shape}.")
    out = matmul(x1, lax.expand_dims(x2, (x2.ndim,)))
    return lax.squeeze(out, (out.ndim - 1,))


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Conjugated vector-matrix products over broadcast batch axes: (..., n) by
    (..., n, m) gives (..., m) (mirrors `jax.numpy.vecmat`)."""
    check_arraylike("vecmat", x1, x2)
    x1 = ensure_array(x1)
    if x1.ndim == 0 or np.ndim(x2) < 2:
        raise ValueError(f"vecmat needs a vector and a matrix, got shapes {x1.shape} and "
                         f"{np.shape(x2)}.")
    if dtypes.is_complex(x1.dtype):
        x1 = lax.conj(x1)
    out = matmul(lax.expand_dims(x1, (x1.ndim - 1,)), x2)
    return lax.squeeze(out, (out.ndim - 2,))


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Dot product of the flattened arrays, conjugating `a` (mirrors `jax.numpy.vdot`)."""
    check_arraylike("vdot", a, b)
    a = ensure_array(a)
    if dtypes.is_complex(a.dtype):
        a = lax.conj(a)
    return dot(ravel(a), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Conjugated dot product along `axis`, broadcasting the rest (`jax.numpy.vecdot`)."""
    check_arraylike("vecdot", x1, x2)
    x1, x2 = ensure_array(x1), ensure_array(x2)
    x1 = moveaxis(x1, canonicalize_axis(axis, x1.ndim), -1)
    x2 = moveaxis(x2, canonicalize_axis(axis, x2.ndim), -1)
    if dtypes.is_complex(x1.dtype):
        x1 = lax.conj(x1)
    out = matmul(lax.expand_dims(x1, (x1.ndim - 1,)), lax.expand_dims(x2, (x2.ndim,)),
                 precision=precision, preferred_element_type=preferred_element_type)
    return lax.squeeze(out, (out.ndim - 2, out.ndim - 1))


def inner(a: Any, b: Any, *, precision: Any = None,
          preferred_element_type: Any = None) -> Any:
    """Contract the last axes of `a` and `b` (mirrors `jax.numpy.inner`)."""
    a, b, dtype, weak = _promote_for_product("inner", a, b, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product("inner", a, b, dtype, weak)
    return _contract(a, b, ((a.ndim - 1,), (b.ndim - 1,)), ((), ()), precision, dtype, weak)


def outer(a: Any, b: Any, out: None = None) -> Any:
    """All products of the entries of the flattened `a` and `b` (`jax.numpy.outer`)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b, dtype, weak = _promote_for_product("outer", a, b, None)
    a, b = ravel(a), ravel(b)
    return _scalar_product("outer", lax.expand_dims(a, (1,)), lax.expand_dims(b, (0,)),
                           dtype, weak)


def kron(a: Any, b: Any) -> Any:
    """Kronecker product: every entry of `a` scales a copy of `b` (`jax.numpy.kron`).

    The inputs are first given the same rank by leading axes of size 1; the result's axis
    k has length a.shape[k] * b.shape[k].
    """
    a, b, dtype, weak = _promote_for_product("kron", a, b, None)
    if dtype == np.bool_:
        raise TypeError("jnp.kron does not accept bool arrays, as in JAX (its product is "
                        "lax.mul); convert them with .astype(int) first.")
    ndim = max(a.ndim, b.ndim)
    a = lax.reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    b = lax.reshape(b, (1,) * (ndim - b.ndim) + b.shape)
    # Interleave the axes: a's axis k goes to 2k, b's to 2k + 1, then merge the pairs.
    a = lax.reshape(a, tuple(s for n in a.shape for s in (n, 1)))
    b = lax.reshape(b, tuple(s for n in b.shape for s in (1, n)))
    product = _scalar_product("kron", a, b, dtype, weak)
    return lax.reshape(product, tuple(x * y for x, y in zip(a.shape[0::2], b.shape[1::2])))


def _axes_list(axes: Any, ndim: int) -> tuple[int, ...]:
    if isinstance(axes, (list, tuple)):
        return tuple(canonicalize_axis(ax, ndim) for ax in axes)
    return (canonicalize_axis(axes, ndim),)


@accepts_placement("out_sharding")
def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Contract axes of `a` with axes of `b` (mirrors `jax.numpy.tensordot`).

    `axes=n` contracts the last n axes of `a` with the first n of `b`; a pair of sequences
    names the axes explicitly.
    """
    a, b, dtype, weak = _promote_for_product("tensordot", a, b, preferred_element_type)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks "
                            f"({a.shape} and {b.shape})")
        a_axes, b_axes = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        a_axes, b_axes = _axes_list(axes[0], a.ndim), _axes_list(axes[1], b.ndim)
        if len(a_axes) != len(b_axes):
            raise TypeError("tensordot requires axes lists to have equal length, got "
                            f"{axes[0]} and {axes[1]}.")
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair "
                        f"of lists/tuples of ints, got {axes!r}.")
    return _contract(a, b, (a_axes, b_axes), ((), ()), precision, dtype, weak)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The diagonal `offset` of the planes spanned by `axis1` and `axis2`, as the last axis.

    Mirrors `jax.numpy.diagonal`. Built from slices and a reshape: the leading square of
    each plane, flattened, holds the diagonal at every (n + 1)-th position.
    """
    check_arraylike("diagonal", a)
    a = ensure_array(a)
    if a.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    i, j = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    offset = operator.index(offset)
    x = moveaxis(a, (i, j), (-2, -1))
    rows, cols = x.shape[-2], x.shape[-1]
    row_start, col_start = (0, offset) if offset >= 0 else (-offset, 0)
    n = max(0, min(rows - row_start, cols - col_start))
    lead = x.shape[:-2]
    square = lax.slice(x, (0,) * len(lead) + (min(row_start, rows), min(col_start, cols)),
                       lead + (min(row_start, rows) + n, min(col_start, cols) + n))
    flat = lax.reshape(square, lead + (n * n,))
    if n == 0:
        return lax.reshape(flat, lead + (0,))
    return lax.slice(flat, (0,) * (len(lead) + 1), lead + (n * n,),
                     (1,) * len(lead) + (n + 1,))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: None = None) -> Any:
    """Sum of the diagonal `offset` (mirrors `jax.numpy.trace`); dtypes as `sum`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross products of 2- or 3-vectors (mirrors `jax.numpy.cross`).

    The vectors lie along `axisa` of `a` and `axisb` of `b` (both `axis` when given); the
    other axes broadcast. A 2-vector has a zero third component; two 2-vectors give the
    scalar third component of their product, and otherwise the result's vectors lie along
    `axisc`.
    """
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(ensure_array(a), ensure_array(b))
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"cross: both arguments need at least one axis, got shapes "
                         f"{a.shape} and {b.shape}")
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: the vectors must have 2 or 3 components (\"Dimension must "
                         f"be either 2 or 3 for cross product\"), got {a.shape[-1]} and "
                         f"{b.shape[-1]}")
    a_parts = [a[..., i] for i in range(a.shape[-1])]
    b_parts = [b[..., i] for i in range(b.shape[-1])]
    if len(a_parts) == 2 and len(b_parts) == 2:
        return a_parts[0] * b_parts[1] - a_parts[1] * b_parts[0]
    a0, a1 = a_parts[:2]
    b0, b1 = b_parts[:2]
    z_component = a0 * b1 - a1 * b0
    if len(a_parts) == 2:  # a's third component is zero
        b2 = b_parts[2]
        parts = [a1 * b2, -(a0 * b2), z_component]
    elif len(b_parts) == 2:
        a2 = a_parts[2]
        parts = [-(a2 * b1), a2 * b0, z_component]
    else:
        a2, b2 = a_parts[2], b_parts[2]
        parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z_component]
    parts = promote_shapes("cross", *parts)
    return moveaxis(stack(parts, axis=-1), -1, axisc)
