"""The cpu backend as a backend: the foundation's test records through jit, registration,
text stages, threads, kernels compiled once (the caches of object code are tested in
test_compile_cache.py), errors for what it cannot compile, and generated code that never touches memory outside its buffers (guard pages).
"""
from __future__ import annotations

import ctypes
import mmap

import numpy as np
import pytest
from hypothesis import given, settings

import jaxlite as jax
import jaxlite.numpy as jnp
from cpu_testing import assert_same, cpu_client, module, run_cpu, run_interpreter
from hlo_strategies import hlo_programs
from jaxlite.backends import cpu
from jaxlite.backends.base import CompileOptions
from jaxlite.backends.cpu.codegen.kernel import MAX_LANES
from jaxlite.backends.registry import BackendRegistry
from jaxlite.config import config
from jaxlite.test_util import VALUE_TOLERANCE
from records import all_records

RECORDS = all_records()
CPU = cpu_client().devices()[0]


# --------------------------------------------------------------------- records

@pytest.mark.parametrize("name", sorted(RECORDS))
def test_records_through_jit_match_eager(name):
    record = RECORDS[name]
    unsupported = []
    for dtype in record.dtypes:
        case = record.make_case(np.random.default_rng(7), dtype)
        eager = case.fun(*case.args)
        try:
            compiled = jax.jit(case.fun, device=CPU)(*case.args)
        except NotImplementedError as error:
            unsupported.append(f"{np.dtype(dtype).name}: {error}")
            continue
        for a, e in zip(jax.tree_util.tree_leaves(compiled), jax.tree_util.tree_leaves(eager)):
            a, e = np.asarray(a), np.asarray(e)
            assert a.dtype == e.dtype and a.shape == e.shape
            tol = VALUE_TOLERANCE[np.dtype(a.dtype)]
            if tol == 0:
                np.testing.assert_array_equal(a, e, err_msg=f"{name} {dtype}")
            else:
                np.testing.assert_allclose(a.astype(np.complex128), e.astype(np.complex128),
                                           rtol=tol, atol=tol, equal_nan=True,
                                           err_msg=f"{name} {dtype}")
    # The cpu backend is the default: a primitive it cannot compile is a failure.
    assert not unsupported, "; ".join(unsupported)


def test_unsupported_opcodes_raise_not_implemented_naming_them():
    m = module("""
    %x = f32[5] parameter(0)
    ROOT %s = f32[5] custom-call(%x), custom_call_target="mystery"
    """)
    with pytest.raises(NotImplementedError, match="custom-call"):
        cpu_client().compile(m, CompileOptions())


# ---------------------------------------------------------------- registration

def test_registration_is_lazy_above_the_interpreter_and_selectable():
    registry = BackendRegistry(plugin_group="jaxlite.backends.none")
    cpu.register(registry)
    cpu.register(registry)  # idempotent
    assert [n for n in registry.registered() if n != "gpu"] == ["cpu", "interpreter"]
    assert registry.priority("cpu") > registry.priority("interpreter")
    assert registry.get_backend().platform == "cpu"
    with config.override("jax_platforms", "interpreter"):
        assert registry.get_backend().platform == "interpreter"


def test_text_stages_llvm_and_asm():
    f = jax.jit(lambda x: jnp.tanh(x) * 2.0, device=CPU)
    executable = f.lower(np.ones(40, np.float32)).compile().runtime_executable()
    llvm_ir = executable.text("llvm")
    assert "define void @jl_main" in llvm_ir and f"@jl_tanh_f32x{MAX_LANES}" in llvm_ir
    assert "jl_main:" in executable.text("asm")
    assert "fusion" in executable.text("optimized_hlo")
    with pytest.raises(ValueError, match="no stage 'cuda'"):
        executable.text("cuda")
    assert executable.memory_analysis().generated_code_size_in_bytes > 0


# ----------------------------------------------------------------------- threads

