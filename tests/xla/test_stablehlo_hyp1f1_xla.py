"""jaxlite's confluent hypergeometric kernels (`hyp1f1` and the parameter derivatives
`hyp1f1_da`, `hyp1f1_db` behind its gradient) printed as standard StableHLO: the text
names no `jaxlite_*` target, jaxlib runs it with jaxlite's numbers (scipy's), and
`from_stablehlo` reads it back into a program that jaxlite runs with the same numbers.

The grids cover a, b, x of both signs, |x| up to 700, large negative a (x > 0) and
b - a (x < 0) where the series cancels (summed in double-double arithmetic), b at and near
negative integers and 0, a = 0, a = b, whole negative a, infinities and NaN, overflow
(+inf of either sign, as scipy) and x down to -1e6 (the asymptotic expansion). Next to
a pole of b with x < 0 scipy itself is off by up to 1.4e-5: those points are a program
of their own, compared at 1e-4 with the kernel and at 1e-13 with mpmath's values (see
jaxlite/xla/stablehlo/special_hyp1f1.py).

Skips the XLA half when no python with jax is found (see stablehlo_xla.py).
"""
import itertools

import numpy as np
import pytest

import jaxlite as jax
from jaxlite.export import from_stablehlo
from stablehlo_xla import check_reads_back, check_runs_in_xla, lower_programs, run_programs

_hyp1f1 = jax.scipy.special.hyp1f1


def _grid(*axes):
    return tuple(np.array(column) for column in zip(*itertools.product(*axes)))


# Ordinary values: every sign of a, b, x; |x| from 1e-3 to 700 (overflow beyond e^700);
# large negative a (x > 0) and b - a (x < 0), where the series cancels by up to 1e20.
_VALUES = _grid([-20.5, -3.7, -1.5, -0.5, 0.3, 1.0, 2.5, 7.2, 15.25, 40.1],
                [-10.5, -3.7, -0.5, 0.25, 1.0, 1.5, 8.5, 25.3, 60.2],
                [-700.0, -80.0, -10.2, -0.7, -1e-3, 0.6, 9.3, 85.7, 320.4, 700.0])
# (a, b, x) rows at the edges: a = 0, a = b, b = 0, whole negative a (terminating
# series), b at a pole and just off one, infinities, NaN, overflow, x <= -1000,
# large parameters.
_EDGES = np.array([
    [0.0, 2.0, 5.0], [0.0, -3.0, 5.0], [0.0, np.nan, 1.0], [2.5, 2.5, -3.0],
    [-1.5, -1.5, 40.0], [2.0, 0.0, 1.0], [-2.0, 0.0, -1.0], [-3.0, 1.5, 20.0],
    [-3.0, 1.5, -20.0], [-7.0, 2.5, 9.0], [-7.0, -10.5, 20.0], [-4.0, 1.5, -30.0],
    [-2.0, 0.5, 700.0], [1.5, -2.0, 3.0], [1.5, -2.0, 0.0], [1.5, -2.0, 150.0],
    [1.5, -2.0001, 3.0], [2.5, -0.9999, 6.0], [0.5, -2.9999, 1.0], [1.0, 1e-8, 2.0],
    [np.inf, 2.0, 3.0], [-np.inf, 2.0, 3.0], [np.inf, 2.0, -3.0], [np.inf, -2.0, 3.0],
    [2.0, np.inf, 3.0], [2.0, -np.inf, 3.0], [np.nan, 2.0, 3.0], [2.0, np.nan, 0.0],
    [2.0, 3.0, np.nan], [2.0, 3.0, np.inf], [2.0, 3.0, -np.inf], [np.inf, 2.0, 200.0],
    [3.0, 1.0, 710.0], [1.0, 3.0, 710.0], [0.5, 1.5, -1e-300], [2.0, 3.0, -0.0],
    [1.0, -0.5, 700.0], [-2.0, 1.0, 1e4], [-0.5, 1.0, 1e4], [-3.7, 0.25, -1000.5],
    [7.2, 8.5, -5000.0], [1.5, 25.3, -1e6], [-0.5, 1.0, -1200.0], [0.5, -1.5, -3000.0],
    # |a| or |b - a| near 100 (the recurrence in a), sums beyond float64's range
    [-80.3, 2.0, 70.0], [-80.3, 40.5, 20.0], [60.2, -0.5, -60.0], [120.9, 40.5, -15.0],
    [120.9, 2.0, -150.0], [-45.7, 150.25, 200.0], [-150.5, 2.0, -900.0],
    [-80.3, -30.5, -999.0], [-150.5, 150.25, -400.0]]).T
