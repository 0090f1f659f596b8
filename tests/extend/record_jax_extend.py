"""Record what real JAX 0.10.2 does for the extension-API tests (tests/extend/).

Run with JAX installed (not jaxlite):

    /tmp/jaxvenv/bin/python tests/extend/record_jax_extend.py

It writes tests/data/extend/jax_expected.json: what custom rules see (symbolic zeros,
perturbed flags), saved residuals per checkpoint policy (without JAX's source locations,
which jaxlite does not track), custom_vmap rule calls, and api_util results.
"""
from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import api_util
from jax.ad_checkpoint import checkpoint_name, print_saved_residuals
from jax.custom_batching import custom_vmap, sequential_vmap
from jax.custom_derivatives import CustomVJPPrimal, SymbolicZero, linear_call

OUT = Path(__file__).resolve().parents[1] / "data" / "extend" / "jax_expected.json"


def kind(t):
    return "SymbolicZero" if isinstance(t, SymbolicZero) else "array"


def symbolic_zero_jvp():
    seen = []

    @jax.custom_jvp
    def f(x, y):
        return x * y, x + y

    def f_jvp(primals, tangents):
        seen.append([kind(t) for t in tangents])
        x, y = primals
        tx, ty = tangents
        out = f(x, y)
        if isinstance(tx, SymbolicZero):
            return out, (SymbolicZero(tx.aval), ty)
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


def symbolic_zero_vjp():
    seen = []

    @jax.custom_vjp
    def g(x, y, n):
        return x * y

    def g_fwd(x, y, n):
        seen.append(["fwd", [type(a).__name__ for a in (x, y, n)],
                     [a.perturbed for a in (x, y, n)]])
        return g(x.value, y.value, n.value), (x.value, y.value)

    def g_bwd(res, ct):
        seen.append(["bwd", kind(ct)])
        return ct * res[1], SymbolicZero(jax.core.ShapedArray((), jnp.float32)), None
    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
    return {
        "grad_x": float(jax.grad(g)(2., 3., 1)),
        "grad_xy": [float(v) for v in jax.grad(g, argnums=(0, 1))(2., 3., 1)],
        "unused_output": float(jax.grad(lambda x: g(x, 3., 1) * 0. + x)(2.)),
        "seen": seen,
    }


def saved_residuals():
    def f(W1, W2, x):
        h = jnp.sin(jnp.dot(W1, x))
        h = checkpoint_name(h, "h")
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
            print_saved_residuals(g, W1, W2, x)
        out[key] = [re.sub(r" from /.*$", "", line) for line in buffer.getvalue().splitlines()]
    return out


def custom_vmap_calls():
    calls = []

    @custom_vmap
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

    @sequential_vmap
    def g(x):
        seq_shapes.append(list(x.shape))
        return x.sum() * 2
    results["sequential"] = np.asarray(jax.vmap(g)(jnp.ones((3, 4)))).tolist()
    results["sequential_shapes"] = seq_shapes
    return results


def api_util_results():
    tree = jax.tree.structure(((1, {"a": 2}), {"k": 3}))
    return {
        "donation_vector": list(api_util.donation_vector((0,), ("k",), tree, True)),
        "rebase": list(api_util.rebase_donate_argnums((1, 3), (0,))),
        "flatten_axes": api_util.flatten_axes("in_axes", jax.tree.structure(((1, {"a": 2}), 3)),
                                              ((0, {"a": None}), 1)),
        "flatten_axes_prefix": api_util.flatten_axes("in_axes",
                                                     jax.tree.structure(((1, {"a": 2}),)), (0,)),
    }


def linear_call_results():
    def f(x, denom):
        return x + linear_call(lambda r, x: x / r, lambda r, t: t / r, denom, x)

    def g(x):
        return linear_call(lambda _, x: x, lambda _, t: 7., (), x)
    return {
        "value": float(f(6., 2.)),
        "jvp": float(jax.jvp(lambda x: f(x, 2.), (6.,), (1.,))[1]),
        "grad": float(jax.grad(f)(6., 2.)),
        "g_grad": float(jax.grad(g)(1.)),
        "g_jvp": float(jax.jvp(g, (1.,), (1.,))[1]),
        "g_product_grad": float(jax.grad(lambda x: g(x) * x)(2.)),
    }


def main():
    expected = {
        "symbolic_zero_jvp": symbolic_zero_jvp(),
        "symbolic_zero_vjp": symbolic_zero_vjp(),
        "saved_residuals": saved_residuals(),
        "custom_vmap": custom_vmap_calls(),
        "api_util": api_util_results(),
        "linear_call": linear_call_results(),
        "jax_version": jax.__version__,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
