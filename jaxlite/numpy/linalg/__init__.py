"""`jaxlite.numpy.linalg`: linear algebra on jaxlite arrays (mirrors `jax.numpy.linalg`).

Everything is written with `jaxlite.lax` (the factorizations are those of
`jaxlite.lax.linalg`) and so works eagerly and under `jit`, `grad` and `vmap`. Matrices
are the last two axes; leading axes are a batch. Integer and bool inputs are computed in
the default floating dtype, as in JAX. The modules:

- `_products`: cross, outer, multi_dot, matrix_power and array-API spellings of matmul,
  tensordot, vecdot, trace, diagonal, matrix_transpose;
- `_norms`: norm, vector_norm, matrix_norm;
- `_decompositions`: cholesky, qr, eigh, eigvalsh, eig, eigvals, svd, svdvals;
- `_solve`: solve, inv, det, slogdet, tensorinv, tensorsolve;
- `_least_squares`: pinv, lstsq, matrix_rank, cond.
"""
from jaxlite.numpy.linalg._decompositions import (EighResult, EigResult,  # noqa: F401
                                                  QRResult, SVDResult, cholesky, eig,
                                                  eigh, eigvals, eigvalsh, qr, svd, svdvals)
from jaxlite.numpy.linalg._least_squares import cond, lstsq, matrix_rank, pinv  # noqa: F401
from jaxlite.numpy.linalg._norms import matrix_norm, norm, vector_norm  # noqa: F401
from jaxlite.numpy.linalg._products import (cross, diagonal, matmul,  # noqa: F401
                                            matrix_power, matrix_transpose, multi_dot,
                                            outer, tensordot, trace, vecdot)
from jaxlite.numpy.linalg._solve import (SlogdetResult, det, inv, slogdet,  # noqa: F401
                                         solve, tensorinv, tensorsolve)

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power",
           "matrix_rank", "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr",
           "slogdet", "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve",
           "trace", "vecdot", "vector_norm"]
