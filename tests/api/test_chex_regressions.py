"""What chex's own test suite (chex/_src/*_test.py) needs of jaxlite, with JAX 0.10.2's answers.

Expected values were printed by real JAX 0.10.2:
`/tmp/jaxvenv/bin/python record.py`, the script kept in the comment of each test (the
calls in each test are the script's calls, on `jax` instead of `jaxlite`).
"""
from __future__ import annotations

import functools
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.test_util import check_grads, check_jvp, check_vjp

ROOT = Path(__file__).resolve().parents[2]
f32 = np.float32


def _f(a, b=2, *, c=3):
    return a


def test_jitted_function_reports_the_wrapped_signature():
    # chex's fake_pmap calls inspect.signature(fn, follow_wrapped=False) on jitted functions.
    # JAX: (a, b=2, *, c=3) / (b=2, *, c=3) / ValueError "no signature found for builtin".
    sig = inspect.signature(jax.jit(_f, static_argnums=1), follow_wrapped=False)
    assert str(sig) == "(a, b=2, *, c=3)"
    partial_sig = inspect.signature(jax.jit(functools.partial(_f, 1)), follow_wrapped=False)
    assert str(partial_sig) == "(b=2, *, c=3)"
    with pytest.raises(ValueError, match="no signature found for builtin"):
        inspect.signature(jax.jit(max), follow_wrapped=False)


def test_jitted_function_type_and_repr_are_jax_s():
    # chex's is_traceable (behind assert_max_traces' "change wrappers ordering" error)
    # recognizes a jitted function by its type's name. JAX: PjitFunction, repr below.
    jitted = jax.jit(_f)
    assert type(jitted).__name__ == "PjitFunction"
    assert repr(jitted) == f"<PjitFunction of {_f!r}>"


def test_private_xla_bridge_is_an_attribute_after_import_jax(tmp_path):
    # chex's set_n_cpu_devices reads jax._src.xla_bridge._backends after a bare
    # `import jax`; JAX: hasattr(jax._src, "xla_bridge") is True.
    for name in ("jax", "jaxlib"):  # a real jax on the path must never be imported
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise RuntimeError('real jax')\n")
    code = textwrap.dedent("""
        import jaxlite
        jaxlite.install_as_jax()
        import jax
        print(hasattr(jax._src, "xla_bridge"), type(jax._src.xla_bridge._backends).__name__,
              hasattr(jax._src, "not_a_module"))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "dict", "False"]


def test_check_jvp_draws_jax_s_directions():
    # JAX: the tangent check_jvp passes for a float32 (3,) argument.
    seen = []

    def spy(primals, tangents):
        seen.append(np.asarray(tangents[0]).tolist())
        return jax.jvp(jnp.sin, primals, tangents)
    check_jvp(jnp.sin, spy, (np.zeros(3, f32),))
    assert seen == [[1.764052391052246, 0.40015721321105957, 0.978738009929657]]


def _hard(lr, x):
    # chex's NumericalGradsAssertTest.test_hard function.
    g = jax.grad(lambda y: jnp.sum((y - 1.0) ** 2))
    for _ in range(10):
        x1 = x - lr * g(x) + 100 * lr ** 2
        x2 = x - lr * g(x) - 100 * lr ** 2
        x = jax.lax.select((x > 3.).any(), x1, x2 + lr)
    return jnp.sum((x - 1.0) ** 2)


def test_check_grads_takes_jax_s_step_and_tolerances():
    # JAX: _hard(lr, x) = 630.6219482421875 and check_grads passes, with atol=0.01 and with
    # the defaults. On chex's random points (its test_hard loop, shape [1], seed 24) all ten
    # checks pass; with a 1e-2 step (jaxlite's former float32 default) the first fails.
    lr, x = np.array([0.3], f32), np.array([0.2, 0.5, 0.9], f32)
    np.testing.assert_allclose(float(_hard(lr, x)), 630.6219482421875, rtol=1e-6)
    check_grads(_hard, (lr, x), order=1, atol=0.01)
    check_grads(_hard, (lr, x), order=1)
    key = jax.random.PRNGKey(24)
    for i in range(10):
        key, k1, k2 = jax.random.split(key, 3)
        point = (jax.random.uniform(k1, (1,)), jax.random.uniform(k2, (1,)))
        check_grads(_hard, point, order=1, atol=0.01)
        if i == 0:
            with pytest.raises(AssertionError, match="JVP tangent"):
                check_grads(_hard, point, order=1, atol=0.01, eps=1e-2)


def test_check_grads_failures_name_the_check_as_jax_does():
    # JAX: "Not equal to tolerance rtol=0.004, atol=0.004" then "tangent" for a jvp off by
    # 1.5 (two elements: tolerance 2e-3 times the size); "mine cotangent projection" with
    # rtol=0.002 for a vjp of the wrong sign.
    x = np.array([0.3, 0.7], f32)
    with pytest.raises(AssertionError, match=r"(?s)rtol=0.004, atol=0.004.*\ntangent"):
        check_jvp(jnp.sin, lambda p, t: (jnp.sin(*p), 1.5 * jnp.cos(*p) * t[0]), (x,))
    with pytest.raises(AssertionError,
                       match=r"(?s)rtol=0.002, atol=0.002.*\nmine cotangent projection"):
        check_vjp(jnp.sin, lambda v: (jnp.sin(v), lambda ct: (-jnp.cos(v) * ct,)), (x,),
                  err_msg="mine")


def test_check_grads_order_two_agrees_with_jax_on_pass_and_fail():
    # JAX (x64 off): the Python scalar passes; the (3,) array fails "VJP of VJP cotangent
    # projection" (float32 finite differences of the second derivative).
    f = lambda v: jnp.exp(jnp.sin(v * v))  # noqa: E731
    check_grads(f, (0.7,), order=2)
    with pytest.raises(AssertionError, match="VJP of VJP cotangent projection"):
        check_grads(f, (np.array([0.7, 1.3, -2.1]),), order=2)


def test_interp_derivative_at_a_single_point_is_finite():
    # Found by JAX's check_grads, which (unlike jaxlite's former one) fails on NaN. JAX
    # (x64): vjp of jnp.interp at (0.3, [0.5], [2.0]) along 1.0 gives 0., [0.], [1.].
    with jax.enable_x64(True):
        pullback = jax.vjp(jnp.interp, np.array(0.3), np.array([0.5]), np.array([2.0]))[1]
        dx, dxp, dfp = pullback(1.0)
        np.testing.assert_array_equal(dx, 0.0)
        np.testing.assert_array_equal(dxp, [0.0])
        np.testing.assert_array_equal(dfp, [1.0])