# Near a pole of b with x < 0 scipy (boost) loses digits: its values there are checked
# against mpmath (40 digits) instead, at 1e-13.
_POLE_NEIGHBOURS = (np.array([1.0, 1.0, 15.5]), np.array([-2.9999, -2.9999, -10.5]),
                    np.array([-3.0, -0.7, -0.7]))
_MPMATH = np.array([-6720.03673417742, -197.39791065965193, 3.195316990168643])
_GRADIENT = _grid([-7.5, -2.5, -0.5, 0.3, 1.0, 3.5, 9.2], [-3.5, -1.5, 0.5, 1.0, 4.5, 12.0],
                  [-300.0, -30.0, -3.0, -0.5, 0.0, 0.7, 5.0, 40.0, 300.0])
_GRADIENT_EDGES = np.array([[np.nan, 1.0, 1.0], [1.0, np.inf, 1.0], [1.0, 2.0, np.inf],
                            [0.0, 2.0, 3.0], [-2.0, 1.5, 4.0], [2.0, 2.0, -1.0]]).T
# The gradient in a, b and x (the kernels hyp1f1_da, hyp1f1_db, and hyp1f1 at a + 1,
# b + 1), and d/dx of d/da and d/db (the derivative kernels' rules in x).
_first = jax.grad(_hyp1f1, argnums=(0, 1, 2))
_derivatives = jax.vmap(lambda a, b, x: [*_first(a, b, x)] + [
    jax.grad(jax.grad(_hyp1f1, argnums=p), argnums=2)(a, b, x) for p in (0, 1)])

PROGRAMS = {}
for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
    _suffix = np.dtype(_dtype).name
    PROGRAMS[f"hyp1f1_{_suffix}"] = (_hyp1f1, tuple(
        np.concatenate([v, e]).astype(_dtype) for v, e in zip(_VALUES, _EDGES)), _tolerance)
    PROGRAMS[f"hyp1f1_derivatives_{_suffix}"] = (_derivatives, tuple(
        np.concatenate([_GRADIENT, _GRADIENT_EDGES], axis=1).astype(_dtype)), _tolerance)
PROGRAMS["hyp1f1_pole_neighbours_float64"] = (_hyp1f1, _POLE_NEIGHBOURS, 1e-4)
# Large parameters, where the series cancels beyond double-double or the asymptotic series
# does not converge in its steps (scipy is right there): mpmath's values (60 digits). The
# expansion printed wrong numbers here (1F1(-250.3; -3.5; 150) as 1.5e114 for 6.1e40);
# now each is mpmath's value or NaN, never another number.
_LARGE_PARAMETERS = np.array([
    [-400.5, 400.5, 550.0, -2.584454723230476e-116],
    [-250.3, -30.5, 700.0, 4.320855408551816e+199],
    [-250.3, -3.5, 150.0, 6.100686700301692e+40],
    [-250.3, 40.5, -1500.0, 7.135030104748928e+270],
    [-250.3, 150.25, -1500.0, 5.255738160179024e+212],
    [-150.5, 2.0, 550.0, -5.319023255474951e+115],
    [-150.5, 150.25, 999.0, -1.188838222237331e+84],
    [-100.2, 400.5, 999.0, -0.00016822752921352968],
    [-80.3, 150.25, 550.0, 3175757409021.708],
    [-80.3, 400.5, 150.0, 9.141574646927802e-19],
    [60.2, 400.5, -1500.0, 9.039006337840256e-43],
    [150.7, -30.5, -700.0, -8.884041305106858e-106],
    [150.7, 400.5, -1500.0, 5.873263403450465e-112],
    [-100.2, 2.0, 400.0, 7.3183540633445e+82],
    [150.7, 40.5, -400.0, 6.98035276551016e-135],
    [-40.1, 150.25, 700.0, -3.973118503384207e+76]]).T


