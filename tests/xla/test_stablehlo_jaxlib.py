"""StableHLO out, checked by real XLA: for each program, `jit(f).lower(...).as_text(
dialect="stablehlo")` is compiled and run by jaxlib in a subprocess (the jax virtual
environment's python; this process never imports jax), and its results must equal
jaxlite's own at the dtype's tolerance.

Skips when no python with jax is found: set JAXLITE_JAX_PYTHON, or have /tmp/jaxvenv.
"""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.core import dtypes
from jaxlite.xla import stablehlo
from jaxlite.xla.evaluator import evaluate_module
from jaxlite.xla.ir import ComputationBuilder, HloModule, NameUniquer
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape
import test_fixture_programs as fixtures
from stablehlo_xla import (add_lowered_case, add_text_case, jax_python_or_skip, run_cases,
                           unpack_like)

_rng = np.random.default_rng(0)
X = _rng.normal(size=(3, 4)).astype(np.float32)
SPD = (X[:, :3].T @ X[:, :3] + 3 * np.eye(3)).astype(np.float32)
IMAGE = _rng.normal(size=(1, 2, 5, 5)).astype(np.float32)
KERNEL = _rng.normal(size=(3, 2, 3, 3)).astype(np.float32)
INTS = np.array([[3, -1, 7], [0, 5, -4]], np.int32)
UINTS = np.array([1, 2, 250, 7], np.uint8)
BF16 = X.astype(dtypes.bfloat16)
C64 = (X + 1j * X[::-1]).astype(np.complex64)


def _loop(x):
    return lax.fori_loop(0, 5, lambda i, c: c * 0.5 + jnp.sin(c) * i, x)


def _scan(x):
    def step(carry, row):
        return carry + row, carry * row
    return lax.scan(step, jnp.zeros(4, x.dtype), x)


def _while(x):
    return lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2 + 1, c[1] + 1), (x, 0))


def _random(x):
    key = jax.random.PRNGKey(42)
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (5,)), jax.random.uniform(k2, (2, 3)) + x[0, 0]


def _gather_scatter(x):
    idx = jnp.array([2, 0, 2])
    return x[idx], x.at[idx].add(1.0), x.at[:, jnp.array([1, 3])].set(-x[:, :2])


def _conv(image, kernel):
    return lax.conv_general_dilated(image, kernel, (1, 1), "SAME", rhs_dilation=(1, 2))


