"""Cases of jax.experimental.sparse, run on JAX by record_jax_sparse.py and on jaxlite by
test_sparse.py: each returns plain lists (data, indices, nse, dense values) to compare."""
from __future__ import annotations

import numpy as np

M = np.array([[0., 1., 0., 0.], [2., 0., 3., 0.], [0., 0., 0., 4.]], np.float32)
B3 = np.array([[[0., 1., 0.], [2., 0., 0.]], [[0., 0., 5.], [0., 6., 7.]]], np.float32)
D = np.array([[[0., 0.], [1., 2.]], [[3., 0.], [0., 0.]]], np.float32)  # 2 x 2 x 2
RHS = np.arange(8, dtype=np.float32).reshape(4, 2) - 3.0


def _bufs(sp):
    bufs = sp._bufs if hasattr(sp, "_bufs") else (sp.data, sp.indices, sp.indptr)
    return [np.asarray(b).tolist() for b in bufs] + [list(sp.shape), int(sp.nse)]


def _flags(sp):
    return [bool(sp.indices_sorted), bool(sp.unique_indices)]


def _dup(api):
    """A BCOO with duplicates, an out-of-bounds padding entry and unsorted indices."""
    data = api.jnp.array([1., 2., 3., 4., 0.], np.float32)
    indices = api.jnp.array([[1, 2], [0, 1], [1, 2], [0, 0], [3, 4]], np.int32)
    return api.sparse.BCOO((data, indices), shape=(3, 4))


