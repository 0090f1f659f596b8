"""The error-function family's kernels (dawsn, wofz, owens_t), the complex gamma
kernels (gamma, loggamma, digamma of complex) and bessel_jv of any order printed as
standard StableHLO: for each program the
text names no `jaxlite_*` target, real XLA (jaxlib, in a subprocess of JAX's virtual
environment) runs it with jaxlite's numbers, and `from_stablehlo` reads it back with the
same numbers; float32/complex64 within 2e-6, float64/complex128 within 1e-11 (relative;
for complex values |difference| <= rtol |value|). Derivatives through jax.grad, too.

Skips the XLA half when no python with jax is found (see stablehlo_xla.py).
"""
import numpy as np
import pytest
import scipy.special as sp

import jaxlite as jax
from jaxlite.scipy._bessel import bessel_jv_p
from jaxlite.scipy._special_gamma import digamma_complex_p
from stablehlo_xla import check_reads_back, check_runs_in_xla, lower_programs, run_programs

_SP = jax.scipy.special

_DAWSN_X = np.array([0.0, -0.0, 1e-300, 1e-20, 0.3, -0.7, 1.0, 2.5, -4.0, 6.0, 7.99, 8.0,
                     -8.01, 10.0, 26.0, 100.0, 1e5, 1e300, np.inf, -np.inf, np.nan])
# w(z) over the plane: both axes, near and across the series' edges (|x| = 8,
# |y| = 1.5), the lower half-plane up to where exp(-z^2) overflows, large |z|, edges.
_W_X = np.array([0.0, -0.0, 1e-8, 0.5, -1.3, 3.0, -5.5, 7.9, 8.0, -8.1, 12.0, 30.0,
                 -100.0, 1e4, 1e8])
_W_Y = np.array([0.0, -0.0, 1e-8, 0.7, -0.9, 1.49, -1.49, 1.5, -1.5, 2.0, -2.2, 3.0, -4.0,
                 6.0, -8.0, 15.0, -25.0, 100.0, 1e5])
_W_EDGES = [complex(np.inf, 0), complex(0, np.inf), complex(1, -np.inf), complex(np.nan, 0),
            complex(0, np.nan), complex(1, np.nan), -30j, 1 - 30j, -26.6j, 3 - 26.7j,
            26.6 - 26.7j, 1e200 + 1e200j, 1e160 + 0j]
_W_Z = np.concatenate([(_W_X[:, None] + 1j * _W_Y[None, :]).ravel(), _W_EDGES])
# Owen's T on a grid of h and a: both sides of |a| = 1 (Owen's identity), the peak of
# large h, infinities and NaN (not at tiny a with h >= 5, where scipy's owens_t, the
# kernel, is off by 1e-7).
_T_H = np.array([0.0, -1e-10, 0.1, -0.5, 1.0, 2.0, 3.0, 5.0, -8.0, 10.0, 15.0, 20.0, 30.0,
                 np.inf, -np.inf, np.nan])
_T_A = np.array([0.0, 0.01, -0.01, 0.3, -0.9, 0.999, 1.0, 1.001, 1.5, -3.0, 10.0, 100.0,
                 1e5, 1e10, np.inf, -np.inf, np.nan])
_T_GRID = tuple(g.ravel() for g in np.meshgrid(_T_H, _T_A, indexing="ij"))
_T_FINITE = tuple(g.ravel() for g in np.meshgrid(_T_H[:-3], _T_A[:-3], indexing="ij"))
# log Gamma and psi of complex z: the cut and the poles on the negative real axis (both
# sides: +-0 imaginary parts), reflection (Re z < 1/2), the Taylor discs at 1 and 2 and
# at psi's root 1.4616..., Stirling's series from |z| = 10 on, large |z|, edges.
_G_X = np.array([0.0, -0.0, 1e-8, 0.3, 0.5, 0.9, 1.0, 1.1, 1.25, 1.46, 1.7, 2.0, 2.15, 3.3,
                 9.9, 10.5, 30.0, 1e5, 1e250, -1e-8, -0.3, -0.5, -1.0, -2.5, -3.0, -7.7,
                 -100.3, -1e5 - 0.5])
_G_Y = np.array([0.0, -0.0, 1e-10, 0.05, -0.15, 0.3, -1.0, 3.0, 7.5, -10.0, 50.0, -1e4,
                 1e200])
_G_EDGES = [complex(1.0000001, 1e-7), complex(1.4616321449683622, 0), 1.46163 + 1e-6j,
            complex(np.inf, 0), complex(-np.inf, 0), complex(0, np.inf), complex(-2, -np.inf),
            complex(2, np.inf), complex(np.inf, np.inf), complex(-np.inf, 1),
            complex(np.inf, -1), complex(np.nan, 0), complex(1, np.nan), complex(np.inf, np.nan)]