PROGRAMS = {
    "elementwise": (lambda x: jnp.tanh(jnp.exp(x) * 2 - jnp.abs(x)) / (1 + x ** 2), (X,)),
    "unary_math": (lambda x: (jnp.log1p(jnp.abs(x)), jnp.expm1(x), lax.rsqrt(jnp.abs(x) + 1),
                              jnp.cbrt(x), jnp.floor(x), jnp.ceil(x), jnp.round(x),
                              jnp.sign(x), jax.nn.sigmoid(x), jnp.arctan2(x, 1 - x),
                              jnp.tan(x), jnp.exp2(x), jnp.cos(x), jnp.sqrt(jnp.abs(x))), (X,)),
    "chlo_math": (lambda x: (jnp.arcsin(x / 4), jnp.arccos(x / 4), jnp.arctan(x),
                             jnp.sinh(x), jnp.cosh(x), jnp.arcsinh(x), jnp.arctanh(x / 4),
                             jnp.arccosh(jnp.abs(x) + 1), lax.erf(x), lax.erfc(x),
                             lax.erf_inv(x / 4), lax.lgamma(jnp.abs(x) + 0.5),
                             lax.digamma(jnp.abs(x) + 0.5), jnp.nextafter(x, 0.0)), (X,)),
    "matmul": (lambda x: (x @ x.T, jnp.einsum("ij,kj->ik", x, x)), (X,)),
    "batched_dot": (lambda x: lax.dot_general(x[None], x[None], (((2,), (2,)), ((0,), (0,)))),
                    (X,)),
    "reductions": (lambda x: (x.sum(), x.max(axis=0), x.min(axis=1), x.prod(axis=1),
                              jnp.mean(x), jnp.any(x > 1), jnp.all(x > -3)), (X,)),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), (X,)),
    "log_softmax_grad": (jax.grad(lambda x: jax.nn.log_softmax(x).sum() * x[0, 0]), (X,)),
    "fori_loop": (_loop, (X,)),
    "scan": (_scan, (X,)),
    "while_loop": (_while, (np.float32(0.5),)),
    "cond": (lambda x: lax.cond(x.sum() > 0, lambda y: y + 1, lambda y: y * 3, x), (X,)),
    "switch": (lambda x: lax.switch(jnp.int32(x[0, 0] > 0) + 1,
                                    [jnp.sin, jnp.cos, lambda y: -y], x), (X,)),
    "sort": (lambda x: (jnp.sort(x, axis=0), jnp.argsort(x, axis=1)), (X,)),
    "argmax": (lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)), (X,)),
    "top_k": (lambda x: lax.top_k(x, 2), (X,)),
    "gather_scatter": (_gather_scatter, (X,)),
    "dynamic_slice": (lambda x, i: (lax.dynamic_slice(x, (i, 1), (2, 2)),
                                    lax.dynamic_update_slice(x, x[:1] * 9, (i, 0))),
                      (X, np.int32(1))),
    "shapes": (lambda x: (x.T.reshape(2, 6), jnp.concatenate([x, x[::-1]], axis=1),
                          lax.pad(x, 0.5, [(1, 0, 1), (0, 2, 0)]), x[::2, 1::2],
                          jnp.flip(x, 1), jnp.broadcast_to(x[:, :1], (3, 4))), (X,)),
    "conv": (_conv, (IMAGE, KERNEL)),
    "conv_grad": (jax.grad(lambda k, i: _conv(i, k).sum()), (KERNEL, IMAGE)),
    "max_pool_grad": (jax.grad(lambda x: lax.reduce_window(
        x, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID").sum()), (X,)),
    "cumsum": (lambda x: (jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0),
                          lax.cummax(x, axis=1)), (X,)),
    "rng_threefry": (_random, (X,)),
    "fft": (lambda x: (jnp.fft.fft(x), jnp.fft.irfft(jnp.fft.rfft(x))), (X,)),
    "cholesky": (lambda a: jnp.linalg.cholesky(a), (SPD,)),
    "solve": (lambda a, b: jnp.linalg.solve(a, b), (SPD, X[:, :3].T.copy())),
    "complex": (lambda z: (z * z.conj(), jnp.abs(z), jnp.real(z) + jnp.imag(z),
                           jnp.exp(z), z / (z + 1)), (C64,)),
    "integers": (lambda a: (a * 3 - 1, a // 2, a % 3, a << 1, a >> 1, a & 6, a | 1, a ^ 5,
                            lax.population_count(a), jnp.maximum(a, 0), a.sum(),
                            jnp.clip(a, -2, 4)), (INTS,)),
    "unsigned": (lambda u: (u + 10, u // 3, u > 5, lax.shift_right_logical(u, np.uint8(1)),
                            u.astype(np.float32), ~u), (UINTS,)),
    "booleans": (lambda x: ((x > 0) & (x < 1), ~(x > 0), jnp.where(x > 0, x, -1.0),
                            (x > 0).astype(np.int32)), (X,)),
    "bfloat16": (lambda b: (b * 2 + 1, jnp.exp(b), b.sum(axis=0), b.astype(np.float32)),
                 (BF16,)),
    "bitcast": (lambda x: lax.bitcast_convert_type(x, np.int32) >> 3, (X,)),
    "large_constant": (lambda x: x @ jnp.asarray(np.arange(4 * 300, dtype=np.float32)
                                                .reshape(4, 300)), (X,)),
    "constants": (lambda x: (
        x.sum() + jnp.asarray((np.arange(100) - 50.5).astype(np.float32)),  # raw bytes
        jnp.asarray((np.arange(80) + 1j * np.arange(80)).astype(np.complex64)) * x[0, 0],
        jnp.asarray(np.arange(-40, 40, dtype=np.int8)) + 1,
        jnp.asarray(np.arange(70, dtype=np.uint16) * 900) + 1,
        jnp.asarray(np.linspace(-3, 3, 90).astype(np.float16)) * 2,
        jnp.asarray(np.linspace(-3, 3, 90).astype(dtypes.bfloat16)) * 2,
        jnp.asarray(np.arange(100) % 3 == 0) & (x[0, 0] > 0),
        jnp.asarray(np.array([np.inf, -np.inf, np.nan, -0.0, 1e-40], np.float32)) * x[0, 0],
        jnp.asarray(np.array([1e-300, 1.5], np.float32)) + 0), (X,)),
    "edge_shapes": (lambda x, e: (x, x, e * 2, e.sum(axis=0), jnp.zeros((0, 3)), x[:, :0],
                                  jnp.float32(3.0)), (X, np.zeros((0, 5), np.float32))),
    "no_outputs": (lambda x: (), (X,)),
    "float16": (lambda h: (h * h + 1, jnp.tanh(h), h.max(axis=1)), (X.astype(np.float16),)),
}

# Programs of 64-bit types, lowered and run with x64 on.
X64_PROGRAMS = {
    "float64": (lambda x: (jnp.exp(x) @ x.T, jnp.cumsum(x, axis=0), jnp.sort(x, axis=1),
                           x[0, 0] * jnp.asarray(np.linspace(-1e300, 1e300, 70)),
                           x[0, 0] + jnp.asarray(np.float64(1 / 3))),
                (X.astype(np.float64),)),
    "int64_uint64": (lambda a, u: (a * 1_000_000_007, a.sum(), u * u + 1, u >> 3),
                     (INTS.astype(np.int64), UINTS.astype(np.uint64) * 10 ** 12)),
    "complex128": (lambda z: (z @ z.T, jnp.log(z), jnp.sqrt(z)), (C64.astype(np.complex128),)),
}

# Linear algebra that jaxlite computes with its LAPACK-style kernels, printed as XLA's LAPACK
# calls. Eigenvectors and singular vectors are unique up to sign, so those programs return
# reconstructions; their tolerance is looser (two LAPACKs, 40 x 40 matrices).
_BIG = _rng.normal(size=(40, 40)).astype(np.float32)
_SPD = _BIG @ _BIG.T + 40 * np.eye(40, dtype=np.float32)
_TALL = _rng.normal(size=(40, 30)).astype(np.float32)
_C_SPD = (_SPD + 1j * (_BIG - _BIG.T)).astype(np.complex64)


def _eigh_parts(a):
    w, v = jnp.linalg.eigh(a)
    return w, (v * w[..., None, :]) @ jnp.swapaxes(v, -1, -2).conj()


def _svd_parts(a, full):
    u, s, vh = jnp.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    return s, (u[..., :k] * s[..., None, :]) @ vh[..., :k, :], jnp.linalg.svd(a, compute_uv=False)


def _qr_parts(a, mode):
    q, r = jnp.linalg.qr(a, mode=mode)
    return q @ r, jnp.abs(r), jnp.swapaxes(q, -1, -2) @ q


LAPACK_PROGRAMS = {
    "lapack_cholesky": (jnp.linalg.cholesky, (_SPD,)),
    "lapack_cholesky_batched": (jnp.linalg.cholesky, (np.stack([_SPD, 2 * _SPD]),)),
    "lapack_cholesky_complex": (jnp.linalg.cholesky, (_C_SPD,)),
    "lapack_triangular_solve": (lambda a, b: (
        lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
        lax.linalg.triangular_solve(a, b, left_side=False, lower=True, transpose_a=True),
        lax.linalg.triangular_solve(a.T, b, left_side=True, lower=False, unit_diagonal=True)),
        (np.tril(_SPD) / 10, _BIG)),
    "lapack_eigh": (_eigh_parts, (_SPD,)),
    "lapack_eigh_complex": (_eigh_parts, (_C_SPD,)),
    "lapack_svd": (lambda a: _svd_parts(a, False), (_TALL,)),
    "lapack_svd_full": (lambda a: _svd_parts(a, True), (_TALL.T.copy(),)),
    "lapack_qr": (lambda a: _qr_parts(a, "reduced"), (_TALL,)),
    "lapack_qr_full": (lambda a: _qr_parts(a, "complete"), (_TALL,)),
    "lapack_qr_wide": (lambda a: _qr_parts(a, "reduced"), (_TALL.T.copy(),)),
    "lapack_lu": (lambda a: jax.scipy.linalg.lu_factor(a), (_BIG,)),
    "lapack_lu_batched": (lambda a: lax.linalg.lu(a), (np.stack([_BIG, _BIG.T]),)),
    "lapack_lu_wide": (lambda a: lax.linalg.lu(a), (_TALL.T.copy(),)),
    "lapack_solve": (jnp.linalg.solve, (_SPD, _BIG)),
    "lapack_tridiagonal_solve": (lax.linalg.tridiagonal_solve, (
        np.r_[0, _BIG[0, 1:]].astype(np.float32), _BIG[1] + 8, np.r_[_BIG[2, :-1], 0].astype(
            np.float32), _BIG[:, :3].copy())),
    "lapack_pivots_to_permutation": (
        lambda p: lax.linalg.lu_pivots_to_permutation(p, 6),
        (np.array([[3, 1, 5, 3], [0, 4, 2, 5]], np.int32),)),
}
PROGRAMS.update(LAPACK_PROGRAMS)

# Special functions jaxlite computes with kernels, printed as the CHLO ops XLA expands.
_POSITIVE = (np.abs(X) + 1.5).astype(np.float32)
CHLO_KERNEL_PROGRAMS = {
    "chlo_kernels": (lambda x: (lax.bessel_i1e(x - 2), lax.polygamma(jnp.full_like(x, 2.0), x),
                                lax.zeta(x + 1, x)), (_POSITIVE,)),
}
PROGRAMS.update(CHLO_KERNEL_PROGRAMS)

# The compiler's fixture programs (tests/xla/fixtures), on their stored inputs.
PROGRAMS.update({f"fixture_{name}": (lambda *ins, program=program: program(list(ins)),
                                     tuple(fixtures._inputs(name)))
                 for name, program in fixtures.PROGRAMS.items()})

# Programs that call jaxlite's own custom-call targets (host callbacks; every
# special-function kernel now prints as standard ops): real XLA has no implementation of
# them, so their text is only parsed and verified by jaxlib's MLIR.
PARSE_ONLY = {
    "pure_callback": (lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype),
                                                  x), (X,)),
    "io_callback": (lambda x: jax.experimental.io_callback(
        np.cos, jax.ShapeDtypeStruct(x.shape, x.dtype), x), (X,)),
}


