"""jaxlite's own kernel custom calls printed as StableHLO that real XLA runs: the LAPACK
reductions as XLA's `lapack_*_ffi` calls, the other kernels as the standard ops JAX
emits for the same function. For each program: the text names no `jaxlite_*` target;
jaxlib runs it (in a subprocess of JAX's virtual environment) with jaxlite's numbers; and
`from_stablehlo` reads it back into a program that jaxlite runs with the same numbers.

Skips the XLA half when no python with jax is found (see stablehlo_xla.py).
"""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.export import from_stablehlo
from stablehlo_xla import add_lowered_case, run_cases, unpack_like

_rng = np.random.default_rng(7)
SQUARE = _rng.normal(size=(6, 6)).astype(np.float32)
SYMMETRIC = (SQUARE + SQUARE.T).astype(np.float32)
TALL = _rng.normal(size=(7, 5)).astype(np.float32)
C_SQUARE = (SQUARE + 1j * _rng.normal(size=(6, 6))).astype(np.complex64)
C_HERMITIAN = (C_SQUARE + C_SQUARE.conj().T).astype(np.complex64)
UPPER = np.linalg.cholesky(SQUARE @ SQUARE.T + 6 * np.eye(6)).T.astype(np.float32)


def _phase_fixed(v):
    """Unit columns are unique up to a phase: the one whose largest component is real and
    positive (LAPACK makes it real, of either sign)."""
    largest = jnp.take_along_axis(v, jnp.argmax(jnp.abs(v), axis=0)[None], axis=0)
    return v * (jnp.conj(largest) / jnp.abs(largest))


def _eig_parts(a):
    w, vl, vr = lax.linalg.eig(a, compute_left_eigenvectors=True)
    return w, _phase_fixed(vl), _phase_fixed(vr), vr @ jnp.diag(w) @ jnp.linalg.inv(vr)


def _schur_parts(a):
    t, z = lax.linalg.schur(a)
    return t, z, z @ t @ jnp.swapaxes(z, -1, -2).conj()


def _ormqr(a, c):
    packed, taus = lax.linalg.geqrf(a)
    return (lax.linalg.ormqr(packed, taus, c, left=True, transpose=False),
            lax.linalg.ormqr(packed, taus, c.T, left=False, transpose=True))


# name -> (function, arguments, tolerance)
PROGRAMS = {
    "hessenberg": (lax.linalg.hessenberg, (SQUARE,), 1e-5),
    "hessenberg_batched": (lax.linalg.hessenberg, (np.stack([SQUARE, SQUARE.T]),), 1e-5),
    "hessenberg_complex": (lax.linalg.hessenberg, (C_SQUARE,), 1e-5),
    "tridiagonal_lower": (lambda a: lax.linalg.tridiagonal(a, lower=True), (SYMMETRIC,), 1e-5),
    "tridiagonal_upper": (lambda a: lax.linalg.tridiagonal(a, lower=False), (SYMMETRIC,),
                          1e-5),
    "tridiagonal_complex": (lax.linalg.tridiagonal, (C_HERMITIAN,), 1e-5),
    "schur": (_schur_parts, (SQUARE,), 1e-4),
    "schur_complex": (_schur_parts, (C_SQUARE,), 1e-4),
    "schur_no_vectors": (lambda a: lax.linalg.schur(a, compute_schur_vectors=False),
                         (SQUARE,), 1e-4),
    "eig": (_eig_parts, (SQUARE,), 1e-4),
    "eig_complex": (_eig_parts, (C_SQUARE,), 1e-4),
    "eigvals": (jnp.linalg.eigvals, (SQUARE,), 1e-4),
    "qr_pivoting": (lambda a: jax.scipy.linalg.qr(a, pivoting=True), (TALL,), 1e-4),
    "geqp3": (lax.linalg.geqp3, (TALL,), 1e-5),
    "ormqr": (_ormqr, (TALL, _rng.normal(size=(7, 3)).astype(np.float32)), 1e-5),
    "symmetric_product": (lambda a, c: lax.linalg.symmetric_product(a, c, alpha=2.0, beta=0.5),
                          (TALL, _rng.normal(size=(7, 7)).astype(np.float32)), 1e-5),
    "symmetric_product_batched": (
        jax.vmap(lambda a, c: lax.linalg.symmetric_product(a, c, alpha=-1.0, beta=2.0)),
        (np.stack([TALL, -TALL]), np.stack([np.eye(7, dtype=np.float32)] * 2)), 1e-5),
    "cholesky_update": (lax.linalg.cholesky_update, (UPPER, SQUARE[0]), 1e-5),
    "cholesky_update_batched": (jax.vmap(lax.linalg.cholesky_update),
                                (np.stack([UPPER, 2 * UPPER]), SQUARE[:2]), 1e-5),
}
# Programs lowered and run with x64 on: float64 uniform numbers use the exact float64
# multiply-add (jaxlite_fma_f64).
PROGRAMS["fma_f64"] = (lambda key: jax.random.uniform(key, (9,), np.float64, -2.0, 3.0),
                       (np.array([0, 42], np.uint32),), 1e-15)