def _x64(name):
    return name.endswith("float64")


# The derivative programs (double-double loops: most of this module's time, in real XLA
# and read back) run with `pytest -m slow`; the values, edges and pole neighbours run in
# the default run, as do the derivatives' checks against mpmath
# (tests/scipy/test_special_transforms.py).
DERIVATIVES = sorted(name for name in PROGRAMS if "derivatives" in name)
VALUES = sorted(name for name in PROGRAMS if name not in DERIVATIVES)
NAMES = VALUES + [pytest.param(name, marks=pytest.mark.slow) for name in DERIVATIVES]


def _lowered_part(names):
    return lower_programs({name: PROGRAMS[name] for name in names}, _x64)


@pytest.fixture(scope="module")
def lowered_values():
    """Each value program's Lowered, jaxlite's results and the StableHLO text."""
    return _lowered_part(VALUES)


@pytest.fixture(scope="module")
def lowered_derivatives():
    return _lowered_part(DERIVATIVES)


@pytest.fixture
def lowered(request, name):
    """The module's lowered programs holding `name` (the derivatives built only when a
    test asks for one)."""
    return request.getfixturevalue("lowered_derivatives" if name in DERIVATIVES
                                   else "lowered_values")


@pytest.fixture(scope="module")
def xla_values(lowered_values, tmp_path_factory):
    return run_programs({name: PROGRAMS[name] for name in VALUES}, lowered_values, _x64,
                        tmp_path_factory.mktemp("hyp1f1"))


@pytest.fixture(scope="module")
def xla_derivatives(lowered_derivatives, tmp_path_factory):
    return run_programs({name: PROGRAMS[name] for name in DERIVATIVES}, lowered_derivatives,
                        _x64, tmp_path_factory.mktemp("hyp1f1_derivatives"))


@pytest.mark.parametrize("name", NAMES)
def test_no_jaxlite_targets_are_printed(name, lowered):
    text = lowered[name][2]
    assert "jaxlite_" not in text
    assert "stablehlo.while" in text


@pytest.mark.parametrize("name", NAMES)
def test_runs_in_xla_with_our_numbers(name, lowered, request):
    results = request.getfixturevalue("xla_derivatives" if name in DERIVATIVES
                                      else "xla_values")
    check_runs_in_xla(PROGRAMS, name, lowered, results)


@pytest.mark.parametrize("name", NAMES)
def test_reads_back_with_the_same_numbers(name, lowered):
    check_reads_back(PROGRAMS, name, lowered, _x64)


def test_expansion_is_right_where_scipy_is_not(lowered_values, xla_values):
    # Next to a pole of b with x < 0 the expansion gives mpmath's value; scipy does not.
    name = "hyp1f1_pole_neighbours_float64"
    np.testing.assert_allclose(xla_values[f"{name}/out0"], _MPMATH, rtol=1e-13)
    kernel_error = np.abs(lowered_values[name][1][0] / _MPMATH - 1)
    assert kernel_error.max() > 1e-6, kernel_error


def test_large_parameters_give_mpmaths_value_or_nan():
    a, b, x, expected = _LARGE_PARAMETERS
    with jax.enable_x64(True):
        text = jax.jit(_hyp1f1).lower(a, b, x).as_text(dialect="stablehlo")
        got = np.asarray(from_stablehlo(text).call(a, b, x))
    known = ~np.isnan(got)
    np.testing.assert_allclose(got[known], expected[known], rtol=1e-11)
    # (1F1(-40.1; 150.25; 700), a large positive sum after a short alternating start,
    # stays a number)
    assert known[-1], got
