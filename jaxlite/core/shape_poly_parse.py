"""Reading symbolic dimensions and solving for their variables (mirrors the parts of JAX's
`jax._src.export.shape_poly` behind `symbolic_shape` and `Exported.call`).

`SymbolicScope` reads constraints (`"b >= 2"`, `"c == 2*b"`) into what comparisons of its
dimensions may assume; `parse` reads a dimension as `str` prints it (and as
`symbolic_shape` specifications spell it); `evaluate` gives a dimension's int once the
variables have values, and `linear_in` what solving a dimension for one variable needs.
"""
from __future__ import annotations

import itertools
import re
from typing import Any, Mapping, Sequence

from jaxlite.core.shape_poly import DimExpr, Scope, dimension_variables

__all__ = ["SymbolicScope", "evaluate", "linear_in", "parse"]


class SymbolicScope(Scope):
    """The variables of one family of symbolic shapes and the constraints between them
    (mirrors `jax.export.SymbolicScope`): `"a >= 4"`, `"a <= b"`, `"c == 2*a"`.

    Inequalities bound the values comparisons consider; an equality whose left side is a
    variable replaces that variable by its right side in every shape of the scope."""

    _ids = itertools.count()

    def __init__(self, constraints_str: Sequence[str] = ()) -> None:
        if isinstance(constraints_str, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. Got "
                             f"{constraints_str!r}")
        super().__init__()
        self._id = next(SymbolicScope._ids)
        self.constraints_str = tuple(constraints_str)
        for text in self.constraints_str:
            self._add_constraint(text)

    def _add_constraint(self, text: str) -> None:
        match = re.fullmatch(r"(.+?)\s*(>=|<=|==)\s*(.+)", text.strip())
        if match is None:
            raise ValueError(f"Invalid symbolic constraint '{text}': expected 'e1 >= e2', "
                             "'e1 <= e2' or 'e1 == e2'.")
        left, op, right = (match.group(1), match.group(2), match.group(3))
        lhs, rhs = parse(left, self), parse(right, self)
        if op == "==":
            if not (isinstance(lhs, DimExpr) and lhs.variable_name() is not None):
                raise ValueError(f"Invalid equality constraint '{text}': its left side "
                                 "must be a dimension variable.")
            self.substitutions[lhs.variable_name()] = rhs
        else:
            self.nonnegative.append(lhs - rhs if op == ">=" else rhs - lhs)

    def __repr__(self) -> str:
        return f"SymbolicScope({list(self.constraints_str)})"


def linear_in(dim: Any, name: str) -> tuple[int, Any] | None:
    """(k, rest) with `dim == k*name + rest` and `rest` free of `name`; None when `name`
    appears otherwise (in a product, a power, a floordiv or mod)."""
    if not isinstance(dim, DimExpr):
        return None
    lone = ((("var", name), 1),)
    k = 0
    for mono, coeff in dim.terms():
        if mono == lone:
            k = coeff
        elif name in _monomial_variables(mono):
            return None
    if k == 0:
        return None
    return k, dim - DimExpr.variable(name, dim.scope) * k


def _monomial_variables(mono: tuple) -> set[str]:
    names: set[str] = set()
    for atom, _ in mono:
        names |= {atom[1]} if atom[0] == "var" else dimension_variables(atom[1:])
    return names


def evaluate(dim: Any, env: Mapping[str, int]) -> int:
    """The int value of a dimension when each variable `name` is `env[name]`."""
    if not isinstance(dim, DimExpr):
        return int(dim)
    total = 0
    for mono, coeff in dim.terms():
        term = coeff
        for atom, power in mono:
            term *= _atom_value(atom, env) ** power
        total += term
    return total


def _atom_value(atom: tuple, env: Mapping[str, int]) -> int:
    if atom[0] == "var":
        if atom[1] not in env:
            raise KeyError(f"no value for the dimension variable '{atom[1]}'")
        return int(env[atom[1]])
    num, den = evaluate(atom[1], env), evaluate(atom[2], env)
    return num // den if atom[0] == "floordiv" else num % den


# ---------------------------------------------------------------------- parsing

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(\.\.\.)|(.))")


def parse(text: str, scope: SymbolicScope | None = None) -> Any:
    """The dimension `text` spells (`b`, `2*b + 1`, `b^2`, `floordiv(b, 2)`, `mod(b, 2)`);
    the inverse of `str`."""
    reader = _Reader(text, scope)
    value = reader.sum()
    if reader.peek() is not None:
        raise ValueError(f"syntax error in symbolic dimension '{text}': unexpected "
                         f"'{reader.peek()}'")
    return value


class _Reader:
    """A recursive-descent reader of one dimension expression."""

    def __init__(self, text: str, scope: Scope | None) -> None:
        self.text = text
        self.scope = scope
        self.tokens = [m.group(0).strip() for m in _TOKEN.finditer(text)
                       if m.group(0).strip()]
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"syntax error in symbolic dimension '{self.text}': expected "
                             f"{expected or 'a term'}, found {token or 'the end'}")
        self.pos += 1
        return token

    def sum(self) -> Any:
        value = self.product()
        while self.peek() in ("+", "-"):
            value = value + self.product() if self.take() == "+" else value - self.product()
        return value

    def product(self) -> Any:
        value = self.power()
        while self.peek() == "*":
            self.take()
            value = value * self.power()
        return value

    def power(self) -> Any:
        value = self.atom()
        if self.peek() == "^":
            self.take()
            exponent = int(self.take())
            result = 1
            for _ in range(exponent):
                result = result * value
            return result
        return value

    def atom(self) -> Any:
        token = self.take()
        if token == "-":
            return -self.power()
        if token == "(":
            value = self.sum()
            self.take(")")
            return value
        if token.isdigit():
            return int(token)
        if token in ("floordiv", "mod") and self.peek() == "(":
            self.take("(")
            num = self.sum()
            self.take(",")
            den = self.sum()
            self.take(")")
            return num // den if token == "floordiv" else num % den
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token):
            replaced = self.scope.substitutions.get(token) if self.scope else None
            return replaced if replaced is not None else DimExpr.variable(token, self.scope)
        raise ValueError(f"syntax error in symbolic dimension '{self.text}': unexpected "
                         f"'{token}'")