# The gamma-function kernels, float32 and float64, on ordinary values and the edges
# (poles, zeros of both signs, infinities, NaN, overflow and underflow).
_GAMMA_X = np.array([0.5, 1.5, 5.0, 30.0, -2.5, -3.5, 1e-30, -1e-30, 0.0, -0.0, -1.0, -2.0,
                     171.7, -171.5, -180.5, np.inf, -np.inf, np.nan, 7.25, 33.3])
_GAMMA_M = np.array([2.5, 0.0, -1.5, 3.0, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 0.5, 2.5, 1.0,
                     2.0, 2.5, 2.5, 1.0, 0.25, 12.0])
_COMB_N = np.array([5.0, 10.0, 30.0, 52.0, 7.5, 100.0, 3.0, -1.0, np.inf])
_COMB_K = np.array([2.0, 0.0, 15.0, 5.0, 2.5, 50.0, 4.0, 1.0, 2.0])
_SP = jax.scipy.special
for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
    _suffix = np.dtype(_dtype).name
    _x, _m = _GAMMA_X.astype(_dtype), _GAMMA_M.astype(_dtype)
    PROGRAMS[f"gamma_{_suffix}"] = (_SP.gamma, (_x,), _tolerance)
    # (not at -171.5: scipy's beta, our kernel, gives -0.0 for beta(-171.5, 1) = -1/171.5)
    PROGRAMS[f"beta_{_suffix}"] = (_SP.beta, (np.where(_x == -171.5, -17.5, _x), _m),
                                   _tolerance)
    PROGRAMS[f"poch_{_suffix}"] = (_SP.poch, (_x, _m), _tolerance)
    PROGRAMS[f"comb_{_suffix}"] = (_SP.comb, (_COMB_N.astype(_dtype), _COMB_K.astype(_dtype)),
                                   _tolerance)
# The incomplete gamma functions on a grid of both forms (x < a + 1 and beyond) and edges.
_IGAMMA_A = np.array([0.5, 1.0, 2.5, 10.0, 30.0, 100.0, 0.1, 5.0, 0.0, 0.0, 2.0, -1.0, 3.0,
                      np.inf, np.nan, 1e-3, 250.0, 7.0])
_IGAMMA_X = np.array([0.3, 1.0, 4.0, 8.0, 35.0, 90.0, 20.0, 0.01, 0.5, 2.0, 0.0, 1.0, np.inf,
                      2.0, 1.0, 1e-4, 260.0, -1.0])
for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
    _suffix = np.dtype(_dtype).name
    _a, _x = _IGAMMA_A.astype(_dtype), _IGAMMA_X.astype(_dtype)
    PROGRAMS[f"igamma_{_suffix}"] = (lax.igamma, (_a, _x), _tolerance)
    PROGRAMS[f"igammac_{_suffix}"] = (lax.igammac, (_a, _x), _tolerance)
# The incomplete beta function on both sides of its symmetry and at the edges.
_BETAINC = np.array([[0.5, 2.0, 0.3], [2.0, 3.0, 0.5], [10.0, 4.0, 0.9], [30.0, 40.0, 0.4],
                     [0.1, 0.2, 0.99], [5.0, 5.0, 0.5], [200.0, 300.0, 0.41], [1e-3, 2.0, 0.5],
                     [0.0, 2.0, 0.5], [2.0, 0.0, 0.5], [0.0, 0.0, 0.5], [2.0, 3.0, 0.0],
                     [2.0, 3.0, 1.0], [-1.0, 2.0, 0.5], [2.0, 3.0, 1.1], [np.inf, 2.0, 0.5],
                     [2.0, np.inf, 0.5], [2.0, 3.0, np.nan], [1.0, 1.0, 0.25]]).T
for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
    PROGRAMS[f"betainc_{np.dtype(_dtype).name}"] = (
        lax.betainc, tuple(_BETAINC.astype(_dtype)), _tolerance)
_ERFCX = np.array([-30.0, -5.0, -1.0, -1e-3, 0.0, 0.5, 1.0, 3.0, 10.0, 25.9, 26.0, 30.0,
                   100.0, 1e10, np.inf, -np.inf, np.nan])
