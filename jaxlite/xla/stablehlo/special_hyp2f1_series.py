"""Building blocks of the Gauss hypergeometric expansions (`special_hyp2f1.py`): float64
arithmetic written as StableHLO ops (`Floats`), quotients of Gamma functions, and the two
summations, each one `stablehlo.while` that stops once every element has converged:

- `series`: several power series sum_k (a)_k (b)_k / (c)_k z^k / k! at once (stacked
  on a leading axis, so one loop serves all the transformations), each with the
  estimated relative rounding error eps max|term| / |sum| + eps steps (inf where the
  sum did not converge);
- `logarithmic`: 2F1(a, b; a + b + m; 1 - y) for whole m >= 0, the limiting form of the
  1 - z transformation (Abramowitz & Stegun 15.3.10-11), with digamma by its recurrence.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from jaxlite.xla.shape import Shape
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo import types as T
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves
from jaxlite.xla.stablehlo.special_igamma import as_float

__all__ = ["DIGAMMA_ERROR", "Floats", "MACHEP", "any_true", "gamma_ratio", "series", "logarithmic",
           "until_converged"]

MACHEP = 2.0 ** -53
DIGAMMA_ERROR = 5e-14
_F64 = np.dtype(np.float64)


class Floats:
    """Elementwise float64 arithmetic on values of one shape, written with `w`; a number
    where a value is expected becomes a constant of that shape."""

    def __init__(self, w: FunctionWriter, shape: Shape) -> None:
        self.w, self.shape = w, shape.with_dtype(_F64)

    def of(self, v: "str | float") -> str:
        return v if isinstance(v, str) else L.splat(self.w, float(v), self.shape)

    def _two(self, op: str, a, b) -> str:
        return L.binary(self.w, op, self.of(a), self.of(b))

    def add(self, a, b): return self._two("add", a, b)
    def sub(self, a, b): return self._two("subtract", a, b)
    def mul(self, a, b): return self._two("multiply", a, b)
    def div(self, a, b): return self._two("divide", a, b)
    def pow(self, a, b): return self._two("power", a, b)
    def max(self, a, b): return self._two("maximum", a, b)

    def one(self, op: str, v) -> str:
        """`op` (a StableHLO or CHLO unary op, e.g. "stablehlo.log") of `v`."""
        v = self.of(v)
        return self.w.generic(op, [v], [L.shape_of(self.w, v)])[0]

    def neg(self, v): return self.one("stablehlo.negate", v)
    def abs(self, v): return self.one("stablehlo.abs", v)
    def log(self, v): return self.one("stablehlo.log", v)
    def exp(self, v): return self.one("stablehlo.exponential", v)
    def floor(self, v): return self.one("stablehlo.floor", v)
    def round(self, v): return self.one("stablehlo.round_nearest_afz", v)

    def cmp(self, a, direction: str, b) -> str:
        return L.compare(self.w, self.of(a), self.of(b), direction, "FLOAT")

    def all(self, *predicates: str) -> str:
        out = predicates[0]
        for p in predicates[1:]:
            out = self.w.generic("stablehlo.and", [out, p], [L.shape_of(self.w, p)])[0]
        return out

    def any(self, *predicates: str) -> str:
        out = predicates[0]
        for p in predicates[1:]:
            out = self.w.generic("stablehlo.or", [out, p], [L.shape_of(self.w, p)])[0]
        return out

    def no(self, p: str) -> str:
        return self.w.generic("stablehlo.not", [p], [L.shape_of(self.w, p)])[0]

    def where(self, p: str, yes, no) -> str:
        return L.select(self.w, p, self.of(yes), self.of(no))

    def is_nan(self, v: str) -> str:
        return self.cmp(v, "NE", v)

    def near_integer(self, v: str, eps: float = 1e-13) -> str:
        return self.cmp(self.abs(self.sub(v, self.round(v))), "LT", eps)

    def nonpositive_integer(self, v: str) -> str:
        return self.all(self.near_integer(v), self.cmp(self.round(v), "LE", 0.0))


def _gamma_sign(f: Floats, v: str) -> str:
    """The sign of Gamma(v): 1 for v > 0, else -1 where floor(v) is odd (any at poles)."""
    whole = f.floor(v)
    odd = f.cmp(f.mul(f.floor(f.mul(whole, 0.5)), 2.0), "NE", whole)
    return f.where(f.all(f.cmp(v, "LE", 0.0), odd), -1.0, 1.0)


def gamma_ratio(f: Floats, top: Sequence[str], bottom: Sequence[str]) -> str:
    """prod Gamma(top) / prod Gamma(bottom), from lgamma and the signs; 0 where a bottom
    argument is a pole (1/Gamma vanishes there)."""
    exponent = f.of(0.0)
    sign = f.of(1.0)
    for v in top:
        exponent = f.add(exponent, f.one("chlo.lgamma", v))
        sign = f.mul(sign, _gamma_sign(f, v))
    for v in bottom:
        exponent = f.sub(exponent, f.one("chlo.lgamma", v))
        sign = f.mul(sign, _gamma_sign(f, v))
    return f.mul(sign, f.exp(exponent))


def any_true(w: FunctionWriter, p: str) -> str:
    shape = L.shape_of(w, p)
    element = Shape(np.bool_, ())

    def either(args: Leaves) -> Leaves:
        return w.same_type("stablehlo.or", args, element)
    return w.generic("stablehlo.reduce", [p, L.scalar(w, False, np.bool_)], [element],
                     {"dimensions": T.i64_array(range(shape.rank))},
                     [w.block([element, element], either)])[0]


def until_converged(w: FunctionWriter, max_steps: int, active: str, start: list[str],
                    step: Callable[[str, list[str]], tuple[list[str], str]]) -> list[str]:
    """Iterate `step(k, values) -> (values, still_active)` for k = 0, 1, ... (k a float64
    value) in a `stablehlo.while`, each element frozen once it is no longer active, until
    no element is or after `max_steps` steps; the last values, then the active mask."""
    index = Shape(np.int32, ())
    shapes = [index, L.shape_of(w, active)] + [L.shape_of(w, v) for v in start]

    def condition(state: Leaves) -> Leaves:
        more = L.compare(w, state[0], L.scalar(w, max_steps, np.int32), "LT", "SIGNED")
        return w.same_type("stablehlo.and", [more, any_true(w, state[1])],
                           Shape(np.bool_, ()))

    def body(state: Leaves) -> Leaves:
        i, busy, values = state[0], state[1], state[2:]
        k = as_float(w, i, L.shape_of(w, values[0]).with_dtype(_F64))
        new, still = step(k, values)
        kept = [L.select(w, busy, n, v) for n, v in zip(new, values)]
        busy = w.same_type("stablehlo.and", [busy, still], L.shape_of(w, busy))
        return w.same_type("stablehlo.add", [i, L.scalar(w, 1, np.int32)], index) + \
            busy + kept
    out = w.generic("stablehlo.while", [L.scalar(w, 0, np.int32), active] + start, shapes,
                    None, [w.block(shapes, condition), w.block(shapes, body)])
    return out[2:] + [out[1]]


def _stack(w: FunctionWriter, values: Sequence[str]) -> str:
    shape = L.shape_of(w, values[0])
    one = shape.with_dims((1,) + shape.dims)
    rows = [L.broadcast(w, v, one, range(1, shape.rank + 1)) for v in values]
    return w.generic("stablehlo.concatenate", rows,
                     [shape.with_dims((len(values),) + shape.dims)], {"dimension": T.i64(0)})[0]


def _row(w: FunctionWriter, stacked: str, i: int) -> str:
    shape = L.shape_of(w, stacked)
    rest = shape.dims[1:]
    part = w.generic("stablehlo.slice", [stacked], [shape.with_dims((1,) + rest)],
                     {"start_indices": T.i64_array([i] + [0] * len(rest)),
                      "limit_indices": T.i64_array([i + 1] + list(rest)),
                      "strides": T.i64_array([1] * shape.rank)})[0]
    return w.generic("stablehlo.reshape", [part], [shape.with_dims(rest)])[0]


def series(w: FunctionWriter, params: Sequence[tuple[str, str, str, str]],
           max_steps: int) -> list[tuple[str, str]]:
    """(sum, estimated relative error) of 2F1(a, b; c; z) = sum_k t_k for each (a, b, c, z)
    of `params`, t_(k+1) = t_k (a + k)(b + k) z / ((c + k)(k + 1)), summed until
    |t_k| <= eps |sum| (a NaN or infinite sum stops at once, as does a polynomial at its
    first zero term); the error is inf where the sum did not converge or is not finite."""
    a, b, c, z = (_stack(w, [p[j] for p in params]) for j in range(4))
    f = Floats(w, L.shape_of(w, z))
    one, zero = f.of(1.0), f.of(0.0)
    busy = f.cmp(one, "EQ", one)

    def step(k: str, values: list[str]) -> tuple[list[str], str]:
        term, total, largest, steps = values
        ratio = f.div(f.mul(f.mul(f.add(a, k), f.add(b, k)), z),
                      f.mul(f.add(c, k), f.add(k, 1.0)))
        term = f.mul(term, ratio)
        total = f.add(total, term)
        # (a zero sum goes on unless a zero term ended a polynomial)
        zero_sum = f.all(f.cmp(total, "EQ", 0.0), f.cmp(term, "NE", 0.0))
        still = f.any(zero_sum, f.cmp(f.abs(f.div(term, total)), "GT", MACHEP))
        # Until k passes -a, -b and -c the ratio may still grow (a term spikes where
        # c + k nears 0): a small term there is no sign of convergence.
        ahead = f.add(f.max(f.max(f.neg(a), f.neg(b)), f.neg(c)), 2.0)
        still = f.any(still, f.all(f.cmp(k, "LT", ahead), f.cmp(term, "NE", 0.0),
                                   f.cmp(f.abs(total), "LT", np.inf)))
        return [term, total, f.max(largest, f.abs(term)), f.add(steps, 1.0)], still
    _, total, largest, steps, busy = until_converged(w, max_steps, busy,
                                                     [one, one, one, zero], step)
    error = f.add(f.div(f.mul(largest, MACHEP), f.abs(total)), f.mul(steps, MACHEP))
    finite = f.cmp(f.abs(total), "LT", np.inf)
    error = f.where(f.all(f.no(busy), finite), error, np.inf)
    return [(_row(w, total, i), _row(w, error, i)) for i in range(len(params))]


def logarithmic(f: Floats, a: str, b: str, m: str, y: str,
                max_steps: int) -> tuple[str, str]:
    """(value, estimated relative error) of 2F1(a, b; a + b + m; 1 - y) for whole m >= 0
    and 0 < y < 1 (A&S 15.3.10-11):

        G(c) / (G(a + m) G(b + m)) sum_(n < m) (a)_n (b)_n (m - n - 1)! / n! (-y)^n
        - (-y)^m G(c) / (G(a) G(b)) sum_n (a + m)_n (b + m)_n / (n! (n + m)!) y^n
          (log y - psi(n + 1) - psi(n + m + 1) + psi(a + m + n) + psi(b + m + n)),

    both sums in one loop, digamma carried by psi(v + 1) = psi(v) + 1/v from XLA's
    digamma (accurate to about `DIGAMMA_ERROR` relative, which the estimate adds).
    """
    am, bm = f.add(a, m), f.add(b, m)
    fin = f.exp(f.one("chlo.lgamma", f.max(m, 1.0)))                # (m - 1)!
    fin_sum = f.where(f.cmp(m, "GT", 0.0), fin, 0.0)
    t = f.exp(f.neg(f.one("chlo.lgamma", f.add(m, 1.0))))           # 1 / m!
    psis = [f.one("chlo.digamma", v) for v in (f.of(1.0), f.add(m, 1.0), am, bm)]
    log_y = f.log(y)

    def bracket(p: list[str]) -> str:
        return f.add(f.sub(f.sub(log_y, p[0]), p[1]), f.add(p[2], p[3]))
    total = f.mul(t, bracket(psis))

    def step(k: str, values: list[str]) -> tuple[list[str], str]:
        fin, fin_sum, fin_largest, t, total, largest, *p = values
        k1 = f.add(k, 1.0)
        fin = f.mul(fin, f.div(f.mul(f.mul(f.add(a, k), f.add(b, k)), f.neg(y)),
                               f.mul(k1, f.sub(m, k1))))
        in_sum = f.cmp(k1, "LT", m)
        fin_sum = f.add(fin_sum, f.where(in_sum, fin, 0.0))
        fin_largest = f.where(in_sum, f.max(fin_largest, f.abs(fin)), fin_largest)
        t = f.mul(t, f.div(f.mul(f.mul(f.add(am, k), f.add(bm, k)), y),
                           f.mul(k1, f.add(k1, m))))
        p = [f.add(p[0], f.div(1.0, k1)), f.add(p[1], f.div(1.0, f.add(k1, m))),
             f.add(p[2], f.div(1.0, f.add(am, k))), f.add(p[3], f.div(1.0, f.add(bm, k)))]
        increment = f.mul(t, bracket(p))
        total = f.add(total, increment)
        # the bracket may pass through 0: judge the size of the term by |t| as well
        size = f.add(f.abs(increment), f.abs(t))
        still = f.any(f.cmp(k1, "LT", m), f.cmp(size, "GT", f.mul(f.abs(total), MACHEP)))
        return [fin, fin_sum, fin_largest, t, total, f.max(largest, size)] + p, still
    out = until_converged(f.w, max_steps, f.cmp(y, "EQ", y),
                          [fin, fin_sum, f.abs(fin_sum), t, total, f.abs(total)] + psis, step)
    fin_sum, fin_largest, total, largest, busy = out[1], out[2], out[4], out[5], out[-1]
    c = f.add(f.add(a, b), m)
    odd = f.cmp(f.mul(f.floor(f.mul(m, 0.5)), 2.0), "NE", m)
    power = f.mul(f.where(odd, -1.0, 1.0), f.pow(y, m))             # (-y)^m
    ratio = gamma_ratio(f, [c], [am, bm])
    first = f.mul(ratio, fin_sum)
    second = f.mul(f.mul(power, gamma_ratio(f, [c], [a, b])), total)
    value = f.sub(first, second)
    # Each sum's rounding: its largest term's and a step's per term (the finite sum's
    # terms alternate for y > 0 and may cancel as well); the infinite one's digamma's too.
    # (The first as an absolute error: its sum is empty for m = 0.)
    e_first = f.mul(f.abs(ratio), f.mul(
        f.add(fin_largest, f.mul(f.abs(fin_sum), f.add(m, 2.0))), MACHEP))
    e_second = f.add(f.mul(f.add(f.div(largest, f.abs(total)), 2.0), MACHEP), DIGAMMA_ERROR)
    error = f.div(f.add(e_first, f.mul(f.abs(second), e_second)), f.abs(value))
    return value, f.where(busy, np.inf, error)
