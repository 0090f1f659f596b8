"""Convolutions on the gpu backend: an im2col kernel and one GEMM (`convolution`), against
the cpu backend, for the layouts, strides, paddings, dilations, feature groups and window
reversals JAX's convolutions and their gradients make; the kernels compiled with nvcc."""
from __future__ import annotations

import numpy as np
import pytest
from gpu_testing import assert_close, compile_kernels, gpu_backend, needs_nvcc

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.config import config

lax = jax.lax


@pytest.fixture(scope="module")
def backend():
    return gpu_backend()


def _random(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _executable(backend, fn, *args):
    return jax.jit(fn, backend=backend).lower(*args).compile().runtime_executable()


def check(backend, fn, *args):
    got = jax.jit(fn, backend=backend)(*args)
    with config.override("jax_platforms", ""):
        want = jax.jit(fn, backend="cpu")(*args)
    for k, (g, w) in enumerate(zip(jax.tree.leaves(got), jax.tree.leaves(want))):
        assert_close(np.asarray(g), np.asarray(w), f"leaf {k}")
    return _executable(backend, fn, *args).text("kernels")


def _nhwc(x, w, **kw):
    return lax.conv_general_dilated(x, w, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


PROGRAMS = {
    # the bench's convolution, small
    "nhwc_same": (lambda x, w: _nhwc(x, w, window_strides=(1, 1), padding="SAME"),
                  (_random((2, 5, 6, 3)), _random((3, 3, 3, 4), 1))),
    "nchw_strided_valid": (lambda x, w: lax.conv(x, w, (2, 1), "VALID"),
                           (_random((2, 3, 7, 6)), _random((4, 3, 3, 2), 1))),
    "dilated_window": (lambda x, w: _nhwc(x, w, window_strides=(1, 2), padding=((2, 1), (0, 1)),
                                          rhs_dilation=(2, 1)),
                       (_random((1, 7, 7, 2)), _random((2, 3, 2, 3), 1))),
    "transposed_lhs_dilation": (lambda x, w: _nhwc(x, w, window_strides=(1, 1),
                                                   padding=((1, 1), (2, 2)),
                                                   lhs_dilation=(2, 2)),
                                (_random((1, 3, 4, 2)), _random((2, 3, 2, 2), 1))),
    "feature_groups": (lambda x, w: _nhwc(x, w, window_strides=(1, 1), padding="SAME",
                                          feature_group_count=2),
                       (_random((2, 4, 4, 4)), _random((3, 3, 2, 6), 1))),
    "one_dimensional": (lambda x, w: lax.conv_general_dilated(
        x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")),
                        (_random((3, 9, 2)), _random((4, 2, 5), 1))),
    "with_bias_and_relu": (lambda x, w, b: jax.nn.relu(_nhwc(
        x, w, window_strides=(1, 1), padding="SAME") + b),
                           (_random((2, 4, 5, 3)), _random((3, 3, 3, 4), 1), _random(4, 2))),
    # the gradients: a reversed window (input) and batch/feature swapped (filter)
    "gradients": (jax.grad(lambda x, w: jnp.sum(jnp.tanh(_nhwc(
        x, w, window_strides=(2, 1), padding="SAME"))), argnums=(0, 1)),
                  (_random((2, 5, 4, 3)), _random((3, 2, 3, 2), 1))),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_im2col_and_gemm_match_the_cpu_backend(backend, name):
    fn, args = PROGRAMS[name]
    plan = check(backend, fn, *args)
    assert "host" not in plan and "xp+kernel" in plan, plan


@needs_nvcc
def test_every_kernel_compiles_with_nvcc(backend, tmp_path):
    kernels = []
    for name, (fn, args) in sorted(PROGRAMS.items()):
        for fk in _executable(backend, fn, *args).program.kernels:
            kernels += [k.__class__(**{**k.__dict__, "name": f"{name}_{k.name}"})
                        for k in fk.kernels]
    errors = compile_kernels(kernels, tmp_path)
    assert sum("im2col" in k.notes[0] for k in kernels) >= len(PROGRAMS)
    assert not any(errors.values()), {k: v for k, v in errors.items() if v}


def test_an_integer_convolution_runs_on_the_device(backend):
    x, w = np.ones((1, 4, 4, 1), np.int32), np.ones((2, 2, 1, 1), np.int32)
    plan = check(backend, lambda x, w: _nhwc(x, w, window_strides=(1, 1), padding="VALID"),
                 x, w)
    assert "xp+kernel %convolution" in plan and "host" not in plan, plan
