"""A shape-polymorphic Exported's StableHLO (`mlir_module()`, `tensor<?x4xf32>` arguments),
and its VJP's, runs in real XLA at two batch sizes with `Exported.call`'s numbers: jaxlib refines its
shapes as JAX does when it calls such a module (stablehlo_poly_runner.py). Skipped without a
python that has jax."""
import subprocess
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import export, lax

from stablehlo_xla import jax_python_or_skip

RUNNER = Path(__file__).with_name("stablehlo_poly_runner.py")
F32 = np.float32


def _mlp(x, w, v):
    return jax.nn.log_softmax(jnp.tanh(x @ w) @ v, axis=-1)


def _normalized(x):
    mu = x.mean(axis=-1, keepdims=True)
    y = (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    return jax.nn.softmax(y, axis=-1), jax.nn.logsumexp(y, axis=0)


def _reductions(x):
    n = x.shape[0]
    return (x.sum(axis=0), jnp.argmax(x, axis=1), jnp.cumsum(x, axis=1), x.T @ x,
            jnp.cumsum(x, axis=0),
            jnp.reshape(x, (n * 4,)), jnp.arange(n).astype(F32) @ x, x[1:] - x[:-1],
            jnp.concatenate([x, x]), jnp.broadcast_to(x[:, :1], (n, 3)), jnp.mean(x, axis=0),
            x[::2], x[-1], jnp.take(x, jnp.array([0, -1]), axis=0), x[jnp.argmax(x[:, 0])])


def _scanned(x, w):
    def step(carry, row):
        c = jnp.tanh(carry @ w + row)
        return c, c.sum()
    return lax.scan(step, jnp.zeros((4,), x.dtype), x)


PROGRAMS = {"mlp": (_mlp, [(None, 4), (4, 5), (5, 3)]), "normalized": (_normalized, [(None, 6)]),
            "reductions": (_reductions, [(None, 4)]), "scan": (_scanned, [(None, 4), (4, 4)])}


def _arguments(shapes, batch):
    rng = np.random.default_rng(batch)
    return [rng.standard_normal([batch if d is None else d for d in s]).astype(F32)
            for s in shapes]


VJP_PROGRAMS = ("mlp", "scan")


def _add_case(cases, ours, key, exp, args):
    results = [np.asarray(r) for r in jax.tree_util.tree_leaves(exp.call(*args))]
    ours[key] = results
    cases[f"{key}/text"] = np.array(exp.mlir_module())
    cases.update({f"{key}/arg{i}": a for i, a in enumerate(args)})
    cases.update({f"{key}/want{i}": r for i, r in enumerate(results)})


@pytest.fixture(scope="module")
def xla_results(tmp_path_factory):
    python = jax_python_or_skip()
    cases, ours = {}, {}
    for name, (fun, shapes) in PROGRAMS.items():
        specs = export.symbolic_args_specs(_arguments(shapes, 2), [
            "b, ..." if s[0] is None else None for s in shapes])
        exp = export.deserialize(export.export(jax.jit(fun))(*specs).serialize(vjp_order=1))
        for batch in (3, 8):
            args = _arguments(shapes, batch)
            _add_case(cases, ours, f"{name}{batch}", exp, args)
            if name in VJP_PROGRAMS:  # the VJP's module: primals and output cotangents
                cotangents = [np.ones(np.shape(r), F32) for r in
                              jax.tree_util.tree_leaves(exp.call(*args))]
                _add_case(cases, ours, f"{name}_vjp{batch}", exp.vjp(), args + cotangents)
    folder = tmp_path_factory.mktemp("export_shape_poly_in_xla")
    np.savez(folder / "cases.npz", **cases)
    done = subprocess.run([python, str(RUNNER), str(folder / "cases.npz"),
                           str(folder / "out.npz")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(np.load(folder / "out.npz", allow_pickle=False)), ours


@pytest.mark.parametrize("name", sorted(PROGRAMS) + [f"{p}_vjp" for p in VJP_PROGRAMS])
@pytest.mark.parametrize("batch", [3, 8])
def test_polymorphic_module_runs_in_xla_with_our_numbers(name, batch, xla_results):
    results, ours = xla_results
    key = f"{name}{batch}"
    assert results.get(f"{key}/error") is None, str(results.get(f"{key}/error"))
    for i, mine in enumerate(ours[key]):
        # (float32 gradients sum over the batch in another order: a few ulps of their size)
        np.testing.assert_allclose(results[f"{key}/out{i}"], mine, rtol=1e-5, atol=1e-5)
