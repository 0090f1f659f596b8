"""`CupyLauncher` and the client on it, run on a numpy stand-in for CuPy (fake_cupy): the
launcher's plumbing (modules by source hash, launch records, argument order, bfloat16
stored as uint16, streams and events) is exercised without a GPU. Results against the
cpu backend at the dtype's tolerance."""
from __future__ import annotations

import sys

import fake_cupy
import numpy as np
import pytest
from gpu_testing import HIPCC, assert_close, compile_kernels, use_fake_cupy

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends import registry
from jaxlite.backends.base import CompileOptions
from jaxlite.backends.cpu import disk_cache
from jaxlite.backends.gpu import kernel_cache, launchers
from jaxlite.backends.gpu.client import GpuClient
from jaxlite.config import config


@pytest.fixture
def client(monkeypatch):
    use_fake_cupy(monkeypatch)
    monkeypatch.setitem(sys.modules, "cupyx.scipy.linalg", fake_cupy.SCIPY_LINALG)
    fake_cupy.LAUNCHES.clear()
    fake_cupy.SOURCES.clear()
    fake_cupy.LIBRARY_CALLS.clear()
    fake_cupy.COMPILED.clear()
    fake_cupy.LOADED.clear()
    return GpuClient(launchers.start_cupy(0), "gpu")


def _run(client, fn, *args):
    """`fn` compiled by `client` and run on `args`; and the cpu backend's results."""
    with config.override("jax_platforms", ""):
        lowered = jax.jit(fn, backend="cpu").lower(*args)
        want = [np.asarray(w) for w in jax.tree.leaves(jax.jit(fn, backend="cpu")(*args))]
    module = lowered.compile().runtime_executable().hlo_module(optimized=False)
    executable = client.compile(module, CompileOptions())
    buffers = [client.buffer_from_numpy(np.asarray(a)) for a in jax.tree.leaves(args)]
    outs = executable.execute(buffers)
    for out, w in zip(outs, want):
        assert out.block_until_ready().is_ready()
        assert_close(out.to_numpy(), w, f"{fn}")
    return executable


def test_the_client_names_its_device_from_cupy(client):
    [device] = client.devices()
    assert repr(device) == "CudaDevice(id=0)" and device.device_kind == "Fake GPU (numpy)"
    assert "CuPy fake (cuda" in client.platform_version


def test_bfloat16_softmax_through_the_launcher(client):
    x = np.random.default_rng(0).standard_normal((6, 40)).astype(jnp.bfloat16)
    buffer = client.buffer_from_numpy(x)
    assert buffer.device_array().dtype == np.uint16  # CuPy has no bfloat16
    np.testing.assert_array_equal(buffer.to_numpy(), x)
    _run(client, lambda v: jax.nn.softmax(v, axis=-1), x)
    assert fake_cupy.LAUNCHES and len(fake_cupy.SOURCES) == 1


def test_mlp_gradient_and_a_scan_through_the_launcher(client):
    rng = np.random.default_rng(1)
    w, b = rng.standard_normal((6, 8)).astype(np.float32), np.zeros(8, np.float32)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    loss = lambda w, b, x: jnp.sum(jnp.tanh(x @ w + b) ** 2)
    executable = _run(client, jax.grad(loss, argnums=(0, 1)), w, b, x)
    assert "xp+kernel" in executable.text("kernels")
    assert any(name.endswith("_gemm") for name in fake_cupy.LAUNCHES)  # small dots

    def scan(xs):
        return jax.lax.scan(lambda c, v: (c * 0.5 + jnp.sin(v), c.sum()), jnp.zeros(3), xs)
    _run(client, scan, rng.standard_normal((4, 3)).astype(np.float32))


def test_modules_are_cached_by_source(client):
    x = np.ones((4, 8), np.float32)
    _run(client, lambda v: jnp.exp(v) * 2, x)
    _run(client, lambda v: jnp.exp(v) * 2, x)
    assert len(fake_cupy.SOURCES) == 1 and len(fake_cupy.LAUNCHES) == 2


def test_without_a_device_start_cupy_says_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setitem(sys.modules, "cupyx.scipy.linalg", fake_cupy.SCIPY_LINALG)
    monkeypatch.setattr(fake_cupy.cuda.runtime, "getDeviceCount", lambda: 0)
    with pytest.raises(RuntimeError, match="CuPy sees 0 GPU"):
        launchers.start_cupy(0)
    reg = registry.BackendRegistry(plugin_group="jaxlite.backends.none")
    with config.override("jax_platforms", ""):  # (gpu_check.sh sets JAXLITE_PLATFORMS=gpu)
        assert reg.get_backend().platform == "cpu"
    assert "CuPy sees 0 GPU" in reg.errors()["gpu"]


