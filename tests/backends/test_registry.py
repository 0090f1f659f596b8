"""The backend registry: priorities, the jax_platforms / JAXLITE_PLATFORMS choice, backends
that fail to start (recorded with their reason), and the device functions on top of it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import jaxlite as jax
from jaxlite.backends import cpu, registry
from jaxlite.backends.interpreter import InterpreterClient
from jaxlite.backends.registry import PLUGIN_GROUP, BackendRegistry, parse_platforms
from jaxlite.config import config

ROOT = Path(__file__).resolve().parents[2]


# (they choose platforms themselves, whatever JAXLITE_PLATFORMS asks of the run)
pytestmark = pytest.mark.usefixtures("platforms_by_priority")


def fresh(**factories):
    """A registry with the interpreter and `name=(priority, factory)` backends."""
    reg = BackendRegistry(plugin_group="jaxlite.backends.none")
    for name, (priority, factory) in factories.items():
        reg.register(name, factory, priority=priority)
    return reg


def _gpu_starts(reg: BackendRegistry) -> bool:
    """Whether the gpu backend starts in `reg` (CuPy sees a device)."""
    try:
        reg.get_backend("gpu")
        return True
    except RuntimeError:
        return False


def test_the_cpu_platform_is_the_llvm_cpu_backend():
    # (the platforms are stated: where a GPU starts, it is the default, see the next test)
    with config.override("jax_platforms", "cpu,interpreter"):
        _check_the_cpu_platform()


def _check_the_cpu_platform():
    assert jax.default_backend() == "cpu"
    devices = jax.devices()
    assert devices == jax.devices("cpu") == jax.local_devices()
    assert repr(devices[0]) == "CpuDevice(id=0)"
    assert devices[0].platform == "cpu" and devices[0].id == 0
    assert devices[0].client is registry.get_backend()
    assert jax.device_count() == jax.local_device_count() == 1
    # The interpreter stays registered and selectable by name (other tests may have added
    # low-priority backends to the default registry).
    names = list(registry.backends())
    assert names[0] == "cpu" and "interpreter" in names
    assert jax.devices("interpreter")[0].platform == "interpreter"


def test_unknown_backend_says_so():
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        jax.devices("tpu")
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        jax.device_count("tpu")


def test_priority_chooses_the_default():
    with config.override("jax_platforms", ""):  # (the default by priority, whatever the
        _check_priorities()                      # environment asks for)


def _check_priorities():
    reg = fresh(fast=(10, lambda: InterpreterClient("fast")),
                slow=(-5, lambda: InterpreterClient("slow")))
    # The gpu and LLVM cpu backends are built in, above the interpreter (the gpu backend
    # starts only where CuPy sees a device: then it is the default).
    assert reg.registered() == ["gpu", "cpu", "fast", "interpreter", "slow"]
    assert reg.get_backend().platform == ("gpu" if _gpu_starts(reg) else "cpu")
    reg = fresh(fast=(300, lambda: InterpreterClient("fast")),
                slow=(-5, lambda: InterpreterClient("slow")))
    assert reg.registered() == ["fast", "gpu", "cpu", "interpreter", "slow"]
    assert reg.get_backend().platform == "fast"
    assert reg.get_backend("slow").platform == "slow"
    assert list(reg.backends())[0] == "fast"
    assert [n for n in reg.backends() if n != "gpu"] == ["fast", "cpu", "interpreter", "slow"]


def test_equal_priorities_keep_registration_order():
    reg = fresh(first=(0, lambda: InterpreterClient("first")))
    assert reg.registered() == ["gpu", "cpu", "interpreter", "first"]


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
    previous, default = config.read("jax_platforms"), jax.default_backend()
    try:
        config.update("jax_platforms", "interpreter,cpu")
        assert jax.default_backend() == "interpreter"
        config.update("jax_platforms", "nosuch")
        with pytest.raises(RuntimeError, match="Unknown backend nosuch"):
            jax.devices()
        config.update("jax_platforms", "cpu")
        assert jax.default_backend() == "cpu"
        config.update("jax_platforms", "interpreter")
        assert jax.default_backend() == "interpreter"
    finally:
        config.update("jax_platforms", previous)
    assert jax.default_backend() == default


def test_a_failing_backend_is_recorded_with_its_reason():
    calls = []

    def no_cupy():
        calls.append(1)
        raise ImportError("cupy is not installed")
    reg = fresh(gpu=(200, no_cupy))
    # The default falls through to the next backend by priority...
    assert reg.get_backend().platform == "cpu"
    # ... and asking for the failed one explains why, without trying again.
    for _ in range(2):
        with pytest.raises(RuntimeError, match="'gpu' failed to initialize: ImportError: "
                                               "cupy is not installed"):
            reg.get_backend("gpu")
    assert len(calls) == 1
    assert reg.errors() == {"gpu": "ImportError: cupy is not installed"}
    assert list(reg.backends()) == ["cpu", "interpreter"]


def test_the_interpreter_is_the_fallback_when_llvm_cannot_start():
    def no_llvm():
        raise OSError("libllvmlite.so: cannot open shared object file")
    reg = BackendRegistry(builtins=False, plugin_group="jaxlite.backends.none")
    reg.register("interpreter", InterpreterClient, priority=registry.INTERPRETER_PRIORITY)
    reg.register("cpu", no_llvm, priority=cpu.PRIORITY)
    assert reg.registered() == ["cpu", "interpreter"]
    assert reg.get_backend().platform == "interpreter"
    assert reg.errors() == {"cpu": "OSError: libllvmlite.so: cannot open shared object file"}
    with pytest.raises(RuntimeError, match="'cpu' failed to initialize: OSError"):
        reg.get_backend("cpu")


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


def test_a_host_without_llvmlite_falls_back_to_the_interpreter():
    # llvmlite made unimportable in a fresh process: jaxlite still imports and jit still
    # works, on the interpreter, and the registry says why the cpu backend is missing.
    done = _run("import sys; sys.modules['llvmlite'] = None\n"
                "import numpy as np\n"
                "import jaxlite as jax\n"
                "from jaxlite.backends import registry\n"
                "print(jax.default_backend(), jax.devices()[0].platform)\n"
                "print(jax.jit(lambda x: x * 2 + 1)(np.arange(3.0)).tolist())\n"
                "print(registry.backend_errors()['cpu'])\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "interpreter interpreter"
    assert lines[1] == "[1.0, 3.0, 5.0]"
    assert lines[2].startswith("ModuleNotFoundError") and "llvmlite" in lines[2]
