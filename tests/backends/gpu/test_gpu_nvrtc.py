"""Every kernel the gpu tests render, compiled by NVRTC (the compiler jaxlite runs at run
time, which needs no GPU) through `kernel_cache.compile_payload` with exactly the
launcher's options for sm_90: the nvcc tests check the C; these check what NVRTC, with
no system headers and its own option parser, accepts. Skipped with the reason where no
NVRTC library is found (see nvrtc_testing)."""
from __future__ import annotations

import dataclasses
import importlib
import os

import numpy as np
import pytest
import test_gpu_backend
import test_gpu_convolution
import test_gpu_programs
import test_gpu_sort
import test_gpu_updates
import test_gpu_workloads
from gpu_testing import gpu_backend
from nvrtc_testing import cuda_headers, cupy_like, find_nvrtc
from test_gpu_render import _typed_kernels

import jaxlite as jax
from jaxlite.backends.gpu import kernel_cache, launchers
from jaxlite.backends.gpu.fusion_kernels import BuildOptions
from jaxlite.backends.gpu.gemm_kernels import build_tiled_gemm
from jaxlite.backends.gpu.render import render_many

NVRTC, FOUND = find_nvrtc()
HEADERS = cuda_headers()
pytestmark = [
    pytest.mark.skipif(NVRTC is None, reason=FOUND),
    pytest.mark.skipif(HEADERS is None, reason="no cuda_fp16.h / cuda_bf16.h here (neither "
                       "the nvidia-cuda-runtime wheel nor a CUDA toolkit): NVRTC has none"),
]
# What `CupyLauncher` builds for a CUDA device (warps of 32).
CUPY_OPTIONS = BuildOptions(warp_size=32, block=256, row_block=128, max_blocks=4096)


def _renamed(kernels, prefix):
    return [dataclasses.replace(k, name=f"{prefix}_{k.name}") for k in kernels]


def _executable_kernels(module, programs):
    """The kernels of each program of a test module's PROGRAMS, as its nvcc test builds
    them (the gpu backend's executables)."""
    kernels = []
    for name, entry in sorted(programs.items()):
        fn, args = entry[0], entry[1]
        executable = module._executable(gpu_backend(), fn, *args)
        kernels += _renamed([k for fk in executable.program.kernels for k in fk.kernels],
                            name)
    return kernels


def _programs(options):
    kernels = []
    for name, (fn, specs, _, _) in sorted(test_gpu_programs.PROGRAMS.items()):
        built = test_gpu_programs._program_kernels(name)
        if options is not None:  # the same program built for a CUDA device
            args = [np.zeros(shape, dtype) for shape, dtype in specs]
            module = jax.jit(fn).lower(*args).compile().runtime_executable().hlo_module(
                optimized=True)
            built = test_gpu_programs.build_module(
                module, dataclasses.replace(options, name_prefix=f"jc_{name}"))
        kernels += [k for _, fk in built.fusions for k in fk.kernels]
    return kernels


def _gemms():
    pairs = (("float32", "float32", "float32"), ("float64", "float64", "float64"),
             ("bfloat16", "float32", "bfloat16"), ("int8", "uint64", "int32"),
             ("int32", "uint64", "int32"), ("uint8", "uint64", "uint32"),
             ("int64", "uint64", "int64"))
    return [build_tiled_gemm(f"gemm_{t}_{out}", 2, 5, 3, 19, (t, t), acc, out, options)
            .kernels[0] for t, acc, out in pairs
            for options in (BuildOptions(name_prefix="i"),)] + [
        build_tiled_gemm(f"gemm_cuda_{t}", 2, 20, 30, 40, (t, t), acc, out, CUPY_OPTIONS)
        .kernels[0] for t, acc, out in pairs[:3]]


def _workloads():
    kernels = []
    for name, (fn, make_args) in sorted(test_gpu_workloads.WORKLOADS.items()):
        executable = jax.jit(fn, backend=gpu_backend()).lower(*make_args()).compile() \
            .runtime_executable()
        kernels += _renamed([k for fk in executable.program.kernels for k in fk.kernels],
                            name)
    return kernels


