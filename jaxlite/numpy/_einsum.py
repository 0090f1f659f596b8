"""einsum and einsum_path: Einstein summation over any number of operands.

Mirrors `jax.numpy.einsum`. `opt_einsum` parses the subscripts (explicit, implicit,
ellipses, or the interleaved operand/sublist form) and chooses the order of pairwise
contractions (`optimize=`). Each contraction is one `lax.dot_general`: an index repeated
within one operand first becomes a diagonal, an index no one else needs is summed out
first, and shared indices become batch axes (kept) or contracting axes (summed).
Intermediate results carry their index labels with them, so only the final result is
transposed into the requested order.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import opt_einsum

import jaxlite.lax as lax
from jaxlite.numpy._placement import accepts_placement
from jaxlite.core import dtypes
from jaxlite.core.shape_poly import is_symbolic_dim
from jaxlite.numpy._linalg_basic import diagonal
from jaxlite.numpy._promotion import (check_arraylike, convert, ensure_array, is_arraylike,
                                      user_dtype)

__all__ = ["einsum", "einsum_path"]

_OPTIMIZERS = ("auto", "auto-hq", "optimal", "greedy", "dp", "branch-all", "branch-2",
               "random-greedy", "random-greedy-128")


def _split_arguments(subscripts: Any, operands: Sequence[Any]) -> tuple[list, list]:
    """The parser's inputs with every array replaced by its shape, and the arrays."""
    if isinstance(subscripts, str):
        arrays = list(operands)
        return [subscripts] + [tuple(np.shape(a)) for a in arrays], arrays
    # Interleaved form: array, sublist, array, sublist, ..., [output sublist].
    items = [subscripts, *operands]
    arrays = items[0::2][: len(items) // 2]
    parsed = [tuple(np.shape(x)) if i % 2 == 0 and i < 2 * len(arrays) else x
              for i, x in enumerate(items)]
    return parsed, arrays


def _path_option(optimize: Any, n: int) -> Any:
    if optimize is True:
        return "optimal"
    if optimize is False or optimize is None:
        return [(0, 1)] * (n - 1) if n > 1 else [(0,)]
    if isinstance(optimize, str) and optimize not in _OPTIMIZERS:
        raise ValueError(f"jnp.einsum: optimize must be True, False, a path or one of "
                         f"{_OPTIMIZERS}, got {optimize!r}.")
    return optimize


def _plan(fun_name: str, subscripts: Any, operands: Sequence[Any], optimize: Any
          ) -> tuple[list[str], str, list[Any], Any, Any]:
    parsed, arrays = _split_arguments(subscripts, operands)
    check_arraylike(fun_name, *arrays)
    # opt_einsum plans with ints: a symbolic size (shape polymorphism) counts as 8, as in
    # JAX; the plan only orders the contractions.
    shapes = [tuple(8 if is_symbolic_dim(d) else d for d in np.shape(a)) for a in arrays]
    option = _path_option(optimize, len(arrays))
    try:
        inputs, output, _ = opt_einsum.parser.parse_einsum_input(parsed, shapes=True)
        path, info = opt_einsum.contract_path(f"{inputs}->{output}", *shapes, shapes=True,
                                              optimize=option)
    except (ValueError, TypeError) as error:
        raise ValueError(f"jnp.{fun_name}: invalid subscripts {subscripts!r} for operands of "
                         f"shapes {shapes}: {error}") from None
    return inputs.split(","), output, arrays, path, info


def einsum_path(subscripts: Any, /, *operands: Any, optimize: Any = "auto"
                ) -> tuple[list[tuple[int, ...]], Any]:
    """The contraction order einsum would use and opt_einsum's report on it
    (mirrors `jax.numpy.einsum_path`)."""
    _, _, _, path, info = _plan("einsum_path", subscripts, operands, optimize)
    return list(path), info


@accepts_placement("out_sharding")
def einsum(subscripts: Any, /, *operands: Any, out: None = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Callable[..., Any] = lax.dot_general) -> Any:
    """Einstein summation (mirrors `jax.numpy.einsum`).

    `subscripts` names the axes of each operand ('ij,jk->ik'; '...' for leading axes;
    without '->' the output takes the indices used once, sorted). Operands are promoted to a
    common dtype, which is also the accumulation dtype unless `preferred_element_type` says
    otherwise. `optimize` picks the contraction order: 'auto', 'greedy', 'optimal', True
    ('optimal'), False (left to right) or an explicit path. `_dot_general` replaces
    `lax.dot_general` for the contractions (libraries pass a quantized one).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported: "
                                  "jaxlite arrays are immutable.")
    labels, output, arrays, path, _ = _plan("einsum", subscripts, operands, optimize)
    dtype, weak = dtypes.promotion_type(*arrays)
    if preferred_element_type is not None:
        dtype, weak = user_dtype(preferred_element_type, "einsum"), False
    terms = [(_with_dtype(a, dtype), labels[i]) for i, a in enumerate(arrays)]
    for step in path:
        picked = [terms[i] for i in step]
        terms = [t for i, t in enumerate(terms) if i not in step]
        others = "".join(t[1] for t in terms) + output
        terms.append(_contract_group(picked, others, precision, dtype, _dot_general))
    (result, result_labels), = terms
    result, result_labels = _reduce_to(result, result_labels, output)
    if len(output) > 1:
        result = lax.transpose(result, tuple(result_labels.index(c) for c in output))
    return lax._convert_element_type(result, dtype, weak_type=weak)


def _with_dtype(x: Any, dtype: np.dtype) -> Any:
    if not is_arraylike(x):
        raise TypeError(f"jnp.einsum operands must be arrays or scalars, got {type(x)}.")
    return convert(ensure_array(x), dtype)


def _contract_group(picked: list[tuple[Any, str]], keep: str, precision: Any,
                    dtype: np.dtype, dot_general: Callable[..., Any]) -> tuple[Any, str]:
    """Contract the operands of one path step, pairwise from the left."""
    x, x_labels = picked[0]
    if len(picked) == 1:
        return _reduce_to(x, x_labels, keep)
    for i, (y, y_labels) in enumerate(picked[1:], start=1):
        later = "".join(lbl for _, lbl in picked[i + 1:]) + keep
        x, x_labels = _contract_pair(x, x_labels, y, y_labels, later, precision, dtype,
                                     dot_general)
    return x, x_labels


def _take_diagonals(x: Any, labels: str) -> tuple[Any, str]:
    """Each index repeated within one operand becomes one axis (its diagonal)."""
    while len(set(labels)) < len(labels):
        label = next(c for c in labels if labels.count(c) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        x = diagonal(x, 0, first, second)
        labels = "".join(c for k, c in enumerate(labels) if k not in (first, second)) + label
    return x, labels


def _reduce_to(x: Any, labels: str, keep: str) -> tuple[Any, str]:
    """Sum out the indices of `x` that `keep` does not mention (after diagonals)."""
    x, labels = _take_diagonals(x, labels)
    gone = tuple(k for k, c in enumerate(labels) if c not in keep)
    if gone:
        x = _sum(x, gone)
        labels = "".join(c for c in labels if c in keep)
    return x, labels


def _sum(x: Any, axes: tuple[int, ...]) -> Any:
    if x.dtype == np.bool_:
        return lax.reduce_or(x, axes)
    return lax.reduce_sum(x, axes)


def _drop_broadcast(x: Any, labels: str, other_sizes: dict[str, int]) -> tuple[Any, str]:
    """Size-1 axes that broadcast against a larger one of the other operand go away."""
    ones = tuple(k for k, c in enumerate(labels)
                 if x.shape[k] == 1 and other_sizes.get(c, 1) != 1)
    if not ones:
        return x, labels
    return lax.squeeze(x, ones), "".join(c for k, c in enumerate(labels) if k not in ones)


def _contract_pair(x: Any, x_labels: str, y: Any, y_labels: str, keep: str, precision: Any,
                   dtype: np.dtype, dot_general: Callable[..., Any]) -> tuple[Any, str]:
    x, x_labels = _reduce_to(x, x_labels, keep + y_labels)
    y, y_labels = _reduce_to(y, y_labels, keep + x_labels)
    x, x_labels = _drop_broadcast(x, x_labels, dict(zip(y_labels, y.shape)))
    y, y_labels = _drop_broadcast(y, y_labels, dict(zip(x_labels, x.shape)))
    shared = [c for c in x_labels if c in y_labels]
    batch = [c for c in shared if c in keep]
    contracting = [c for c in shared if c not in keep]
    dims = ((tuple(x_labels.index(c) for c in contracting),
             tuple(y_labels.index(c) for c in contracting)),
            (tuple(x_labels.index(c) for c in batch), tuple(y_labels.index(c) for c in batch)))
    if dtype == np.bool_:
        # dot_general has no boolean accumulation: count in int32 and compare to zero.
        wide = lax.dot_general(convert(x, np.int32), convert(y, np.int32), dims,
                               precision=precision, preferred_element_type=np.int32)
        out = lax.ne(wide, lax.full_like(wide, 0))
    else:
        out = dot_general(x, y, dims, precision=precision, preferred_element_type=dtype)
    labels = ("".join(batch) + "".join(c for c in x_labels if c not in shared)
              + "".join(c for c in y_labels if c not in shared))
    return out, labels
