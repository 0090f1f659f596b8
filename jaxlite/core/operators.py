"""The operator table behind the Python operators and methods of arrays and tracers.

`Array` and every `Tracer` inherit `ArrayOperators`, whose dunder methods and numpy-style
methods look their implementation up in `OPERATOR_TABLE`. The table is filled by
`jaxlite.numpy` when it is imported, so the core never depends on the numpy layer.
"""
from __future__ import annotations

from typing import Any, Callable

# name -> implementation taking the array first; filled by jaxlite.numpy.
OPERATOR_TABLE: dict[str, Callable[..., Any]] = {}

BINARY_OPERATORS = (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "divmod", "pow", "matmul",
    "and", "or", "xor", "lshift", "rshift",
)
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
UNARY_OPERATORS = ("neg", "pos", "abs", "invert")
METHODS = (
    "all", "any", "argmax", "argmin", "argsort", "astype", "choose", "clip", "conj",
    "conjugate", "copy", "cumprod", "cumsum", "diagonal", "dot", "flatten", "max", "mean",
    "min", "nonzero", "prod", "ptp", "ravel", "repeat", "reshape", "round", "searchsorted",
    "sort", "squeeze", "std", "sum", "swapaxes", "take", "trace", "transpose", "var", "view",
)
PROPERTIES = ("T", "mT", "real", "imag", "at", "flat")


def _lookup(name: str) -> Callable[..., Any]:
    try:
        return OPERATOR_TABLE[name]
    except KeyError:
        raise NotImplementedError(
            f"Array operation '{name}' is not available: import jaxlite.numpy first.") from None


def _method(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _lookup(name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _reflected(name: str) -> Callable[..., Any]:
    def method(self: Any, other: Any) -> Any:
        return _lookup(name)(other, self)
    method.__name__ = f"__r{name}__"
    return method


def _property(name: str) -> property:
    return property(lambda self: _lookup(name)(self), doc=f"The array's `{name}`.")


class ArrayOperators:
    """Mixin giving arrays and tracers numpy's operators, methods and properties."""

    __slots__ = ()
    # numpy must defer to our reflected operators (np.float32(2) * x gives an Array).
    __array_priority__ = 100

    def __getitem__(self, index: Any) -> Any:
        return _lookup("getitem")(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            f"'{type(self).__name__}' object does not support item assignment: jaxlite arrays "
            "are immutable. Use x = x.at[idx].set(y) (or .add, .multiply, ...) instead of "
            "x[idx] = y.")

    def __iter__(self) -> Any:
        return _lookup("iter")(self)

    def __len__(self) -> int:
        shape = self.shape  # type: ignore[attr-defined]
        if not shape:
            raise TypeError("len() of unsized object (a 0-d array)")
        return shape[0]

    __hash__ = None  # type: ignore[assignment]  # arrays compare elementwise, as numpy's


for _name in BINARY_OPERATORS:
    setattr(ArrayOperators, f"__{_name}__", _method(_name))
    setattr(ArrayOperators, f"__r{_name}__", _reflected(_name))
for _name in COMPARISONS + UNARY_OPERATORS:
    setattr(ArrayOperators, f"__{_name}__", _method(_name))
for _name in METHODS:
    setattr(ArrayOperators, _name, _method(_name))
for _name in PROPERTIES:
    setattr(ArrayOperators, _name, _property(_name))
del _name