def cases(api):
    sp, jnp, jax, lax = api.sparse, api.jnp, api.jax, api.lax
    s = sp.BCOO.fromdense(M)
    dn = (((1,), (0,)), ((), ()))
    return {
        "fromdense": lambda: _bufs(s) + _flags(s),
        "fromdense_nse6": lambda: _bufs(sp.BCOO.fromdense(M, nse=6)),
        "fromdense_batch": lambda: _bufs(sp.BCOO.fromdense(B3, n_batch=1)),
        "fromdense_dense": lambda: _bufs(sp.BCOO.fromdense(D, n_dense=1)),
        "fromdense_batch_dense": lambda: _bufs(sp.BCOO.fromdense(D, n_batch=1, n_dense=1)),
        "todense_dup": lambda: np.asarray(_dup(api).todense()).tolist(),
        "sum_duplicates": lambda: _bufs(sp.bcoo_sum_duplicates(_dup(api))),
        "sum_duplicates_nse5": lambda: _bufs(sp.bcoo_sum_duplicates(_dup(api), nse=5)),
        "method_sum_duplicates": lambda: _bufs(_dup(api).sum_duplicates()),
        "sort_indices": lambda: _bufs(sp.bcoo_sort_indices(_dup(api))),
        "dot_dense": lambda: np.asarray(sp.bcoo_dot_general(
            s, RHS, dimension_numbers=dn)).tolist(),
        "dot_dense_left": lambda: np.asarray(sp.bcoo_dot_general(
            RHS.T, s.T, dimension_numbers=dn)).tolist(),
        "matmul_vec": lambda: np.asarray(s @ jnp.arange(4.0)).tolist(),
        "rmatmul_vec": lambda: np.asarray(jnp.arange(3.0) @ s).tolist(),
        "matmul_batched_rhs": lambda: np.asarray(
            s @ jnp.arange(16.0).reshape(2, 4, 2)).tolist(),
        "spdot": lambda: _bufs(s @ s.T),
        "spdot_vec": lambda: _bufs(s @ sp.BCOO.fromdense(np.array([0., 1., 1., 0.],
                                                                  np.float32))),
        "transpose": lambda: _bufs(s.T) + _flags(s.T),
        "reshape": lambda: _bufs(s.reshape(2, 6)),
        "reduce_sum0": lambda: _bufs(s.sum(0)),
        "reduce_sum1": lambda: _bufs(s.sum(1)),
        "reduce_sum_all": lambda: float(s.sum()),
        "reduce_sum_batch": lambda: _bufs(sp.BCOO.fromdense(B3, n_batch=1).sum(0)),
        "mul_scalar": lambda: _bufs(s * 2.0),
        "mul_dense": lambda: _bufs(s * (M + 1.0)),
        "mul_sparse": lambda: _bufs(s * s),
        "div_dense": lambda: _bufs(s / (M + 1.0)),
        "neg": lambda: _bufs(-s),
        "add_sparse": lambda: _bufs(s + s),
        "sub_sparse": lambda: _bufs(s - s),
        "getitem_row": lambda: _bufs(s[1]),
        "getitem_col": lambda: _bufs(s[:, 2]),
        "slice": lambda: _bufs(sp.bcoo_slice(s, start_indices=(1, 0), limit_indices=(3, 4),
                                             strides=(1, 2))),
        "dynamic_slice": lambda: _bufs(sp.bcoo_dynamic_slice(s, (1, 2), (2, 2))),
        "dynamic_slice_clamped": lambda: _bufs(sp.bcoo_dynamic_slice(s, (2, 3), (2, 2))),
        "concatenate0": lambda: _bufs(sp.bcoo_concatenate([s, s[:2]], dimension=0)),
        "concatenate_batch": lambda: _bufs(sp.bcoo_concatenate(
            [sp.BCOO.fromdense(B3, n_batch=1), sp.BCOO.fromdense(B3[:1], n_batch=1)],
            dimension=0)),
        "broadcast_in_dim": lambda: _bufs(sp.bcoo_broadcast_in_dim(
            s, shape=(2, 3, 4), broadcast_dimensions=(1, 2))),
        "squeeze": lambda: _bufs(sp.bcoo_squeeze(s[1:2], dimensions=(0,))),
        "rev": lambda: _bufs(sp.bcoo_rev(sp.BCOO.fromdense(M, nse=5), (1,))),
        "extract": lambda: _bufs(sp.bcoo_extract(s, M * 10.0)),
        "gather": lambda: _bufs(sp.bcoo_gather(
            s, jnp.array([[2], [0]]), lax.GatherDimensionNumbers(
                offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
            (1, 4))),
        "dot_general_sampled": lambda: np.asarray(sp.bcoo_dot_general_sampled(
            jnp.asarray(M), jnp.asarray(M.T), s.indices,
            dimension_numbers=(((1,), (0,)), ((), ())))).tolist(),
        "grad_data": lambda: _bufs(sp.grad(lambda x: (x @ jnp.arange(4.0)).sum() ** 2)(s)),
        "value_and_grad": lambda: (lambda v: [float(v[0]), _bufs(v[1])])(
            sp.value_and_grad(lambda x, y: jnp.sum(x @ y), argnums=0)(s, RHS)),
        "jacfwd": lambda: _bufs(sp.jacfwd(lambda x: x @ jnp.arange(4.0))(s)),
        "jacrev": lambda: _bufs(sp.jacrev(lambda x: x @ jnp.arange(4.0))(s)),
        "jit_todense": lambda: np.asarray(jax.jit(lambda x: x.todense())(s)).tolist(),
        "jit_matmul": lambda: np.asarray(jax.jit(lambda x, y: x @ y)(s, RHS)).tolist(),
        "jit_fromdense": lambda: _bufs(jax.jit(lambda m: sp.BCOO.fromdense(m, nse=5))(M)),
        "vmap_todense": lambda: np.asarray(jax.vmap(lambda x: x.todense())(
            sp.BCOO.fromdense(B3, n_batch=1))).tolist(),
        "vmap_matvec": lambda: np.asarray(jax.vmap(lambda v: s @ v)(RHS.T)).tolist(),
        "grad_dense_arg": lambda: np.asarray(jax.grad(
            lambda y: (s @ y).sum())(jnp.arange(4.0))).tolist(),
        "sparsify": lambda: _bufs(sp.sparsify(lambda x: 2.0 * x.T)(s)),
        "sparsify_dot": lambda: np.asarray(sp.sparsify(
            lambda x, y: jnp.dot(x, y) + 1.0)(s, RHS)).tolist(),
        "bcsr_fromdense": lambda: _bufs(sp.BCSR.fromdense(M, nse=6)),
        "bcsr_batch": lambda: _bufs(sp.BCSR.fromdense(B3, n_batch=1)),
        "bcsr_todense": lambda: np.asarray(sp.BCSR.fromdense(B3, n_batch=1).todense()
                                           ).tolist(),
        "bcsr_dot": lambda: np.asarray(sp.bcsr_dot_general(
            sp.BCSR.fromdense(M), RHS, dimension_numbers=dn)).tolist(),
        "bcsr_to_bcoo": lambda: _bufs(sp.BCSR.fromdense(M).to_bcoo()),
        "bcsr_from_bcoo": lambda: _bufs(sp.BCSR.from_bcoo(_dup(api).sum_duplicates())),
        "bcsr_extract": lambda: np.asarray(sp.bcsr_extract(
            sp.BCSR.fromdense(M).indices, sp.BCSR.fromdense(M).indptr, M * 3)).tolist(),
        "coo_fromdense": lambda: _bufs(sp.COO.fromdense(M, nse=6)),
        "coo_matvec": lambda: np.asarray(sp.coo_matvec(sp.COO.fromdense(M), jnp.arange(4.0))
                                         ).tolist(),
        "coo_matmat_t": lambda: np.asarray(sp.coo_matmat(sp.COO.fromdense(M), RHS[:3],
                                                         transpose=True)).tolist(),
        "csr_fromdense": lambda: _bufs(sp.CSR.fromdense(M, nse=6)),
        "csr_matmat": lambda: np.asarray(sp.CSR.fromdense(M, nse=6) @ RHS).tolist(),
        "csr_matvec_t": lambda: np.asarray(sp.csr_matvec(sp.CSR.fromdense(M),
                                                         jnp.arange(3.0), transpose=True)
                                           ).tolist(),
        "csc_fromdense": lambda: _bufs(sp.CSC.fromdense(M, nse=6)),
        "csc_matvec": lambda: np.asarray(sp.CSC.fromdense(M) @ jnp.arange(4.0)).tolist(),
        "csc_todense": lambda: np.asarray(sp.CSC.fromdense(M).todense()).tolist(),
        "empty": lambda: _bufs(sp.empty((2, 3), nse=2)),
        "eye": lambda: _bufs(sp.eye(3, 4, k=1)),
        "eye_csr": lambda: _bufs(sp.eye(3, k=-1, sparse_format="csr")),
        "todense_passthrough": lambda: np.asarray(sp.todense(jnp.asarray(M))).tolist(),
        "random_bcoo": lambda: _bufs(sp.random_bcoo(jax.random.key(0), (3, 4), nse=0.5,
                                                    dtype=np.float32)),
        "random_bcoo_batch": lambda: _bufs(sp.random_bcoo(
            jax.random.key(1), (2, 3, 4), nse=3, n_batch=1, dtype=np.float32,
            sorted_indices=True)),
        "repr": lambda: [repr(s), repr(sp.BCOO.fromdense(D, n_batch=1, n_dense=1))],
        "tree": lambda: [len(jax.tree_util.tree_leaves(s)),
                         jax.tree_util.tree_structure(s).num_leaves],
    }


def run_all(api):
    out = {}
    for name, case in cases(api).items():
        try:
            out[name] = {"value": case()}
        except Exception as e:  # recorded: the exception type is part of the answer
            out[name] = {"error": type(e).__name__}
    return out