def _backend_mlp():
    m = test_gpu_backend
    params, x, y = m._mlp_params(), m._random((5, 6), seed=5), m._random((5, 3), seed=6)
    executable = m._executable(gpu_backend(), jax.value_and_grad(m._mlp_loss), params, x, y)
    return [k for fk in executable.program.kernels for k in fk.kernels]


CORPUS = {
    "programs": lambda: _programs(None),
    "programs_cuda_launch": lambda: _programs(CUPY_OPTIONS),
    "typed": _typed_kernels,
    "gemm": _gemms,
    "sort": lambda: _executable_kernels(test_gpu_sort, test_gpu_sort.PROGRAMS),
    "updates": lambda: _executable_kernels(test_gpu_updates, test_gpu_updates.PROGRAMS),
    "convolution": lambda: _executable_kernels(test_gpu_convolution,
                                               test_gpu_convolution.PROGRAMS),
    "backend_mlp": _backend_mlp,
    "workloads": _workloads,
}


def _compile(kernels):
    """The launcher's compilation of `kernels` as one module, for sm_90."""
    source = render_many(kernels, "cuda")
    cupy = cupy_like(NVRTC, os.path.dirname(HEADERS))
    return kernel_cache.compile_payload(cupy, source, launchers._OPTIONS, "90")


@pytest.mark.parametrize("group", sorted(CORPUS))
def test_every_kernel_compiles_with_nvrtc(group):
    kernels = CORPUS[group]()
    assert kernels and len({k.name for k in kernels}) == len(kernels), group
    payload = _compile(kernels)  # RuntimeError with NVRTC's log where it refuses
    kind, _, cubin = payload.partition(b"\n")
    assert kind == b"cubin" and cubin.startswith(b"\x7fELF"), kind
    missing = [k.name for k in kernels if k.name.encode() not in cubin]
    assert not missing, missing  # every kernel is an entry of the cubin


def test_an_nvrtc_error_comes_with_its_log():
    with pytest.raises(RuntimeError) as excinfo:
        kernel_cache.compile_payload(cupy_like(NVRTC, os.path.dirname(HEADERS)),
                                     'extern "C" __global__ void k() { undeclared = 1; }',
                                     launchers._OPTIONS, "90")
    assert 'identifier "undeclared" is undefined' in str(excinfo.value)


def test_the_headers_are_found_as_the_launcher_finds_them(monkeypatch):
    """Without a toolkit folder NVRTC cannot open cuda_fp16.h; with CUDA_PATH (one of
    the places `kernel_cache` looks, as CuPy does) it can."""
    source = render_many(_typed_kernels()[:1], "cuda")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.setenv("CUDA_PATH", os.path.dirname(HEADERS))
    payload = kernel_cache.compile_payload(cupy_like(NVRTC, None), source,
                                           launchers._OPTIONS, "90")
    assert payload.startswith(b"cubin\n\x7fELF")


def test_the_fallback_through_cupys_raw_module_compiles_them_too():
    """Where jaxlite's own compilation fails, `RawModule(code=...)` compiles the module
    with CuPy's options added to the launcher's: its include folders, -ftz=true and
    --device-as-default-execution-space (CuPy 14's `_compile_with_cache_cuda`)."""
    core = pytest.importorskip("cupy._core.core", reason="CuPy does not import here")
    assemble = getattr(core, "assemble_cupy_compiler_options", None)
    if assemble is None:
        pytest.skip("this CuPy has no assemble_cupy_compiler_options to read its options")
    options = (*assemble(launchers._OPTIONS), "-ftz=true", "-arch=sm_90",
               "--device-as-default-execution-space")
    nvrtc = importlib.import_module("cupy").cuda.nvrtc
    kernels = _programs(None) + _gemms()
    program = nvrtc.createProgram(render_many(kernels, "cuda"), "kern.cu", (), ())
    try:
        nvrtc.compileProgram(program, options)
        cubin = bytes(nvrtc.getCUBIN(program))
    finally:
        nvrtc.destroyProgram(program)
    assert all(k.name.encode() in cubin for k in kernels)
