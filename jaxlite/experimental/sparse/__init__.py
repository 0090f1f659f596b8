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
