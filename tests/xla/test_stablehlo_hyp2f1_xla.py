"""jaxlite's Gauss hypergeometric kernels (hyp2f1 and its derivatives in a, b, c) printed
as standard StableHLO (jaxlite/xla/stablehlo/special_hyp2f1*.py): the text names no
`jaxlite_*` target; jaxlib runs it (in a subprocess of JAX's virtual environment) with
jaxlite's numbers, rtol 1e-11 in float64 and 2e-6 in float32; `from_stablehlo` reads it
back into a program that jaxlite runs with the same numbers.

The grids cover x < -1, -1..0, 0..0.5, 0.5..0.9, near 1 and 1 itself, parameters of both
signs, polynomials (whole negative a or b), c at and near poles, whole c - a - b (the
logarithmic cases of the 1 - x transformation) and whole b - a (x < -1), inf and NaN; at
each of their points scipy (the kernel) agrees with mpmath to 1e-12. Where scipy does not
(its recurrence in a large |a|, its 1/x form with large negative parameters), the
expansion is compared with mpmath instead (`test_accurate_where_scipy_is_not`).

Skips the XLA half when no python with jax is found (see stablehlo_xla.py).
"""
import importlib
import itertools

import numpy as np
import pytest

import jaxlite as jax
from jaxlite.export import from_stablehlo
from jaxlite.scipy._special_hypergeometric import _hyp2f1_kernel
from stablehlo_xla import (add_lowered_case, check_reads_back, check_runs_in_xla,
                          lower_programs, run_cases)

_hyp2f1 = jax.scipy.special.hyp2f1


def _product(*axes):
    return tuple(np.array(column) for column in zip(*itertools.product(*axes)))


# Parameters of both signs, a polynomial (-2), c near a pole (-1.999); x in every region.
_GRID = _product([-3.3, -2.0, -0.5, 0.25, 1.5, 2.7], [-3.3, -2.0, -0.5, 0.25, 1.5, 2.7],
                 [-2.7, -1.999, 0.3, 1.0, 2.5, 4.6],
                 [-30.0, -5.0, -2.5, -1.7, -1.0, -0.7, -0.3, 0.2, 0.45, 0.55, 0.75, 0.9,
                  0.95, 0.97, 1.0])
# Closer to 1, where the series needs thousands of terms (a smaller grid: the loop runs
# as long as its slowest element).
_NEAR_ONE = _product([-3.3, -0.5, 1.5, 2.7], [-3.3, -0.5, 1.5, 2.7], [-1.999, 0.3, 2.5, 4.6],
                     [0.995, 0.9999, 1.0])


def _whole_differences():
    """c - a - b whole (m = -3 .. 2) and b - a whole, where the transformations of x near
    1 and of x < -1 take their logarithmic limits (numbers exact in binary: with
    c - a = -1 + 2e-16, scipy's near-polynomial is not one)."""
    rows = [(a, b, a + b + m) for a, b, m in itertools.product(
        [-2.5, 0.25, 1.5, 3.25], [-1.25, 0.75, 2.0], [-3, -1, 0, 1, 2])]
    rows += [(a, a + n, c) for a, n, c in itertools.product([-2.5, 0.25, 1.5], [0, 1, 3],
                                                             [0.5, 2.25, 6.0])]
    xs = [-30.0, -5.0, -1.7, 0.55, 0.9, 0.97, 0.995, 1.0]
    return tuple(np.array(column) for column in zip(*[r + (x,) for r in rows for x in xs]))


def _edges():
    """inf and NaN, poles of c, a = 0, polynomials at x = +-inf, 1 and beyond; not the
    exact zeros of polynomials (2F1(-3, 2; 1; 1) = 0, where relative error means nothing)."""
    p = [-3.0, -1.0, 0.0, 0.7, 3.5, np.nan]
    a, b, c, x = _product(p, p, [-2.0, -1.5, 0.0, 0.5, 1.0, 3.0, 6.5, np.nan, np.inf],
                          [-np.inf, -3.0, -1.0, 0.0, 0.5, 1.0, 1.5, np.inf, np.nan])
    with np.errstate(all="ignore"):
        zero = _hyp2f1_kernel(a, b, c, x) == 0
    return a[~zero], b[~zero], c[~zero], x[~zero]


# x near 1 (0.999: the derivative series does not converge, NaN as the kernel), beyond 1,
# NaN and -inf (NaN too).
_GRAD_GRID = _product([-3.3, -2.0, 1.5], [-2.0, 0.25, 1.5], [-2.7, 1.0, 4.6],
                      [-30.0, -5.0, -1.0, -0.3, 0.0, 0.2, 0.55, 0.9, 0.99, 0.999, 1.0, 1.5,
                       np.nan, -np.inf])
