"""The incomplete gamma and beta functions, polygamma and the Hurwitz zeta function.

Mirrors `jax.lax.igamma`, `igammac`, `igamma_grad_a`, `random_gamma_grad`, `betainc`
(primitive `regularized_incomplete_beta`), `polygamma` and `zeta`. Each primitive is
computed by a float64 kernel (see `special_kernel.py`): scipy.special's function with
JAX's values at the edges of the domain, which differ from scipy's in places:

- igamma(a, x): nan where x < 0, a < 0 or a = x = 0, at a = 0 with 0 < x < 1 and at
  a = inf with 1 <= x < inf; 1 at a = 0 with x >= 1 and at x = inf, 0 at x = 0.
  igammac(a, x): nan where x < 0, a < 0 or a = x = 0 and at a = inf with 1 <= x < inf;
  0 at a = 0 and at x = inf, 1 at x = 0.
- zeta(x, q): inf at x = 1; nan for x < 1 and wherever x or q is +inf; at the poles
  q = 0, -1, -2, ... and -inf: inf when x is an even integer, nan otherwise.
- polygamma(m, x): nan unless m is a non-negative integer; m = 0 is digamma (nan at its
  poles and at -inf); for m >= 1 it is (-1)^(m+1) m! zeta(m + 1, x) with zeta's edges,
  so the poles give inf for odd m and nan for even m, and x = inf gives nan.
- igamma_grad_a(a, x) (dP/da) and random_gamma_grad(a, x) (d sample / da): nan where
  a <= 0, x < 0, x = inf or a = inf with x > 0; 0 at x = 0.

Derivatives are JAX's: igamma and igammac in both arguments (with igamma_grad_a for a),
betainc and polygamma in x only (the others raise ValueError as JAX does), bessel-like
closed forms elsewhere. Beyond JAX: zeta is differentiable in q (JAX's lax.zeta has no
derivative; jax.scipy.special.zeta has its own), igamma_grad_a and random_gamma_grad in x.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sp

from jaxlite.interpreters import ad
from jaxlite.lax.arithmetic import _const, add, div, elementwise_operands, mul, neg, sub
from jaxlite.lax.incomplete_gamma_kernels import gamma_sample_da, gammainc_da
from jaxlite.lax.math_functions import exp, log, log1p
from jaxlite.lax.special_functions import digamma, lgamma
from jaxlite.lax.special_kernel import kernel_primitive

__all__ = ["igamma", "igamma_p", "igammac", "igammac_p", "igamma_grad_a", "igamma_grad_a_p",
           "random_gamma_grad", "random_gamma_grad_p", "betainc",
           "regularized_incomplete_beta_p", "polygamma", "polygamma_p", "zeta", "zeta_p"]


# ------------------------------------------------------------------------------ kernels

def _igamma_domain_error(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.isnan(a) | np.isnan(x) | (x < 0) | (a < 0) | ((a == 0) & (x == 0))


def _igamma_kernel(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    below_one, from_one = (x > 0) & (x < 1), (x >= 1) & (x < np.inf)
    out = np.where(x == np.inf, 1.0, np.where(x == 0, 0.0, sp.gammainc(a, x)))
    out = np.where((a == 0) & from_one, 1.0, out)
    nan = (_igamma_domain_error(a, x) | ((a == 0) & below_one)
           | ((a == np.inf) & from_one))
    return np.where(nan, np.nan, out)


def _igammac_kernel(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.where((x == np.inf) | (a == 0), 0.0, np.where(x == 0, 1.0, sp.gammaincc(a, x)))
    nan = _igamma_domain_error(a, x) | ((a == np.inf) & (x >= 1) & (x < np.inf))
    return np.where(nan, np.nan, out)


def _zeta_kernel(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    pole = (q <= 0) & (q == np.floor(q))
    even_x = (x == 2 * np.floor(x / 2)) & np.isfinite(x)
    out = np.where(pole, np.where(even_x, np.inf, np.nan), sp.zeta(x, q))
    out = np.where((x < 1) & ~(pole & even_x), np.nan, out)
    out = np.where((x == np.inf) | (q == np.inf), np.nan, out)
    return np.where(x == 1, np.inf, np.where(np.isnan(x) | np.isnan(q), np.nan, out))


def _digamma_kernel(x: np.ndarray) -> np.ndarray:
    pole = (x <= 0) & (x == np.floor(x))
    return np.where(pole, np.nan, sp.digamma(x))


def _polygamma_kernel(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    whole = (m >= 0) & (m == np.floor(m)) & np.isfinite(m)
    m_safe = np.where(whole, m, 1.0)
    sign = np.where(m_safe % 2 == 0, -1.0, 1.0)
    higher = sign * np.exp(sp.gammaln(m_safe + 1)) * _zeta_kernel(m_safe + 1, x)
    out = np.where(m == 0, _digamma_kernel(x), higher)
    return np.where(whole, out, np.nan)


# ---------------------------------------------------------------------- incomplete gamma

igamma_p = kernel_primitive("igamma", _igamma_kernel, num_args=2)
igammac_p = kernel_primitive("igammac", _igammac_kernel, num_args=2)
igamma_grad_a_p = kernel_primitive("igamma_grad_a", gammainc_da, num_args=2)
random_gamma_grad_p = kernel_primitive("random_gamma_grad", gamma_sample_da, num_args=2)


def _gamma_density(a: Any, x: Any) -> Any:
    """x^(a-1) e^(-x) / Gamma(a) = dP(a, x)/dx, by JAX's formula."""
    return exp(sub(add(neg(x), mul(sub(a, _const(a, 1)), log(x))), lgamma(a)))


