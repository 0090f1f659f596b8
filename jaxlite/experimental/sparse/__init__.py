"""`jaxlite.experimental.sparse` (mirrors `jax.experimental.sparse`): sparse arrays in the
BCOO, BCSR, COO, CSR and CSC formats, and transformations over them."""
from jaxlite.experimental.sparse import _operators  # noqa: F401  (BCOO's operators)
from jaxlite.experimental.sparse._base import (  # noqa: F401
    CuSparseEfficiencyWarning, JAXSparse, SparseEfficiencyError, SparseEfficiencyWarning)
from jaxlite.experimental.sparse.bcoo import (  # noqa: F401
    BCOO, bcoo_dot_general, bcoo_dot_general_p, bcoo_dot_general_sampled,
    bcoo_dot_general_sampled_p, bcoo_extract, bcoo_extract_p, bcoo_fromdense,
    bcoo_fromdense_p, bcoo_multiply_dense, bcoo_multiply_sparse, bcoo_reduce_sum,
    bcoo_sort_indices, bcoo_sort_indices_p, bcoo_spdot_general_p, bcoo_sum_duplicates,
    bcoo_sum_duplicates_p, bcoo_todense, bcoo_todense_p, bcoo_transpose, bcoo_transpose_p,
    bcoo_update_layout)
from jaxlite.experimental.sparse.bcoo_shape import (  # noqa: F401
    bcoo_broadcast_in_dim, bcoo_concatenate, bcoo_dynamic_slice, bcoo_reshape, bcoo_rev,
    bcoo_slice, bcoo_squeeze)
from jaxlite.experimental.sparse.ad import (  # noqa: F401
    grad, jacfwd, jacobian, jacrev, value_and_grad)
from jaxlite.experimental.sparse.api import (  # noqa: F401
    empty, eye, random_bcoo, todense, todense_p)
from jaxlite.experimental.sparse.bcoo_extra import (  # noqa: F401
    bcoo_conv_general_dilated, bcoo_gather)
from jaxlite.experimental.sparse.bcsr import (  # noqa: F401
    BCSR, bcsr_broadcast_in_dim, bcsr_concatenate, bcsr_dot_general, bcsr_dot_general_p,
    bcsr_extract, bcsr_extract_p, bcsr_fromdense, bcsr_fromdense_p, bcsr_sum_duplicates,
    bcsr_todense, bcsr_todense_p)
from jaxlite.experimental.sparse.coo_csr import (  # noqa: F401
    COO, CSC, CSR, coo_fromdense, coo_fromdense_p, coo_matmat, coo_matmat_p, coo_matvec,
    coo_matvec_p, coo_todense, coo_todense_p, csr_fromdense, csr_fromdense_p, csr_matmat,
    csr_matmat_p, csr_matvec, csr_matvec_p, csr_todense, csr_todense_p)
from jaxlite.experimental.sparse.transform import SparseTracer, sparsify  # noqa: F401
from jaxlite.experimental.sparse import linalg  # noqa: F401,E402  (submodule, as in JAX)