def _hand_built():
    """Ops the lowering does not emit (passes do), in one module: copy, a plain bitcast, a
    conditional on a predicate and a fusion, with a tuple-shaped parameter."""
    names = NameUniquer()
    vector = Shape(np.float32, (4,))
    branch = ComputationBuilder("negate", names)
    arg = branch.parameter(vector)
    negate = branch.build(branch.add(Opcode.NEGATE, vector, [arg]))
    other = ComputationBuilder("double", names)
    arg = other.parameter(vector)
    double = other.build(other.add(Opcode.ADD, vector, [arg, arg]))
    fused = ComputationBuilder("fused", names)
    a, b = fused.parameter(vector), fused.parameter(vector)
    product = fused.add(Opcode.MULTIPLY, vector, [a, b])
    fused_comp = fused.build(fused.add(Opcode.ADD, vector, [product, a]))
    main = ComputationBuilder("main", names)
    state = main.parameter(Shape.tuple([Shape(np.float32, (2, 2)), Shape(np.bool_, ())]))
    x = main.add(Opcode.GET_TUPLE_ELEMENT, Shape(np.float32, (2, 2)), [state], {"index": 0})
    pred = main.add(Opcode.GET_TUPLE_ELEMENT, Shape(np.bool_, ()), [state], {"index": 1})
    flat = main.add(Opcode.BITCAST, vector, [main.add(Opcode.COPY, x.shape, [x])])
    chosen = main.add(Opcode.CONDITIONAL, vector, [pred, flat, flat], called=[negate, double])
    out = main.add(Opcode.FUSION, vector, [chosen, flat], {"kind": "kLoop"}, [fused_comp])
    return HloModule("hand_built", main.build(main.add(Opcode.TUPLE, Shape.tuple(
        [vector, vector]), [out, chosen])))