def test_scalar_arguments_keep_their_rank(client):
    [device_flag] = [client.buffer_from_numpy(np.bool_(True))]
    assert device_flag.shape == () and device_flag.to_numpy().shape == ()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    _run(client, lambda v, flag: jax.lax.cond(flag, lambda u: u * 2, lambda u: -u, v), x,
         np.bool_(False))


def test_updates_sorts_and_a_convolution_through_the_launcher(client):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    i = np.array([4, 1, 4], np.int32)
    u = rng.standard_normal((3, 5)).astype(np.float32)
    _run(client, lambda x, i, u: (x.at[i].add(u), x.at[i].max(u), jnp.take(x, i, axis=0)),
         x, i, u)
    _run(client, lambda x: (jnp.sort(x, -1), jax.lax.top_k(x, 2)), x)
    long_rows = rng.standard_normal((2, 5000)).astype(np.float32)
    sorted_on_xp = _run(client, lambda x: jnp.sort(x, -1), long_rows)
    assert "xp        %sort" in sorted_on_xp.text("kernels")
    image = rng.standard_normal((1, 4, 4, 2)).astype(np.float32)
    kernel = rng.standard_normal((3, 3, 2, 3)).astype(np.float32)
    conv = _run(client, lambda a, b: jax.lax.conv_general_dilated(
        a, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), image, kernel)
    assert "xp+kernel %convolution" in conv.text("kernels")
    # bfloat16 (stored as uint16 on CuPy) is converted around a float32 convolution
    as_bf16 = _run(client, lambda a, b: jax.lax.conv_general_dilated(
        a, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        image.astype(jnp.bfloat16), kernel.astype(jnp.bfloat16))
    plan = as_bf16.text("kernels")
    assert "xp+kernel %convolution" in plan and "host" not in plan, plan


def test_linear_algebra_and_fft_through_cupys_libraries(client):
    """cholesky, eigh, svd, qr and lu + triangular solves (jnp.linalg.solve) as
    `cupy.linalg` / `cupyx.scipy.linalg` calls, FFTs as `cupy.fft` calls: no host step."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((34, 34)).astype(np.float32)
    spd = (a @ a.T + 34 * np.eye(34)).astype(np.float32)
    for fn in (jnp.linalg.cholesky, lambda m: jnp.linalg.eigh(m)[0],
               lambda m: jnp.linalg.svd(m, compute_uv=False),
               lambda m: jnp.abs(jnp.diagonal(jnp.linalg.qr(m)[1])),
               lambda m: jnp.linalg.solve(m, jnp.ones(34, jnp.float32))):
        executable = _run(client, fn, spd)
        assert "host" not in executable.text("kernels"), executable.text("kernels")
    assert {"linalg.cholesky", "linalg.eigh", "linalg.svd", "linalg.qr"} <= \
        set(fake_cupy.LIBRARY_CALLS), fake_cupy.LIBRARY_CALLS
    x = rng.standard_normal((4, 16)).astype(np.float32)
    _run(client, lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * 0.5, n=16), x)
    assert fake_cupy.LIBRARY_CALLS[-2:] == ["fft.rfftn", "fft.irfftn"]


def test_a_second_client_loads_the_module_from_the_persistent_cache(client, tmp_path):
    """The first client compiles the program's module with NVRTC and stores the cubin in
    the compilation cache folder; a second client (an empty memory cache, as a new
    process has) loads it from there without compiling; a damaged entry is recompiled."""
    x = np.random.default_rng(3).standard_normal((5, 33)).astype(np.float32)
    softmax = lambda v: jax.nn.softmax(v * 2.0, axis=-1)
    with config.override("jax_compilation_cache_dir", str(tmp_path)):
        _run(client, softmax, x)
        assert len(fake_cupy.COMPILED) == 1 and not fake_cupy.LOADED[:-1]
        key = kernel_cache.module_key(fake_cupy, 0, fake_cupy.COMPILED[0], ("-std=c++17",))
        entry = disk_cache.entry_path(str(tmp_path), key)
        assert entry.exists()  # (beside the cpu backend's entry of the reference run)
        second = GpuClient(launchers.start_cupy(0), "gpu")
        _run(second, softmax, x)
        assert len(fake_cupy.COMPILED) == 1 and len(fake_cupy.LOADED) == 2
        assert fake_cupy.SOURCES[-1] == fake_cupy.COMPILED[0]
        entry.write_bytes(entry.read_bytes()[:-3])  # truncated: removed, compiled again
        _run(GpuClient(launchers.start_cupy(0), "gpu"), softmax, x)
        assert len(fake_cupy.COMPILED) == 2 and entry.exists()


def test_integer_and_complex_products_through_the_launcher(client):
    """Integer dots (the tiled kernel; `xp.matmul` in 64-bit unsigned sums) and complex
    ones (`xp.matmul`), integer and complex convolutions: on the device, the cpu's
    numbers."""
    rng = np.random.default_rng(4)
    small = rng.integers(-2**31, 2**31, (5, 7)).astype(np.int32)  # products wrap
    large = rng.integers(-128, 128, (70, 66)).astype(np.int8)
    # (whole parts: exact sums, as `assert_close` compares complex numbers exactly)
    z = (rng.integers(-9, 9, (6, 9)) + 1j * rng.integers(-9, 9, (6, 9))).astype(np.complex64)
    conv = lambda a, b: jax.lax.conv_general_dilated(
        a, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    image = rng.integers(-50, 50, (1, 4, 4, 2)).astype(np.int32)
    kernel = rng.integers(-50, 50, (3, 3, 2, 3)).astype(np.int32)
    for fn, args in ((lambda a: a @ a.T, (small,)),
                     (lambda a: jax.lax.dot(a, a.T, preferred_element_type=jnp.int32),
                      (large,)),
                     (lambda a: a @ a.T, (z,)),
                     (conv, (image, kernel)),
                     (conv, (image.astype(np.complex64) * (1 + 2j),
                             kernel.astype(np.complex64)))):
        plan = _run(client, fn, *args).text("kernels")
        assert "host" not in plan, plan
    assert any(name.endswith("_gemm") for name in fake_cupy.LAUNCHES)
    assert any(name.endswith("_im2col") for name in fake_cupy.LAUNCHES)


@pytest.fixture
def rocm_client(monkeypatch, request):
    """The client on fake_cupy posing as CuPy for ROCm (`runtime.is_hip`)."""
    monkeypatch.setattr(fake_cupy.cuda.runtime, "is_hip", True)
    return request.getfixturevalue("client")


def test_the_warp_size_is_the_devices(monkeypatch, request):
    # (an RDNA GPU runs 32-lane wavefronts; the kernels' shuffles must match)
    monkeypatch.setattr(fake_cupy.cuda.runtime, "is_hip", True)
    monkeypatch.setattr(fake_cupy.cuda.runtime, "getDeviceProperties",
                        lambda i: {"name": b"Fake RDNA", "warpSize": 32})
    client = request.getfixturevalue("client")
    assert client.launcher.dialect == "hip" and client.launcher.build_options.warp_size == 32
    x = np.random.default_rng(5).standard_normal((6, 40)).astype(np.float32)
    _run(client, lambda v: jax.nn.softmax(v, axis=-1), x)
    assert {k.warp_size for k in fake_cupy.KERNELS.values()
            if k.name in fake_cupy.LAUNCHES} == {32}


def _every_kind_of_kernel(x, i, u, a, b, image, kernel):
    """Row and column reductions, a vectorized loop, a transpose, scatters with atomics
    and compare-and-swap, a gather, a sort, a small dot and a convolution."""
    conv = jax.lax.conv_general_dilated(image, kernel, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return (jax.nn.softmax(x, axis=-1), x.sum(0), jax.nn.gelu(x), x.T * 2,
            x.at[i].add(u), x.at[i].max(u), jnp.take(x, i, axis=0), jnp.sort(x, -1),
            a @ b, conv)


def test_on_rocm_the_launcher_renders_hip_for_64_lane_wavefronts(rocm_client, tmp_path):
    rng = np.random.default_rng(4)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    args = (f32(6, 40), np.array([4, 1, 4], np.int32), f32(3, 40), f32(5, 7), f32(7, 3),
            f32(1, 4, 4, 2), f32(3, 3, 2, 3))
    [device] = rocm_client.devices()
    assert repr(device) == "RocmDevice(id=0)" and str(device) == "rocm:0"
    executable = _run(rocm_client, _every_kind_of_kernel, *args)
    assert "host" not in executable.text("kernels"), executable.text("kernels")
    kernels = [k for fk in executable.program.kernels for k in fk.kernels]
    assert kernels and {k.warp_size for k in kernels} == {64}
    # hiprtc through RawModule(code=...): NVRTC's persistent cache is CUDA's alone
    assert [s.splitlines()[0] for s in fake_cupy.SOURCES] == ["#define JL_HIP 1"]
    assert not fake_cupy.COMPILED and not fake_cupy.LOADED
    assert executable.text("cuda") == fake_cupy.SOURCES[0]
    if HIPCC is not None:  # (the numbers above stand without it)
        errors = compile_kernels(kernels, tmp_path, "hip")
        assert not any(errors.values()), errors
