"""The programs of the extension-API tests, written once for JAX and jaxlite.

`run_all(api)` runs each case with the modules in `api` (a namespace holding `jax`, `jnp`,
`api_util`, `checkpoint_name`, `print_saved_residuals`, `custom_vmap`, `sequential_vmap`,
`SymbolicZero`, `linear_call`) and returns what it observed: what custom rules see, values,
saved residuals. `record_jax_extend.py` runs them on JAX 0.10.2 and stores the result in
tests/data/extend/jax_expected.json; the tests run them on jaxlite and compare.
"""
from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from types import SimpleNamespace
from typing import Any

import numpy as np

def kind(api: Any, t: Any) -> str:
    return "SymbolicZero" if isinstance(t, api.SymbolicZero) else "array"


def symbolic_zero_jvp(api: Any) -> dict[str, Any]:
    jax = api.jax
    seen = []

    @jax.custom_jvp
    def f(x, y):
        return x * y, x + y

    def f_jvp(primals, tangents):
        seen.append([kind(api, t) for t in tangents])
        x, y = primals
        tx, ty = tangents
        out = f(x, y)
        if isinstance(tx, api.SymbolicZero):
            return out, (api.SymbolicZero(tx.aval), ty)
        return out, (tx * y, tx)
    f.defjvp(f_jvp, symbolic_zeros=True)
    results = {
        "jvp_y": [float(v) for v in jax.jvp(lambda y: f(2., y), (3.,), (1.,))[1]],
        "jvp_x": [float(v) for v in jax.jvp(lambda x: f(x, 3.), (2.,), (1.,))[1]],
        "grad_y": float(jax.grad(lambda y: f(2., y)[1])(3.)),
        "grad_x": float(jax.grad(lambda x: f(x, 3.)[0] + f(x, 3.)[1])(2.)),
    }
    results["seen"] = seen
    return results


def symbolic_zero_vjp(api: Any) -> dict[str, Any]:
    jax, jnp = api.jax, api.jnp
    seen = []

    @jax.custom_vjp
    def g(x, y, n):
        return x * y

    def g_fwd(x, y, n):
        seen.append(["fwd", [type(a).__name__ for a in (x, y, n)],
                     [a.perturbed for a in (x, y, n)]])
        return g(x.value, y.value, n.value), (x.value, y.value)

    def g_bwd(res, ct):
        seen.append(["bwd", kind(api, ct)])
        return ct * res[1], api.SymbolicZero(jax.core.ShapedArray((), jnp.float32)), None
    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
    return {
        "grad_x": float(jax.grad(g)(2., 3., 1)),
        "grad_xy": [float(v) for v in jax.grad(g, argnums=(0, 1))(2., 3., 1)],
        "unused_output": float(jax.grad(lambda x: g(x, 3., 1) * 0. + x)(2.)),
        "seen": seen,
    }


def saved_residuals(api: Any) -> dict[str, Any]:
    jax, jnp = api.jax, api.jnp

    def f(W1, W2, x):
        h = jnp.sin(jnp.dot(W1, x))
        h = api.checkpoint_name(h, "h")
        return jnp.sum(jnp.sin(jnp.dot(W2, h)))
    W1, W2, x = jnp.ones((4, 3)), jnp.ones((2, 4)), jnp.ones(3)
    cp = jax.checkpoint_policies
    policies = {
        "none": None, "plain_checkpoint": "plain", "dots_saveable": cp.dots_saveable,
        "nothing_saveable": cp.nothing_saveable,
        "everything_saveable": cp.everything_saveable,
        "save_only_h": cp.save_only_these_names("h"),
        "dots_no_batch": cp.dots_with_no_batch_dims_saveable,
        "names_but_h": cp.save_any_names_but_these("h"),
        "both": cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("h")),
        "offload_dots": cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
    }
    out = {}
    for key, pol in policies.items():
        g = f if pol is None else jax.checkpoint(f) if pol == "plain" else \
            jax.checkpoint(f, policy=pol)
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            api.print_saved_residuals(g, W1, W2, x)
        out[key] = [re.sub(r" from /.*$", "", line) for line in buffer.getvalue().splitlines()]
    return out


def custom_vmap_calls(api: Any) -> dict[str, Any]:
    jax, jnp = api.jax, api.jnp
    calls = []

    @api.custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append([axis_size, list(in_batched)])
        xb, yb = in_batched
        return jnp.sin(x) * y + 1.0, xb or yb
    x = jnp.arange(3.)
    results = {
        "vmap": np.asarray(jax.vmap(f, in_axes=(0, None))(x, 2.)).tolist(),
        "vmap_both": np.asarray(jax.vmap(f)(x, x)).tolist(),
        "jvp": [float(v) for v in jax.jvp(f, (1., 2.), (1., 0.))],
        "vmap_jvp": [np.asarray(v).tolist() for v in
                     jax.vmap(lambda x: jax.jvp(f, (x, 2.), (1., 0.)))(x)],
        "nested": np.asarray(jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(0, None))(
            jnp.ones((2, 3)), 2.)).tolist(),
    }
    results["calls"] = calls
    seq_shapes = []

    @api.sequential_vmap
    def g(x):
        seq_shapes.append(list(x.shape))
        return x.sum() * 2
    results["sequential"] = np.asarray(jax.vmap(g)(jnp.ones((3, 4)))).tolist()
    results["sequential_shapes"] = seq_shapes
    return results


def api_util_results(api: Any) -> dict[str, Any]:
    jax = api.jax
    tree = jax.tree.structure(((1, {"a": 2}), {"k": 3}))
    return {
        "donation_vector": list(api.api_util.donation_vector((0,), ("k",), tree, True)),
        "rebase": list(api.api_util.rebase_donate_argnums((1, 3), (0,))),
        "flatten_axes": api.api_util.flatten_axes(
            "in_axes", jax.tree.structure(((1, {"a": 2}), 3)), ((0, {"a": None}), 1)),
        "flatten_axes_prefix": api.api_util.flatten_axes("in_axes",
                                                     jax.tree.structure(((1, {"a": 2}),)), (0,)),
    }


def linear_call_results(api: Any) -> dict[str, Any]:
    jax = api.jax

    def f(x, denom):
        return x + api.linear_call(lambda r, x: x / r, lambda r, t: t / r, denom, x)

    def g(x):
        return api.linear_call(lambda _, x: x, lambda _, t: 7., (), x)
    return {
        "value": float(f(6., 2.)),
        "jvp": float(jax.jvp(lambda x: f(x, 2.), (6.,), (1.,))[1]),
        "grad": float(jax.grad(f)(6., 2.)),
        "g_grad": float(jax.grad(g)(1.)),
        "g_jvp": float(jax.jvp(g, (1.,), (1.,))[1]),
        "g_product_grad": float(jax.grad(lambda x: g(x) * x)(2.)),
    }


CASES = {
    "symbolic_zero_jvp": symbolic_zero_jvp, "symbolic_zero_vjp": symbolic_zero_vjp,
    "saved_residuals": saved_residuals, "custom_vmap": custom_vmap_calls,
    "api_util": api_util_results, "linear_call": linear_call_results,
}


def run_all(api: SimpleNamespace) -> dict[str, Any]:
    return {name: case(api) for name, case in CASES.items()}
