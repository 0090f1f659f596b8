"""The tridiagonal_solve primitive (mirrors `jax.lax.linalg.tridiagonal_solve_p`) with all
its rules.

T x = b with T given by its three diagonals dl, d, du (dl[0] and du[n-1] are outside T).
The solve is linear in b; its transpose solves with T^T, whose sub-diagonal is du shifted
down one place and whose super-diagonal is dl shifted up one place. In the diagonals,
dx = -T^{-1} (dT x), where (dT x)_i = ddl_i x_{i-1} + dd_i x_i + ddu_i x_{i+1}.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlite.core.avals import ShapedArray, get_aval
from jaxlite.core.primitive import Primitive
from jaxlite.interpreters import ad
from jaxlite.interpreters.transpose import is_undefined
from jaxlite.lax import linalg_kernels as kernels
from jaxlite.lax.arithmetic import add, mul, neg
from jaxlite.lax.linalg_util import check_dtype, kernel_rules
from jaxlite.lax.shape_ops import expand_dims
from jaxlite.lax.slicing import pad

__all__ = ["tridiagonal_solve_p"]

tridiagonal_solve_p = Primitive("tridiagonal_solve")


def _tridiagonal_solve_abstract_eval(dl: ShapedArray, d: ShapedArray, du: ShapedArray,
                                     b: ShapedArray, *,
                                     perturb_singular: bool = False) -> ShapedArray:
    for position, (name, aval) in enumerate((("dl", dl), ("d", d), ("du", du), ("b", b))):
        check_dtype("tridiagonal_solve", name, aval, position)
    if len({dl.dtype, d.dtype, du.dtype, b.dtype}) != 1:
        raise TypeError(f"lax.linalg.tridiagonal_solve: dl, d, du and b must have one dtype, "
                        f"got {dl.dtype.name}, {d.dtype.name}, {du.dtype.name}, "
                        f"{b.dtype.name}.")
    if d.ndim < 1 or dl.shape != d.shape or du.shape != d.shape:
        raise ValueError(f"lax.linalg.tridiagonal_solve: dl, d and du must have one shape "
                         f"(..., n), got {dl.shape}, {d.shape}, {du.shape}.")
    if b.ndim != d.ndim + 1 or b.shape[:-1] != d.shape:
        raise ValueError(f"lax.linalg.tridiagonal_solve: b must have shape (..., n, k) with "
                         f"the diagonals' shape (..., n) = {d.shape} in front, got {b.shape}.")
    return ShapedArray(b.shape, b.dtype, False)


def _shift(x: Any, offset: int, axis: int) -> Any:
    """`x` moved `offset` places along `axis` (positive: towards higher indices), zeros
    coming in."""
    aval = get_aval(x)
    config = [(0, 0, 0)] * len(aval.shape)
    config[axis] = (offset, -offset, 0)
    return pad(x, np.zeros((), aval.dtype), config)


def _tridiagonal_product(dl: Any, d: Any, du: Any, x: Any) -> Any:
    """T x for the tridiagonal T of (dl, d, du)."""
    axis = len(get_aval(x).shape) - 2
    column = len(get_aval(d).shape)
    below = mul(expand_dims(dl, (column,)), _shift(x, 1, axis))
    above = mul(expand_dims(du, (column,)), _shift(x, -1, axis))
    return add(add(below, mul(expand_dims(d, (column,)), x)), above)


def _tridiagonal_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any],
                           **params: Any) -> tuple[Any, Any]:
    dl, d, du, b = primals
    x = tridiagonal_solve_p.bind(dl, d, du, b, **params)
    tdl, td, tdu, tb = tangents
    dx: Any = ad.Zero(ad.tangent_aval(get_aval(x)))
    if not isinstance(tb, ad.Zero):
        dx = tridiagonal_solve_p.bind(dl, d, du, tb, **params)
    if not all(isinstance(t, ad.Zero) for t in (tdl, td, tdu)):
        product = _tridiagonal_product(ad.instantiate(tdl), ad.instantiate(td),
                                       ad.instantiate(tdu), x)
        dx = ad.add_tangents(dx, neg(tridiagonal_solve_p.bind(dl, d, du, product, **params)))
    return x, dx


def _tridiagonal_solve_transpose(ct: Any, dl: Any, d: Any, du: Any, b: Any,
                                 **params: Any) -> list[Any]:
    if any(is_undefined(v) for v in (dl, d, du)):
        raise ValueError("lax.linalg.tridiagonal_solve is linear in b only: it cannot be "
                         "transposed with respect to the diagonals.")
    axis = len(get_aval(d).shape) - 1
    ct_b = tridiagonal_solve_p.bind(_shift(du, 1, axis), d, _shift(dl, -1, axis),
                                    ad.instantiate(ct), **params)
    return [None, None, None, ct_b]


tridiagonal_solve_p.abstract_eval = _tridiagonal_solve_abstract_eval
tridiagonal_solve_p.jvp = _tridiagonal_solve_jvp
tridiagonal_solve_p.transpose = _tridiagonal_solve_transpose
kernel_rules(tridiagonal_solve_p, kernels.tridiagonal_solve)
