"""Symbolic dimensions: sizes known only as expressions of named variables (mirrors JAX's
`jax._src.export.shape_poly`).

A `DimExpr` is a polynomial with integer coefficients over *atoms*: a dimension variable
(`b`), or an opaque `floordiv(e, d)` / `mod(e, d)` that no simplification could remove.
It stands in a shape where an int would, so the shape rules of lax and jnp run on it
unchanged: `+ - * // %` with ints and other expressions give expressions (or ints when the
result is constant), and comparisons answer when the answer holds for every value of the
variables (each is at least 1, and within the bounds of its scope's constraints), else raise
JAX's `InconclusiveDimensionOperation`. `==` compares the normal forms, as JAX does.

Reading dimensions (`parse`), constraints (`SymbolicScope`) and solving for the variables
(`evaluate`, `linear_in`) are in `shape_poly_parse`.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Iterable

import numpy as np

from jaxlite.errors import InconclusiveDimensionOperation

__all__ = ["DimExpr", "InconclusiveDimensionOperation", "Scope", "canonical_dim",
           "dimension_variables", "is_symbolic_dim", "shape_size", "slice_indices"]

_HELP = ("\nThis error arises for comparison operations with shapes that are non-constant, "
         "and the result of the operation cannot be represented as a boolean value for all "
         "values of the symbolic dimensions involved.")

# An atom: ("var", name) or ("floordiv" | "mod", numerator, denominator), the operands
# ints or DimExprs. A monomial: a sorted tuple of (atom, power). A polynomial: a sorted
# tuple of (monomial, coefficient), zero coefficients dropped; the empty monomial is 1.
Atom = Monomial = tuple
_ONE: Monomial = ()

# How a dimension becomes a number in a traced computation (`b / 2`, `x * b`): filled by
# `jaxlite.lax.dimension_value`, which core cannot import.
AS_VALUE: list[Callable[[Any], Any]] = []


class Scope:
    """What comparisons may assume about a family of dimension variables: expressions
    known to be nonnegative, and variables that stand for other expressions. A
    `Scope` (`shape_poly_parse`) fills them from constraint strings."""

    def __init__(self) -> None:
        self.substitutions: dict[str, Any] = {}
        self.nonnegative: list[Any] = []


_DEFAULT_SCOPE = Scope()


def _normalize(terms: Iterable[tuple[Monomial, int]]) -> tuple:
    collected: dict[Monomial, int] = {}
    for mono, coeff in terms:
        collected[mono] = collected.get(mono, 0) + coeff
    # JAX's order: higher degree first, then larger atoms, the constant last (`b + 2*a`).
    return tuple(sorted(((m, c) for m, c in collected.items() if c != 0),
                        key=lambda mc: _monomial_key(mc[0]), reverse=True))


def _monomial_key(mono: Monomial) -> tuple:
    degree = sum(power for _, power in mono)
    return (degree, [(_atom_key(atom), power) for atom, power in mono])


def _atom_key(atom: Atom) -> tuple:
    return (0, atom[1]) if atom[0] == "var" else (1, atom[0], str(atom[1]), str(atom[2]))


def _make(terms: Iterable[tuple[Monomial, int]], scope: Scope) -> "int | DimExpr":
    poly = _normalize(terms)
    if not poly:
        return 0
    if len(poly) == 1 and poly[0][0] == _ONE:
        return poly[0][1]
    return DimExpr(poly, scope)


def _terms(value: Any) -> tuple:
    if isinstance(value, DimExpr):
        return value._poly
    return ((_ONE, int(value)),) if int(value) != 0 else ()


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class DimExpr:
    """A symbolic dimension size (mirrors JAX's `_DimExpr`): see the module docstring."""

    __slots__ = ("_poly", "_scope", "_hash")
    is_symbolic_dim = True  # how `jaxlite.xla` (which cannot import core) recognizes one
    __array_ufunc__ = None  # numpy scalars defer to the reflected operators

    def __init__(self, poly: tuple, scope: Scope) -> None:
        self._poly = poly
        self._scope = scope
        self._hash = hash(poly)

    @staticmethod
    def variable(name: str, scope: Scope | None = None) -> "DimExpr":
        """The expression of the dimension variable `name`."""
        return DimExpr((((((("var", name), 1),), 1),)), scope or _DEFAULT_SCOPE)

    @property
    def scope(self) -> Scope:
        return self._scope

    def variable_name(self) -> str | None:
        """The name of the variable if the expression is exactly one, else None."""
        if len(self._poly) == 1 and self._poly[0][1] == 1:
            mono = self._poly[0][0]
            if len(mono) == 1 and mono[0][1] == 1 and mono[0][0][0] == "var":
                return mono[0][0][1]
        return None

    # ------------------------------------------------------------------ arithmetic
    def _other(self, other: Any) -> Any:
        if isinstance(other, DimExpr):
            if other._scope is not self._scope:
                raise ValueError(
                    "Invalid mixing of symbolic scopes: the dimensions "
                    f"'{self}' and '{other}' were made by different `symbolic_shape` calls "
                    "(pass the same `scope=` to both).")
            return other
        if _is_int(other):
            return int(other)
        return NotImplemented

    def __add__(self, other: Any) -> Any:
        value = self._other(other)
        if value is NotImplemented:
            return _value_operation(self, other, lambda a, b: a + b)
        return _make(self._poly + _terms(value), self._scope)

    __radd__ = __add__

    def __neg__(self) -> Any:
        return _make(((m, -c) for m, c in self._poly), self._scope)

    def __sub__(self, other: Any) -> Any:
        value = self._other(other)
        return _value_operation(self, other, lambda a, b: a - b) \
            if value is NotImplemented else self + (-value)

    def __rsub__(self, other: Any) -> Any:
        value = self._other(other)
        return _value_operation(self, other, lambda a, b: b - a) \
            if value is NotImplemented else (-self) + value

    def __mul__(self, other: Any) -> Any:
        value = self._other(other)
        if value is NotImplemented:
            return _value_operation(self, other, lambda a, b: a * b)
        products = []
        for (m1, c1), (m2, c2) in itertools.product(self._poly, _terms(value)):
            products.append((_multiply_monomials(m1, m2), c1 * c2))
        return _make(products, self._scope)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Any:
        other = self._other(other)
        return other if other is NotImplemented else _divmod(self, other, self._scope)[0]

    def __rfloordiv__(self, other: Any) -> Any:
        other = self._other(other)
        return other if other is NotImplemented else _divmod(other, self, self._scope)[0]

    def __mod__(self, other: Any) -> Any:
        other = self._other(other)
        return other if other is NotImplemented else _divmod(self, other, self._scope)[1]

    def __rmod__(self, other: Any) -> Any:
        other = self._other(other)
        return other if other is NotImplemented else _divmod(other, self, self._scope)[1]

    def __truediv__(self, other: Any) -> Any:
        return _as_value(self) / other

    def __rtruediv__(self, other: Any) -> Any:
        return other / _as_value(self)

    def __divmod__(self, other: Any) -> Any:
        other = self._other(other)
        return other if other is NotImplemented else _divmod(self, other, self._scope)

    # ------------------------------------------------------------------ comparisons
    def __eq__(self, other: Any) -> bool:
        if isinstance(other, DimExpr) and other._scope is not self._scope:
            return False
        if not (isinstance(other, DimExpr) or _is_int(other)):
            return NotImplemented
        return _terms(self - other) == ()

    def __ne__(self, other: Any) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return self._hash

    def __ge__(self, other: Any) -> bool:
        return _nonnegative(self - other, f"'{self}' >= '{other}'")

    def __gt__(self, other: Any) -> bool:
        return _nonnegative(self - other - 1, f"'{self}' > '{other}'")

    def __le__(self, other: Any) -> bool:
        return _nonnegative(other - self, f"'{self}' <= '{other}'")

    def __lt__(self, other: Any) -> bool:
        return _nonnegative(other - self - 1, f"'{self}' < '{other}'")

    def __bool__(self) -> bool:
        return True  # a dimension is never 0: every variable is at least 1

    def __int__(self) -> int:
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant"
            + _HELP)

    # ------------------------------------------------------------------ text
    def __str__(self) -> str:
        pieces = []
        for mono, coeff in self._poly:
            body = "*".join(_atom_text(atom) + (f"^{p}" if p > 1 else "")
                            for atom, p in mono)
            magnitude = abs(coeff)
            if not body:
                text = str(magnitude)
            else:
                text = body if magnitude == 1 else f"{magnitude}*{body}"
            sign = "-" if coeff < 0 else "+"
            pieces.append(f"- {text}" if not pieces and sign == "-" else
                          text if not pieces else f"{sign} {text}")
        return " ".join(pieces)

    __repr__ = __str__

    def terms(self) -> tuple:
        """The polynomial as ((atom, power), ...), coefficient) pairs; an atom is
        ("var", name) or ("floordiv" | "mod", numerator, denominator)."""
        return self._poly

    def variables(self) -> set[str]:
        """The names of the dimension variables the expression uses."""
        names: set[str] = set()
        for mono, _ in self._poly:
            for atom, _ in mono:
                if atom[0] == "var":
                    names.add(atom[1])
                else:
                    names |= dimension_variables(atom[1:])
        return names


