"""Test records of the special-function primitives computed by float64 kernels:
igamma, igammac, igamma_grad_a, random_gamma_grad, regularized_incomplete_beta (betainc),
polygamma, zeta, bessel_i0e, bessel_i1e.

References come from mpmath at 30 significant digits (independent of the scipy kernels the
primitives call). Arguments stay inside each function's domain, away from its poles. The
derivative checks differentiate the arguments JAX differentiates to second order: x for
the incomplete gamma and beta functions (their derivatives in a, b raise or are kernels
without derivatives of their own; tests/scipy checks the first derivative in a), x for
polygamma and zeta (m is an integer order; the lax zeta is not differentiable in x).
"""
from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import mpmath
import numpy as np

from jaxlite import lax
from records import Case, Record

FLOATS = (np.float32, np.float16, ml_dtypes.bfloat16)
SHAPES = [(), (4,), (2, 3)]
mpmath.mp.dps = 30


def _draw_shape(rng: np.random.Generator) -> tuple:
    return SHAPES[int(rng.integers(len(SHAPES)))]


def _uniform(low: float, high: float) -> Callable[[np.random.Generator, tuple, Any],
                                                   np.ndarray]:
    def values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
        return rng.uniform(low, high, shape).astype(dtype)
    return values


def _mp_elementwise(fun: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """A numpy function of float arrays from an mpmath function of scalars (rounded to the
    first argument's dtype; float16 and bfloat16 are computed like float32)."""
    def reference(*args: np.ndarray) -> np.ndarray:
        args = np.broadcast_arrays(*[np.asarray(a) for a in args])
        wide = [a.astype(np.float64) for a in args]
        flat = [float(fun(*(mpmath.mpf(float(v)) for v in point)))
                for point in zip(*(w.ravel() for w in wide))]
        return np.array(flat, np.float64).reshape(args[0].shape).astype(args[0].dtype)
    return reference


def _p(a: Any, x: Any) -> Any:
    return mpmath.gammainc(a, 0, x, regularized=True)


def _gamma_density(a: Any, x: Any) -> Any:
    return mpmath.exp(-x) * x ** (a - 1) / mpmath.gamma(a)


REFERENCES = {
    "igamma": _p,
    "igammac": lambda a, x: mpmath.gammainc(a, x, mpmath.inf, regularized=True),
    "igamma_grad_a": lambda a, x: mpmath.diff(lambda s: _p(s, x), a),
    "random_gamma_grad": lambda a, x: -mpmath.diff(lambda s: _p(s, x), a)
    / _gamma_density(a, x),
    "zeta": mpmath.zeta,
    "bessel_i0e": lambda x: mpmath.besseli(0, x) * mpmath.exp(-abs(x)),
    "bessel_i1e": lambda x: mpmath.besseli(1, x) * mpmath.exp(-abs(x)),
    "betainc": lambda a, b, x: mpmath.betainc(a, b, 0, x, regularized=True),
}


def _record(name: str, primitive: str, low: float, high: float, grad_argnums: list[int],
            **record: Any) -> Record:
    fun = getattr(lax, name)
    num_args = 2 if name == "random_gamma_grad" else fun.__code__.co_argcount
    values = _uniform(low, high)

    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _draw_shape(rng)
        args = [values(rng, shape, dtype) for _ in range(num_args)]
        return Case(fun, _mp_elementwise(REFERENCES[name]), args, values,
                    grad_argnums=grad_argnums)
    return Record(primitive, make_case, dtypes=FLOATS, **record)


def _polygamma_record() -> Record:
    values = _uniform(0.3, 6.0)

    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        order = float(rng.integers(0, 4))

        def fun(x: Any) -> Any:
            return lax.polygamma(np.asarray(order, np.dtype(x.dtype)), x)
        reference = _mp_elementwise(lambda x: mpmath.polygamma(int(order), x))
        return Case(fun, reference, [values(rng, _draw_shape(rng), dtype)], values)
    return Record("polygamma", make_case, dtypes=FLOATS,
                  notes="orders 0..3 (a whole-number m), x in (0.3, 6)")


RECORDS = [
    _record("igamma", "igamma", 0.3, 6.0, [1]),
    _record("igammac", "igammac", 0.3, 6.0, [1]),
    _record("igamma_grad_a", "igamma_grad_a", 0.3, 6.0, [1]),
    _record("random_gamma_grad", "random_gamma_grad", 0.3, 6.0, [1]),
    _record("betainc", "regularized_incomplete_beta", 0.1, 0.9, [2]),
    _record("zeta", "zeta", 1.5, 6.0, [1]),
    _record("bessel_i0e", "bessel_i0e", -12.0, 12.0, [0]),
    _record("bessel_i1e", "bessel_i1e", -12.0, 12.0, [0]),
    _polygamma_record(),
]
