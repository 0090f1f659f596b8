"""Dots of every small and transposed shape on the cpu backend, under `jit`, against numpy.

The cpu backend computes a dot with its generated GEMM (codegen/dot_kernel.py maps the dot's
dimensions and layouts onto a `GemmSpec`; the GEMM takes special paths for one row, one
column, rows of B along k) or, below `MIN_GEMM_FLOPS`, with the loop kernels. A GEMM whose
kernel needed no scratch memory (the dot-product path: `a @ b.T` with one row, and every
matrix-vector product) was once called with its `lo, hi` shifted by one parameter and left
most of its result unwritten (NaN); these tests sweep the shapes around every such path.

Many dots are compiled into one program (one compile per group) to keep the sweep affordable.
The reference is numpy in float64; the tolerance is the rounding bound of a length-k sum of
products in the dtype, eps * ((k + 2) * (|A| @ |B|) + |A @ B|), and inputs without NaN must
give results without NaN. `test_exhaustive_*` (marked slow: 160 s of CPU time measured, all six)
take every pair of sizes; the other tests are a representative subset that always runs.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.backends.cpu.codegen.dot_kernel import MIN_GEMM_FLOPS
from jaxlite.config import config

CPU = jax.devices("cpu")[0]
DTYPES = [np.float32, np.float64]
SMALL = list(range(1, 18))
EDGES = [31, 32, 33, 63, 64, 65, 127, 128, 129]
# Depths: 1, the vector widths and their neighbours, and past one k block (kc = 512).
DEPTHS = [1, 2, 7, 8, 16, 17, 33, 64, 130, 520]

# The four transpositions of a 2-D (or batched) product, for jaxlite and numpy alike.
FORMS = {
    "a@b": (lambda xp, a, b: a @ b, lambda m, n, k: ((m, k), (k, n))),
    "a@b.T": (lambda xp, a, b: a @ xp.swapaxes(b, -1, -2), lambda m, n, k: ((m, k), (n, k))),
    "a.T@b": (lambda xp, a, b: xp.swapaxes(a, -1, -2) @ b, lambda m, n, k: ((k, m), (k, n))),
    "a.T@b.T": (lambda xp, a, b: xp.swapaxes(a, -1, -2) @ xp.swapaxes(b, -1, -2),
                lambda m, n, k: ((k, m), (n, k))),
}


@dataclass(frozen=True)
class DotCase:
    """One dot: operand shapes and either a transposition form or dimension numbers."""

    lhs: tuple[int, ...]
    rhs: tuple[int, ...]
    form: str | None = None
    dimension_numbers: tuple | None = None

    def apply(self, xp, a, b):
        if self.form is not None:
            return FORMS[self.form][0](xp, a, b)
        if xp is np:
            return numpy_dot_general(a, b, self.dimension_numbers)
        return lax.dot_general(a, b, self.dimension_numbers)

    def depth(self) -> int:
        if self.form is not None:
            return self.lhs[-1] if self.form in ("a@b", "a@b.T") else self.lhs[-2]
        return int(np.prod([self.lhs[d] for d in self.dimension_numbers[0][0]], dtype=int))


def form_case(form: str, m: int, n: int, k: int, batch: tuple[int, ...] = ()) -> DotCase:
    lhs, rhs = FORMS[form][1](m, n, k)
    return DotCase(batch + lhs, batch + rhs, form=form)


def numpy_dot_general(a: np.ndarray, b: np.ndarray, dimension_numbers) -> np.ndarray:
    """`lax.dot_general` in numpy: batch dims, then lhs free dims, then rhs free dims."""
    (lc, rc), (lb, rb) = (list(map(list, pair)) for pair in dimension_numbers)
    lf = [d for d in range(a.ndim) if d not in lc + lb]
    rf = [d for d in range(b.ndim) if d not in rc + rb]
    batch = [a.shape[d] for d in lb]
    m = [a.shape[d] for d in lf]
    n = [b.shape[d] for d in rf]
    k = int(np.prod([a.shape[d] for d in lc], dtype=int))
    a3 = np.transpose(a, lb + lf + lc).reshape(int(np.prod(batch, dtype=int)),
                                                int(np.prod(m, dtype=int)), k)
    b3 = np.transpose(b, rb + rc + rf).reshape(a3.shape[0], k, int(np.prod(n, dtype=int)))
    return np.matmul(a3, b3).reshape(batch + m + n)


def check_dots(cases: list[DotCase], dtype, seed: int = 0) -> None:
    """Compute all `cases` in one jitted program on the cpu backend; compare with numpy."""
    rng = np.random.default_rng(seed)
    operands = [(rng.standard_normal(c.lhs).astype(dtype), rng.standard_normal(c.rhs)
                 .astype(dtype)) for c in cases]
    with jax.enable_x64(dtype == np.float64):
        program = jax.jit(lambda ops: [c.apply(jnp, a, b) for c, (a, b) in zip(cases, ops)],
                          device=CPU)
        results = [np.asarray(r) for r in program(operands)]
    eps = np.finfo(dtype).eps
    for case, (a, b), got in zip(cases, operands, results):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        expected = case.apply(np, a64, b64)
        magnitude = case.apply(np, np.abs(a64), np.abs(b64))
        what = f"{case} {np.dtype(dtype).name}"
        assert got.dtype == dtype and got.shape == expected.shape, what
        assert not np.isnan(got).any(), f"{what}: {np.isnan(got).sum()} NaN of {got.size}"
        bound = eps * ((case.depth() + 2) * magnitude + np.abs(expected)) + np.finfo(dtype).tiny
        error = np.abs(got - expected)
        worst = np.unravel_index(np.argmax(error - bound), error.shape) if error.size else ()
        assert np.all(error <= bound), (f"{what}: error {error[worst]} > {bound[worst]} at "
                                        f"{worst}; got {got[worst]}, want {expected[worst]}")


def in_groups(cases: list[DotCase], size: int) -> list[list[DotCase]]:
    return [cases[i:i + size] for i in range(0, len(cases), size)]


# ----------------------------------------------------------------- the reported bug

@pytest.mark.parametrize("n", [128, 256, 200])
def test_one_row_times_transposed_matrix(n):
    """jit(a @ b.T) with a (1, 32): 120 of 128 outputs were NaN (issue 10)."""
    assert 2 * n * 32 >= MIN_GEMM_FLOPS  # the GEMM's dot-product path
    rng = np.random.default_rng(n)
    a = rng.standard_normal((1, 32)).astype(np.float32)
    b = rng.standard_normal((n, 32)).astype(np.float32)
    got = np.asarray(jax.jit(lambda a, b: a @ b.T, device=CPU)(a, b))
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.T.astype(np.float64),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("form, shapes", [
    ("a@b.T", [(1, 1024), (4096, 1024)]),
    ("a@b", [(4096, 1024), (1024, 1)]),
    ("a@b.T", [(2, 1, 1024), (2, 2048, 1024)]),
], ids=["one-row", "one-column", "batched-one-row"])
def test_large_one_row_and_one_column_dots_on_threads(form, shapes):
    """Large enough to be split over threads (the kernel's work range really matters)."""
    f = FORMS[form][0]
    rng = np.random.default_rng(len(shapes[0]))
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    compiled = jax.jit(lambda a, b: f(jnp, a, b), device=CPU).lower(a, b).compile()
    assert "jl_parallel_for(ptr @kernel." in compiled.as_text("llvm")
    got = np.asarray(compiled(a, b))
    expected = f(np, a.astype(np.float64), b.astype(np.float64))
    magnitude = f(np, np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    assert not np.isnan(got).any()
    assert np.all(np.abs(got - expected) <= 1026 * np.finfo(np.float32).eps * magnitude)


# ------------------------------------------------------ representative subset (fast)

# Shapes (m, n, k) around each special path of the GEMM: one row (dot-product form or
# unpacked B), one column (the swapped matrix-vector product), a few rows, edge tiles on
# both sides, k = 1 (an outer product) and k past one block.
REPRESENTATIVE = [
    (1, 128, 32), (1, 129, 64), (1, 17, 520), (128, 1, 32), (129, 1, 130), (17, 1, 520),
    (2, 65, 64), (65, 2, 64), (3, 33, 130), (9, 17, 33), (17, 9, 64), (16, 16, 16),
    (128, 129, 1), (33, 65, 2), (127, 31, 7), (8, 48, 17),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_transposed_forms_of_representative_shapes(dtype):
    cases = [form_case(form, m, n, k) for m, n, k in REPRESENTATIVE for form in FORMS]
    for group in in_groups(cases, 64):
        check_dots(group, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_batched_forms(dtype):
    shapes = [(1, 128, 32), (128, 1, 32), (3, 17, 64), (33, 2, 130), (16, 16, 16), (1, 1, 520)]
    cases = [form_case(form, m, n, k, batch) for m, n, k in shapes for form in FORMS
             for batch in ((3,), (2, 2))]
    for group in in_groups(cases, 48):
        check_dots(group, dtype, seed=1)


def random_dot_general(rng: np.random.Generator, sizes: list[int]) -> DotCase:
    """Batch, contracting and free dimensions of random sizes, each operand's dimensions in
    a random order (so contracting and batch dims may be anywhere)."""
    counts = {"b": rng.integers(0, 3), "c": rng.integers(1, 3)}
    batch = [int(rng.choice(sizes)) for _ in range(counts["b"])]
    contracting = [int(rng.choice(sizes)) for _ in range(counts["c"])]
    shapes, dims = [], []
    for _ in range(2):
        free = [int(rng.choice(sizes)) for _ in range(rng.integers(0, 3))]
        roles = ([("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contracting))]
                 + [("f", i) for i in range(len(free))])
        rng.shuffle(roles)
        table = {"b": batch, "c": contracting, "f": free}
        shapes.append(tuple(table[r][i] for r, i in roles))
        dims.append(([roles.index(("c", i)) for i in range(len(contracting))],
                     [roles.index(("b", i)) for i in range(len(batch))]))
    (lc, lb), (rc, rb) = dims
    return DotCase(shapes[0], shapes[1],
                   dimension_numbers=((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_dimension_numbers_anywhere(dtype):
    rng = np.random.default_rng(7)
    cases = [random_dot_general(rng, [1, 2, 3, 5, 16, 17, 33]) for _ in range(40)]
    check_dots(cases, dtype, seed=2)


def test_dimension_numbers_that_reach_the_gemm():
    """Contracting and batch dims in the middle or first, with sizes past the GEMM's
    threshold, every path: one row, one column, both large."""
    dn = lambda lc, rc, lb=(), rb=(): ((lc, rc), (lb, rb))  # noqa: E731
    cases = [
        DotCase((64, 1, 3), (3, 70, 64), dimension_numbers=dn((0,), (2,), (2,), (0,))),
        DotCase((5, 130, 2), (2, 130, 1), dimension_numbers=dn((1,), (1,), (2,), (0,))),
        DotCase((33, 2, 65), (65, 2, 40), dimension_numbers=dn((2,), (0,), (1,), (1,))),
        DotCase((17, 4, 129), (129, 17), dimension_numbers=dn((2, 0), (0, 1))),
        DotCase((1, 256), (128, 256, 1), dimension_numbers=dn((1,), (1,))),
        DotCase((7, 3, 128), (3, 128, 1), dimension_numbers=dn((2,), (1,), (1,), (0,))),
    ]
    for dtype in DTYPES:
        check_dots(cases, dtype, seed=3)


def test_batch_dimensions_apart_in_memory_reach_the_gemm():
    """Attention's products: batch and heads apart in memory (b, s, h, d operands), which
    the GEMM takes as an outer loop of slices over one strided batch run; also the
    transposed result (operands swapped), batch runs only in one operand, a size-1 batch
    dimension between them, and three runs (left to the loop kernels)."""
    dn = lambda lc, rc, lb=(), rb=(): ((lc, rc), (lb, rb))  # noqa: E731
    to_gemm = [
        DotCase((2, 33, 3, 16), (2, 20, 3, 16), dimension_numbers=dn((3,), (3,), (0, 2), (0, 2))),
        DotCase((2, 3, 33, 20), (2, 20, 3, 16), dimension_numbers=dn((3,), (1,), (0, 1), (0, 2))),
        DotCase((2, 16, 3, 33), (2, 3, 16, 20), dimension_numbers=dn((1,), (2,), (0, 2), (0, 1))),
        DotCase((4, 5, 1, 3, 24), (4, 1, 5, 24, 9),
                dimension_numbers=dn((4,), (3,), (0, 1, 2), (0, 2, 1))),
    ]
    for dtype in DTYPES:
        check_dots(to_gemm, dtype, seed=4)
        with jax.enable_x64(dtype == np.float64):
            for case in to_gemm:
                a, b = np.ones(case.lhs, dtype), np.ones(case.rhs, dtype)
                text = jax.jit(lambda a, b: case.apply(jnp, a, b)).lower(a, b).compile() \
                    .as_text("llvm")
                assert "gemm." in text, case
    three_runs = DotCase((2, 9, 3, 2, 16), (2, 3, 2, 16, 9),
                         dimension_numbers=dn((4,), (3,), (0, 2, 3), (0, 1, 2)))
    check_dots([three_runs], np.float32, seed=5)


def test_slices_of_a_batched_gemm_split_over_threads():
    b, s, h, d = 3, 128, 3, 32  # an odd number of slices: a thread starts inside one
    case = DotCase((b, s, h, d), (b, s, h, d), dimension_numbers=(((3,), (3,)), ((0, 2), (0, 2))))
    with config.override("jaxlite_cpu_threads", 2):
        text = jax.jit(lambda a, b: case.apply(jnp, a, b)).lower(
            np.ones(case.lhs, np.float32), np.ones(case.rhs, np.float32)).compile().as_text("llvm")
        assert "jl_parallel_for" in text and "gemm." in text
        check_dots([case], np.float32, seed=6)


# --------------------------------------------------------------- exhaustive (slow)

def exhaustive_cases(form: str, f: int) -> dict[type, list[DotCase]]:
    """Every pair (m, n) of SMALL + EDGES in `form` (the f-th), by dtype. k runs through
    DEPTHS so that each depth meets every m and every n; the dtype alternates so that over
    the four forms each pair (m, n) is computed twice in each dtype."""
    sizes = SMALL + EDGES
    cases: dict[type, list[DotCase]] = {dtype: [] for dtype in DTYPES}
    for (i, m), (j, n) in itertools.product(enumerate(sizes), enumerate(sizes)):
        k = DEPTHS[(i + 3 * j + 7 * f) % len(DEPTHS)]
        cases[DTYPES[(i + j + f // 2) % 2]].append(form_case(form, m, n, k))
    return cases


@pytest.mark.parametrize("form", list(FORMS), ids=["ab", "abT", "aTb", "aTbT"])
def test_every_eighth_small_and_edge_shape(form):
    """The default run's share of the exhaustive test below: every eighth pair (m, n),
    a different eighth in each form."""
    offset = list(FORMS).index(form)
    for dtype, cases in exhaustive_cases(form, offset).items():
        check_dots(cases[offset::8], dtype, seed=4)


@pytest.mark.slow
@pytest.mark.parametrize("form", list(FORMS), ids=["ab", "abT", "aTb", "aTbT"])
def test_exhaustive_small_and_edge_shapes(form):
    for dtype, cases in exhaustive_cases(form, list(FORMS).index(form)).items():
        for group in in_groups(cases, 120):
            check_dots(group, dtype, seed=4)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_exhaustive_dimension_numbers(dtype):
    rng = np.random.default_rng(11)
    cases = [random_dot_general(rng, [1, 2, 3, 5, 8, 16, 17, 33, 64, 65])
             for _ in range(240)]
    cases = [c for c in cases if np.prod(c.lhs) * np.prod(c.rhs) < 1 << 22]
    for group in in_groups(cases, 60):
        check_dots(group, dtype, seed=5)


# ------------------------------------------------------- kernels and their callers

def _parameter_counts(llvm_text: str) -> tuple[dict[str, int], list[tuple[str, int]]]:
    """Parameters of each `kernel.N` definition, and the argument count of each call."""
    defined, calls = {}, []
    for line in llvm_text.splitlines():
        for marker, record in (("define internal void @kernel.", defined),
                               ("call void @kernel.", None)):
            if marker not in line:
                continue
            name, _, rest = line.split(marker, 1)[1].partition("(")
            args = rest.split(")", 1)[0]
            count = len([a for a in args.split(",") if a.strip()])
            if record is None:
                calls.append((name, count))
            else:
                record[name] = count
    return defined, calls


@pytest.mark.parametrize("f, shapes", [
    (lambda a, b: a @ b.T, [(1, 64), (128, 64)]),          # dot-product form, no scratch
    (lambda a, b: a @ b, [(128, 64), (64, 1)]),            # matrix-vector, no scratch
    (lambda a, b: a @ b, [(64, 64), (64, 64)]),            # packed panels in scratch
    (lambda a, b: jnp.tanh(a @ b) @ b.T, [(1, 64), (64, 64)]),
], ids=["one-row", "one-column", "square", "mixed"])
def test_every_kernel_call_passes_the_kernels_parameters(f, shapes):
    """LLVM accepts a call with too few arguments (opaque pointers); the callee then reads
    its work range from the wrong registers. Every call must match the definition."""
    args = [np.ones(s, np.float32) for s in shapes]
    text = jax.jit(f, device=CPU).lower(*args).compile().as_text("llvm")
    defined, calls = _parameter_counts(text)
    assert calls and defined
    for name, count in calls:
        assert count == defined[name], f"kernel.{name}: called with {count} arguments, " \
                                       f"defined with {defined[name]}"
