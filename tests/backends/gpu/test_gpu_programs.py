"""Every kernel the gpu builders make for a set of jitted programs, run in the kernel
interpreter against the HLO evaluator, and compiled with nvcc; built again for AMD's
64-lane wavefronts, run likewise and compiled as HIP with hipcc (where it is installed).

Each program is jitted, its optimized module taken from `Compiled.runtime_executable()`,
and each fusion's kernels run on random operands and compared with the evaluator's value
of the fused computation. Launches are kept small (few blocks of few threads) so that the
grid-stride loops and row loops go round more than once.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from gpu_testing import (assert_close, compile_kernels, needs_hipcc, needs_nvcc,
                         require_gpu, run_fusion_on_device)

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends.gpu.build import BuildOptions, build_fusion, build_module
from jaxlite.backends.gpu.reference_run import run_fusion
from jaxlite.backends.gpu.render import render_many
from jaxlite.xla.evaluator import evaluate_computation
from jaxlite.xla.passes.tiling import tiling_of

f32, bf16, f16, i32 = jnp.float32, jnp.bfloat16, jnp.float16, jnp.int32
SMALL = BuildOptions(block=64, row_block=64, max_blocks=3)
# rows longer than 64 take a block each, so that the block-per-row kernel is tested too
BLOCK_ROWS = dataclasses.replace(SMALL, warp_row_limit=64)
WARP_64 = BuildOptions(warp_size=64, block=128, row_block=128, max_blocks=2)


def _layernorm(x):
    mean = jnp.mean(x, -1, keepdims=True)
    return (x - mean) / jnp.sqrt(jnp.var(x, -1, keepdims=True) + 1e-5)


def _integer_mix(x):
    return jnp.where(x % 3 == 0, x // 2, -x) + jnp.arange(x.shape[1], dtype=x.dtype)


# name: (function, argument shapes and dtypes, build options, kernel kinds expected)
PROGRAMS = {
    "elementwise_chain": (lambda x: jnp.where(x > 0, x * 2 + 1, jnp.exp(x)).astype(bf16),
                          [((8, 33), f32)], SMALL, {"loop"}),
    "gelu": (jax.nn.gelu, [((8, 33), f32)], SMALL, {"loop"}),
    "gelu_bf16": (jax.nn.gelu, [((6, 20), bf16)], SMALL, {"loop"}),
    "sigmoid_f16": (lambda x: jax.nn.sigmoid(x) * 3 + 1, [((5, 7), f16)], SMALL, {"loop"}),
    "bias_broadcast": (lambda x, b: jnp.tanh(x + b[None, :]), [((8, 33), f32), ((33,), f32)],
                       SMALL, {"loop"}),
    "integer_mix": (_integer_mix, [((6, 10), i32)], SMALL, {"loop"}),
    "erf_inv": (lambda x: jax.lax.erf_inv(jnp.tanh(x)) * 2, [((6, 9), f32)], SMALL,
                {"loop"}),
    "population_count": (lambda x: jax.lax.population_count(x) + jax.lax.population_count(
        x.astype(jnp.uint8)).astype(i32), [((5, 7), i32)], SMALL, {"loop"}),
    "saturating_convert": (lambda x: (x * 1e10).astype(i32), [((4, 9), f32)], SMALL,
                           {"loop"}),
    "transpose_2d": (lambda x: x.T * 2, [((8, 33), f32)], SMALL, {"transpose"}),
    "transpose_tiles": (lambda x, y: jnp.exp(x.T) + y, [((40, 70), f32), ((70, 40), f32)],
                        SMALL, {"transpose"}),
    "transpose_bf16": (lambda x: (x.T * 3).astype(f32), [((9, 35), bf16)], SMALL,
                       {"transpose"}),
    "transpose_3d": (lambda x: jnp.transpose(x, (2, 0, 1)) + 1, [((2, 3, 4), f32)], SMALL,
                     {"transpose"}),
    "transpose_keeps_minor": (lambda x: jnp.transpose(x, (1, 0, 2)) * 2, [((3, 4, 5), f32)],
                              SMALL, {"loop"}),
    "slice_reverse": (lambda x: x[:, ::2][::-1] * 3, [((6, 9), f32)], SMALL, {"loop"}),
    "concatenate": (lambda x: jnp.sin(jnp.concatenate([x, x * 2], axis=1)),
                    [((4, 6), f32)], SMALL, {"loop"}),
    "pad": (lambda x: jnp.exp(jnp.pad(x, ((1, 2), (0, 3)))), [((4, 5), f32)], SMALL,
            {"loop"}),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), [((8, 33), f32)], SMALL, {"row"}),
    "softmax_bf16": (lambda x: jax.nn.softmax(x, axis=-1), [((4, 40), bf16)], SMALL, {"row"}),
    "softmax_block_rows": (lambda x: jax.nn.softmax(x, axis=-1), [((3, 100), f32)],
                           BLOCK_ROWS, {"row"}),
    "softmax_warp64": (lambda x: jax.nn.softmax(x, axis=-1), [((5, 70), f32)], WARP_64,
                       {"row"}),
    "layernorm": (_layernorm, [((8, 33), f32)], SMALL, {"row"}),
    "layernorm_block_rows": (_layernorm, [((2, 130), f32)], BLOCK_ROWS, {"row"}),
    "sum_last_axis": (lambda x: x.sum(-1), [((5, 50), f32)], SMALL, {"row"}),
    # the row sums reshaped to (1, 5, 1) inside the reduction's fusion
    "sum_reshaped": (lambda x: (x.sum(-1) * 2).reshape(1, 5, 1), [((5, 50), f32)], SMALL,
                     {"full"}),
    "max_reshaped_rows": (lambda x: x.max(-1).reshape(1, 70), [((70, 6), f32)], SMALL,
                          {"row"}),
    "sum_first_axis": (lambda x: x.sum(0), [((40, 33), f32)], SMALL, {"column"}),
    "sum_all": (lambda x: x.sum(), [((8, 33), f32)], SMALL, {"row"}),
    "sum_all_large": (lambda x: x.sum(), [((20, 500), f32)], SMALL, {"full"}),
    "mean_var_first_axis": (lambda x: (jnp.mean(x, 0), jnp.var(x, 0)), [((16, 12), f32)],
                            SMALL, {"column", "loop"}),
    "sum_outer_and_inner_axes": (lambda x: x.sum((0, 2)), [((4, 5, 6), f32)], SMALL,
                                 {"full"}),
    "max_middle_axis": (lambda x: x.max(1), [((4, 6, 5), f32)], SMALL, {"column"}),
    "min_int_last_axis": (lambda x: x.min(-1), [((6, 7), i32)], SMALL, {"row"}),
    "multi_output_loop": (lambda x: (jnp.sin(x) * 2, jnp.cos(x) + 1), [((8, 12), f32)],
                          SMALL, {"loop"}),
    "sum_and_sum_of_squares": (lambda x: (x.sum(-1), (x * x).sum(-1)), [((8, 12), f32)],
                               SMALL, {"full"}),
    # a reduce of (value, index) pairs by argmax's comparator: two loop kernels
    "argmax_rows": (lambda x: jnp.argmax(x, -1), [((6, 40), f32)], SMALL, {"variadic"}),
    "argmin_all_with_min": (lambda x: (jnp.argmin(x), jnp.min(x, 0)), [((20, 50), f32)],
                            SMALL, {"variadic", "column"}),
    "any_last_axis": (lambda x: jnp.any(x > 1, axis=-1), [((6, 40), f32)], SMALL, {"row"}),
    # data-dependent reads: start indices from -20 to 20 test XLA's clamping
    "dynamic_slice": (lambda x, i: jnp.exp(jax.lax.dynamic_slice(x, (i, 1), (3, 5))),
                      [((7, 9), f32), ((), i32)], SMALL, {"loop"}),
    "dynamic_update_slice": (lambda x, u, i: jax.lax.dynamic_update_slice(
        x, jnp.tanh(u), (i, 2)) * 2, [((6, 8), f32), ((2, 3), f32), ((), i32)], SMALL,
                             {"loop"}),
    "gather_rows": (lambda x, idx: jnp.sin(jnp.take(x, idx, axis=0, mode="clip")),
                    [((9, 6), f32), ((5,), i32)], SMALL, {"loop"}),
    "gather_along_axis": (lambda x, idx: jnp.take_along_axis(x, idx % 5, axis=1) + 1,
                          [((4, 5), f32), ((4, 3), i32)], SMALL, {"loop", "row"}),
    # a reduction of a reduction (cross-entropy's mean of row sums): two stages
    "nested_reductions": (lambda z, y: -jnp.mean(jnp.sum(y * jax.nn.log_softmax(z), -1)),
                          [((12, 10), f32), ((12, 10), f32)], SMALL, {"row"}),
    # outputs of different shapes in one fusion: built output by output
    "sum_and_scaled_input": (lambda x: (x.sum(), x * 3.0), [((6, 10), f32)], SMALL,
                             {"row", "loop"}),
}


def _kind(notes: tuple[str, ...]) -> str:
    note = notes[0]
    return note.split()[0]


def _random(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(-20, 20, shape).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    return rng.standard_normal(shape).astype(dtype)


def _warp64(options: BuildOptions) -> BuildOptions:
    """`options` for 64-lane wavefronts (rows per block and loops kept small)."""
    return dataclasses.replace(options, warp_size=64, block=128, row_block=128)


def _program_kernels(name: str, wavefront: bool = False):
    fn, specs, options, _ = PROGRAMS[name]
    options = _warp64(options) if wavefront else options
    args = [jnp.zeros(shape, dtype) for shape, dtype in specs]
    module = jax.jit(fn).lower(*args).compile().runtime_executable().hlo_module(
        optimized=True)
    # a prefix per program keeps kernel names apart when all are compiled together
    return build_module(module, dataclasses.replace(options, name_prefix=f"jl_{name}"))


@pytest.fixture(scope="module")
def built():
    return {name: _program_kernels(name) for name in PROGRAMS}


@pytest.fixture(scope="module")
def built_warp64():
    return {name: _program_kernels(name, wavefront=True) for name in PROGRAMS}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kernels_match_the_evaluator(name, built):
    _check_against_the_evaluator(name, built[name])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_wavefront_kernels_match_the_evaluator(name, built_warp64):
    kernels = built_warp64[name]
    assert {k.warp_size for _, fk in kernels.fusions for k in fk.kernels} == {64}
    _check_against_the_evaluator(name, kernels)


def _check_against_the_evaluator(name, kernels):
    assert kernels.fusions, f"{name}: no fusion in the optimized module"
    assert not kernels.unsupported, f"{name}: {kernels.unsupported}"
    kinds = {_kind(k.notes) for _, fk in kernels.fusions for k in fk.kernels}
    assert kinds == PROGRAMS[name][3]
    rng = np.random.default_rng(sum(map(ord, name)))
    for inst, fk in kernels.fusions:
        operands = [_random(o.shape.dims, o.shape.dtype, rng) for o in inst.operands]
        want = evaluate_computation(inst.called[0], operands)
        want = list(want) if isinstance(want, tuple) else [want]
        got = run_fusion(fk, operands)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{name}: %{inst.name} output {k}")


@pytest.fixture(scope="module")
def nvcc_errors(built, tmp_path_factory):
    """Kernel name -> nvcc's errors, all programs compiled in one run."""
    kernels = [kernel for name in sorted(built) for _, fk in built[name].fusions
               for kernel in fk.kernels]
    return compile_kernels(kernels, tmp_path_factory.mktemp("nvcc"))