for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
    PROGRAMS[f"erfcx_{np.dtype(_dtype).name}"] = (_SP.erfcx, (_ERFCX.astype(_dtype),),
                                                  _tolerance)
_I0E = np.array([0.0, -0.0, 1e-20, 0.5, -1.0, 3.0, 10.0, -20.0, 29.9, 30.0, 45.0, -300.0,
                 1e8, np.inf, -np.inf, np.nan])
for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
    PROGRAMS[f"i0e_{np.dtype(_dtype).name}"] = (lax.bessel_i0e, (_I0E.astype(_dtype),),
                                                _tolerance)
_EXPI = np.array([-700.0, -50.0, -5.0, -1.5, -1.0, -0.3, -1e-8, 1e-8, 0.2, 1.0, 4.0, 20.0,
                  49.9, 50.0, 80.0, 700.0, 0.0, np.inf, -np.inf, np.nan])
for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
    PROGRAMS[f"expi_{np.dtype(_dtype).name}"] = (_SP.expi, (_EXPI.astype(_dtype),), _tolerance)
_JN_Z = np.array([0.0, -0.0, 1e-30, 1e-6, 0.5, -1.3, 3.1, 7.7, 11.1, 25.3, 29.9, 30.5, 45.2,
                  100.3, 230.1, 500.7, 1e4 + 0.3, np.inf, -np.inf, np.nan])
# The kernels expanded with loops (`stablehlo.while`): name -> (function, edges and grid).
_LOOPED = {
    "spence": (_SP.spence, (np.array([0.0, -0.0, 1e-30, 1e-8, 0.3, 0.5, 0.9, 1.0, 1.2, 1.5,
                                      1.6, 2.0, 3.0, 50.0, 1e30, np.inf, -1.0, np.nan]),)),
    "expn": (_SP.expn, (np.array([0, 1, 2, 3, 5, 12, 1, 2, 0, 1, 3, 50, 2.5, 2.5, 0.5, 0, 1, 3, 1,
                                  -1, 2, np.nan, 4, 1, 1, 2, 1e4, 7]),
                        np.array([0.5, 0.5, 0.5, 0.5, 0.9, 1.0, 1.01, 3.0, 4.0, 20.0, 1e-3, 0.2,
                                  2.0, 0.5, 30.0, 0.0, 0.0, 0.0, -1.0, 1.0, np.inf, 1.0, np.nan,
                                  700.0, 1e-10, 1e-30, 5.0, 1.7]))),
    "sici": (_SP.sici, (np.array([0.0, -0.0, 1e-20, 0.3, -0.7, 1.0, 1.99, 2.0, 2.01, -2.5, 4.0,
                                  10.0, -33.0, 100.0, 1e4, np.inf, -np.inf, np.nan]),)),
    "fresnel": (_SP.fresnel, (np.array([0.0, -0.0, 1e-20, 0.3, -0.7, 1.0, 1.49, 1.5, -1.51,
                                        2.0, 4.5, -10.0, 33.3, 100.0, np.inf, -np.inf,
                                        np.nan]),)),
    "igamma_grad_a": (lax.igamma_grad_a, (_IGAMMA_A, _IGAMMA_X)),
    "random_gamma_grad": (lax.random_gamma_grad, (_IGAMMA_A, _IGAMMA_X)),
    # orders 0 .. 8, and -1 .. 3 in the derivative (Miller's recurrence, Hankel's expansion)
    "bessel_jn": (lambda z: _SP.bessel_jn(z, v=8), (_JN_Z,)),
    "bessel_jn_grad": (jax.vmap(jax.grad(lambda z: _SP.bessel_jn(z, v=2).sum())), (_JN_Z,)),
}
for _name, (_fn, _args) in _LOOPED.items():
    for _dtype, _tolerance in ((np.float32, 2e-6), (np.float64, 1e-11)):
        PROGRAMS[f"{_name}_{np.dtype(_dtype).name}"] = (
            _fn, tuple(a.astype(_dtype) for a in _args), _tolerance)
_SPECIAL_NAMES = ("gamma", "beta", "poch", "comb", "igamma", "igammac", "betainc", "erfcx",
                  "i0e", "expi", *_LOOPED)
SPECIAL = {f"{f}_{t}" for f in _SPECIAL_NAMES for t in ("float32", "float64")}
X64 = {"fma_f64"} | {name for name in SPECIAL if name.endswith("float64")}
# Each program's distinctive op where it is not a LAPACK call.
PRINTED_AS = {"fma_f64": "stablehlo.multiply",
              **{name: "chlo.lgamma" for name in SPECIAL},
              "erfcx_float32": "chlo.erfc", "erfcx_float64": "chlo.erfc",
              **{f"{f}_{t}": "stablehlo.while" for f in ("i0e", "expi", *_LOOPED)
                 for t in ("float32", "float64")},
              "symmetric_product": "stablehlo.dot_general",
              "symmetric_product_batched": "stablehlo.dot_general",
              "cholesky_update": "stablehlo.while", "cholesky_update_batched": "stablehlo.while"}


