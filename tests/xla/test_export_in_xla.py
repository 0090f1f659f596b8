"""An `Exported`'s StableHLO (`mlir_module()`) runs in real XLA (jaxlib, in JAX's virtual
environment) with the numbers `Exported.call` gives, before and after a serialization round
trip; skipped without a python that has jax."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import export

from stablehlo_xla import add_text_case, jax_python_or_skip, run_cases


def _mlp(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return jax.nn.log_softmax(h @ params["v"]), jnp.sum(h)


def _programs():
    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal((6, 16)).astype(np.float32),
              "b": rng.standard_normal(16).astype(np.float32),
              "v": rng.standard_normal((16, 3)).astype(np.float32)}
    x = rng.standard_normal((5, 6)).astype(np.float32)
    table = np.linspace(0.0, 1.0, 3000, dtype=np.float32)  # a large constant, inlined
    yield "mlp", jax.jit(_mlp), (params, x)
    yield "constant", jax.jit(lambda v: jnp.cumsum(v * table[:4])), (np.arange(4.0, dtype=np.float32),)
    yield "loop", jax.jit(lambda v: jax.lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i, v)), (
        np.ones(3, np.float32),)


@pytest.fixture(scope="module")
def xla_results(tmp_path_factory):
    jax_python_or_skip()
    cases = {}
    for name, fun, args in _programs():
        exp = export.deserialize(export.export(fun)(*args).serialize())
        add_text_case(cases, name, exp.mlir_module(), jax.tree_util.tree_leaves(args))
    return run_cases(cases, tmp_path_factory.mktemp("export_in_xla"))


@pytest.mark.parametrize("name", ["mlp", "constant", "loop"])
def test_exported_module_runs_in_xla_with_our_numbers(name, xla_results):
    assert xla_results.get(f"{name}/error") is None, xla_results.get(f"{name}/error")
    _, fun, args = next(p for p in _programs() if p[0] == name)
    ours = jax.tree_util.tree_leaves(export.export(fun)(*args).call(*args))
    for i, mine in enumerate(ours):
        np.testing.assert_allclose(xla_results[f"{name}/out{i}"], np.asarray(mine),
                                   rtol=2e-6, atol=2e-6)
