"""The backend registry: priorities, the jax_platforms / JAXLITE_PLATFORMS choice, backends
that fail to start (recorded with their reason), and the device functions on top of it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import jaxlite as jax
from jaxlite.backends import registry
from jaxlite.backends.interpreter import InterpreterClient
from jaxlite.backends.registry import PLUGIN_GROUP, BackendRegistry, parse_platforms
from jaxlite.config import config

ROOT = Path(__file__).resolve().parents[2]


def fresh(**factories):
    """A registry with the interpreter and `name=(priority, factory)` backends."""
    reg = BackendRegistry(plugin_group="jaxlite.backends.none")
    for name, (priority, factory) in factories.items():
        reg.register(name, factory, priority=priority)
    return reg


def test_the_default_backend_is_the_interpreter():
    assert jax.default_backend() == "interpreter"
    devices = jax.devices()
    assert devices == jax.devices("interpreter") == jax.local_devices()
    assert repr(devices[0]) == "InterpreterDevice(id=0)"
    assert devices[0].platform == "interpreter" and devices[0].id == 0
    assert devices[0].client is registry.get_backend()
    assert jax.device_count() == jax.local_device_count() == 1
    assert "interpreter" in registry.backends()


def test_unknown_backend_says_so():
    with pytest.raises(RuntimeError, match="Unknown backend gpu"):
        jax.devices("gpu")
    with pytest.raises(RuntimeError, match="Unknown backend gpu"):
        jax.device_count("gpu")


def test_priority_chooses_the_default():
    reg = fresh(fast=(10, lambda: InterpreterClient("fast")),
                slow=(-5, lambda: InterpreterClient("slow")))
    # The LLVM cpu backend is built in, below the interpreter until it becomes the default.
    assert reg.registered() == ["fast", "interpreter", "slow", "cpu"]
    assert reg.get_backend().platform == "fast"
    assert reg.get_backend("slow").platform == "slow"
    assert list(reg.backends()) == ["fast", "interpreter", "slow", "cpu"]


def test_equal_priorities_keep_registration_order():
    reg = fresh(first=(0, lambda: InterpreterClient("first")))
    assert reg.registered() == ["interpreter", "first", "cpu"]


def test_jax_platforms_chooses_in_order_of_preference():
    reg = fresh(fast=(10, lambda: InterpreterClient("fast")))
    with config.override("jax_platforms", "interpreter,fast"):
        assert reg.get_backend().platform == "interpreter"
        assert list(reg.backends()) == ["interpreter", "fast"]
    with config.override("jax_platforms", "fast,interpreter"):
        assert reg.get_backend().platform == "fast"
    with config.override("jax_platforms", "interpreter"):
        assert list(reg.backends()) == ["interpreter"]
        with pytest.raises(RuntimeError, match="not in the list of platforms"):
            reg.get_backend("fast")


def test_jax_platforms_skips_backends_that_do_not_exist_or_start():
    reg = fresh()
    with config.override("jax_platforms", "nosuch, interpreter"):
        assert reg.get_backend().platform == "interpreter"
    with config.override("jax_platforms", "nosuch"):
        with pytest.raises(RuntimeError, match="No backend could be initialized.*"
                                               "Unknown backend nosuch"):
            reg.get_backend()


def test_config_update_changes_the_default_backend_of_jaxlite():
    previous = config.read("jax_platforms")
    try:
        config.update("jax_platforms", "interpreter,cpu")
        assert jax.default_backend() == "interpreter"
        config.update("jax_platforms", "nosuch")
        with pytest.raises(RuntimeError, match="Unknown backend nosuch"):
            jax.devices()
        config.update("jax_platforms", "cpu")
        assert jax.default_backend() == "cpu"
    finally:
        config.update("jax_platforms", previous)
    assert jax.default_backend() == "interpreter"


def test_a_failing_backend_is_recorded_with_its_reason():
    calls = []

    def no_cupy():
        calls.append(1)
        raise ImportError("cupy is not installed")
    reg = fresh(gpu=(200, no_cupy))
    # The default falls through to the next backend by priority...
    assert reg.get_backend().platform == "interpreter"
    # ... and asking for the failed one explains why, without trying again.
    for _ in range(2):
        with pytest.raises(RuntimeError, match="'gpu' failed to initialize: ImportError: "
                                               "cupy is not installed"):
            reg.get_backend("gpu")
    assert len(calls) == 1
    assert reg.errors() == {"gpu": "ImportError: cupy is not installed"}
    assert list(reg.backends()) == ["interpreter", "cpu"]


def test_a_factory_must_return_a_client():
    reg = fresh(odd=(5, lambda: "not a client"))
    with pytest.raises(RuntimeError, match="not a jaxlite.backends.base.Client"):
        reg.get_backend("odd")


def test_no_backend_at_all():
    reg = BackendRegistry(builtins=False, plugin_group="jaxlite.backends.none")
    with pytest.raises(RuntimeError, match="No backend could be initialized"):
        reg.get_backend()


def test_registration_rules():
    reg = fresh()
    reg.get_backend("interpreter")
    with pytest.raises(ValueError, match="already been initialized"):
        reg.register("interpreter", InterpreterClient)
    with pytest.raises(TypeError, match="zero-argument callable"):
        reg.register("broken", 3)
    reg.register("Mixed", lambda: InterpreterClient("mixed"))
    assert reg.get_backend("MIXED").platform == "mixed"


def test_parse_platforms():
    assert parse_platforms(None) == [] and parse_platforms("") == []
    assert parse_platforms(" Interpreter ,cpu,,") == ["interpreter", "cpu"]
    assert PLUGIN_GROUP == "jaxlite.backends"


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("JAXLITE_PLATFORMS", "JAX_PLATFORMS")}
    full_env.update(env)
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_environment_variable_chooses_the_platforms():
    done = _run("import jaxlite as jax; print(jax.config.jax_platforms, "
                "jax.default_backend())", JAXLITE_PLATFORMS="interpreter")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["interpreter", "interpreter"]
    done = _run("import jaxlite as jax\n"
                "try:\n    jax.devices()\n"
                "except RuntimeError as e:\n    print('error:', e)\n",
                JAXLITE_PLATFORMS="nosuch")
    assert done.returncode == 0, done.stderr
    assert "error: No backend could be initialized (jax_platforms='nosuch')" in done.stdout
