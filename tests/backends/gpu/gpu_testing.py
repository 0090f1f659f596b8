"""Helpers of the gpu backend tests: compiling rendered kernels with nvcc (one compiler
run for many kernels, since each run costs about a second), and comparing results at a
dtype's tolerance."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import fake_cupy
import numpy as np
import pytest

from jaxlite.backends import registry
from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.backends.gpu import launchers
from jaxlite.backends.gpu.reference_run import from_memory_order, to_memory_order
from jaxlite.backends.gpu.render import render_many
from jaxlite.config import config

NVCC = shutil.which("nvcc")
HIPCC = shutil.which("hipcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed, so rendered "
                                "CUDA kernels cannot be compiled here")
needs_hipcc = pytest.mark.skipif(HIPCC is None, reason="hipcc is not installed, so "
                                 "rendered HIP kernels cannot be compiled here")


def compile_kernels(kernels: Sequence[ir.Kernel], folder: Path,
                    dialect: str = "cuda") -> dict[str, str]:
    """Compiles every kernel in one translation unit; kernel name -> its compiler errors
    ("" when it compiled), errors found by the lines each kernel occupies."""
    source = render_many(kernels, dialect)
    path = folder / ("kernels.cu" if dialect == "cuda" else "kernels.hip")
    path.write_text(source)
    lines = source.splitlines()
    starts = [(n + 1, m.group(1)) for n, line in enumerate(lines)
              if (m := re.search(r"__global__ void __launch_bounds__\(\d+\) (\w+)\(", line))]
    if dialect == "cuda":
        command = [NVCC, "--ptx", "-arch=sm_90", str(path), "-o", str(folder / "k.ptx")]
    else:
        command = [HIPCC, "--genco", "--offload-arch=gfx90a", str(path), "-o",
                   str(folder / "k.co")]
    # hipcc compiles through nvcc where it finds one unless told the target is AMD's
    environment = {**os.environ, "HIP_PLATFORM": "amd"} if dialect == "hip" else None
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env=environment)
    errors = {name: "" for _, name in starts}
    if done.returncode != 0:
        found = False
        for match in re.finditer(rf"{re.escape(path.name)}\((\d+)\): (error.*)",
                                 done.stderr):
            line = int(match.group(1))
            owner = [name for start, name in starts if start <= line]
            if owner:
                errors[owner[-1]] += match.group(2) + "\n"
                found = True
        if not found:  # an error outside any kernel (the header): every kernel fails
            errors = {name: done.stderr[-2000:] for name in errors}
    return errors


TOLERANCES = {"float64": 1e-12, "float32": 2e-5, "float16": 2e-3, "bfloat16": 2e-2}


def assert_close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal for integers and bools; within the dtype's tolerance (relative to the
    result's size) for floats."""
    assert got.shape == want.shape and got.dtype == want.dtype, what
    name = want.dtype.name
    if name not in TOLERANCES:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = max(1.0, float(np.nanmax(np.abs(w), initial=0.0)))
    np.testing.assert_allclose(g, w, rtol=TOLERANCES[name], atol=TOLERANCES[name] * scale,
                               err_msg=what)


def require_gpu():
    """CuPy, or a skip saying why there is no GPU run."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed: no GPU run")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy without a driver raises its own runtime errors
        pytest.skip(f"CuPy sees no GPU: {error}")
    if count == 0:
        pytest.skip("CuPy sees no GPU")
    return cupy


def run_fusion_on_device(kernels, operands):
    """Like `reference_run.run_fusion`, on a GPU through CuPy (NVRTC or hiprtc)."""
    cupy = require_gpu()
    dialect = "hip" if getattr(cupy.cuda.runtime, "is_hip", False) else "cuda"
    if kernels.kernels[0].warp_size != (64 if dialect == "hip" else 32):
        pytest.skip(f"kernels for {kernels.kernels[0].warp_size}-lane warps, a {dialect} "
                    "device")
    module = cupy.RawModule(code=render_many(kernels.kernels, dialect),
                            options=("-std=c++17",))
    memory = {b.name: cupy.asarray(to_memory_order(x, shape))
              for (b, shape), x in zip(kernels.inputs, operands)}
    for buffer, shape in kernels.outputs:
        memory[buffer.name] = cupy.zeros(int(np.prod(shape.dims)), ir.dtype_of(buffer.dtype))
    for buffer in kernels.scratch:
        memory[buffer.name] = cupy.zeros(buffer.size, ir.dtype_of(buffer.dtype))
    for kernel in kernels.kernels:
        function = module.get_function(kernel.name)
        function((kernel.grid,), (kernel.block,), tuple(memory[b.name] for b in kernel.params))
    return [from_memory_order(cupy.asnumpy(memory[b.name]), shape)
            for b, shape in kernels.outputs]


def gpu_backend() -> str:
    """The backend end-to-end tests run on: "gpu" where it starts; else "gpu-interpreter",
    unless JAXLITE_PLATFORMS / jax_platforms asks for the GPU (then a skip saying why
    there is none)."""
    chosen = registry.parse_platforms(config.read("jax_platforms"))
    with config.override("jax_platforms", ""):
        try:
            registry.get_backend("gpu")
            return "gpu"
        except RuntimeError as error:
            if "gpu" in chosen:
                pytest.skip(f"jax_platforms asks for the GPU, which does not start: {error}")
    return "gpu-interpreter"


def use_fake_cupy(patch: pytest.MonkeyPatch) -> None:
    """Point CuPy's name at `fake_cupy` (until `patch.undo()`), and have the launcher hand
    it each kernel's IR as it renders them: fake_cupy runs the IR in place of compiled
    code."""
    patch.setitem(sys.modules, "cupy", fake_cupy)
    render = launchers.render_many

    def recording(kernels, dialect="cuda"):
        kernels = list(kernels)
        fake_cupy.KERNELS.update({k.name: k for k in kernels})
        return render(kernels, dialect)
    patch.setattr(launchers, "render_many", recording)


def take_transfers() -> list[tuple[str, int]]:
    """The transfers fake_cupy recorded since the last call (and forget them)."""
    done = list(fake_cupy.TRANSFERS)
    fake_cupy.TRANSFERS.clear()
    return done
