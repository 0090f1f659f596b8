"""Derivatives of cond/switch/scan/while/custom_jvp/custom_vjp/checkpoint with collectives
inside, under vmap with an axis name, against JAX 0.10.2 (jax_linearize_records.npz, made by
record_jax_linearize.py from linearize_cases.py).

The cond cases pin a silent disagreement that was fixed: under vmap(grad(f)) with a batched
predicate, every branch's linear part runs for every member, so a collective there reads the
branch's residual slots for members that took another branch. JAX lets the branches share
slots by type; jaxlite gave each branch its own zero-filled slots (0.1875 instead of JAX's 0.5
for member 0 of `cond_psum_pmean`).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.core.avals import ShapedArray
from jaxlite.lax.control_flow import merge_residuals

sys.path.insert(0, str(Path(__file__).parent))
from linearize_cases import KNOWN_DIFFERENT, programs  # noqa: E402
from program_records import check_program  # noqa: E402

RECORDS = np.load(Path(__file__).parent / "jax_linearize_records.npz")
PROGRAMS = programs(jax)


def _check_against_jax(name):
    # float32: a few dozen operations per value, each within an ulp or so.
    check_program(jax, RECORDS, name, PROGRAMS[name](), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - KNOWN_DIFFERENT))
def test_matches_jax(name):
    _check_against_jax(name)


@pytest.mark.parametrize("name", sorted(KNOWN_DIFFERENT))
@pytest.mark.xfail(strict=True, reason="a jvp rule saves other residuals than JAX's, which "
                                       "changes what a cond's shared residual slots hold")
def test_known_different(name):
    _check_against_jax(name)


def test_example_from_the_report():
    v = jnp.arange(4.0) / 3 - 0.25
    f = lambda u: jax.lax.cond(u > 0, lambda u: jax.lax.psum(u * u, "i"),  # noqa: E731
                               lambda u: jax.lax.pmean(u, "i") * u, u)
    out = jax.vmap(jax.grad(f), axis_name="i")(v)
    # JAX 0.10.2: [0.5, 0.66666675, 3.3333335, 6.0]
    np.testing.assert_allclose(out, [0.5, 0.66666675, 3.3333335, 6.0], rtol=1e-6)


def test_merge_residuals_shares_slots_by_type():
    f32, i32 = np.dtype("float32"), np.dtype("int32")
    s, v3, k = ShapedArray((), f32), ShapedArray((3,), f32), ShapedArray((), i32)
    weak = ShapedArray((), f32, weak_type=True)
    slots, per_branch = merge_residuals([[s, v3, s], [k, s], [weak, v3, v3, s]])
    # The k-th residual of a type takes the k-th slot of that type, first come first served.
    assert per_branch == [[0, 1, 2], [3, 0], [4, 1, 5, 0]]
    assert [(a.shape, a.dtype, a.weak_type) for a in slots] == [
        ((), f32, False), ((3,), f32, False), ((), f32, False), ((), i32, False),
        ((), f32, True), ((3,), f32, False)]


def test_scalar_constants_are_not_residuals():
    # `x * 2.0` broadcasts 2.0; the linear call recomputes it instead of taking it as a
    # residual (JAX keeps it literal), so the only residual is cos(x).
    jaxpr = jax.make_jaxpr(lambda x: jax.linearize(
        jax.jit(lambda x: jnp.sin(x) * 2.0), x)[1](x))(jnp.ones(3))
    calls = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "jit"]
    known, linear = calls
    assert len(known.outvars) == 2  # the output and one residual
    assert len(linear.invars) == 2  # that residual and the tangent
