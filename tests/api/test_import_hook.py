"""The import hook (`jaxlite.install_as_jax`, `python -m jaxlite.run`): code written for
`jax` runs on jaxlite, real JAX is never imported, and nothing named `jax` is touched
without the hook. Each case runs in a fresh interpreter, with a decoy `jax` package first on
the path that fails loudly if anything imports it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def decoy(tmp_path):
    """A folder holding a `jax` (and `jaxlib`) package whose import raises."""
    for name in ("jax", "jaxlib"):
        package = tmp_path / name
        package.mkdir()
        (package / "__init__.py").write_text(
            f"raise RuntimeError('the real {name} was imported')\n")
    return tmp_path


def run_python(decoy: Path, *args: str, cwd: Path | None = None) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(decoy), str(ROOT)]))
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                            env=env, cwd=cwd, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_jaxlite_never_imports_jax_without_the_hook(decoy):
    out = run_python(decoy, "-c", textwrap.dedent("""
        import sys
        import jaxlite, jaxlite.numpy as jnp
        print(float(jaxlite.jit(lambda x: jnp.sin(x) * 2)(1.0)))
        print(jaxlite.grad(lambda x: x ** 3)(2.0))
        print(sorted(n for n in sys.modules if n == "jax" or n.startswith(("jax.", "jaxlib"))))
    """))
    assert out.split("\n")[2] == "[]"


def test_the_hook_answers_every_jax_import(decoy):
    out = run_python(decoy, "-c", textwrap.dedent("""
        import importlib.metadata, sys
        import jaxlite
        jaxlite.install_as_jax()
        import jax, jax.numpy as jnp
        from jax import lax
        import jax.scipy.special, jax.version
        from jax._src import traceback_util
        print(jax.__version__, jax.__version_info__, jaxlite.__version__)
        print(jax.version.__version__, importlib.metadata.version("jax"))
        print(sys.modules["jax.numpy"] is jaxlite.numpy, lax is jaxlite.lax)
        print(float(jax.jit(lambda x: jnp.cos(x))(0.0)), jax.numpy.float32 is jnp.float32)
        try:
            import jax._src.not_a_module
        except ModuleNotFoundError as e:
            print("ModuleNotFoundError", "jaxlite" in str(e))
        try:
            jax.not_a_name
        except AttributeError as e:
            print("AttributeError", "jaxlite" in str(e))
    """))
    assert out.splitlines() == [
        "0.10.2 (0, 10, 2) 0.1.0", "0.10.2 0.10.2", "True True", "1.0 True",
        "ModuleNotFoundError True", "AttributeError True"]


def test_install_after_real_jax_refuses(decoy):
    out = run_python(decoy, "-c", textwrap.dedent("""
        import sys, types
        sys.modules["jax"] = types.ModuleType("jax")  # stands for a real JAX already loaded
        import jaxlite
        try:
            jaxlite.install_as_jax()
        except RuntimeError as e:
            print("RuntimeError", "call it first" in str(e))
    """))
    assert out.strip() == "RuntimeError True"


def test_run_module_runs_a_script_and_a_module(decoy, tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys
        import jax, jax.numpy as jnp
        w = jnp.ones(3)
        for _ in range(3):
            w = w - 0.1 * jax.grad(lambda v: jnp.sum(v ** 2))(w)
        print(__name__, sys.argv[1:], [round(float(x), 4) for x in w])
    """))
    out = run_python(decoy, "-m", "jaxlite.run", str(script), "--steps", "3")
    assert out.strip() == "__main__ ['--steps', '3'] [0.512, 0.512, 0.512]"
    (tmp_path / "mymod.py").write_text("import jax\nprint('module', jax.__version__)\n")
    out = run_python(decoy, "-m", "jaxlite.run", "-m", "mymod", cwd=tmp_path)
    assert out.strip() == "module 0.10.2"
    out = run_python(decoy, "-m", "jaxlite.run", "-c",
                     "import sys, jax; print(jax.numpy.arange(3).sum(), sys.argv)", "x")
    assert out.strip() == "3 ['-c', 'x']"


