"""Test records of the primitives behind jaxlite.scipy.special (float64 kernels): erfcx,
dawsn, wofz, fresnel, owens_t, the exponential integrals, spence, gamma, beta, poch, binom,
the complex loggamma and digamma, the hypergeometric functions and their parameter
derivatives, and bessel_jv.

References come from mpmath at 30 digits. Each primitive is exercised through a small
function that binds it directly; whole-number orders (expn, bessel_jv) are fixed per case.
Second-order derivative checks use the arguments in which the primitive is differentiable
twice (the variable x; the hypergeometric parameter derivatives are not differentiable
again in the parameters; complex loggamma is differentiable once, checked in
tests/scipy/test_special_derivatives.py).
"""
from __future__ import annotations

from typing import Any, Callable

import mpmath
import numpy as np

from jaxlite import lax
from jaxlite.scipy import _bessel, _special_error as err, _special_expint as expint
from jaxlite.scipy import _special_gamma as gam, _special_hypergeometric as hyp
from records import Case, Record
from records_special import FLOATS, _draw_shape, _mp_elementwise, _uniform

mpmath.mp.dps = 30


def _mp_complex(fun: Callable[[Any], Any]) -> Callable[[np.ndarray], np.ndarray]:
    def reference(z: np.ndarray) -> np.ndarray:
        flat = [complex(fun(mpmath.mpc(complex(v)))) for v in z.ravel()]
        return np.array(flat, np.complex128).reshape(z.shape).astype(z.dtype)
    return reference


def _complex_values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    real = rng.uniform(0.3, 4.0, shape) * rng.choice([-1.0, 1.0], shape)
    return (real + 1j * rng.uniform(-3.0, 3.0, shape)).astype(dtype)


def _record(primitive: Any, reference: Callable[..., Any], low: float, high: float,
            num_args: int, grad_argnums: list[int], dtypes: Any = FLOATS,
            **record: Any) -> Record:
    values = _uniform(low, high)

    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        shape = _draw_shape(rng)
        args = [values(rng, shape, dtype) for _ in range(num_args)]
        return Case(primitive.bind, _mp_elementwise(reference), args, values,
                    grad_argnums=grad_argnums)
    return Record(primitive.name, make_case, dtypes=dtypes, **record)


def _ordered(primitive: Any, reference: Callable[..., Any], low: float, high: float,
             orders: tuple[int, int]) -> Record:
    """A record for primitive(order, x) with a whole-number order fixed per case."""
    values = _uniform(low, high)

    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        order = float(rng.integers(*orders))

        def fun(x: Any) -> Any:
            return primitive.bind(lax.full_like(x, order), x)
        mp_reference = _mp_elementwise(lambda x: reference(int(order), x))
        return Case(fun, mp_reference, [values(rng, _draw_shape(rng), dtype)], values)
    return Record(primitive.name, make_case, dtypes=FLOATS, notes=f"orders {orders}")


def _complex_record(primitive: Any, reference: Callable[..., Any], grad: bool) -> Record:
    def make_case(rng: np.random.Generator, dtype: Any) -> Case:
        return Case(primitive.bind, _mp_complex(reference),
                    [_complex_values(rng, _draw_shape(rng), dtype)], _complex_values)
    return Record(primitive.name, make_case, dtypes=(np.complex64,), grad=grad,
                  grad_dtype=np.complex128)


def _binom(n: Any, k: Any) -> Any:
    return mpmath.binomial(n, k)


def _owens_t(h: Any, a: Any) -> Any:
    return mpmath.quad(lambda t: mpmath.exp(-h * h * (1 + t * t) / 2) / (1 + t * t),
                       [0, a]) / (2 * mpmath.pi)


def _parameter_derivative(fun: Callable[..., Any], index: int) -> Callable[..., Any]:
    def derivative(*args: Any) -> Any:
        def shifted(s: Any) -> Any:
            moved = list(args)
            moved[index] = s
            return fun(*moved)
        return mpmath.diff(shifted, args[index])
    return derivative


RECORDS = [
    _record(err.erfcx_p, lambda x: mpmath.exp(x * x) * mpmath.erfc(x), -3.0, 8.0, 1, [0]),
    _record(err.dawsn_p, lambda x: mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(-x * x)
            * mpmath.erfi(x), -6.0, 6.0, 1, [0]),
    _record(err.fresnel_s_p, lambda x: mpmath.fresnels(x), -3.0, 3.0, 1, [0]),
    _record(err.fresnel_c_p, lambda x: mpmath.fresnelc(x), -3.0, 3.0, 1, [0]),
    _record(err.owens_t_p, _owens_t, -2.0, 2.0, 2, [0, 1]),
    _complex_record(err.wofz_p, lambda z: mpmath.exp(-z * z) * mpmath.erfc(-1j * z), True),
    _record(expint.expi_p, mpmath.ei, 0.2, 6.0, 1, [0]),
    _ordered(expint.expn_p, lambda n, x: mpmath.expint(n, x), 0.2, 6.0, (0, 5)),
    _record(expint.si_p, mpmath.si, -8.0, 8.0, 1, [0]),
    _record(expint.ci_p, mpmath.ci, 0.2, 8.0, 1, [0]),
    _record(expint.spence_p, lambda x: mpmath.polylog(2, 1 - x), 0.1, 4.0, 1, [0]),
    _record(gam.gamma_p, mpmath.gamma, 0.3, 6.0, 1, [0]),
    _complex_record(gam.loggamma_complex_p, mpmath.loggamma, False),
    _complex_record(gam.digamma_complex_p, mpmath.digamma, False),
    _record(gam.beta_p, mpmath.beta, 0.3, 5.0, 2, [0, 1]),
    _record(gam.poch_p, mpmath.rf, 0.3, 5.0, 2, [0, 1]),
    _record(gam.binom_p, _binom, 0.3, 6.0, 2, [0, 1]),
    _record(hyp.hyp1f1_p, mpmath.hyp1f1, 0.3, 3.0, 3, [2]),
    _record(hyp.hyp1f1_da_p, _parameter_derivative(mpmath.hyp1f1, 0), 0.3, 3.0, 3, [2]),
    _record(hyp.hyp1f1_db_p, _parameter_derivative(mpmath.hyp1f1, 1), 0.3, 3.0, 3, [2]),
    _record(hyp.hyp2f1_p, mpmath.hyp2f1, 0.1, 0.6, 4, [3]),
    _record(hyp.hyp2f1_da_p, _parameter_derivative(mpmath.hyp2f1, 0), 0.1, 0.6, 4, [3]),
    _record(hyp.hyp2f1_db_p, _parameter_derivative(mpmath.hyp2f1, 1), 0.1, 0.6, 4, [3]),
    _record(hyp.hyp2f1_dc_p, _parameter_derivative(mpmath.hyp2f1, 2), 0.1, 0.6, 4, [3]),
    _ordered(_bessel.bessel_jv_p, lambda n, x: mpmath.besselj(n, x), -15.0, 15.0, (0, 6)),
]
