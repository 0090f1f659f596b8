"""Linear algebra and FFT custom calls on the gpu backend (`library_calls`: cuSOLVER,
cuBLAS and cuFFT through CuPy; numpy's and scipy's LAPACK and pocketfft under the
interpreter launcher), against the cpu backend at the dtype's tolerance. Eigen- and
singular vectors and Q factors are compared up to each column's phase (cuSOLVER may pick
other signs than LAPACK); everything else directly. The plan must show each call on the
device ("xp"), eig on the host with its reason."""
from __future__ import annotations

import numpy as np
import pytest
from gpu_testing import TOLERANCES, gpu_backend

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.config import config, enable_x64


@pytest.fixture(scope="module")
def backend():
    return gpu_backend()


# Matrices above jaxlite's small-matrix limit (32), which lowers smaller ones to lax
# expansions instead of custom calls.
N = 34


def _random(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _spd(shape, dtype=np.float32, seed=0):
    a = _random(shape, dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _phase_fixed(v):
    """Columns scaled by the conjugate phase of their largest entry (unique up to that)."""
    v = np.asarray(v)
    largest = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * (np.conj(largest) / np.abs(largest))


def _close(got, want, what, tolerance_scale=1.0):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, what
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    real = np.empty((), want.dtype).real.dtype.name
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, err_msg=what,
                               atol=TOLERANCES[real] * 50 * tolerance_scale * scale)


def _both(backend, fn, *args):
    got = jax.tree.leaves(jax.jit(fn, backend=backend)(*args))
    with config.override("jax_platforms", ""):
        want = jax.tree.leaves(jax.jit(fn, backend="cpu")(*args))
    return [np.asarray(g) for g in got], [np.asarray(w) for w in want]


def check(backend, fn, *args, phase_fixed=()):
    """`fn` on `backend` against the cpu backend; leaves listed in `phase_fixed` are
    compared after `_phase_fixed`."""
    got, want = _both(backend, fn, *args)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        if k in phase_fixed:
            g, w = _phase_fixed(g), _phase_fixed(w)
        _close(g, w, f"{getattr(fn, '__name__', fn)} leaf {k}")
    return got


def _plan(backend, fn, *args):
    return jax.jit(fn, backend=backend).lower(*args).compile().runtime_executable() \
        .text("kernels")


def _on_device(plan, target):
    lines = [line for line in plan.splitlines() if "custom-call" in line]
    assert lines, plan
    assert all(line.startswith("xp ") for line in lines), plan


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_cholesky_batched_and_a_failure_as_nan(backend, dtype):
    a = _spd((3, N, N), dtype)
    a[1] = -a[1]  # not positive definite: NaN, as JAX gives
    [got] = check(backend, jnp.linalg.cholesky, a)
    assert np.isnan(got[1][np.tril_indices(N)]).all() and np.isfinite(got[[0, 2]]).all()
    _on_device(_plan(backend, jnp.linalg.cholesky, a), "cholesky")


def test_solve_through_lu_and_triangular_solves(backend):
    a, b = _random((2, N, N), seed=1), _random((2, N, 3), seed=2)
    check(backend, jnp.linalg.solve, a, b)
    check(backend, jax.lax.linalg.lu, a)
    _on_device(_plan(backend, jax.lax.linalg.lu, a), "lu")


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower,transpose_a,conjugate_a", [(True, False, False),
                                                            (False, True, False),
                                                            (True, True, True),
                                                            (False, False, True)])
def test_triangular_solve(backend, left_side, lower, transpose_a, conjugate_a):
    # (real matrices: the kernel builders have no complex arithmetic yet; conjugate_a
    # still takes its own path, a^H rather than a^T, in `library_calls`)
    a = _random((2, N, N), seed=3) + N * np.eye(N, dtype=np.float32)
    b = _random((2, N, 3) if left_side else (2, 3, N), seed=4)

    def solve(a, b):
        return jax.lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                               transpose_a=transpose_a,
                                               conjugate_a=conjugate_a)
    check(backend, solve, a, b)
    _on_device(_plan(backend, solve, a, b), "triangular_solve")


