"""jax.ad_checkpoint: policies decide what reverse mode saves; checkpoint_name; and
print_saved_residuals in JAX's format and order (the shared case of extend_cases.py against
JAX 0.10.2's output, without JAX's source locations, which jaxlite does not track). Also
jax.linear_transpose and jax.fwd_and_bwd."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.ad_checkpoint import Offloadable, Recompute, Saveable, checkpoint_name

import recorded

cp = jax.checkpoint_policies


def f(W1, W2, x):
    h = jnp.sin(jnp.dot(W1, x))
    h = checkpoint_name(h, "h")
    return jnp.sum(jnp.sin(jnp.dot(W2, h)))


POLICIES = {
    "none": None, "plain_checkpoint": "plain", "dots_saveable": cp.dots_saveable,
    "nothing_saveable": cp.nothing_saveable, "everything_saveable": cp.everything_saveable,
    "save_only_h": cp.save_only_these_names("h"),
    "dots_no_batch": cp.dots_with_no_batch_dims_saveable,
    "names_but_h": cp.save_any_names_but_these("h"),
    "both": cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("h")),
    "offload_dots": cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
}


def _with(policy):
    if policy is None:
        return f
    return jax.checkpoint(f) if policy == "plain" else jax.checkpoint(f, policy=policy)


def test_saved_residuals_as_in_jax():
    recorded.check("saved_residuals", allowed={
        # JAX moves offloaded values to host memory (`f32<host>[4] output of device_put`);
        # jaxlite has one memory and keeps them as dots_saveable keeps them.
        "saved_residuals.offload_dots[3]": "one memory",
        "saved_residuals.offload_dots[4]": "one memory"})
    got = recorded.extend_cases.saved_residuals(recorded.API)
    assert got["offload_dots"] == got["dots_no_batch"]


@pytest.mark.parametrize("key", sorted(POLICIES))
def test_policies_do_not_change_derivatives(key):
    rng = np.random.default_rng(0)
    W1, W2 = rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=(2, 4)).astype(np.float32)
    x = rng.normal(size=3).astype(np.float32)
    g = _with(POLICIES[key])
    want = jax.grad(f, argnums=(0, 1, 2))(W1, W2, x)
    for got in (jax.grad(g, argnums=(0, 1, 2))(W1, W2, x),):
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    hess = jax.hessian(lambda x: g(W1, W2, x))(x)
    np.testing.assert_allclose(hess, jax.hessian(lambda x: f(W1, W2, x))(x), rtol=1e-5,
                               atol=1e-6)


def test_policy_under_jit_vmap_and_integer_outputs():
    def k(x):
        y = jnp.dot(x, x)
        return y * jnp.argmax(x), jnp.argmax(x)
    g = jax.checkpoint(k, policy=cp.dots_saveable)
    xs = np.float32([[1., 3.], [2., -1.]])
    got = jax.jit(jax.vmap(jax.grad(lambda x: g(x)[0])))(xs)
    want = jax.vmap(jax.grad(lambda x: k(x)[0]))(xs)
    np.testing.assert_allclose(got, want)


def test_decisions_and_policy_errors():
    assert repr(Saveable) == "Saveable" and repr(Recompute) == "Recompute"
    assert Offloadable("device", "pinned_host").dst == "pinned_host"
    bad = jax.checkpoint(f, policy=lambda *a, **k: "yes")
    with pytest.raises(TypeError, match="policy returned"):
        jax.grad(bad)(jnp.ones((4, 3)), jnp.ones((2, 4)), jnp.ones(3))
    both = cp.save_from_both_policies(cp.dots_saveable,
                                      cp.save_and_offload_only_these_names(
                                          names_which_can_be_saved=["a"],
                                          names_which_can_be_offloaded=["b"],
                                          offload_src="device", offload_dst="pinned_host"))
    with pytest.raises(ValueError, match="should be a boolean"):
        jax.grad(jax.checkpoint(f, policy=both))(jnp.ones((4, 3)), jnp.ones((2, 4)),
                                                 jnp.ones(3))


def test_checkpoint_name_is_the_identity():
    x = np.float32([1., 2.])
    assert str(jax.make_jaxpr(lambda x: checkpoint_name(x, "a"))(1.)) == \
        "{ lambda ; a:f32[]. let b:f32[] = name[name=a] a in (b,) }"
    np.testing.assert_allclose(jax.jit(lambda x: checkpoint_name(x * 2, "y"))(x), x * 2)
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(checkpoint_name(x, "y") ** 2))(x),
                               2 * x)
    np.testing.assert_allclose(jax.vmap(lambda x: checkpoint_name(x, "y"))(x), x)
    tree = checkpoint_name({"a": x, "b": (x,)}, "t")
    np.testing.assert_allclose(tree["b"][0], x)


def test_linear_transpose():
    A = np.arange(6., dtype=np.float32).reshape(2, 3)
    t = jax.linear_transpose(lambda x: (A @ x, 2. * x[0]), jax.ShapeDtypeStruct((3,), np.float32))
    (ct,) = t((np.ones(2, np.float32), 3.))
    np.testing.assert_allclose(ct, A.T @ np.ones(2) + np.array([6., 0., 0.]))
    (ct,) = jax.jit(t)((np.ones(2, np.float32), 3.))
    np.testing.assert_allclose(ct, [9., 5., 7.])
    cx, cy = jax.linear_transpose(lambda x, y: x * 2. + y, 1., 2.)(1.)
    assert (float(cx), float(cy)) == (2.0, 1.0) and cx.weak_type and cy.weak_type
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        jax.linear_transpose(lambda x: x.astype(jnp.float32), 1)
    with pytest.raises(TypeError, match="cotangent type does not match"):
        jax.linear_transpose(lambda x: x, 1)(1.)
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        t(np.ones(2, np.float32))


def test_fwd_and_bwd():
    x = W = ct = jnp.ones((4, 4)) * 0.5
    fun = lambda x, W: jnp.sin(x @ W)  # noqa: E731
    fwd, bwd = jax.fwd_and_bwd(fun, argnums=(0, 1))
    y, res = fwd(x, W)
    _, f_vjp = jax.vjp(fun, x, W)
    for got, want in zip(bwd(res, ct), f_vjp(ct)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    fwd1, bwd1 = jax.fwd_and_bwd(lambda x, W: (fun(x, W), x.sum()), argnums=1, has_aux=True,
                                 jitted=False)
    y, res, aux = fwd1(x, W)
    assert float(aux) == 8.0
    np.testing.assert_allclose(bwd1(res, ct), f_vjp(ct)[1], rtol=1e-6)