_grad = jax.vmap(jax.grad(_hyp2f1, argnums=(0, 1, 2)))

PROGRAMS = {}
for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
    _suffix = np.dtype(_dtype).name
    for _name, _fn, _args in (("hyp2f1", _hyp2f1, _GRID),
                              ("hyp2f1_near_one", _hyp2f1, _NEAR_ONE),
                              ("hyp2f1_whole", _hyp2f1, _whole_differences()),
                              ("hyp2f1_edges", _hyp2f1, _edges()),
                              ("hyp2f1_grad", _grad, _GRAD_GRID)):
        PROGRAMS[f"{_name}_{_suffix}"] = (_fn, tuple(v.astype(_dtype) for v in _args),
                                          _tolerance)
X64 = {name for name in PROGRAMS if name.endswith("float64")}

# Where scipy's own value is off by up to 1e-8 (see the expansion's docstring): the
# expansion gives mpmath's value. (a, b, c, x, mpmath's 2F1 to 16 digits)
SCIPY_INACCURATE = np.array([
    [-7.5, 6.2, -0.5, 0.97, 1.7793626580761654],
    [-7.5, 6.2, 1.0, 0.97, 0.0007303334961210134],
    [-3.3, 6.2, 2.5, 0.995, 0.05984637512952858],
    [-7.5, 6.2, 0.3, 0.9, -0.07032515276042461],
    [-7.5, -7.5, 9.3, -5.0, -22.13631801277202],
    [-7.5, -0.5, 9.3, -5.0, -10.700852486669541],
    [-7.5, -3.3, 9.3, -30.0, 47012.317657007836],
    [-7.5, 6.2, 4.6, 0.9999, 1.151443923248044e-05],
]).T


def _x64(name):
    return name in X64


@pytest.fixture(scope="module")
def lowered():
    """Each program's Lowered, jaxlite's results and StableHLO text."""
    return lower_programs(PROGRAMS, _x64)


@pytest.fixture(scope="module")
def xla_results(lowered, tmp_path_factory):
    cases = {}
    for name, (fn, args, _) in PROGRAMS.items():
        with jax.enable_x64(name in X64):
            add_lowered_case(cases, name, lowered[name][0], list(args))
    with jax.enable_x64(True):
        add_lowered_case(cases, "scipy_inaccurate", jax.jit(_hyp2f1).lower(
            *SCIPY_INACCURATE[:4]), list(SCIPY_INACCURATE[:4]))
    return run_cases(cases, tmp_path_factory.mktemp("hyp2f1"))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_no_jaxlite_targets_are_printed(name, lowered):
    text = lowered[name][2]
    assert "jaxlite_" not in text
    assert "stablehlo.while" in text
    assert "chlo.lgamma" in text     # the Gamma-function coefficients of the transformations


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runs_in_xla_with_our_numbers(name, lowered, xla_results):
    check_runs_in_xla(PROGRAMS, name, lowered, xla_results)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reads_back_with_the_same_numbers(name, lowered):
    check_reads_back(PROGRAMS, name, lowered, _x64)


def test_grids_reach_every_region():
    a, b, c, x = _GRID
    for low, high in ((-np.inf, -1), (-1, 0), (0, 0.5), (0.5, 0.9), (0.9, 1.0)):
        assert np.any((x >= low) & (x < high)), (low, high)
    assert np.any(x == 1.0) and np.any(a == -2.0) and np.any(c == -1.999)
    values = _hyp2f1_kernel(*_GRID)
    assert np.isfinite(values).mean() > 0.8      # mostly ordinary numbers, not edges
    grads = [np.asarray(g) for g in _grad(*PROGRAMS["hyp2f1_grad_float32"][1])]
    x = _GRAD_GRID[3]
    # the kernels' series have not converged at 0.999 for some parameters: NaN there
    assert all(np.isnan(g[x == 0.999]).any() and np.isfinite(g[x == 0.2]).all()
               for g in grads)