def test_lu_of_a_wide_matrix_and_cho_solve(backend):
    check(backend, jax.lax.linalg.lu, _random((N, N + 5), seed=5))
    a, b = _spd((N, N), seed=6), _random((N, 2), seed=7)
    check(backend, lambda a, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), b),
          a, b)


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(backend, mode):
    a = _random((2, 5, 3), seed=8)
    (q, r), (want_q, want_r) = _both(backend, lambda a: jnp.linalg.qr(a, mode=mode), a)
    _close(q @ r, a, "q r")
    _close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1], dtype=q.dtype),
                                                        (2,) + (q.shape[-1],) * 2), "q^T q")
    # R's diagonal signs fix Q's first columns: compare both with that diagonal positive
    k = min(a.shape[-2:])
    signs = [np.sign(np.diagonal(x, axis1=-2, axis2=-1)) for x in (r, want_r)]
    _close(q[..., :k] * signs[0][..., None, :], want_q[..., :k] * signs[1][..., None, :],
           "q's columns")
    _close(r[..., :k, :] * signs[0][..., :, None], want_r[..., :k, :] * signs[1][..., :, None],
           "r's rows")
    _on_device(_plan(backend, jnp.linalg.qr, a), "qr")


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eigh(backend, dtype):
    a = _spd((2, 5, 5), dtype, seed=9)
    w, v = check(backend, jnp.linalg.eigh, a, phase_fixed=(1,))
    _close((v * w[..., None, :].astype(dtype)) @ np.conj(np.swapaxes(v, -1, -2)), a,
           "v w v^H", tolerance_scale=10)
    _on_device(_plan(backend, jnp.linalg.eigh, a), "eigh")


def test_svd_with_and_without_vectors(backend):
    a = _random((2, 4, 6), seed=10)
    svd = lambda a: jnp.linalg.svd(a, full_matrices=False)
    (u, s, vh), (want_u, want_s, _) = _both(backend, svd, a)
    _close(s, want_s, "singular values")
    _close(_phase_fixed(u), _phase_fixed(want_u), "u")
    _close(u @ (s[..., :, None] * vh), a, "u s vh", tolerance_scale=10)
    check(backend, lambda a: jnp.linalg.svd(a, compute_uv=False), a)
    check(backend, lambda a: jnp.linalg.svd(a, full_matrices=True)[1], a)
    _on_device(_plan(backend, svd, a), "svd")


def test_float64_linear_algebra(backend):
    with enable_x64(True):
        a = _spd((N, N), np.float64, seed=11)
        check(backend, jnp.linalg.cholesky, a)
        check(backend, lambda a: jnp.linalg.solve(a, jnp.ones(N)), a)
        check(backend, jnp.linalg.eigvalsh, a)


def test_eig_stays_on_the_host_and_says_why(backend):
    a = _random((3, 3), seed=12)
    check(backend, lambda a: jnp.abs(jnp.linalg.eigvals(a)).sort(), a)
    plan = _plan(backend, jnp.linalg.eigvals, a)
    assert "host" in plan and "'jaxlite_lapack_eig': no device rule" in plan, plan


@pytest.mark.parametrize("name,shape,dtype", [
    ("fft", (3, 8), np.complex64), ("ifft", (3, 8), np.complex64),
    ("rfft", (4, 10), np.float32), ("irfft", (4, 6), np.complex64),
    ("fft2", (2, 4, 6), np.complex64), ("rfftn", (2, 3, 4, 6), np.float32),
    ("irfftn", (3, 4, 5), np.complex64)])
def test_fft(backend, name, shape, dtype):
    fn = getattr(jnp.fft, name)
    x = _random(shape, dtype, seed=13)
    check(backend, fn, x)
    _on_device(_plan(backend, fn, x), "fft")


def test_fft_float64_and_empty(backend):
    with enable_x64(True):
        check(backend, jnp.fft.fft, _random((2, 7), np.complex128, seed=14))
        check(backend, jnp.fft.rfft, _random((3, 0), np.float64))


def test_an_fft_round_trip_runs_on_the_device(backend):
    x = _random((3, 8), seed=15)
    round_trip = lambda x: jnp.fft.irfft(jnp.fft.rfft(x), n=8) * 2.0
    [got] = check(backend, round_trip, x)
    _close(got, 2 * x, "irfft(rfft(x))")
    assert "host" not in _plan(backend, round_trip, x)
