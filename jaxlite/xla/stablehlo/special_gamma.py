"""jaxlite's gamma-function kernels of real operands printed as JAX computes the same
functions: from `chlo.lgamma` and the sign of Gamma.

    gamma(x)   = sgn(x) exp(lgamma(x))
    beta(a, b) = sgn(a) sgn(b) sgn(a + b) exp(lgamma(a) + lgamma(b) - lgamma(a + b))
    poch(z, m) = sgn(z + m) sgn(z) exp(lgamma(z + m) - lgamma(z))   (1 where m = 0)
    binom(n, k) = exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1))  (NaN at n = inf)

sgn(x), the sign of Gamma(x): 1 for x > 0, the sign of the zero at +-0 (Gamma is +-inf
there), NaN at the poles (negative integers, -inf), else -1 where floor(x) is odd. Our
kernels are scipy's functions computed in float64 and rounded; so that the numbers agree,
float32 operands are computed in float64 here too (XLA's lgamma is accurate to a few
float64 ulps) and the result rounded once. The poles and infinities give the kernels'
values (JAX's conventions), and beta(-0, b) is inf as the kernel (scipy) says (JAX: -inf).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from jaxlite.xla.ir import HloInstruction
from jaxlite.xla.stablehlo import lapack as L
from jaxlite.xla.stablehlo.printer import FunctionWriter, Leaves

__all__ = ["GAMMA_EXPANSIONS", "convert", "unary"]

_F64 = np.dtype(np.float64)


def unary(w: FunctionWriter, op: str, x: str) -> str:
    return w.generic(op, [x], [L.shape_of(w, x)])[0]


def convert(w: FunctionWriter, x: str, dtype: np.dtype) -> str:
    shape = L.shape_of(w, x)
    if shape.dtype == dtype:
        return x
    return w.generic("stablehlo.convert", [x], [shape.with_dtype(dtype)])[0]


def _gamma_sign(w: FunctionWriter, x: str, signed_zeros: bool = True) -> str:
    """The sign of Gamma(x) (see the module docstring); 1 at -0 unless `signed_zeros`."""
    shape = L.shape_of(w, x)
    one, zero = L.splat(w, 1, shape), L.splat(w, 0, shape)
    floor = unary(w, "stablehlo.floor", x)
    half = unary(w, "stablehlo.floor", L.binary(w, "multiply", floor, L.splat(w, 0.5, shape)))
    odd = L.compare(w, L.binary(w, "add", half, half), floor, "NE", "FLOAT")
    negative = L.select(w, odd, L.splat(w, -1, shape), one)
    pole = L.select(w, L.compare(w, floor, x, "EQ", "FLOAT"), L.splat(w, np.nan, shape),
                    negative)
    zero_sign = unary(w, "stablehlo.sign", L.binary(w, "divide", one, x)) \
        if signed_zeros else one
    at_zero = L.select(w, L.compare(w, x, zero, "EQ", "FLOAT"), zero_sign, pole)
    return L.select(w, L.compare(w, x, zero, "GT", "FLOAT"), one, at_zero)


def _lgamma(w: FunctionWriter, x: str) -> str:
    return unary(w, "chlo.lgamma", x)


def _signed_exp(w: FunctionWriter, signs: list[str], exponent: str) -> str:
    value = unary(w, "stablehlo.exponential", exponent)
    for sign in signs:
        value = L.binary(w, "multiply", sign, value)
    return value


def _in_float64(formula: Callable[..., str]) -> L.KernelRule:
    """A rule computing `formula(w, *operands)` in float64, rounded to the result type;
    None (print the custom call) for complex operands."""
    def rule(w: FunctionWriter, inst: HloInstruction, operands: list[str],
             config: dict) -> Leaves | None:
        dtype = inst.shape.dtype
        if dtype.kind != "f":
            return None
        wide = formula(w, *[convert(w, x, _F64) for x in operands])
        return [convert(w, wide, dtype)]
    return rule


def _gamma(w: FunctionWriter, x: str) -> str:
    return _signed_exp(w, [_gamma_sign(w, x)], _lgamma(w, x))


def _beta(w: FunctionWriter, a: str, b: str) -> str:
    total = L.binary(w, "add", a, b)
    exponent = L.binary(w, "subtract", L.binary(w, "add", _lgamma(w, a), _lgamma(w, b)),
                        _lgamma(w, total))
    return _signed_exp(w, [_gamma_sign(w, v, signed_zeros=False) for v in (a, b, total)],
                       exponent)


def _poch(w: FunctionWriter, z: str, m: str) -> str:
    shape = L.shape_of(w, z)
    top = L.binary(w, "add", z, m)
    exponent = L.binary(w, "subtract", _lgamma(w, top), _lgamma(w, z))
    value = _signed_exp(w, [_gamma_sign(w, top), _gamma_sign(w, z)], exponent)
    empty = L.compare(w, m, L.splat(w, 0, shape), "EQ", "FLOAT")
    return L.select(w, empty, L.splat(w, 1, shape), value)


def _binom(w: FunctionWriter, n: str, k: str) -> str:
    shape = L.shape_of(w, n)
    one = L.splat(w, 1, shape)
    rest = L.binary(w, "add", L.binary(w, "subtract", n, k), one)
    exponent = L.binary(w, "subtract", L.binary(
        w, "subtract", _lgamma(w, L.binary(w, "add", n, one)),
        _lgamma(w, L.binary(w, "add", k, one))), _lgamma(w, rest))
    value = unary(w, "stablehlo.exponential", exponent)
    infinite = L.compare(w, unary(w, "stablehlo.abs", n), L.splat(w, np.inf, shape), "EQ",
                         "FLOAT")
    return L.select(w, infinite, L.splat(w, np.nan, shape), value)


GAMMA_EXPANSIONS: dict[str, L.KernelRule] = {
    "jaxlite_special_gamma": _in_float64(_gamma),
    "jaxlite_special_beta": _in_float64(_beta),
    "jaxlite_special_poch": _in_float64(_poch),
    "jaxlite_special_binom": _in_float64(_binom),
}
