"""Sort on the gpu backend: the bitonic-sort kernel (a block per row, the comparator
compiled as kernel IR, ties by position) against the cpu backend, CuPy's sort (`xp`) for
long rows with a plain order, and the host for long rows with any other comparator; the
kernels compiled with nvcc."""
from __future__ import annotations

import numpy as np
import pytest
from gpu_testing import compile_kernels, gpu_backend, needs_nvcc

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends.gpu.sort_kernels import _stages
from jaxlite.config import config

bf16 = jnp.bfloat16


@pytest.fixture(scope="module")
def backend():
    return gpu_backend()


def _rows(shape, seed=0, dtype=np.float32):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[3] = np.nan            # NaN goes last in jnp.sort's order
    flat[5] = flat[8] = flat[1]  # ties keep their order (stability)
    flat[6] = -0.0
    flat[7] = 0.0
    return x


def _executable(backend, fn, *args):
    return jax.jit(fn, backend=backend).lower(*args).compile().runtime_executable()


def check(backend, fn, *args):
    """Exactly the cpu backend's values (a sort moves elements, it computes nothing);
    the plan."""
    got = jax.jit(fn, backend=backend)(*args)
    with config.override("jax_platforms", ""):
        want = jax.jit(fn, backend="cpu")(*args)
    for k, (g, w) in enumerate(zip(jax.tree.leaves(got), jax.tree.leaves(want))):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=f"leaf {k}")
    return _executable(backend, fn, *args).text("kernels")


def _two_keys(x, y):
    position = jnp.broadcast_to(jnp.arange(x.shape[-1]) * 1.0, x.shape)
    return jax.lax.sort((jnp.floor(x * 2), y, position), dimension=1, num_keys=2)


# name: (function, arguments)
PROGRAMS = {
    "sort_rows": (lambda x: jnp.sort(x, axis=-1), (_rows((3, 11)),)),
    "sort_columns": (lambda x: jnp.sort(x, axis=0), (_rows((13, 4)),)),
    "argsort_descending": (lambda x: jnp.argsort(-jnp.round(x), axis=-1), (_rows((4, 9)),)),
    "top_k": (lambda x: jax.lax.top_k(x, 3), (_rows((5, 7)),)),
    "two_keys_and_a_value": (_two_keys, (_rows((2, 12)), _rows((2, 12), seed=1))),
    "sort_integers": (lambda n: jnp.sort(n, axis=-1),
                      (np.random.default_rng(2).integers(-50, 50, (3, 33)).astype(np.int32),)),
    "sort_bfloat16": (lambda x: jnp.sort(x, axis=-1), (_rows((2, 6)).astype(bf16),)),
    "sort_one_row_of_one": (lambda x: jnp.sort(x, axis=-1), (_rows((3, 9))[:, :1],)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_bitonic_kernel_matches_the_cpu_backend(backend, name):
    fn, args = PROGRAMS[name]
    plan = check(backend, fn, *args)
    sorts = [line for line in plan.splitlines() if "= sort" in line]
    assert sorts and all(line.startswith("kernel") for line in sorts), plan
    assert "host" not in plan, plan


@needs_nvcc
def test_every_sort_kernel_compiles_with_nvcc(backend, tmp_path):
    kernels = []
    for name, (fn, args) in sorted(PROGRAMS.items()):
        for fk in _executable(backend, fn, *args).program.kernels:
            kernels += [k.__class__(**{**k.__dict__, "name": f"{name}_{k.name}"})
                        for k in fk.kernels]
    errors = compile_kernels(kernels, tmp_path)
    assert len(errors) == len(kernels) >= len(PROGRAMS)
    assert not any(errors.values()), {k: v for k, v in errors.items() if v}


def test_a_bitonic_network_has_its_stages():
    assert _stages(8) == [(2, 1), (4, 2), (4, 1), (8, 4), (8, 2), (8, 1)]
    assert len(_stages(1024)) == 10 * 11 // 2


@pytest.mark.parametrize("fn", [
    lambda x: jnp.sort(x, axis=-1),                  # NaN-last ascending floats
    lambda x: jax.lax.top_k(x, 4),                   # descending total-order keys
    lambda x: jnp.argsort(jnp.round(x * 3).astype(jnp.int32), axis=-1),
])
def test_long_rows_with_a_plain_order_use_the_array_modules_sort(backend, fn):
    x = _rows((2, 5000))
    plan = check(backend, fn, x)
    assert "xp        %sort" in plan, plan


def test_long_rows_with_another_comparator_run_on_the_host(backend):
    x = _rows((1, 5000))
    plan = check(backend, lambda x: _two_keys(x, x * 2), x)
    assert "host      %sort" in plan and "not a plain order" in plan, plan
