"""custom-call on the cpu backend: the generated code calls the registered Python target
through a ctypes trampoline (jaxlite/backends/cpu/codegen/custom_call.py).

Every lax.linalg function compiled for the cpu backend gives eager's numbers (both run the
same numpy kernel); hand-written modules check what the linalg functions do not reach:
operands and results stored in non-default layouts, tuple results, custom-calls inside
loops, unused results kept alive, and errors raised by a target.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
from cpu_testing import module, run_cpu, run_interpreter
from jaxlite import lax
from jaxlite.lax import linalg
from jaxlite.xla.evaluator import CUSTOM_CALL_TARGETS

DTYPES = (np.float32, np.float64, np.complex64, np.complex128)
TOLERANCE = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-14,
             np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-14}


def _draw(rng, shape, dtype):
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _positive_definite(rng, shape, dtype):
    x = _draw(rng, shape, dtype)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _functions(rng, dtype):
    """(name, function, arguments) for every linalg function."""
    square = _draw(rng, (2, 4, 4), dtype)
    tall = _draw(rng, (2, 5, 3), dtype)
    spd = _positive_definite(rng, (2, 4, 4), dtype)
    tri = (np.tril(square) + 4 * np.eye(4)).astype(dtype)
    diagonals = [_draw(rng, (2, 4), dtype) for _ in range(3)]
    diagonals[1] = (diagonals[1] + 4).astype(dtype)
    pivots = np.array([[2, 1, 3], [1, 1, 2]], np.int32)
    return [
        ("cholesky", linalg.cholesky, (spd,)),
        ("triangular_solve", lambda a, b: linalg.triangular_solve(
            a, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True),
         (tri, tall[:, :4])),
        ("lu", linalg.lu, (tall,)),
        ("lu_pivots_to_permutation", lambda p: linalg.lu_pivots_to_permutation(p, 5),
         (pivots,)),
        ("qr", lambda x: linalg.qr(x, full_matrices=False), (tall,)),
        ("qr_full", linalg.qr, (tall,)),
        ("eigh", linalg.eigh, (spd,)),
        ("svd", linalg.svd, (tall,)),
        ("svd_values", lambda x: linalg.svd(x, compute_uv=False), (tall,)),
        ("eig", linalg.eig, (square,)),
        ("tridiagonal_solve", linalg.tridiagonal_solve, (*diagonals, tall[:, :4])),
    ]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_linalg_function_on_the_cpu_backend_matches_eager(dtype):
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        for name, fun, args in _functions(rng, dtype):
            eager = jax.tree_util.tree_leaves(fun(*args))
            compiled = jax.tree_util.tree_leaves(jax.jit(fun, backend="cpu")(*args))
            assert len(compiled) == len(eager), name
            for c, e in zip(compiled, eager):
                c, e = np.asarray(c), np.asarray(e)
                assert c.dtype == e.dtype and c.shape == e.shape, name
                tol = TOLERANCE.get(c.dtype, 0)
                np.testing.assert_allclose(c, e, rtol=tol, atol=tol, err_msg=name)


def test_linalg_inside_a_loop_and_with_fused_neighbours():
    rng = np.random.default_rng(1)
    a = _positive_definite(rng, (3, 3), np.float32)

    def f(a):
        def body(i, x):
            chol = linalg.cholesky(x)
            return lax.add(lax.dot(chol, lax.transpose(chol, (1, 0))), np.eye(3, dtype=np.float32))
        out = lax.fori_loop(0, 3, body, a)
        return lax.mul(out, 2.0), linalg.eigh(out)[1]

    expected = f(a)
    actual = jax.jit(f, backend="cpu")(a)
    for x, y in zip(actual, expected):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5)


def test_two_equal_calls_and_an_unused_one_compute_correctly():
    rng = np.random.default_rng(2)
    a = _positive_definite(rng, (4, 4), np.float64)

    def f(a):
        linalg.qr(a)  # unused: custom-calls count as side-effecting, so it is kept
        return lax.add(linalg.cholesky(a), linalg.cholesky(a))

    with jax.enable_x64(True):
        np.testing.assert_allclose(np.asarray(jax.jit(f, backend="cpu")(a)),
                                   2 * np.linalg.cholesky(a), rtol=1e-14)


@pytest.fixture
def test_targets():
    """Targets of the hand-written modules below, removed afterwards."""
    added = {
        "jaxlite_test_sums": lambda inst, x: (x @ np.arange(x.shape[1], dtype=x.dtype),
                                              x.sum(0)),
        "jaxlite_test_scaled": lambda inst, x: x * float(inst.attr("backend_config")),
        "jaxlite_test_fails": lambda inst, x: 1 / 0,
    }
    CUSTOM_CALL_TARGETS.update(added)
    yield
    for name in added:
        del CUSTOM_CALL_TARGETS[name]


def test_operands_and_results_in_column_major_layouts(test_targets):
    # The bitcasts pin the layouts: the target must see x transposed (logical [3,2]) and
    # its result must be stored column-major.
    m = module("""
    %x = f32[2,3]{1,0} parameter(0)
    %t = f32[3,2]{0,1} bitcast(%x)
    %c = f32[3,2]{0,1} custom-call(%t), custom_call_target="jaxlite_test_scaled", backend_config="3"
    ROOT %r = f32[2,3]{1,0} bitcast(%c)
    """)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (actual,) = run_cpu(m, [x])
    (expected,) = run_interpreter(m, [x])
    np.testing.assert_array_equal(actual, 3 * x)
    np.testing.assert_array_equal(actual, expected)


def test_tuple_results(test_targets):
    m = module("""
    %x = f64[3,4]{1,0} parameter(0)
    %c = (f64[3]{0}, f64[4]{0}) custom-call(%x), custom_call_target="jaxlite_test_sums"
    %a = f64[3]{0} get-tuple-element(%c), index=0
    %b = f64[4]{0} get-tuple-element(%c), index=1
    %n = f64[3]{0} negate(%a)
    ROOT %out = (f64[3]{0}, f64[4]{0}) tuple(%n, %b)
    """)
    x = np.random.default_rng(3).standard_normal((3, 4))
    negated, sums = run_cpu(m, [x])
    np.testing.assert_allclose(negated, -(x @ np.arange(4.0)), rtol=1e-15)
    np.testing.assert_allclose(sums, x.sum(0), rtol=1e-15)


def test_an_error_in_the_target_is_raised_by_execute(test_targets):
    m = module("""
    %x = f32[2]{0} parameter(0)
    ROOT %c = f32[2]{0} custom-call(%x), custom_call_target="jaxlite_test_fails"
    """)
    with pytest.raises(RuntimeError, match="custom-call target failed") as info:
        run_cpu(m, [np.ones(2, np.float32)])
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    # the next call on the thread starts clean
    m_ok = module("""
    %x = f32[2]{0} parameter(0)
    ROOT %n = f32[2]{0} negate(%x)
    """)
    np.testing.assert_array_equal(run_cpu(m_ok, [np.ones(2, np.float32)])[0], -np.ones(2))


def test_unknown_target_is_refused_at_compile_time():
    m = module("""
    %x = f32[5] parameter(0)
    ROOT %s = f32[5] custom-call(%x), custom_call_target="jaxlite_test_nobody"
    """)
    with pytest.raises(NotImplementedError, match="jaxlite_test_nobody"):
        run_cpu(m, [np.ones(5, np.float32)])