def test_compat_private_modules_hold_what_libraries_import():
    from jaxlite.compat._src import (ad_util, core, dispatch, dtypes, flatten_util, literals,
                                     traceback_util, tree_util, xla_bridge)
    from jaxlite.compat._src.state import types
    import jaxlite

    traceback_util.register_exclusion("/some/library/")
    assert "/some/library/" in traceback_util._exclude_paths
    assert traceback_util.api_boundary(len)([1, 2]) == 2
    assert dict in tree_util._registry and list in tree_util._registry
    seen = []
    jaxlite.jit(lambda x: seen.append(core.trace_state_clean()) or x)(1.0)
    assert core.trace_state_clean() and seen == [False]
    assert dtypes.supports_inf("float32") and not dtypes.supports_inf("float8_e4m3fn")
    assert issubclass(dtypes.TypePromotionError, ValueError)
    assert ad_util.stop_gradient_p.name == "stop_gradient"
    assert flatten_util.ravel_pytree is jaxlite.flatten_util.ravel_pytree
    assert dispatch.wait_for_tokens() is None and isinstance(xla_bridge._backends, dict)
    assert types.AbstractRef is jaxlite.ref.AbstractRef and literals.TypedNdArray is not None


def test_renamed_private_module_imports_from_its_package(decoy):
    # chex: `from jax._src import compiler`, which the hook maps to jaxlite.runtime.compiler
    out = run_python(decoy, "-c", textwrap.dedent("""
        import jaxlite
        jaxlite.install_as_jax()
        from jax._src import compiler
        import jax._src
        print(compiler is jaxlite.runtime.compiler, hasattr(jax._src, "not_a_module"))
    """))
    assert out.split() == ["True", "False"]


# Import lines common in research code and libraries; each works under JAX 0.10.2.
COMMON_IMPORT_LINES = """
import jax, jax.numpy as jnp
from jax import grad, jit, vmap, pmap, lax, random, value_and_grad, jacfwd, jacrev, hessian
from jax import config; config.update("jax_enable_x64", False)
from jax.tree_util import tree_map, tree_flatten, register_pytree_node_class, Partial
import jax.tree as jt; jt.map(lambda x: x, {"a": 1})
from jax.typing import ArrayLike, DTypeLike
from jax.experimental import sparse, checkify, io_callback, mesh_utils
from jax.experimental.shard_map import shard_map
from jax.sharding import Mesh, PartitionSpec, NamedSharding, PartitionSpec as P
from jax.scipy.special import logsumexp, gammaln, digamma, betainc, erf
from jax.scipy.stats import norm, multivariate_normal, gaussian_kde
from jax.scipy.linalg import cho_factor, cho_solve, solve_triangular, expm
from jax.nn import initializers, relu, softmax, gelu, one_hot, logsumexp
from jax.nn.initializers import glorot_normal, delta_orthogonal, variance_scaling
from jax.example_libraries import optimizers, stax
from jax.flatten_util import ravel_pytree
from jax.experimental.ode import odeint
import jax.extend as jex; jex.core.Primitive("p")
from jax.interpreters import ad, batching, mlir, partial_eval as pe
from jax.core import ShapedArray, Tracer
from jax.lax import with_sharding_constraint, stop_gradient, scan, cond, fori_loop
from jax.random import PRNGKey, key, split, fold_in, key_data
from jax.ad_checkpoint import checkpoint_name, checkpoint_policies
from jax.custom_derivatives import custom_vjp, custom_jvp, closure_convert
from jax.experimental.jet import jet
from jax.stages import Compiled, Lowered, Wrapped
from jax.errors import ConcretizationTypeError, TracerBoolConversionError
from jax.dtypes import bfloat16, float0, canonicalize_dtype
from jax.experimental.custom_partitioning import custom_partitioning
from jax._src import dtypes as jax_dtypes
from jax._src.util import safe_zip, safe_map, unzip2
from jax._src.traceback_util import api_boundary, register_exclusion
import jax.experimental.compilation_cache.compilation_cache as cc
from jax.experimental.layout import Layout
import jax.distributed, jax.dlpack
"""


def test_common_import_lines_work(decoy, tmp_path):
    # `from jax import export` and `ffi` come with issue 15 (portable programs).
    script = tmp_path / "imports.py"
    script.write_text("LINES = " + repr(COMMON_IMPORT_LINES.strip().splitlines()) + "\n"
                      "for line in LINES:\n    exec(line, {})\nprint(len(LINES))\n")
    out = run_python(decoy, "-m", "jaxlite.run", str(script))
    assert out.strip() == str(len(COMMON_IMPORT_LINES.strip().splitlines()))
