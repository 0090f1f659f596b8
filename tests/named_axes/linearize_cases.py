"""Derivatives of control flow and higher-order functions with collectives inside, under a
named vmap: shared by the JAX recorder (record_jax_linearize.py) and the tests.

Under `vmap(grad(f), axis_name="i")` with a batched predicate, every branch of a cond runs
for every member, and a collective in a branch's linear part mixes members that took other
branches: what it reads there is whatever the branch's residual slot holds (JAX merges the
branches' residuals into slots shared by type). These programs pin JAX 0.10.2's numbers.

`KNOWN_DIFFERENT` lists the programs where jaxlite's numbers still differ: there a branch
saves other residuals than JAX's, which changes what the shared slots hold (reduce_prod's jvp
differs from JAX's; in softmax JAX divides by a [1]-shaped sum that its `div` broadcasts
implicitly, where jaxlite broadcasts it explicitly and saves a [3]-shaped residual).
"""
from __future__ import annotations

from typing import Any, Callable


KNOWN_DIFFERENT = {"cond_reduce_prod", "cond_softmax"}


def programs(jax: Any) -> dict[str, Callable[[], Any]]:
    """Programs for `jax` = JAX or jaxlite; each returns a pytree of arrays."""
    lax, jnp = jax.lax, jax.numpy
    V = lambda f, **kw: jax.vmap(f, axis_name="i", **kw)  # noqa: E731
    v = jnp.arange(4.0) / 3 - 0.25
    m = jnp.arange(12.0).reshape(4, 3) / 5 - 1.0
    idx = jnp.array([2, 0, 1, 2])

    def cond_psum_pmean(u):
        return lax.cond(u > 0, lambda u: lax.psum(u * u, "i"),
                        lambda u: lax.pmean(u, "i") * u, u)

    def cond_sin(u):
        return lax.cond(u > 0, lambda u: lax.psum(jnp.sin(u), "i") * u,
                        lambda u: u * lax.pmean(u * u, "i"), u)

    def cond_two_operands(u, w):
        return lax.cond(u > 0, lambda u, w: lax.psum(u * w, "i").sum(),
                        lambda u, w: (jnp.exp(w) * lax.pmean(u, "i")).sum(), u, w)

    def cond_vector(w):
        return lax.cond(w[0] > -0.5, lambda w: (lax.psum(w * w, "i") * w).sum(),
                        lambda w: jnp.cos(lax.psum(w, "i")).sum() * w[1], w)

    def cond_gather(u):
        return lax.cond(u < 0.3, lambda u: (lax.all_gather(u * u, "i") * v).sum(),
                        lambda u: lax.ppermute(jnp.sin(u), "i", [(k, (k + 1) % 4)
                                                                for k in range(4)]) * u, u)

    def cond_nested(u):
        inner = lambda u: lax.cond(u < 0.5, lambda u: lax.pmean(jnp.exp(u), "i") * u,
                                   lambda u: lax.psum(u, "i") * jnp.sin(u), u)
        return lax.cond(u > 0, inner, lambda u: lax.psum(u * u * u, "i"), u)

    def cond_indexing(w):
        return lax.cond(w.sum() > 0, lambda w: lax.psum(w[jnp.argmax(w)] ** 2, "i"),
                        lambda w: lax.pmean(jnp.tanh(w), "i")[jnp.argmin(w)] * w[0], w)

    def cond_scan_inside(u):
        body = lambda c, x: (c * lax.psum(jnp.sin(c * x), "i"), c)
        return lax.cond(u > 0, lambda u: lax.scan(body, u, jnp.arange(3.0))[1].sum(),
                        lambda u: lax.pmean(u, "i") * jnp.cos(u), u)

    def cond_int_operand(k, u):
        return lax.cond(u > 0, lambda k, u: lax.psum(u * k, "i") * u,
                        lambda k, u: lax.pmean(jnp.sin(u) * (k + 1), "i") * u, k, u)

    def cond_outputs(u):
        a, b = lax.cond(u > 0, lambda u: (lax.psum(u * u, "i"), jnp.sin(u) * 3),
                        lambda u: (u * 2, lax.pmean(jnp.exp(u), "i") * u), u)
        return a * b

    def cond_matmul(w):
        mat = jnp.arange(9.0).reshape(3, 3) / 7 - 0.4
        return lax.cond(w[0] > -0.5,
                        lambda w: (lax.psum(mat @ w, "i") * jnp.tanh(w)).sum(),
                        lambda w: lax.pmean(jnp.exp(w) / (1 + w * w), "i") @ mat @ w, w)

    def cond_elementwise(u):
        return lax.cond(u > 0, lambda u: lax.psum(jnp.sqrt(u * u + 1) * jnp.log1p(u * u), "i"),
                        lambda u: lax.pmean(u / (2 - u), "i") * jnp.sinh(u), u)

    def cond_where_softmax(w):
        return lax.cond(w[1] > 0, lambda w: (lax.psum(jnp.exp(w) / 3, "i") * w).sum(),
                        lambda w: (lax.pmean(jnp.where(w > 0, w * w, -w), "i")
                                   * jnp.maximum(w, 0.1)).sum(), w)

    def cond_softmax(w):
        return lax.cond(w[1] > 0, lambda w: (lax.psum(jax.nn.softmax(w), "i") * w).sum(),
                        lambda w: (lax.pmean(jnp.where(w > 0, w * w, -w), "i")
                                   * jnp.maximum(w, 0.1)).sum(), w)

    def cond_logsumexp(w):
        return lax.cond(w[1] > 0, lambda w: (lax.psum(w * w, "i") * w).sum(),
                        lambda w: lax.pmean(jax.nn.logsumexp(w), "i") * w[0], w)

    def cond_reduce_prod(w):
        return lax.cond(w.sum() > 0, lambda w: lax.psum(w.max() * w.sum(), "i"),
                        lambda w: lax.pmean(jnp.sqrt((w * w).sum()), "i") * w.prod(), w)

    def switch3(k, u):
        return lax.switch(k, [lambda u: lax.psum(u ** 3, "i"),
                              lambda u: jnp.sin(u) * lax.pmean(u, "i"),
                              lambda u: lax.psum(jnp.exp(u), "i") * u * u], u)

    def scan_cond(u):
        def body(c, x):
            c = lax.cond(x * c > 0.05, lambda c: lax.psum(c * x, "i"),
                         lambda c: jnp.sin(c) * lax.pmean(c, "i"), c)
            return c, c
        c, ys = lax.scan(body, u, jnp.array([0.5, -1.0, 2.0]))
        return c + ys.sum()

    def scan_psum(u):
        return lax.scan(lambda c, x: (jnp.sin(c) * lax.psum(c * x, "i"), None), u,
                        jnp.array([0.5, -1.0, 2.0]))[0]

    def fori_psum(u):
        return lax.fori_loop(0, 3, lambda k, c: c * lax.pmean(jnp.cos(c), "i") + k, u)

    def while_psum(u):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (
            c[0] + 1, c[1] * lax.psum(jnp.sin(c[1]), "i")), (0, u))[1]

    def while_batched_pred(u):
        return lax.while_loop(lambda c: c[1] < 2.0, lambda c: (
            c[0] + 1, c[1] + lax.pmean(c[1] * c[1], "i") + 0.5), (0, u))[1]

    @jax.custom_jvp
    def spread(u):
        return lax.psum(jnp.sin(u), "i")

    @spread.defjvp
    def spread_jvp(primals, tangents):
        (u,), (du,) = primals, tangents
        return spread(u), lax.psum(jnp.cos(u) * du * 2.0, "i") * u

    @jax.custom_vjp
    def mix(u):
        return lax.pmean(u * u, "i")

    def mix_fwd(u):
        return mix(u), (u, lax.psum(u, "i"))

    def mix_bwd(res, g):
        u, total = res
        return (lax.psum(g * u, "i") + g * total,)

    mix.defvjp(mix_fwd, mix_bwd)

    def cond_custom(u):
        return lax.cond(u > 0, lambda u: spread(u) * u, lambda u: mix(u) + u, u)

    def checkpointed(u):
        return jax.checkpoint(lambda u: lax.psum(jnp.sin(u), "i") * jnp.cos(u))(u)

    def checkpoint_cond(u):
        return jax.checkpoint(cond_sin)(u)

    def checkpoint_policy(u):
        policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable
        return jax.checkpoint(lambda u: lax.pmean(jnp.sin(u) * u, "i") * u,
                              policy=policy)(u)

    def jit_cond(u):
        return jax.jit(cond_psum_pmean)(u)

    return {
        "cond_psum_pmean": lambda: V(jax.grad(cond_psum_pmean))(v),
        "cond_sin": lambda: V(jax.grad(cond_sin))(v),
        "cond_two_operands": lambda: V(jax.grad(cond_two_operands, argnums=(0, 1)))(v, m),
        "cond_vector": lambda: V(jax.grad(cond_vector))(m),
        "cond_gather": lambda: V(jax.grad(cond_gather))(v),
        "cond_unbatched_pred": lambda: V(jax.grad(
            lambda u: lax.cond(v[1] > 0, lambda u: lax.psum(u * u, "i"),
                               lambda u: lax.pmean(u, "i") * u, u)))(v),
        "cond_jit": lambda: V(jax.grad(jit_cond))(v),
        "cond_jit_outside": lambda: jax.jit(V(jax.grad(cond_psum_pmean)))(v),
        "cond_value_and_grad": lambda: V(jax.value_and_grad(cond_sin))(v),
        "cond_vjp": lambda: V(lambda u: jax.vjp(cond_sin, u)[1](2.0))(v),
        "cond_linearize": lambda: V(lambda u: jax.linearize(cond_sin, u)[1](1.5))(v),
        "cond_jvp": lambda: V(lambda u: jax.jvp(cond_sin, (u,), (1.5,)))(v),
        "cond_nested": lambda: V(jax.grad(cond_nested))(v),
        "cond_indexing": lambda: V(jax.grad(cond_indexing))(m),
        "cond_scan_inside": lambda: V(jax.grad(cond_scan_inside))(v),
        "cond_int_operand": lambda: V(jax.grad(cond_int_operand, argnums=1))(idx, v),
        "cond_outputs": lambda: V(jax.grad(cond_outputs))(v),
        "cond_matmul": lambda: V(jax.grad(cond_matmul))(m),
        "cond_elementwise": lambda: V(jax.grad(cond_elementwise))(v),
        "cond_where_softmax": lambda: V(jax.grad(cond_where_softmax))(m),
        "cond_reduce_prod": lambda: V(jax.grad(cond_reduce_prod))(m),
        "cond_softmax": lambda: V(jax.grad(cond_softmax))(m),
        "cond_logsumexp": lambda: V(jax.grad(cond_logsumexp))(m),
        "switch3": lambda: V(jax.grad(switch3, argnums=1))(idx, v),
        "scan_cond": lambda: V(jax.grad(scan_cond))(v),
        "scan_psum": lambda: V(jax.grad(scan_psum))(v),
        "fori_psum": lambda: V(jax.grad(fori_psum))(v),
        "while_jvp": lambda: V(lambda u: jax.jvp(while_psum, (u,), (1.0,)))(v),
        "while_linearize": lambda: V(lambda u: jax.linearize(while_psum, u)[1](2.0))(v),
        "while_batched_pred_jvp": lambda: V(lambda u: jax.jvp(
            while_batched_pred, (u,), (1.0,)))(v),
        "custom_jvp": lambda: V(jax.grad(spread))(v),
        "custom_vjp": lambda: V(jax.grad(mix))(v),
        "cond_custom": lambda: V(jax.grad(cond_custom))(v),
        "checkpoint": lambda: V(jax.grad(checkpointed))(v),
        "checkpoint_cond": lambda: V(jax.grad(checkpoint_cond))(v),
        "checkpoint_policy": lambda: V(jax.grad(checkpoint_policy))(v),
        "grad_of_vmap_cond": lambda: jax.grad(lambda u: V(cond_sin)(u).sum())(v),
    }
