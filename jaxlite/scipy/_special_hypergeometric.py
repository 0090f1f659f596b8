"""The confluent and Gauss hypergeometric functions hyp1f1(a, b, x), hyp2f1(a, b, c, x).

Primitives computed by float64 kernels: scipy.special's values, with the special cases
JAX's implementation selects explicitly:

- hyp1f1: 1 where a = 0, exp(x) where a = b != 0, inf where b = 0 != a; nan where x is
  infinite (scipy's kernel does not return there); where a or b is nan or infinite or b a
  negative integer, the values JAX's series gives (see `_hyp1f1_series_edges`);
- hyp2f1: 1 where x = 0 or (a = 0 or b = 0) with c != 0; inf where c is 0 or a negative
  integer, where c - a - b <= 0 at x = 1, and for x > 1 (outside the real domain) unless
  JAX's Euler-transformed branch applies (c - a - b <= -1 and an integer there); 1 where
  x is nan and JAX sums its series (whose first term is 1).

Elsewhere JAX sums the Taylor series (at most 250 terms, an asymptotic series for
|x| >= 100 in hyp1f1), which is nan or inaccurate for large |x| and near x = 1; jaxlite
gives scipy's value.

Derivatives as JAX defines them: in x, a/b 1F1(a + 1; b + 1; x) and
ab/c 2F1(a + 1, b + 1; c + 1; x); in the parameters, series of the differentiated
Pochhammer symbols (kernels in `_hypergeometric_kernels.py`, with Kummer's and Pfaff's
transformations for x < 0 where JAX's plain series loses all digits). Parameter
derivatives are differentiable once more in x; second derivatives in the parameters raise
NotImplementedError.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sp

from jaxlite import lax
from jaxlite.lax.special_kernel import kernel_jvp, kernel_primitive
from jaxlite.numpy._promotion import promote_args_inexact
from jaxlite.scipy._hypergeometric_kernels import hyp1f1_derivatives, hyp2f1_derivatives
from jaxlite.core import dtypes
from jaxlite.scipy._special_error import reject_complex, strong

__all__ = ["hyp1f1", "hyp2f1"]

_EPS50 = 50 * np.finfo(np.float64).eps


def _hyp1f1_series_edges(a: np.ndarray, b: np.ndarray, x: np.ndarray,
                         value: np.ndarray) -> np.ndarray:
    """JAX's values where a parameter is nan or infinite or b a negative integer (its
    series stops at once on a nan term, or divides by b + k = 0): 1 at x = 0, and for
    0 < |x| < 100 (beyond, JAX's asymptotic series is nan) 1 for a nan parameter,
    +-inf for an infinite a (the sign of a/b x), -inf at a pole b; nan otherwise."""
    pole = (b < 0) & (b == np.floor(b))
    odd = np.isnan(a) | np.isnan(b) | np.isinf(a) | np.isinf(b) | pole
    series_range = (np.abs(x) < 100) & (x != 0)
    infinite_a = np.sign(a) * np.sign(b) * np.sign(x) * np.inf  # the sign of a/b x
    in_series = np.where(np.isnan(a) | np.isnan(b), 1.0,
                         np.where(np.isinf(a), infinite_a, -np.inf))
    at_edge = np.where(x == 0, 1.0, np.where(series_range, in_series, np.nan))
    return np.where(odd, at_edge, value)


def _hyp1f1_kernel(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    finite = np.isfinite(x) & np.isfinite(a) & np.isfinite(b)
    out = np.where(finite, sp.hyp1f1(*(np.where(finite, v, 0.0) for v in (a, b, x))),
                   np.nan)
    out = _hyp1f1_series_edges(a, b, x, out)
    out = np.where((b == 0) & (a != 0), np.inf, out)
    out = np.where((a == b) & (a != 0), np.exp(x), out)
    return np.where(a == 0, 1.0, out)


def _hyp2f1_kernel(a: np.ndarray, b: np.ndarray, c: np.ndarray, x: np.ndarray) -> np.ndarray:
    d = c - a - b
    euler = (d <= -1) & ~((np.abs(d - np.round(d)) >= _EPS50) & (x > 1))
    infinite = ((c == 0) | ((c < 0) & (c % 1 == 0))
                | (~euler & (((d <= 0) & (x == 1)) | (x > 1))))
    out = np.where(infinite, np.inf, sp.hyp2f1(a, b, c, x))
    # JAX's series stops at once on a nan term and returns its first term, 1.
    terminating = ((a <= 0) & (a == np.round(a))) | ((b <= 0) & (b == np.round(b)))
    series = ~euler & ~infinite & ~(((b == c) | (a == c)) & (x < 1))
    out = np.where(np.isnan(x) & series & ~terminating, 1.0, out)
    return np.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 1.0, out)


def _pick(kernel: Any, index: int) -> Any:
    def derivative(*args: np.ndarray) -> np.ndarray:
        return kernel(*args)[index]
    return derivative


def _hyp2f1_parameter_derivatives(a: np.ndarray, b: np.ndarray, c: np.ndarray,
                                  x: np.ndarray) -> tuple[np.ndarray, ...]:
    return hyp2f1_derivatives(a, b, c, x, sp.hyp2f1(a, b, c, x))


hyp1f1_p = kernel_primitive("hyp1f1", _hyp1f1_kernel, num_args=3)
hyp1f1_da_p = kernel_primitive("hyp1f1_da", _pick(hyp1f1_derivatives, 0), num_args=3)
hyp1f1_db_p = kernel_primitive("hyp1f1_db", _pick(hyp1f1_derivatives, 1), num_args=3)
hyp2f1_p = kernel_primitive("hyp2f1", _hyp2f1_kernel, num_args=4)
hyp2f1_da_p = kernel_primitive("hyp2f1_da", _pick(_hyp2f1_parameter_derivatives, 0),
                               num_args=4)
hyp2f1_db_p = kernel_primitive("hyp2f1_db", _pick(_hyp2f1_parameter_derivatives, 1),
                               num_args=4)
hyp2f1_dc_p = kernel_primitive("hyp2f1_dc", _pick(_hyp2f1_parameter_derivatives, 2),
                               num_args=4)


def _one(x: Any) -> Any:
    return lax.full_like(x, 1)


def _shifted(*params: Any) -> list[Any]:
    return [lax.add(p, _one(p)) for p in params]


def _hyp1f1_dx(a: Any, b: Any, x: Any) -> Any:
    return lax.mul(lax.div(a, b), hyp1f1_p.bind(*_shifted(a, b), x))


def _hyp2f1_dx(a: Any, b: Any, c: Any, x: Any) -> Any:
    return lax.mul(lax.div(lax.mul(a, b), c), hyp2f1_p.bind(*_shifted(a, b, c), x))


def _second_in_parameters(name: str) -> Any:
    def rule(t: Any, *args: Any) -> Any:
        raise NotImplementedError(f"Differentiation rule for '{name}' with respect to the "
                                  "parameters not implemented (second derivatives of the "
                                  "hypergeometric functions in their parameters).")
    return rule


kernel_jvp(hyp1f1_p, lambda t, a, b, x: lax.mul(t, hyp1f1_da_p.bind(a, b, x)),
           lambda t, a, b, x: lax.mul(t, hyp1f1_db_p.bind(a, b, x)),
           lambda t, a, b, x: lax.mul(t, _hyp1f1_dx(a, b, x)))
# d/dx dF/da = d/da (a/b F(a+1, b+1, x)) and likewise for b.
kernel_jvp(hyp1f1_da_p, _second_in_parameters("hyp1f1_da"), _second_in_parameters("hyp1f1_da"),
           lambda t, a, b, x: lax.mul(t, lax.add(
              lax.div(hyp1f1_p.bind(*_shifted(a, b), x), b),
              lax.mul(lax.div(a, b), hyp1f1_da_p.bind(*_shifted(a, b), x)))))
kernel_jvp(hyp1f1_db_p, _second_in_parameters("hyp1f1_db"), _second_in_parameters("hyp1f1_db"),
           lambda t, a, b, x: lax.mul(t, lax.sub(
              lax.mul(lax.div(a, b), hyp1f1_db_p.bind(*_shifted(a, b), x)),
              lax.mul(lax.div(a, lax.square(b)), hyp1f1_p.bind(*_shifted(a, b), x)))))
kernel_jvp(hyp2f1_p, lambda t, a, b, c, x: lax.mul(t, hyp2f1_da_p.bind(a, b, c, x)),
           lambda t, a, b, c, x: lax.mul(t, hyp2f1_db_p.bind(a, b, c, x)),
           lambda t, a, b, c, x: lax.mul(t, hyp2f1_dc_p.bind(a, b, c, x)),
           lambda t, a, b, c, x: lax.mul(t, _hyp2f1_dx(a, b, c, x)))


def _hyp2f1_parameter_dx(primitive: Any, which: int) -> Any:
    """d/dx of d2F1/d(param) = d/d(param) of ab/c 2F1(a+1, b+1, c+1, x)."""
    def rule(t: Any, a: Any, b: Any, c: Any, x: Any) -> Any:
        shifted_value = hyp2f1_p.bind(*_shifted(a, b, c), x)
        factor = lax.div(lax.mul(a, b), c)
        d_factor = [lax.div(b, c), lax.div(a, c), lax.neg(lax.div(factor, c))][which]
        return lax.mul(t, lax.add(lax.mul(d_factor, shifted_value),
                                  lax.mul(factor, primitive.bind(*_shifted(a, b, c), x))))
    return rule


for _index, _primitive in enumerate((hyp2f1_da_p, hyp2f1_db_p, hyp2f1_dc_p)):
    _no = _second_in_parameters(_primitive.name)
    kernel_jvp(_primitive, _no, _no, _no, _hyp2f1_parameter_dx(_primitive, _index))


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """The confluent hypergeometric function 1F1(a; b; x) (`jax.scipy.special.hyp1f1`)."""
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    reject_complex("hyp1f1", x)
    return strong(hyp1f1_p.bind(a, b, x))


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """The Gauss hypergeometric function 2F1(a, b; c; x) (`jax.scipy.special.hyp2f1`)."""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        # JAX's error comes from the remainder it takes of c; its type and text are JAX's.
        raise TypeError(f"rem does not accept dtype {np.dtype(x.dtype)} at position 0. "
                        "Accepted dtypes at position 0 are subtypes of integer, floating. "
                        "(hyp2f1 does not support complex-valued inputs.)")
    return strong(hyp2f1_p.bind(a, b, c, x))
