"""GEMMs split into shared parts (`gemm.emit_gemm_modules`): micro-kernels and packers in
modules named by their code, linked with each GEMM's loop nest."""
from __future__ import annotations

import numpy as np
import pytest
from test_gemm import run_gemm

from jaxlite.backends.cpu import llvm_target, native
from jaxlite.backends.cpu.gemm import GemmSpec, emit_gemm_modules

_ENGINES: list = []


def _linked(spec: GemmSpec) -> llvm_target.CompiledModule:
    texts = emit_gemm_modules(spec)
    engine = native.link(native.compile_objects([texts[-1], *texts[:-1]]))
    _ENGINES.append(engine)
    return llvm_target.CompiledModule(engine, None)  # type: ignore[arg-type]


def _spec(name: str, m: int, n: int, k: int, **fields) -> GemmSpec:
    return GemmSpec(name=name, m=m, n=n, k=k, c_strides=(0, n, 1), **fields)


def test_gemms_that_differ_in_m_and_k_share_their_micro_kernels():
    # B of over 1 MiB, packed (a smaller one is read in place: gemm_plan._IN_PLACE)
    one = emit_gemm_modules(_spec("gemm.share_a", 256, 64, 5000))
    other = emit_gemm_modules(_spec("gemm.share_b", 40, 64, 4500))
    parts_one, parts_other = set(one[:-1]), set(other[:-1])
    assert parts_one & parts_other  # the micro-kernels for C rows of 64
    for text in one[:-1]:
        assert '@"gemm.share_a' not in text  # parts are named by their code only
        assert 'define void @"jl_gemm_part.' in text
    assert 'declare void @"jl_gemm_part.' in one[-1]


def test_packers_take_their_source_strides_as_arguments():
    # transposed B of 48 columns: op(B) = B^T read across B's rows of k elements. Two
    # depths give two strides; the packers' code (the transposing one is the costliest
    # part of a GEMM to code-generate) must be the same, the stride passed by the caller.
    one = emit_gemm_modules(_spec("gemm.stride_a", 256, 48, 4000, transpose_b=True))
    other = emit_gemm_modules(_spec("gemm.stride_b", 256, 48, 3000, transpose_b=True))
    packers = [t for t in one[:-1] if '(ptr %"src"' in t]
    assert packers and set(packers) <= set(other[:-1])
    for text in packers:
        assert "4000" not in text and "3000" not in text
    assert "i64 4000" in one[-1] and "i64 3000" in other[-1]


@pytest.mark.parametrize("m, n, k, transpose_b", [(37, 64, 50, False), (64, 48, 33, True),
                                                  (256, 130, 70, True)])
def test_linked_parts_compute_the_product(m, n, k, transpose_b):
    rng = np.random.default_rng(m + n + k)
    spec = _spec(f"gemm.linked_{m}_{n}_{k}", m, n, k, transpose_b=transpose_b,
                 b_strides=None)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if transpose_b else (k, n), dtype=np.float32)
    c = np.full((m, n), np.nan, np.float32)
    run_gemm(spec, a, b, c, module=_linked(spec))
    op_b = (b.T if transpose_b else b).astype(np.float64)
    expected = a.astype(np.float64) @ op_b
    # the rounding bound of a sum of k products, in any order
    bound = k * np.finfo(np.float32).eps * (np.abs(a).astype(np.float64) @ np.abs(op_b))
    assert np.all(np.abs(c - expected) <= bound)