@needs_nvcc
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kernels_compile_with_nvcc(name, built, nvcc_errors):
    names = [k.name for _, fk in built[name].fusions for k in fk.kernels]
    assert names and all(n in nvcc_errors for n in names)
    failures = {n: nvcc_errors[n] for n in names if nvcc_errors[n]}
    assert not failures, failures


def test_hip_sources_differ_from_cuda_only_in_the_dialect_switch(built_warp64):
    kernels = [k for name in sorted(built_warp64) for _, fk in built_warp64[name].fusions
               for k in fk.kernels]
    cuda, hip = (render_many(kernels, d).splitlines() for d in ("cuda", "hip"))
    assert [(a, b) for a, b in zip(cuda, hip) if a != b] == [("#define JL_HIP 0",
                                                             "#define JL_HIP 1")]
    assert len(cuda) == len(hip)


@needs_hipcc
def test_wavefront_kernels_compile_as_hip(built_warp64, tmp_path):
    kernels = [k for name in sorted(built_warp64) for _, fk in built_warp64[name].fusions
               for k in fk.kernels]
    errors = compile_kernels(kernels, tmp_path, "hip")
    assert len(errors) == len(kernels)
    failures = {n: e for n, e in errors.items() if e}
    assert not failures, failures


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_kernels_on_the_device_match_the_interpreter(name, built):
    require_gpu()
    rng = np.random.default_rng(sum(map(ord, name)))
    for inst, fk in built[name].fusions:
        operands = [_random(o.shape.dims, o.shape.dtype, rng) for o in inst.operands]
        want = run_fusion(fk, operands)
        for k, (g, w) in enumerate(zip(run_fusion_on_device(fk, operands), want)):
            assert_close(g, w, f"{name}: %{inst.name} output {k} on the device")


