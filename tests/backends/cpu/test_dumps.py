"""JAXLITE_DUMP_DIR on the cpu backend (jaxlite/backends/cpu/dumps.py): after the HLO of
every pass, each compiled program's buffer assignment, LLVM IR before and after -O3, and
assembly, named after the module as the pass dumps are."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backends.registry import get_backend
from jaxlite.config import config

BACKEND_FILES = ["buffer-assignment.txt", "ir-no-opt.ll", "ir-with-opt.ll", "s"]


def mlp_for_dumps(w, b, x):
    return jnp.tanh(x @ w + b) * 0.71234


ARGS = (jnp.ones((64, 32)), jnp.ones(32), jnp.ones((8, 64)))


def _read(folder, name: str) -> str:
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return f.read()


def test_each_program_writes_buffer_assignment_llvm_ir_and_assembly(tmp_path):
    with config.override("jaxlite_dump_dir", str(tmp_path)):
        compiled = jax.jit(mlp_for_dumps).lower(*ARGS).compile()
    files = sorted(os.listdir(tmp_path))
    prefix = "jit_mlp_for_dumps."
    backend = [prefix + stage for stage in BACKEND_FILES]
    # The pass dumps first (numbered), then what the backend made, in the order it ran.
    assert files[-4:] == backend
    assert files[0] == prefix + "0000.input.txt" and files[-5].endswith(".schedule.txt")
    assert all(f.startswith(prefix) for f in files)

    module = compiled.runtime_executable().hlo_module()
    assignment = _read(tmp_path, prefix + "buffer-assignment.txt")
    # Each parameter in an allocation of its own size; the result; the arena's values.
    for param, nbytes in zip(module.entry.parameters, (64 * 32 * 4, 32 * 4, 8 * 64 * 4)):
        assert f"%{param.name}: {nbytes} B at 0" in assignment
    assert f"output {{0}}, {8 * 32 * 4} B" in assignment
    assert f"%{module.entry.root.name}" in assignment
    assert assignment.startswith("BufferAssignment of ")

    no_opt = _read(tmp_path, prefix + "ir-no-opt.ll")
    with_opt = _read(tmp_path, prefix + "ir-with-opt.ll")
    asm = _read(tmp_path, prefix + "s")
    assert "define void @jl_main(" in no_opt and "@kernel.0(" in no_opt
    assert "optnone" in no_opt  # the entry function, compiled as it is
    assert "define void @jl_main(" in with_opt and with_opt != no_opt
    assert "\njl_main:" in asm and "\nkernel.0:" in asm
    assert no_opt == compiled.as_text("llvm")  # the IR the executable was built from
    np.testing.assert_allclose(compiled(*ARGS), np.tanh(64.0 + 1.0) * 0.71234, rtol=1e-6)


def test_loop_bodies_have_their_buffer_assignments(tmp_path):
    def loop_for_dumps(x):
        return jax.lax.fori_loop(0, 7, lambda i, v: jnp.cos(v) * 1.5 + i, x)
    with config.override("jaxlite_dump_dir", str(tmp_path)):
        compiled = jax.jit(loop_for_dumps).lower(jnp.ones(6)).compile()
    module = compiled.runtime_executable().hlo_module()
    (loop,) = [i for i in module.entry.instructions if i.opcode.text == "while"]
    assignment = _read(tmp_path, "jit_loop_for_dumps.buffer-assignment.txt")
    assert f"\ncondition of %{loop.name}: {loop.called[0].name}\n" in assignment
    assert f"of %{loop.name}: " in assignment.split("\nbody")[1]
    assert assignment.count("BufferAssignment of ") == 3  # entry, condition, body


def test_a_program_found_in_the_memory_cache_is_dumped_too(tmp_path):
    def cached_for_dumps(x):
        return jnp.exp(x) * 3.25
    x = jnp.ones(10)
    jax.jit(cached_for_dumps)(x)  # its object code is now in the process's memory cache
    stats = get_backend().stats
    hits = stats["memory_hits"]
    with config.override("jaxlite_dump_dir", str(tmp_path)):
        jax.jit(cached_for_dumps).lower(x).compile()
    assert stats["memory_hits"] == hits + 1
    ir = _read(tmp_path, "jit_cached_for_dumps.ir-no-opt.ll")
    assert "define void @jl_main(" in ir


@pytest.mark.parametrize("transform", ["grad", "vmap"])
def test_transformed_programs_are_dumped(tmp_path, transform):
    def loss_for_dumps(w, x):
        return jnp.sum(jnp.sin(x @ w) ** 2)
    w = jnp.ones((16, 4))
    if transform == "grad":
        f, x = jax.jit(jax.grad(loss_for_dumps)), jnp.ones((2, 16))
    else:
        f, x = jax.jit(jax.vmap(loss_for_dumps, in_axes=(None, 0))), jnp.ones((5, 2, 16))
    with config.override("jaxlite_dump_dir", str(tmp_path)):
        f(w, x)
    dumped = [n for n in os.listdir(tmp_path) if n.endswith(".buffer-assignment.txt")]
    assert len(dumped) == 1
    prefix = dumped[0][:-len("buffer-assignment.txt")]
    assert all(os.path.getsize(tmp_path / (prefix + s)) > 0 for s in BACKEND_FILES)


def test_the_environment_variable_turns_dumps_on(tmp_path):
    script = textwrap.dedent("""
        import jaxlite as jax, jaxlite.numpy as jnp
        print(jax.jit(lambda x: jnp.sqrt(x) + 1.5)(jnp.full(4, 4.0)))
    """)
    env = dict(os.environ, JAXLITE_DUMP_DIR=str(tmp_path / "dumps"))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "[3.5 3.5 3.5 3.5]" in done.stdout
    files = os.listdir(tmp_path / "dumps")
    for stage in BACKEND_FILES:
        assert "jit__lambda." + stage in files