@pytest.mark.slow
def test_accurate_where_scipy_is_not(xla_results):
    a, b, c, x, reference = SCIPY_INACCURATE      # (mpmath's values, recorded)
    ours = xla_results["scipy_inaccurate/out0"]
    np.testing.assert_allclose(ours, reference, rtol=1e-12)
    scipy_error = np.abs(_hyp2f1_kernel(a, b, c, x) - reference) / np.abs(reference)
    assert np.all(scipy_error > 1e-11), scipy_error   # why these are not in the grids
    try:
        mpmath = importlib.import_module("mpmath")
    except ImportError:
        return  # (the recorded values are checked again where mpmath is installed)
    mpmath.mp.dps = 30
    exact = np.array([float(mpmath.hyp2f1(*p)) for p in zip(a, b, c, x)])
    np.testing.assert_allclose(reference, exact, rtol=1e-15)


# Random points (|a|, |b|, |c| <= 30) where the expansion printed numbers wrong in every
# digit (a series stopped at a small term before c + k passed 0, where terms spike again;
# a polynomial cancelling to nothing): mpmath's values (40 digits). Each is now mpmath's
# value or NaN.
_ONCE_WRONG = np.array([
    [-22.79, -7.05, -25.44, -29.17702903652368, -1.993275090899674e+22],
    [-1.34, -26.8, -29.87, -9.696294617459209, 3.42184260676728e+18],
    [-27.08, -9.93, -28.78, -22.076735079791085, -6.464639438424169e+24],
    [-16.93, -0.64, -28.48, -18.387903735859727, 92892513120.65782],
    [-27.0, 24.37, 12.13, 0.534166852565733, -3.2387957936378035e-10],
    [-11.51, -21.52, -24.69, -6.172788802385433, 1285578058.0967734],
    [1.15, -6.34, -29.52, 0.642646813991198, 0.9894441052924435],
    [-16.85, -23.95, -28.11, 0.8989183369676192, 4.274768454024781e-14],
    [-23.0, -28.09, -26.59, 0.8570437123956355, -9.605032568905105e-06]]).T


def _read_back(a, b, c, x):
    """The expansion's values: hyp2f1 printed as StableHLO, read back and run."""
    with jax.enable_x64(True):
        text = jax.jit(_hyp2f1).lower(a, b, c, x).as_text(dialect="stablehlo")
        return np.asarray(from_stablehlo(text).call(a, b, c, x))


def test_once_wrong_points_give_mpmaths_value_or_nan():
    a, b, c, x, expected = _ONCE_WRONG
    got = _read_back(a, b, c, x)
    known = ~np.isnan(got)
    np.testing.assert_allclose(got[known], expected[known], rtol=1e-11)
    assert known.sum() >= 4, got  # the four spikes at x < 0 are summed past them now


# Random points where a form's error estimate was too small: Euler's polynomial (c - a or
# c - b whole <= 0, |x| < 1) was taken as exact while its terms cancelled (the first
# eleven: c < -10 or 0.5 < x < 0.9), and the logarithmic form's finite sum (whole
# c - a - b after Pfaff's transformation, x < -1) was counted without its cancellation
# (the last two). mpmath's values (40 digits); each is now mpmath's value or NaN.
_ESTIMATE_TOO_SMALL = np.array([
    [-19.33, 19.72, -10.28, 0.8286, 78047696429.78537],
    [-27.86, 21.09, -11.91, 0.8624042181035193, -183987694683.64975],
    [-17.96, 27.810000000000002, -10.19, 0.6150442994935709, 71870732177.06093],
    [-8.32, -3.25, -27.25, 0.8230726212619268, 0.3697990166466299],
    [-3.33, -1.75, -29.75, 0.793270450461727, 440267.05542917864],
    [-21.79, 18.85, -18.15, 0.7856253801117876, -2053077884323.9873],
    [-2.55, -6.57, -26.57, 0.797649656611293, 0.43837093597228344],
    [-22.99, 21.439999999999998, -14.56, 0.7804247415942409, -1458084808840.5393],
    [-21.82, 24.43, -13.57, 0.891905293107238, 2.6715104829444908e+16],
    [-18.99, 15.96, -14.04, 0.8692116615294148, 1733154523314.4434],
    [-2.23, 23.5, 2.5, 0.7704411795123427, -1930158.7755683472],
    [-18.5, 8.5, -26.79, -1.734026950234508, 524.3631592530927],
    [-24.66, 22.34, -25.06, -1.2408023284515721, -1115789116825679.5]]).T


def test_points_whose_error_estimate_was_too_small_give_mpmaths_value_or_nan():
    a, b, c, x, expected = _ESTIMATE_TOO_SMALL
    got = _read_back(a, b, c, x)
    known = ~np.isnan(got)
    np.testing.assert_allclose(got[known], expected[known], rtol=1e-12)
    assert known.sum() >= 9, got   # (the other four: no form's estimate is below 1e-12)
