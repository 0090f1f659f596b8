"""The operators, methods and properties of arrays and tracers, as one table.

`jaxlite.core.operators.ArrayOperators` (the base of `Array` and every `Tracer`) looks up
its dunder methods, numpy-style methods and properties in `OPERATOR_TABLE`; importing this
module fills that table with the `jaxlite.numpy` functions, so that `x / 2`, `x @ y`,
`x[1:]`, `x.sum(0)` and `x.T` follow JAX's semantics. Binary operators return
`NotImplemented` for operands that are not arrays or scalars (lists, strings, None), so
Python tries the other operand and then raises its usual TypeError.
"""
from __future__ import annotations

from typing import Any, Callable

from jaxlite.core.operators import OPERATOR_TABLE
from jaxlite.numpy import (_array_methods, _at, _creation, _indexing, _linalg_basic, _math,
                           _reductions, _shape, _ufuncs)
from jaxlite.numpy._promotion import is_arraylike
from jaxlite.runtime.array import ArrayImpl

__all__ = ["install"]


# The operands most operators see, accepted without the general test.
_COMMON_OPERANDS = frozenset({ArrayImpl, float, int})


def _binary(fun: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def operator(a: Any, b: Any) -> Any:
        if not ((type(a) in _COMMON_OPERANDS or is_arraylike(a))
                and (type(b) in _COMMON_OPERANDS or is_arraylike(b))):
            return NotImplemented
        return fun(a, b)
    operator.__name__ = fun.__name__
    return operator


def _not_yet(name: str, feature: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"Array.{name} needs {feature}, which arrives in a later "
                                  "release of jaxlite.")
    method.__name__ = name
    return method


def _reshape(self: Any, *args: Any, order: str = "C") -> Any:
    shape = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return _shape.reshape(self, shape, order=order)


def _transpose(self: Any, *args: Any) -> Any:
    if not args or (len(args) == 1 and args[0] is None):
        return _shape.transpose(self)
    axes = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    return _shape.transpose(self, axes)


def _flatten(self: Any, order: str = "C") -> Any:
    return _shape.ravel(self, order=order)


def _copy(self: Any) -> Any:
    return _creation.array(self, copy=True)


def _T(self: Any) -> Any:
    return _shape.transpose(self)


def _flat(self: Any) -> Any:
    raise NotImplementedError("jaxlite arrays do not implement the arr.flat property: "
                              "consider arr.flatten() instead.")


_BINARY = {
    "add": _ufuncs.add, "sub": _ufuncs.subtract, "mul": _ufuncs.multiply,
    "truediv": _ufuncs.true_divide, "floordiv": _ufuncs.floor_divide,
    "mod": _ufuncs.remainder, "divmod": _ufuncs.divmod, "pow": _ufuncs.power,
    "matmul": _linalg_basic.matmul, "and": _ufuncs.bitwise_and, "or": _ufuncs.bitwise_or,
    "xor": _ufuncs.bitwise_xor, "lshift": _ufuncs.left_shift, "rshift": _ufuncs.right_shift,
    "eq": _ufuncs.equal, "ne": _ufuncs.not_equal, "lt": _ufuncs.less,
    "le": _ufuncs.less_equal, "gt": _ufuncs.greater, "ge": _ufuncs.greater_equal,
}

_UNARY = {
    "neg": _math.negative, "pos": _math.positive, "abs": _math.abs,
    "invert": _ufuncs.bitwise_not, "getitem": _indexing.getitem, "iter": _indexing.iterate,
}

_METHODS = {
    "all": _reductions.all, "any": _reductions.any, "argmax": _reductions.argmax,
    "argmin": _reductions.argmin, "astype": _creation.astype, "clip": _ufuncs.clip,
    "conj": _math.conj, "conjugate": _math.conjugate, "copy": _copy,
    "cumprod": _reductions.cumprod, "cumsum": _reductions.cumsum,
    "diagonal": _linalg_basic.diagonal, "dot": _linalg_basic.dot, "flatten": _flatten,
    "max": _reductions.max, "mean": _reductions.mean, "min": _reductions.min,
    "prod": _reductions.prod, "ptp": _reductions.ptp, "ravel": _shape.ravel,
    "repeat": _shape.repeat, "reshape": _reshape, "round": _math.round,
    "squeeze": _shape.squeeze, "std": _reductions.std, "sum": _reductions.sum,
    "swapaxes": _shape.swapaxes, "trace": _linalg_basic.trace, "transpose": _transpose,
    "var": _reductions.var,
    "argsort": _not_yet("argsort", "a sort primitive"),
    "sort": _not_yet("sort", "a sort primitive"),
    "searchsorted": _not_yet("searchsorted", "a sort primitive"),
    "view": _not_yet("view", "a bitcast in the numpy layer"),
}

_PROPERTIES = {
    "T": _T, "mT": _shape.matrix_transpose, "real": _math.real, "imag": _math.imag,
    "at": _at.at_property, "flat": _flat,
}


def install() -> None:
    """Fill `OPERATOR_TABLE`; called once when `jaxlite.numpy` is imported."""
    OPERATOR_TABLE.update({name: _binary(fun) for name, fun in _BINARY.items()})
    OPERATOR_TABLE.update(_UNARY)
    OPERATOR_TABLE.update(_METHODS)
    OPERATOR_TABLE.update(_PROPERTIES)
    _array_methods.install()
