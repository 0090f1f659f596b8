"""Printing a linear-algebra program as StableHLO, reading it back and printing it again
is a fixed point after the first round: a LAPACK call reads as an HLO `call` of jaxlite's
kernels that remembers the call (jaxlite/xla/stablehlo/lapack_parse.py), and prints back as
that same call, so no round adds fix-ups after it. The programs: the LAPACK programs of
test_stablehlo_kernels_xla.py and the factorizations and solvers of jnp.linalg; the text
of the second round computes jaxlite's numbers, in jaxlite and in real XLA (jaxlib,
skipped without it).
"""
import re
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.export import from_stablehlo
from jaxlite.xla import stablehlo
from jaxlite.xla.stablehlo.reader import parse_module
from stablehlo_xla import add_text_case, run_cases, unpack_like
from test_stablehlo_kernels_xla import PROGRAMS as KERNEL_PROGRAMS

_rng = np.random.default_rng(11)
_A = _rng.normal(size=(5, 5)).astype(np.float32)
SPD = (_A @ _A.T + 5 * np.eye(5)).astype(np.float32)
B = _rng.normal(size=(5, 2)).astype(np.float32)
C_SPD = (SPD + 1j * (_A - _A.T)).astype(np.complex64)
WIDE = _rng.normal(size=(3, 5)).astype(np.float32)

# name -> (function, arguments, tolerance)
PROGRAMS = {
    "cholesky": (jnp.linalg.cholesky, (SPD,), 1e-5),
    "cholesky_complex": (jnp.linalg.cholesky, (C_SPD,), 1e-5),
    "inv": (jnp.linalg.inv, (SPD,), 1e-4),
    "solve": (jnp.linalg.solve, (SPD, B), 1e-4),
    "det_slogdet": (lambda a: (jnp.linalg.det(a), *jnp.linalg.slogdet(a)), (_A,), 1e-4),
    "lu": (lax.linalg.lu, (_A,), 1e-5),
    "eigh": (jnp.linalg.eigh, (SPD,), 1e-4),
    "svd": (lambda a: jnp.linalg.svd(a, full_matrices=False), (WIDE,), 1e-4),
    "svd_values": (lambda a: jnp.linalg.svd(a, compute_uv=False), (WIDE,), 1e-4),
    "qr": (jnp.linalg.qr, (WIDE.T,), 1e-4),
    "triangular_solve": (lambda a, b: lax.linalg.triangular_solve(
        jnp.linalg.cholesky(a), b, left_side=True, lower=True), (SPD, B), 1e-4),
    "pinv_lstsq": (lambda a, b: (jnp.linalg.pinv(a), jnp.linalg.lstsq(a.T, b[:5])[0]),
                   (WIDE, B), 1e-4),
}
# The linear-algebra programs of the kernel test (the others are special functions).
LINALG_KERNELS = ("hessenberg", "tridiagonal", "schur", "eig", "qr_pivoting", "geqp3",
                  "ormqr", "symmetric_product", "cholesky_update")
PROGRAMS.update({name: program for name, program in KERNEL_PROGRAMS.items()
                 if name.startswith(LINALG_KERNELS)})


def _rounds(name):
    """The first three prints: jaxlite's own, then each of the text read back."""
    fn, args, _ = PROGRAMS[name]
    texts = [jax.jit(fn).lower(*args).as_text(dialect="stablehlo")]
    for _ in range(2):
        texts.append(stablehlo.print_module(parse_module(texts[-1])))
    return texts


@pytest.fixture(scope="module")
def rounds():
    return {name: _rounds(name) for name in PROGRAMS}


def test_most_programs_call_lapack(rounds):
    # jaxlite lowers cholesky, lu and triangular_solve to standard ops: JAX's LAPACK
    # calls for those are in the JAX-lowered fixture below.
    calling = sorted(name for name in PROGRAMS if '"lapack_' in rounds[name][1])
    assert len(PROGRAMS) == 31 and len(calling) == 20, calling
    assert not any("jaxlite_" in rounds[name][1] for name in PROGRAMS)


def test_jax_lowered_lapack_calls_print_once():
    """JAX's own LAPACK calls and fix-ups (potrf, getrf, trsm, syevd, gesdd) print back
    as they were: as many calls and ops as JAX wrote, whatever the round."""
    jax_text = (Path(__file__).parent / "fixtures" / "stablehlo" / "jax_linalg.mlir").read_text()
    texts = [jax_text]
    for _ in range(3):
        texts.append(stablehlo.print_module(parse_module(texts[-1])))
    assert texts[1] == texts[2] == texts[3]
    calls = [len(re.findall(r"lapack_\w+_ffi", t)) for t in texts]
    assert calls == [9, 9, 9, 9], calls
    ops = [len(re.findall(r"^\s+%", t, re.MULTILINE)) for t in texts]
    assert abs(ops[1] - ops[0]) <= 12, ops  # JAX's spelling of a few ops differs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_second_and_third_prints_are_equal(name, rounds):
    first, second, third = rounds[name]
    assert second == third
    # the same LAPACK calls, and no more ops than the first print (the fix-ups once)
    assert first.count("lapack_") == second.count("lapack_")
    assert len(second.splitlines()) <= len(first.splitlines()) + 2


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_second_print_computes_jaxlite_numbers(name, rounds):
    fn, args, tolerance = PROGRAMS[name]
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    got = jax.tree_util.tree_leaves(from_stablehlo(rounds[name][1]).call(*args))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tolerance,
                                   atol=tolerance, err_msg=f"{name} output {i}")


@pytest.fixture(scope="module")
def xla_results(rounds, tmp_path_factory):
    cases = {}
    for name, (fn, args, _) in PROGRAMS.items():
        add_text_case(cases, name, rounds[name][1], jax.tree_util.tree_leaves(args))
    return run_cases(cases, tmp_path_factory.mktemp("fixed_point"))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_second_print_runs_in_xla_with_jaxlite_numbers(name, xla_results):
    fn, args, tolerance = PROGRAMS[name]
    assert f"{name}/error" not in xla_results, str(xla_results.get(f"{name}/error"))
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(fn)(*args))]
    for i, w in enumerate(want):
        got = unpack_like(np.asarray(xla_results[f"{name}/out{i}"]), w)
        np.testing.assert_allclose(got, w, rtol=tolerance, atol=tolerance,
                                   err_msg=f"{name} output {i}")
