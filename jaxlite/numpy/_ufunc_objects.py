"""The functions that `jax.numpy` exposes as `ufunc` objects: add, multiply, maximum, ...

JAX 0.10.2 makes fourteen of its elementwise functions `jnp.ufunc` instances, so that
`jnp.add.reduce`, `jnp.multiply.outer` or `jnp.maximum.accumulate` work as in numpy. This
module wraps the plain functions of `_ufuncs` and `_special_math` and gives the methods
that have a direct lax or reduction counterpart a fast implementation (`add.reduce` is
`sum`, `maximum.accumulate` is `lax.cummax`, `add.at` is `x.at[i].add`); the rest fold the
function with `lax.scan` (see `_ufunc_class`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import jaxlite.lax as lax
from jaxlite.numpy import _math, _reductions, _special_math, _ufuncs
from jaxlite.numpy._promotion import canonicalize_axis, ensure_array, promote_args_numeric
from jaxlite.numpy._ufunc_class import _with_dtype, ufunc

__all__ = ["add", "subtract", "multiply", "maximum", "minimum", "negative", "bitwise_and",
           "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
           "logaddexp", "logaddexp2"]


def _reduction(reduce_all: Callable[..., Any], takes_dtype: bool = True,
               takes_initial: bool = True) -> Callable[..., Any]:
    """`ufunc.reduce` through a numpy-style reduction such as `sum` (axis 0 by default)."""
    def reduce(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any,
               where: Any) -> Any:
        options = {"keepdims": keepdims, "where": where}
        if takes_dtype:
            options["dtype"] = dtype
        elif dtype is not None:
            a = _with_dtype(a, dtype, "reduce")
        if takes_initial:
            options["initial"] = initial
        elif initial is not None:
            raise NotImplementedError("initial is not supported by this reduction; it is "
                                      "its own identity.")
        return reduce_all(a, axis=axis, **options)
    return reduce


def _cumulative(scan_op: Callable[..., Any], keep_bool: bool = False) -> Callable[..., Any]:
    """`ufunc.accumulate` through a lax cumulative primitive. Bool counts as int32 for sums
    and products; running extrema of bools stay bool (computed on uint8)."""
    def accumulate(a: Any, *, axis: int, dtype: Any) -> Any:
        a = _with_dtype(a, dtype, "accumulate")
        axis = canonicalize_axis(axis, np.ndim(a))
        if keep_bool and a.dtype == np.bool_:
            running = scan_op(lax.convert_element_type(a, np.uint8), axis)
            return lax.convert_element_type(running, np.bool_)
        (a,) = promote_args_numeric("accumulate", a)
        return scan_op(a, axis)
    return accumulate


def _scatter(method: str) -> Callable[..., Any]:
    """`ufunc.at` through the `x.at[indices].<method>(b)` update. Booleans are added and
    multiplied as int32 and turned back to bool (logical or / and), as JAX does: the scatter
    itself takes no bool for add and mul."""
    def at(a: Any, indices: Any, b: Any) -> Any:
        a = ensure_array(a)
        if a.dtype == np.bool_ and method in ("add", "multiply"):
            as_int = lax.convert_element_type(a, np.int32)
            b = lax.convert_element_type(lax.convert_element_type(ensure_array(b), np.bool_),
                                         np.int32)
            return lax.convert_element_type(getattr(as_int.at[indices], method)(b), np.bool_)
        return getattr(a.at[indices], method)(b)
    return at


def _named(func: Callable[..., Any], nin: int, **methods: Any) -> ufunc:
    return ufunc(func, nin, 1, name=func.__name__, call=func, **methods)


add = _named(_ufuncs.add, 2, identity=0, reduce=_reduction(_reductions.sum),
             accumulate=_cumulative(lax.cumsum), at=_scatter("add"))
subtract = _named(_ufuncs.subtract, 2, at=_scatter("subtract"))
multiply = _named(_ufuncs.multiply, 2, identity=1, reduce=_reduction(_reductions.prod),
                  accumulate=_cumulative(lax.cumprod), at=_scatter("multiply"))
maximum = _named(_ufuncs.maximum, 2, reduce=_reduction(_reductions.max, takes_dtype=False),
                 accumulate=_cumulative(lax.cummax, keep_bool=True), at=_scatter("max"))
minimum = _named(_ufuncs.minimum, 2, reduce=_reduction(_reductions.min, takes_dtype=False),
                 accumulate=_cumulative(lax.cummin, keep_bool=True), at=_scatter("min"))
negative = _named(_math.negative, 1)
bitwise_and = _named(_ufuncs.bitwise_and, 2, identity=-1)
bitwise_or = _named(_ufuncs.bitwise_or, 2, identity=0)
bitwise_xor = _named(_ufuncs.bitwise_xor, 2, identity=0)
logical_and = _named(_ufuncs.logical_and, 2, identity=True,
                     reduce=_reduction(_reductions.all, False, False))
logical_or = _named(_ufuncs.logical_or, 2, identity=False,
                    reduce=_reduction(_reductions.any, False, False))
logical_xor = _named(_ufuncs.logical_xor, 2, identity=False)
logaddexp = _named(_special_math.logaddexp, 2, identity=-np.inf)
logaddexp2 = _named(_special_math.logaddexp2, 2, identity=-np.inf)