@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_threads_split_large_kernels_with_the_same_results(threads):
    rng = np.random.default_rng(threads)
    x = rng.standard_normal((1537, 1100)).astype(np.float32)
    m = module("""
    %x = f32[1537,1100] parameter(0)
    %e = f32[1537,1100] exponential(%x)
    %c = f32[] constant(0)
    %s = f32[1537] reduce(%e, %c), dimensions={1}, to_apply=%add
    %t = f32[1537,1100] tanh(%x)
    ROOT %r = (f32[1537], f32[1537,1100]) tuple(%s, %t)
    """, """
    %add (a: f32[], b: f32[]) -> f32[] {
      %a = f32[] parameter(0)
      %b = f32[] parameter(1)
      ROOT %c = f32[] add(%a, %b)
    }""")
    assert "jl_parallel_for" in cpu_client().compile(m, CompileOptions()).text("llvm")
    with config.override("jaxlite_cpu_threads", threads):
        actual = run_cpu(m, [x])
    for a, e in zip(actual, run_interpreter(m, [x])):
        assert_same(a, e)


def test_thread_count_option_rejects_nonsense():
    with pytest.raises(ValueError, match="positive number of threads"):
        config.update("jaxlite_cpu_threads", 0)


# ------------------------------------------------------------------------ caches

def test_identical_kernels_are_emitted_once():
    m = module("""
    %x = f32[100] parameter(0)
    %y = f32[100] parameter(1)
    %a = f32[100] tanh(%x)
    %b = f32[100] tanh(%y)
    %c = f32[100] sine(%a)
    %d = f32[100] sine(%b)
    ROOT %t = (f32[100], f32[100]) tuple(%c, %d)
    """)
    llvm_ir = cpu_client().compile(m, CompileOptions()).text("llvm")
    assert llvm_ir.count("define internal void @kernel.") == 1


# ------------------------------------------------------------------- guard pages

_LIBC = ctypes.CDLL(None)
_LIBC.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_PAGE = mmap.PAGESIZE


class _Guarded:
    """`size` bytes that end where an inaccessible page begins, after another one."""

    def __init__(self, size: int) -> None:
        pages = -(-max(size, 1) // _PAGE)
        self.map = mmap.mmap(-1, (pages + 2) * _PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        assert _LIBC.mprotect(base, _PAGE, 0) == 0
        assert _LIBC.mprotect(base + (pages + 1) * _PAGE, _PAGE, 0) == 0
        self.address = base + (pages + 1) * _PAGE - size
        self.size = size

    def array(self, dtype: np.dtype, dims: tuple[int, ...]) -> np.ndarray:
        raw = (ctypes.c_char * max(self.size, 1)).from_address(self.address)
        return np.frombuffer(raw, dtype=np.uint8, count=self.size).view(dtype).reshape(dims)


@settings(max_examples=25)
@given(hlo_programs())
def test_generated_code_stays_inside_its_buffers(program):
    executable = cpu_client().compile(program.module, CompileOptions())
    args = [np.asarray(a) for a in program.args]
    guarded = []
    for a in args:
        g = _Guarded(a.nbytes)
        g.array(a.dtype, a.shape)[...] = a
        guarded.append(g)
    leaves, fresh = executable.result_memory
    outputs = [_Guarded(int(np.prod(dims)) * np.dtype(dtype).itemsize) for dims, dtype in fresh]
    # The arena's size is a multiple of 64, so its guarded end leaves it 64-byte aligned.
    arena = _Guarded(executable.arena_bytes) if executable.arena_bytes else None
    arena_address = None if arena is None else arena.address
    with np.errstate(all="ignore"):
        executable.run_raw([g.address for g in guarded],
                           [outputs[k].address for _, k in leaves], arena_address)
    expected = run_interpreter(program.module, args)
    for (kind, k), e in zip(leaves, expected):
        actual = outputs[k].array(fresh[k][1], fresh[k][0]).reshape(e.shape)
        assert_same(actual.copy(), e)


def test_two_different_sorts_in_one_program():
    # Each sort kernel uses malloc'd scratch; the module must declare malloc only once.
    def two_sorts(x, y):
        return jax.lax.sort(x), jax.lax.sort(y, dimension=0)
    x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]], np.float32)
    y = np.array([[5, 2], [1, 7], [3, 0]], np.int32)
    sorted_x, sorted_y = jax.jit(two_sorts, backend="cpu")(x, y)
    np.testing.assert_array_equal(np.asarray(sorted_x), np.sort(x, axis=-1))
    np.testing.assert_array_equal(np.asarray(sorted_y), np.sort(y, axis=0))
