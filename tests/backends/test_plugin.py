"""Third-party backends: a distribution with `jaxlite.backends` entry points, installed into a
temporary folder at test time, is discovered by the registry through importlib.metadata and
runs jit-compiled programs, without any change to jaxlite."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends import registry
from jaxlite.backends.registry import PLUGIN_PRIORITY, BackendRegistry


# (they choose platforms themselves, whatever JAXLITE_PLATFORMS asks of the run)
pytestmark = pytest.mark.usefixtures("platforms_by_priority")


ROOT = Path(__file__).resolve().parents[2]
BOTH = {"testplugin": "jaxlite_testplugin:initialize",
        "testplugin_factory": "jaxlite_testplugin:factory_hook"}


def f(x, y):
    return jnp.sum(jnp.tanh(x) * y, axis=0), x @ y.T


def args():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 4)).astype(np.float32), \
        rng.standard_normal((3, 4)).astype(np.float32)


def test_entry_points_are_discovered(install_plugin):
    install_plugin({**BOTH, "broken": "jaxlite_no_such_module:hook"})
    reg = BackendRegistry()
    names = reg.registered()
    assert {"testplugin", "testplugin_factory", "interpreter"} <= set(names)
    # The hook that registered itself chose its priority; the factory got the plugin one.
    assert reg.priority("testplugin") == -10
    assert reg.priority("testplugin_factory") == PLUGIN_PRIORITY
    assert reg.get_backend().platform == "testplugin_factory"
    assert reg.get_backend("testplugin").platform == "testplugin"
    # A plugin that cannot load is recorded with the reason.
    assert "No module named 'jaxlite_no_such_module'" in reg.errors()["broken"]
    with pytest.raises(RuntimeError, match="'broken' failed to initialize.*"
                                           "jaxlite_no_such_module"):
        reg.get_backend("broken")
    assert reg.discover_plugins() == []  # each entry point loads once


def test_plugins_added_later_are_found_by_discover(install_plugin):
    reg = BackendRegistry()
    reg.registered()  # discovery happened, before the plugin was installed
    assert "testplugin" not in reg.registered()
    install_plugin({"testplugin": "jaxlite_testplugin:initialize"})
    assert reg.discover_plugins() == ["testplugin"]
    assert reg.get_backend("testplugin").devices()[0].platform == "testplugin"


def test_jit_runs_on_the_plugin(install_plugin):
    default = jax.default_backend()  # (cpu, or a GPU where one starts)
    install_plugin({"testplugin": "jaxlite_testplugin:initialize"})
    registry.discover_plugins()
    plugin = importlib.import_module("jaxlite_testplugin")
    assert jax.default_backend() == default  # its low priority keeps the default
    device = jax.devices("testplugin")[0]
    assert repr(device) == "TestpluginDevice(id=0)"
    x, y = args()
    before = plugin.CALLS["execute"]
    # The plugin evaluates as the interpreter does: the same numbers as that backend's.
    expected = jax.jit(f, backend="interpreter")(x, y)
    for jitted in (jax.jit(f, backend="testplugin"), jax.jit(f, device=device)):
        got = jitted(x, y)
        for a, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-6)
    assert plugin.CALLS["execute"] == before + 2
    compiled = jax.jit(f, backend="testplugin").lower(x, y).compile()
    assert compiled.runtime_executable().client.platform == "testplugin"
    assert compiled.cost_analysis()["flops"] > 0


def test_the_plugin_can_be_the_chosen_platform(tmp_path, plugin_distribution):
    plugin_distribution(tmp_path, {"testplugin": "jaxlite_testplugin:initialize"})
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    env.update(JAXLITE_PLATFORMS="testplugin",
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    code = ("import numpy as np, jaxlite as jax, jaxlite_testplugin as p\n"
            "y = jax.jit(lambda x: x * 2 + 1)(np.arange(3.0))\n"
            "print(jax.default_backend(), jax.devices(), y.tolist(), p.CALLS['execute'])\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "testplugin [TestpluginDevice(id=0)] [1.0, 3.0, 5.0] 1"