def _as_value(dim: DimExpr) -> Any:
    if not AS_VALUE:
        raise TypeError(f"The symbolic dimension '{dim}' cannot be used as a value here.")
    return AS_VALUE[0](dim)


def _value_operation(dim: DimExpr, other: Any, op: Callable[[Any, Any], Any]) -> Any:
    """`op(dim, other)` for an operand that is not a dimension (a float, an array): on the
    dimension as a traced number, as JAX does; NotImplemented for other kinds of objects."""
    if isinstance(other, (float, complex, np.ndarray, np.generic)) or \
            hasattr(other, "aval"):
        return op(_as_value(dim), other)
    return NotImplemented


def _multiply_monomials(m1: Monomial, m2: Monomial) -> Monomial:
    powers: dict[Atom, int] = dict(m1)
    for atom, p in m2:
        powers[atom] = powers.get(atom, 0) + p
    return tuple(sorted(powers.items(), key=lambda ap: _atom_key(ap[0])))


def _atom_text(atom: Atom) -> str:
    return atom[1] if atom[0] == "var" else f"{atom[0]}({atom[1]}, {atom[2]})"


def _divmod(num: Any, den: Any, scope: Scope) -> tuple[Any, Any]:
    """Quotient and remainder, exact when the numerator is a multiple of the denominator
    (or both are constants), else opaque atoms."""
    if _is_int(num) and _is_int(den):
        return divmod(num, den)
    if isinstance(den, DimExpr) and _decided(lambda: num >= 0 and den > num):
        return 0, num  # a number below the size
    if _is_int(num) and isinstance(den, DimExpr) and _decided(lambda: num < 0 <= den + num):
        return -1, den + num  # an index from the end: `-1 % b` is `b - 1`
    if _is_int(den):
        if den == 0:
            raise InconclusiveDimensionOperation(f"Division by zero: '{num}' // 0")
        if all(c % den == 0 for _, c in _terms(num)):
            return _make(((m, c // den) for m, c in _terms(num)), scope), 0
    else:
        ratio = _constant_ratio(num, den)
        if ratio is None:
            ratio = _monomial_quotient(num, den, scope)
        if ratio is not None:
            return ratio, 0
    quotient = _make((((((("floordiv", num, den), 1),), 1),)), scope)
    remainder = _make((((((("mod", num, den), 1),), 1),)), scope)
    return quotient, remainder


def _decided(question: Callable[[], bool]) -> bool:
    """The answer to a comparison of sizes, False when it depends on the variables."""
    try:
        return bool(question())
    except InconclusiveDimensionOperation:
        return False


def _constant_ratio(num: Any, den: "DimExpr") -> int | None:
    """The int k with num == k * den, if there is one."""
    num_terms, den_terms = _terms(num), den._poly
    if len(num_terms) != len(den_terms):
        return None
    if not num_terms:
        return 0
    k, remainder = divmod(num_terms[0][1], den_terms[0][1])
    if remainder == 0 and _terms(num - den * k) == ():
        return k
    return None


def _monomial_quotient(num: Any, den: "DimExpr", scope: Scope) -> Any:
    """num / den when den is one term that divides every term of num (`4*b*t // b`)."""
    if len(den._poly) != 1:
        return None
    den_mono, den_coeff = den._poly[0]
    quotient = []
    for mono, coeff in _terms(num):
        powers = dict(mono)
        if coeff % den_coeff or any(powers.get(a, 0) < p for a, p in den_mono):
            return None
        for atom, p in den_mono:
            powers[atom] -= p
        left = tuple(sorted(((a, p) for a, p in powers.items() if p),
                            key=lambda ap: _atom_key(ap[0])))
        quotient.append((left, coeff // den_coeff))
    return _make(quotient, scope)


# ---------------------------------------------------------------------- decisions

def _bounds(value: Any) -> tuple[float, float]:
    if not isinstance(value, DimExpr):
        return value, value
    low, high = 0.0, 0.0
    for mono, coeff in value._poly:
        m_low, m_high = 1.0, 1.0
        for atom, power in mono:
            a_low, a_high = _atom_bounds(atom, value._scope)
            m_low, m_high = _interval_product(m_low, m_high, a_low ** power,
                                              a_high ** power)
        t_low, t_high = sorted((coeff * m_low, coeff * m_high))
        low, high = low + t_low, high + t_high
    return low, high


def _atom_bounds(atom: Atom, scope: Scope) -> tuple[float, float]:
    if atom[0] == "var":
        var = DimExpr.variable(atom[1], scope)
        low, high = 1.0, math.inf
        # Constraints of the form var - c >= 0 or c - var >= 0 bound the variable.
        for expr in scope.nonnegative:
            rest = expr - var
            if _is_int(rest):
                low = max(low, -rest)
            rest = expr + var
            if _is_int(rest):
                high = min(high, rest)
        return low, high
    num_low, num_high = _bounds(atom[1])
    den_low, den_high = _bounds(atom[2])
    if atom[0] == "mod":
        return 0.0, (den_high - 1 if den_low > 0 else math.inf)
    if den_low > 0:
        candidates = [n / d for n in (num_low, num_high) for d in (den_low, den_high)
                      if not (math.isinf(n) and math.isinf(d))] or [-math.inf, math.inf]
        return _floor(min(candidates)), _floor(max(candidates))
    return -math.inf, math.inf


def _floor(value: float) -> float:
    return value if math.isinf(value) else math.floor(value)


def _interval_product(a: float, b: float, c: float, d: float) -> tuple[float, float]:
    products = [x * y for x in (a, b) for y in (c, d) if not (x == 0 and math.isinf(y))
                and not (y == 0 and math.isinf(x))] or [0.0]
    return min(products), max(products)


def _nonnegative(value: Any, comparison: str) -> bool:
    """Whether `value >= 0` for every value of the variables; raises when that depends."""
    if _is_int(value):
        return value >= 0
    if not isinstance(value, DimExpr):
        raise TypeError(f"Cannot compare a symbolic dimension with {value!r}")
    low, high = _bounds(value)
    if low >= 0:
        return True
    if high < 0:
        return False
    for known in value._scope.nonnegative:  # value = known + c with c >= 0
        rest = value - known
        if _is_int(rest) and rest >= 0:
            return True
    lower, upper = _without_floordiv(value)
    if _bounds(lower)[0] >= 0:
        return True
    if _bounds(upper)[1] < 0:
        return False
    raise InconclusiveDimensionOperation(
        f"Symbolic dimension comparison {comparison} is inconclusive." + _HELP)


def _without_floordiv(value: DimExpr) -> tuple[Any, Any]:
    """A lower and an upper bound of `value` with each term `c*floordiv(n, k)` (c a
    multiple of k) replaced by what `n - k + 1 <= k*floordiv(n, k) <= n` allows."""
    lower: Any = 0
    upper: Any = 0
    for mono, coeff in value._poly:
        term = _make(((mono, coeff),), value._scope)
        atom = mono[0][0] if len(mono) == 1 and mono[0][1] == 1 else None
        if atom is None or atom[0] != "floordiv" or not _is_int(atom[2]) or \
                atom[2] <= 0 or coeff % atom[2]:
            lower, upper = lower + term, upper + term
            continue
        multiple, num = coeff // atom[2], atom[1]
        least, most = num - atom[2] + 1, num  # the range of k*floordiv(n, k)
        lower = lower + multiple * (least if multiple > 0 else most)
        upper = upper + multiple * (most if multiple > 0 else least)
    return lower, upper


# ---------------------------------------------------------------------- helpers

def is_symbolic_dim(value: Any) -> bool:
    """Whether `value` is a symbolic dimension (mirrors `jax.export.is_symbolic_dim`)."""
    return isinstance(value, DimExpr)


def canonical_dim(value: Any) -> Any:
    """A dimension as shapes hold it: a DimExpr as it is, anything else as an int."""
    return value if isinstance(value, DimExpr) else int(value)


def shape_size(shape: Iterable[Any]) -> Any:
    """The number of elements of a shape (a DimExpr when the shape is symbolic)."""
    size: Any = 1
    for d in shape:
        size = size * d if isinstance(d, DimExpr) else d * size
    return size


def slice_indices(start: Any, stop: Any, step: Any, size: Any) -> tuple[Any, Any, Any]:
    """(start, step, count) of `slice(start, stop, step)` over an axis of `size` (Python's
    `slice.indices` for sizes and bounds that may be symbolic; a comparison it needs that
    depends on the variables raises InconclusiveDimensionOperation)."""
    if not any(isinstance(v, DimExpr) for v in (start, stop, step, size)):
        start, stop, step = slice(start, stop, step).indices(size)
        return start, step, len(range(start, stop, step))
    step = 1 if step is None else step
    low, high = (0, size) if step > 0 else (-1, size - 1)

    def clamp(bound: Any, default: Any) -> Any:
        if bound is None:
            return default
        if _is_int(bound) and bound < 0:
            bound = bound + size
        bound = low if bound < low else bound  # a symbolic bound is compared decidably
        return high if bound > high else bound

    start = clamp(start, low if step > 0 else high)
    stop = clamp(stop, high if step > 0 else low)
    distance = stop - start if step > 0 else start - stop
    if not distance >= 0:
        return start, step, 0
    return start, step, (distance + abs(step) - 1) // abs(step)


def dimension_variables(dims: Iterable[Any]) -> set[str]:
    """The names of the variables of the symbolic dimensions among `dims`."""
    names: set[str] = set()
    for d in dims:
        if isinstance(d, DimExpr):
            names |= d.variables()
    return names
