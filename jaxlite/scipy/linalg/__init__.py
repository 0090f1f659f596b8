"""`jaxlite.scipy.linalg`: scipy's dense linear algebra on jaxlite arrays (mirrors
`jax.scipy.linalg`), written with `jaxlite.lax.linalg` and `jaxlite.numpy`.

- `_solve`: cholesky, cho_factor, cho_solve, lu, lu_factor, lu_solve, solve,
  solve_triangular, det, inv;
- `_decompositions`: svd, eigh, schur, rsf2csf, qr, qr_multiply, hessenberg, polar;
- `_matrix_functions`: expm, expm_frechet, sqrtm, funm, solve_sylvester;
- `_eigh_tridiagonal`: eigh_tridiagonal;
- `_special_matrices`: block_diag, toeplitz, hankel, circulant, leslie, companion,
  fiedler, fiedler_companion, convolution_matrix, hilbert, invhilbert, pascal, invpascal,
  helmert, hadamard, dft.
"""
from jaxlite.scipy.linalg._decompositions import (eigh, hessenberg, polar, qr,  # noqa: F401
                                                  qr_multiply, rsf2csf, schur, svd)
from jaxlite.scipy.linalg._eigh_tridiagonal import eigh_tridiagonal  # noqa: F401
from jaxlite.scipy.linalg._matrix_functions import (expm, expm_frechet, funm,  # noqa: F401
                                                    solve_sylvester, sqrtm)
from jaxlite.scipy.linalg._solve import (cho_factor, cho_solve, cholesky, det,  # noqa: F401
                                         inv, lu, lu_factor, lu_solve, solve,
                                         solve_triangular)
from jaxlite.scipy.linalg._special_matrices import (block_diag, circulant,  # noqa: F401
                                                    companion, convolution_matrix, dft,
                                                    fiedler, fiedler_companion, hadamard,
                                                    hankel, helmert, hilbert, invhilbert,
                                                    invpascal, leslie, pascal, toeplitz)

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm",
           "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel",
           "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie",
           "lu", "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf",
           "schur", "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd",
           "toeplitz"]