@pytest.fixture(scope="module")
def lowered():
    """Each program's StableHLO text and jaxlite's results."""
    out = {}
    for name, (fn, args, _) in PROGRAMS.items():
        jitted = jax.jit(fn)
        with jax.enable_x64(name in X64):
            out[name] = (jitted.lower(*args), [np.asarray(v) for v in
                                               jax.tree_util.tree_leaves(jitted(*args))],
                         jitted.lower(*args).as_text(dialect="stablehlo"))
    return out


@pytest.fixture(scope="module")
def xla_results(lowered, tmp_path_factory):
    cases = {}
    for name, (fn, args, _) in PROGRAMS.items():
        with jax.enable_x64(name in X64):
            add_lowered_case(cases, name, lowered[name][0], jax.tree_util.tree_leaves(args))
    return run_cases(cases, tmp_path_factory.mktemp("kernels"))


def _close(theirs, mine, tolerance, what):
    theirs = unpack_like(np.asarray(theirs), mine)
    assert theirs.shape == mine.shape and theirs.dtype == mine.dtype, (what, theirs, mine)
    # Special functions span many magnitudes: relative; linear algebra: also absolute.
    atol = 0 if what.split()[0] in SPECIAL else tolerance
    np.testing.assert_allclose(theirs, mine, rtol=tolerance, atol=atol, err_msg=what)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_no_jaxlite_targets_are_printed(name, lowered):
    text = lowered[name][2]
    assert "jaxlite_" not in text
    assert PRINTED_AS.get(name, "@lapack_") in text.replace('call_target_name = "', "@")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runs_in_xla_with_our_numbers(name, lowered, xla_results):
    assert f"{name}/error" not in xla_results, xla_results.get(f"{name}/error")
    mine = lowered[name][1]
    assert f"{name}/out{len(mine)}" not in xla_results
    for i, value in enumerate(mine):
        _close(xla_results[f"{name}/out{i}"], value, PROGRAMS[name][2], f"{name} output {i}")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reads_back_with_the_same_numbers(name, lowered):
    fn, args, tolerance = PROGRAMS[name]
    inputs = list(lowered[name][0]._lowered.const_args) + jax.tree_util.tree_leaves(args)
    with jax.enable_x64(name in X64):
        again = jax.tree_util.tree_leaves(from_stablehlo(lowered[name][2]).call(*inputs))
    for i, (theirs, value) in enumerate(zip(again, lowered[name][1])):
        _close(np.asarray(theirs), value, tolerance, f"{name} output {i}")


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_reads_upper_triangle_potrf(dtype):
    # LAPACK's potrf with uplo = 'U' reads the upper triangle (a = U^H U) and leaves the
    # strict lower triangle as it was; JAX never emits it, other producers may.
    spd = (SQUARE @ SQUARE.T + 6 * np.eye(6)).astype(dtype)
    if dtype == np.complex64:
        spd = (spd + 1j * (SQUARE - SQUARE.T)).astype(dtype)
    a = np.triu(spd) + np.tril(np.full((6, 6), 7.0, dtype), -1)  # garbage below
    element = {np.float32: "f32", np.complex64: "complex<f32>"}[dtype]
    letter = {np.float32: "s", np.complex64: "c"}[dtype]
    matrix = f"tensor<6x6x{element}>"
    text = (
        "module @upper attributes {mhlo.num_partitions = 1 : i32} {\n"
        f"  func.func public @main(%arg0: {matrix}) -> ({matrix}, tensor<i32>) {{\n"
        f"    %0:2 = stablehlo.custom_call @lapack_{letter}potrf_ffi(%arg0) {{backend_config = "
        '"", mhlo.backend_config = {uplo = 85 : ui8}, operand_layouts = [dense<[0, 1]> : '
        "tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : "
        f"tensor<0xindex>]}} : ({matrix}) -> ({matrix}, tensor<i32>)\n"
        f"    return %0#0, %0#1 : {matrix}, tensor<i32>\n  }}\n}}\n")
    factor, info = from_stablehlo(text).call(a)
    factor = np.asarray(factor)
    expected = np.linalg.cholesky(spd).conj().T
    np.testing.assert_allclose(np.triu(factor), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.tril(factor, -1), np.tril(a, -1))
    assert int(info) == 0