_G_Z = np.concatenate([(_G_X[:, None] + 1j * _G_Y[None, :]).ravel(), _G_EDGES])
_G_FINITE = np.array([z for z in _G_Z if np.isfinite(z) and abs(z) < 1e6])
# Gamma(z) = exp(log Gamma(z)) (scipy's): where |log Gamma| is large its digits become
# Gamma's exponent, so the grid stays below |z| = 40 (and the overflow at 171.7).
_GAMMA_Z = np.concatenate([
    (np.array([0.0, -0.0, 1e-8, 0.3, 0.5, 1.0, 1.1, 2.0, 3.3, 9.9, 10.5, 30.0, 171.5,
               180.0, -1e-8, -0.5, -1.0, -2.5, -7.7, -30.3, -180.5])[:, None]
     + 1j * np.array([0.0, -0.0, 1e-10, 0.05, -0.15, 1.0, -3.0, 7.5, -10.0, 30.0])).ravel(),
    [complex(np.inf, 0), complex(0, np.inf), complex(np.nan, 0), complex(1, np.nan)]])
# J_v(z) of whole and non-whole orders of both signs on every form's region: the small-z
# series, Miller's recurrence, Hankel's expansion and the recurrences for z >= 240 below
# v^2 / 2 and for negative v. From z = 30 on, points where J is within 0.3 of its
# envelope sqrt(2 / (pi z)) of a zero are left out: there scipy's jv, the kernel, is
# itself off by up to 2e-11 (against mpmath); so are the overflows of J_v(1e-6) for
# v < -40, which the kernel gives as +inf whatever their sign.
_JV_V = np.array([0.0, 0.5, 0.25, 1.0, 1.5, 2.7, 3.0, 7.5, 8.0, 10.3, 20.5, 25.0, 49.9, 70.0,
                  99.7, 100.0, -3.0, -0.5, -0.25, -1.5, -2.7, -7.5, -20.5, -49.9, -99.7])
_JV_Z = np.array([0.0, -0.0, 1e-30, 1e-6, 0.5, -1.3, 3.1, 7.7, 11.1, 25.3, 29.9, 30.5, 45.2,
                  100.3, 230.1, 240.0, 301.9, 500.7, 1200.0, 4990.0, 1e4 + 0.3, 2345.6,
                  np.inf, np.nan])


def _away_from_zeros(v, z):
    far = np.abs(z) >= 30
    envelope = np.sqrt(2 / (np.pi * np.where(far, np.abs(z), 1.0)))
    with np.errstate(invalid="ignore"):
        kernel = sp.jv(v, z)
        keep = ~far | ~np.isfinite(z) | (np.abs(kernel) > 0.3 * envelope)
        keep &= ~np.isinf(kernel) | (z == 0)
    return v[keep], z[keep]


_JV_GRID = _away_from_zeros(*(g.ravel() for g in np.meshgrid(_JV_V, _JV_Z, indexing="ij")))

# name -> (function, arguments: float64 or complex128 arrays)
_FUNCTIONS = {
    "dawsn": (_SP.dawsn, (_DAWSN_X,)),
    # (up to x = 100: beyond, 1 - 2x D(x) cancels to a few digits)
    "dawsn_grad": (jax.vmap(jax.grad(_SP.dawsn)), (_DAWSN_X[:-5],)),
    "wofz": (_SP.wofz, (_W_Z,)),
    "owens_t": (_SP.owens_t, _T_GRID),
    "owens_t_grad": (jax.vmap(jax.grad(_SP.owens_t, argnums=(0, 1))), _T_FINITE),
    "loggamma_complex": (_SP.loggamma, (_G_Z,)),
    "digamma_complex": (digamma_complex_p.bind, (_G_Z,)),
    "loggamma_complex_grad": (jax.vmap(jax.grad(_SP.loggamma, holomorphic=True)),
                              (_G_FINITE,)),
    "gamma_complex": (_SP.gamma, (_GAMMA_Z,)),
    # (not where Gamma overflows: inf times psi is a complex product of infinities,
    # whose NaN parts XLA and jaxlite place differently)
    "gamma_complex_grad": (jax.vmap(jax.grad(_SP.gamma, holomorphic=True)),
                           (_GAMMA_Z[np.isfinite(_GAMMA_Z) & (abs(_GAMMA_Z) < 100)],)),
    "bessel_jv": (bessel_jv_p.bind, _JV_GRID),
}
_PRECISIONS = {"32": ((np.float32, np.complex64), 2e-6),
               "64": ((np.float64, np.complex128), 1e-11)}
PROGRAMS = {}
with np.errstate(over="ignore"):  # float32 grids: 1e300 and the like become inf
    for _name, (_fn, _args) in _FUNCTIONS.items():
        for _bits, ((_real, _complex), _tolerance) in _PRECISIONS.items():
            PROGRAMS[f"{_name}_{_bits}"] = (_fn, tuple(
                a.astype(_complex if np.iscomplexobj(a) else _real) for a in _args),
                _tolerance)


def _x64(name):
    return name.endswith("_64")


@pytest.fixture(scope="module")
def lowered():
    """Each program's Lowered, jaxlite's results and StableHLO text."""
    return lower_programs(PROGRAMS, _x64)


@pytest.fixture(scope="module")
def xla_results(lowered, tmp_path_factory):
    return run_programs(PROGRAMS, lowered, _x64, tmp_path_factory.mktemp("error_family"))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_no_jaxlite_targets_are_printed(name, lowered):
    text = lowered[name][2]
    assert "jaxlite_" not in text
    assert "stablehlo.while" in text


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runs_in_xla_with_our_numbers(name, lowered, xla_results):
    check_runs_in_xla(PROGRAMS, name, lowered, xla_results)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reads_back_with_the_same_numbers(name, lowered):
    check_reads_back(PROGRAMS, name, lowered, _x64)
