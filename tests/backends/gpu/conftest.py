"""The gpu backend tests' folder on sys.path, for their shared helpers (gpu_testing); the
real "gpu" backend started (or its failure recorded) before any test fakes CuPy; the
`gpu` fixture (the device of a gpu client on fake_cupy, not the default device); the
"gpu-interpreter" backend (the gpu compiler with kernels run by the numpy kernel
interpreter) registered in the default registry, so that `jit(f, backend=...)` runs end
to end without a GPU; and, when JAXLITE_PLATFORMS / jax_platforms asks for "gpu" and it
does not start here, every test of the folder skipped with the reason (no backend could
run them)."""
import sys
from pathlib import Path

import pytest

import jaxlite
from jaxlite.backends import gpu as gpu_backend
from jaxlite.backends import registry
from jaxlite.backends.gpu import launchers
from jaxlite.backends.gpu.client import GpuClient
from jaxlite.config import config

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
gpu_backend.register_interpreter(registry.default_registry())


def _start_the_real_gpu_backend_first() -> None:
    """Try the registry's "gpu" backend once, before any test points CuPy's name at
    fake_cupy: a first start attempted later (the first `device_put`, a new
    `jax_platforms` setting) would build the registry's "gpu" client on the fake, and
    later tests would run on it. Without a GPU the failure is remembered instead."""
    try:
        registry.default_registry().client(gpu_backend.PLATFORM)
    except RuntimeError:
        pass


_start_the_real_gpu_backend_first()

from gpu_testing import use_fake_cupy  # noqa: E402  (found through the path above)


@pytest.fixture(scope="module")
def gpu():
    """The gpu device of a client on fake_cupy (CuPy's name points to it meanwhile)."""
    jaxlite.devices()  # (the default backend chosen before CuPy's name points to the fake)
    patch = pytest.MonkeyPatch()
    use_fake_cupy(patch)
    try:
        yield GpuClient(launchers.start_cupy(0), "gpu").devices()[0]
    finally:
        patch.undo()


def _missing_gpu() -> str:
    """Why the requested gpu backend cannot run here ("" when not requested or fine)."""
    if "gpu" not in registry.parse_platforms(config.read("jax_platforms")):
        return ""
    try:
        registry.get_backend("gpu")
    except RuntimeError as error:
        return f"jax_platforms asks for the GPU, which does not start here: {error}"
    return ""


def pytest_collection_modifyitems(config, items):
    reason = _missing_gpu()
    if not reason:
        return
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.skip(reason=reason))