@pytest.mark.parametrize("min_rows, kind", [(4, "row"), (100, "full")])
def test_many_rows_take_a_row_kernel_whatever_the_cpu_tiling_says(min_rows, kind):
    # the cpu tiling gives rows longer than its L1 cache no row kernel; the gpu decides
    # by the number of rows (the tiling is edited here: such rows are slow to interpret)
    x = jnp.zeros((5, 50), f32)
    module = jax.jit(lambda x: x.sum(-1)).lower(x).compile().runtime_executable() \
        .hlo_module(optimized=True)
    fusion = next(i for i in module.entry.instructions if i.opcode.text == "fusion")
    tiling = dataclasses.replace(tiling_of(fusion), row_kernel=False)
    fusion = fusion.replace(attrs={**fusion.attrs, "tiling": tiling})
    kernels = build_fusion(fusion, dataclasses.replace(SMALL, row_kernel_min_rows=min_rows))
    assert _kind(kernels.kernels[0].notes) == kind
    operand = np.random.default_rng(1).standard_normal((5, 50)).astype(np.float32)
    assert_close(run_fusion(kernels, [operand])[0],
                 evaluate_computation(fusion.called[0], [operand]), kind)


def test_fusions_without_a_builder_are_listed_with_the_reason():
    x = jnp.zeros((4, 4), f32)
    module = jax.jit(lambda x: jnp.tanh(x @ x)).lower(x).compile().runtime_executable() \
        .hlo_module(optimized=True)
    kernels = build_module(module)
    reasons = [why for _, why in kernels.unsupported]
    assert reasons and all("no gpu kernel builder yet" in why for why in reasons), reasons
