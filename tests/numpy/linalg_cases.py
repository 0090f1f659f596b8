"""The calls whose result dtypes tests/numpy/test_linalg.py checks against JAX.

Shared by the test and by tools/gen_linalg_dtypes.py, which ran them once with JAX 0.10.2
to write tests/data/linalg_dtypes.json. Imports neither JAX nor jaxlite: each case is a
function of the linalg module and numpy inputs.
"""
import numpy as np

INPUT_DTYPES = ["bool", "int32", "float32", "float64", "complex64", "complex128"]

_SQUARE = np.array([[4, 1, 0], [1, 3, 1], [0, 1, 2]])  # symmetric positive definite
_WIDE = np.array([[2, 1, 0, 1], [0, 3, 1, 0], [1, 0, 2, 1]])


def case_inputs(name, dtype):
    """The numpy arguments of case `name` in `dtype` (bool: 0/1 patterns)."""
    square = np.eye(3) if dtype == np.bool_ else _SQUARE
    wide = (_WIDE > 0) if dtype == np.bool_ else _WIDE
    vector = np.array([1, 0, 1]) if dtype == np.bool_ else np.array([1, 2, 3])
    spec = CASES[name][1]
    pieces = {"square": square, "wide": wide, "vector": vector}
    return [pieces[p].astype(dtype) for p in spec]


CASES = {
    "cholesky": (lambda L, a: L.cholesky(a), ["square"]),
    "cholesky_upper": (lambda L, a: L.cholesky(a, upper=True), ["square"]),
    "qr": (lambda L, a: L.qr(a), ["wide"]),
    "qr_r": (lambda L, a: L.qr(a, mode="r"), ["wide"]),
    "eigh": (lambda L, a: L.eigh(a), ["square"]),
    "eigvalsh": (lambda L, a: L.eigvalsh(a), ["square"]),
    "eig": (lambda L, a: L.eig(a), ["square"]),
    "eigvals": (lambda L, a: L.eigvals(a), ["square"]),
    "svd": (lambda L, a: L.svd(a), ["wide"]),
    "svd_hermitian": (lambda L, a: L.svd(a, hermitian=True), ["square"]),
    "svd_no_uv": (lambda L, a: L.svd(a, compute_uv=False), ["wide"]),
    "svdvals": (lambda L, a: L.svdvals(a), ["wide"]),
    "det": (lambda L, a: L.det(a), ["square"]),
    "slogdet": (lambda L, a: L.slogdet(a), ["square"]),
    "inv": (lambda L, a: L.inv(a), ["square"]),
    "solve": (lambda L, a, b: L.solve(a, b), ["square", "vector"]),
    "pinv": (lambda L, a: L.pinv(a), ["wide"]),
    "lstsq": (lambda L, a, b: L.lstsq(a, b), ["square", "vector"]),
    "matrix_rank": (lambda L, a: L.matrix_rank(a), ["wide"]),
    "cond": (lambda L, a: L.cond(a), ["square"]),
    "cond_1": (lambda L, a: L.cond(a, 1), ["square"]),
    "norm": (lambda L, a: L.norm(a), ["wide"]),
    "norm_vector_1": (lambda L, v: L.norm(v, 1), ["vector"]),
    "norm_vector_inf": (lambda L, v: L.norm(v, np.inf), ["vector"]),
    "norm_vector_0": (lambda L, v: L.norm(v, 0), ["vector"]),
    "norm_matrix_1": (lambda L, a: L.norm(a, 1), ["wide"]),
    "norm_nuc": (lambda L, a: L.norm(a, "nuc"), ["wide"]),
    "vector_norm": (lambda L, v: L.vector_norm(v), ["vector"]),
    "vector_norm_1": (lambda L, v: L.vector_norm(v, ord=1), ["vector"]),
    "vector_norm_inf": (lambda L, v: L.vector_norm(v, ord=np.inf), ["vector"]),
    "vector_norm_0": (lambda L, v: L.vector_norm(v, ord=0), ["vector"]),
    "vector_norm_3": (lambda L, v: L.vector_norm(v, ord=3), ["vector"]),
    "matrix_norm": (lambda L, a: L.matrix_norm(a), ["wide"]),
    "matrix_norm_2": (lambda L, a: L.matrix_norm(a, ord=2), ["wide"]),
    "matrix_power_2": (lambda L, a: L.matrix_power(a, 2), ["square"]),
    "matrix_power_0": (lambda L, a: L.matrix_power(a, 0), ["square"]),
    "matrix_power_neg": (lambda L, a: L.matrix_power(a, -1), ["square"]),
    "multi_dot": (lambda L, v, a, b: L.multi_dot([v, a, b]), ["vector", "square", "wide"]),
    "cross": (lambda L, u, v: L.cross(u, v), ["vector", "vector"]),
    "outer": (lambda L, u, v: L.outer(u, v), ["vector", "vector"]),
    "matmul": (lambda L, a, b: L.matmul(a, b), ["square", "wide"]),
    "tensordot": (lambda L, a, b: L.tensordot(a, b, axes=1), ["square", "wide"]),
    "vecdot": (lambda L, u, v: L.vecdot(u, v), ["vector", "vector"]),
    "trace": (lambda L, a: L.trace(a), ["square"]),
    "diagonal": (lambda L, a: L.diagonal(a), ["wide"]),
    "matrix_transpose": (lambda L, a: L.matrix_transpose(a), ["wide"]),
    "tensorinv": (lambda L, a: L.tensorinv(a, 1), ["square"]),
    "tensorsolve": (lambda L, a, b: L.tensorsolve(a, b), ["square", "vector"]),
}