def _add_case(cases, name, fn, args, parse_only=False):
    add_lowered_case(cases, name, jax.jit(fn).lower(*args), jax.tree_util.tree_leaves(args),
                     parse_only)


@pytest.fixture(scope="module")
def xla_results(tmp_path_factory):
    """Every program's StableHLO run by jaxlib at once (one subprocess)."""
    jax_python_or_skip()
    cases = {}
    for name, (fn, args) in PROGRAMS.items():
        _add_case(cases, name, fn, args)
    with jax.enable_x64():
        for name, (fn, args) in X64_PROGRAMS.items():
            _add_case(cases, name, fn, args)
    for name, (fn, args) in PARSE_ONLY.items():
        _add_case(cases, name, fn, args, parse_only=True)
    # the tuple parameter of the hand-built module is two arguments: its leaves
    add_text_case(cases, "hand_built", stablehlo.print_module(_hand_built()),
                  [X[:2, :2].copy(), np.array(True)])
    return run_cases(cases, tmp_path_factory.mktemp("stablehlo")), cases


def _tolerance(name: str, dtype: np.dtype) -> dict:
    if name in LAPACK_PROGRAMS:
        return dict(rtol=1e-3, atol=1e-3)
    if name in CHLO_KERNEL_PROGRAMS:  # XLA's expansions against scipy's kernels
        return dict(rtol=1e-4, atol=1e-6)
    if dtype == dtypes.bfloat16:
        return dict(rtol=2e-2, atol=2e-2)
    if dtype in (np.float32, np.complex64):
        return dict(rtol=2e-5, atol=2e-5)
    if dtype in (np.float64, np.complex128):
        return dict(rtol=1e-12, atol=1e-12)
    return dict(rtol=0, atol=0)