def _no_second_derivative_in_a(name: str) -> Any:
    def rule(t: Any, a: Any, x: Any) -> Any:
        raise NotImplementedError(
            f"Differentiation rule for '{name}' with respect to a not implemented: it is "
            "itself a derivative in a (JAX does not differentiate it either).")
    return rule


def _random_gamma_grad_dx(t: Any, a: Any, x: Any) -> Any:
    # r = -P_a / P_x; with P_ax = P_x (log x - psi(a)) and P_xx = P_x ((a - 1)/x - 1):
    # dr/dx = -(log x - psi(a)) - r ((a - 1)/x - 1).
    r = random_gamma_grad_p.bind(a, x)
    curvature = sub(div(sub(a, _const(a, 1)), x), _const(x, 1))
    return mul(t, neg(add(sub(log(x), digamma(a)), mul(r, curvature))))


ad.defjvp(igamma_p, lambda t, a, x: mul(t, igamma_grad_a_p.bind(a, x)),
          lambda t, a, x: mul(t, _gamma_density(a, x)))
ad.defjvp(igammac_p, lambda t, a, x: neg(mul(t, igamma_grad_a_p.bind(a, x))),
          lambda t, a, x: neg(mul(t, _gamma_density(a, x))))
ad.defjvp(igamma_grad_a_p, _no_second_derivative_in_a("igamma_grad_a"),
          lambda t, a, x: mul(t, mul(_gamma_density(a, x), sub(log(x), digamma(a)))))
ad.defjvp(random_gamma_grad_p, _no_second_derivative_in_a("random_gamma_grad"),
          _random_gamma_grad_dx)


def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (mirrors `jax.lax.igamma`)."""
    return igamma_p.bind(*elementwise_operands("igamma", a, x))


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    Mirrors `jax.lax.igammac`.
    """
    return igammac_p.bind(*elementwise_operands("igammac", a, x))


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da, the derivative of `igamma` in a (mirrors `jax.lax.igamma_grad_a`)."""
    return igamma_grad_a_p.bind(*elementwise_operands("igamma_grad_a", a, x))


def random_gamma_grad(*args: Any) -> Any:
    """The derivative of a Gamma(a, 1) sample x with respect to a at fixed P(a, x).

    Mirrors `jax.lax.random_gamma_grad(a, x)` (the implicit reparameterization gradient
    that `jax.random.gamma` differentiates with; JAX's signature is `(*args)`):
    -(dP/da) / (dP/dx), computed without the density, so that it stays finite where the
    density underflows.
    """
    if len(args) != 2:
        raise TypeError(f"random_gamma_grad() takes 2 positional arguments (a, x) but "
                        f"{len(args)} were given")
    return random_gamma_grad_p.bind(*elementwise_operands("random_gamma_grad", *args))


# --------------------------------------------------------------------- incomplete beta

regularized_incomplete_beta_p = kernel_primitive("regularized_incomplete_beta", sp.betainc,
                                                 num_args=3)


def _betainc_not_in_parameters(t: Any, a: Any, b: Any, x: Any) -> Any:
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_dx(t: Any, a: Any, b: Any, x: Any) -> Any:
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    log_density = add(mul(sub(b, _const(b, 1)), log1p(neg(x))),
                      mul(sub(a, _const(a, 1)), log(x)))
    return mul(t, exp(sub(log_density, log_beta)))


ad.defjvp(regularized_incomplete_beta_p, _betainc_not_in_parameters,
          _betainc_not_in_parameters, _betainc_dx)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (mirrors `jax.lax.betainc`)."""
    return regularized_incomplete_beta_p.bind(*elementwise_operands("betainc", a, b, x))


# ------------------------------------------------------------------- polygamma and zeta

polygamma_p = kernel_primitive("polygamma", _polygamma_kernel, num_args=2)
zeta_p = kernel_primitive("zeta", _zeta_kernel, num_args=2)


def _polygamma_not_in_m(t: Any, m: Any, x: Any) -> Any:
    raise ValueError("polygamma gradient with respect to m is not supported")


def _zeta_not_in_x(t: Any, x: Any, q: Any) -> Any:
    raise NotImplementedError(
        "Differentiation rule for 'zeta' with respect to x not implemented (as in JAX); "
        "jaxlite.scipy.special.zeta is differentiable in both arguments.")


ad.defjvp(polygamma_p, _polygamma_not_in_m,
          lambda t, m, x: mul(t, polygamma_p.bind(add(m, _const(m, 1)), x)))
ad.defjvp(zeta_p, _zeta_not_in_x,
          lambda t, x, q: mul(t, neg(mul(x, zeta_p.bind(add(x, _const(x, 1)), q)))))


def polygamma(m: Any, x: Any) -> Any:
    """The m-th derivative of digamma at x, for whole m >= 0 (mirrors `jax.lax.polygamma`)."""
    return polygamma_p.bind(*elementwise_operands("polygamma", m, x))


def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function sum_k (q + k)^(-x) (mirrors `jax.lax.zeta`)."""
    return zeta_p.bind(*elementwise_operands("zeta", x, q))
