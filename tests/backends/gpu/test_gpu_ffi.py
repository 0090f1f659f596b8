"""Typed FFI handlers on the gpu backend (`ffi_calls`): a plain-C handler (ffi_stream.c,
built here with the machine's C compiler) registered for platform "CUDA" runs inside a
`CupyLauncher` executable on the tests' numpy stand-in for CuPy (fake_cupy): it gets the
executable's buffers (host memory under the stand-in) and, from XLA_FFI_Stream_Get, the
stream the launcher enqueues on; on the cpu backend the same handler gets a null stream."""
from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import fake_cupy
import numpy as np
import pytest
from test_gpu_cupy_launcher import client  # noqa: F401 (fixture: CupyLauncher on fake_cupy)

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends.base import CompileOptions
from jaxlite.config import config

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def handler(tmp_path_factory):
    """libffi_stream.so's StreamTriple, registered as "gpu_stream_triple" for CUDA only
    and as "cpu_stream_triple" for the cpu."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler to build tests/backends/gpu/ffi_stream.c")
    library = tmp_path_factory.mktemp("ffi_gpu") / "libffi_stream.so"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", str(HERE / "ffi_stream.c"), "-o",
                    str(library)], check=True, capture_output=True)
    lib = ctypes.cdll.LoadLibrary(str(library))
    capsule = jax.ffi.pycapsule(lib.StreamTriple)
    jax.ffi.register_ffi_target("gpu_stream_triple", capsule, platform="CUDA")
    jax.ffi.register_ffi_target("cpu_stream_triple", capsule, platform="cpu")
    return lib


def _triple(target):
    def fn(x):
        y, stream = jax.ffi.ffi_call(target, (jax.ShapeDtypeStruct(x.shape, x.dtype),
                                              jax.ShapeDtypeStruct((1,), np.int64)))(x)
        return jnp.sin(y) + 1.0, stream
    return fn


def test_a_cuda_handler_gets_device_buffers_and_the_launchers_stream(client, handler):
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    # (lowered for the cpu: a bare `jit` would start the registry's "gpu" on fake_cupy)
    with config.override("jax_platforms", ""):
        lowered = jax.jit(_triple("gpu_stream_triple"), backend="cpu").lower(x)
    module = lowered._lowered.module
    executable = client.compile(module, CompileOptions())
    plan = executable.text("kernels")
    assert "ffi       %custom-call" in plan and "host" not in plan, plan
    y, stream = (b.to_numpy() for b in executable.execute([client.buffer_from_numpy(x)]))
    np.testing.assert_allclose(y, np.sin(3 * x) + 1, rtol=1e-6)
    assert stream.dtype == np.int64 and int(stream[0]) == client.launcher.stream.ptr != 0
    assert client.launcher.stream in fake_cupy.STREAMS
    # a second call reuses the call site's frame and gets the same stream
    y2, stream2 = (b.to_numpy() for b in executable.execute([client.buffer_from_numpy(-x)]))
    np.testing.assert_allclose(y2, np.sin(-3 * x) + 1, rtol=1e-6)
    assert int(stream2[0]) == client.launcher.stream.ptr


def test_on_the_cpu_the_same_handler_gets_no_stream(handler):
    x = np.arange(5, dtype=np.float32)
    with config.override("jax_platforms", ""):
        y, stream = jax.jit(_triple("cpu_stream_triple"), backend="cpu")(x)
        eager_y, eager_stream = _triple("cpu_stream_triple")(x)
    np.testing.assert_allclose(np.asarray(y), np.sin(3 * x) + 1, rtol=1e-6)
    assert int(np.asarray(stream)[0]) == 0 and int(np.asarray(eager_stream)[0]) == 0
    np.testing.assert_allclose(np.asarray(eager_y), np.asarray(y), rtol=1e-6)


def test_the_interpreter_launcher_runs_no_cuda_handler(handler):
    """Its memory is the host's: a CUDA-only target is a host step that finds no CPU
    handler (NOT_FOUND when run), a target with a CPU handler runs that one."""
    x = np.arange(3, dtype=np.float32)
    plan = jax.jit(_triple("cpu_stream_triple"), backend="gpu-interpreter").lower(x) \
        .compile().runtime_executable().text("kernels")
    assert "host      %custom-call" in plan, plan
    y, stream = jax.jit(_triple("cpu_stream_triple"), backend="gpu-interpreter")(x)
    np.testing.assert_allclose(np.asarray(y), np.sin(3 * x) + 1, rtol=1e-6)
    assert int(np.asarray(stream)[0]) == 0