def _check_accepted(name, results, cases):
    error = results.get(f"{name}/error")
    assert error is None, f"jaxlib rejected the StableHLO of {name}: {error}\n" + str(
        cases[f"{name}/text"])[:4000]


@pytest.mark.parametrize("name", sorted(PARSE_ONLY))
def test_stablehlo_of_our_custom_calls_parses_in_xla(name, xla_results):
    results, cases = xla_results
    _check_accepted(name, results, cases)
    assert "stablehlo.custom_call" in str(cases[f"{name}/text"])
    assert str(results[f"{name}/parsed"]).startswith("module @jit_")


def test_hand_built_ops_run_in_xla(xla_results):
    results, cases = xla_results
    _check_accepted("hand_built", results, cases)
    expected = evaluate_module(_hand_built(), [(X[:2, :2].copy(), np.array(True))])
    for i, value in enumerate(expected):
        np.testing.assert_allclose(results[f"hand_built/out{i}"], value, rtol=1e-6)
    assert np.allclose(expected[1], -X[:2, :2].reshape(4))


@pytest.mark.parametrize("name", sorted(PROGRAMS) + sorted(X64_PROGRAMS))
def test_stablehlo_runs_in_xla_with_our_numbers(name, xla_results):
    results, cases = xla_results
    _check_accepted(name, results, cases)
    assert 'call_target_name = "jaxlite_' not in str(cases[f"{name}/text"])
    fn, args = PROGRAMS.get(name) or X64_PROGRAMS[name]
    with jax.enable_x64(name in X64_PROGRAMS):
        ours = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    theirs = [results[f"{name}/out{i}"] for i in range(len(ours))]
    assert f"{name}/out{len(ours)}" not in results
    for i, (mine, other) in enumerate(zip(ours, theirs)):
        mine = np.asarray(mine)
        other = unpack_like(other, mine)
        assert other.shape == mine.shape and other.dtype == mine.dtype, (i, other, mine)
        np.testing.assert_allclose(np.asarray(other, np.float64 if mine.dtype.kind != "c"
                                              else np.complex128),
                                   np.asarray(mine, np.float64 if mine.dtype.kind != "c"
                                              else np.complex128),
                                   err_msg=f"{name}, output {i}", **_tolerance(name, mine.dtype))
