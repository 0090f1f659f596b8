"""Cases run on JAX 0.10.2 (recorded by record_with_jax.py experimental_extra) and on jaxlite
(test_experimental_extra.py): jax.experimental.random, rnn and sparse.linalg.

`run_all(api)` takes a namespace with `jax`, `jnp`, `xrandom` (jax.experimental.random),
`rnn` and `splinalg` and returns {case: nested lists of numbers}.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse


def _lists(x):
    return np.asarray(x).tolist()


def stateful_rng(api):
    rng = api.xrandom.stateful_rng(42)
    out = {"uniform": [_lists(rng.uniform()), _lists(rng.uniform())],
           "random": _lists(rng.random(3)), "normal": _lists(rng.normal(1.0, 2.0, (2,))),
           "integers": _lists(rng.integers(10, size=4)),
           "integers_range": _lists(rng.integers(3, 9, (2, 2))),
           "key": _lists(api.jax.random.key_data(rng.key())),
           "keys": _lists(api.jax.random.key_data(rng.key((2,)))),
           "counter": _lists(rng._counter[...])}
    out["spawn"] = [_lists(r.integers(0, 10, 2)) for r in api.xrandom.stateful_rng(123).spawn(2)]
    split = api.xrandom.stateful_rng(123).split(3)
    out["split"] = _lists(api.jax.random.key_data(split._base_key))
    return out


def lstm_inputs(api, input_size, hidden, layers, bidirectional, lengths):
    jax, jnp = api.jax, api.jnp
    keys = jax.random.split(jax.random.key(0), 4)
    directions = 2 if bidirectional else 1
    batch, steps = len(lengths), max(lengths)
    x = jax.random.normal(keys[0], (batch, steps, input_size))
    h0 = jax.random.normal(keys[1], (directions * layers, batch, hidden))
    c0 = jax.random.normal(keys[2], (directions * layers, batch, hidden))
    w = api.rnn.init_lstm_weight(keys[3], input_size, hidden, layers, bidirectional)
    return x, h0, c0, w, jnp.array(lengths, dtype=jnp.int32)


LSTM_CONFIGS = {"one_layer": (3, 4, 1, False, [5, 5]),
                "stacked_ragged": (3, 4, 2, False, [5, 3, 1]),
                "bidirectional_ragged": (2, 3, 2, True, [4, 2])}


def lstm(api):
    rnn, out = api.rnn, {}
    for name, (size, hidden, layers, bidi, lengths) in LSTM_CONFIGS.items():
        x, h0, c0, w, seq = lstm_inputs(api, size, hidden, layers, bidi, lengths)
        unpacked = rnn.unpack_lstm_weights(w, size, hidden, layers, bidi)
        y, h, c = rnn.lstm_ref(x, h0, c0, *unpacked, seq, size, hidden, layers, 0.0, bidi)
        out[name] = {"weights": _lists(w), "y": _lists(y), "h": _lists(h), "c": _lists(c),
                     "count": rnn.get_num_params_in_lstm(size, hidden, layers, bidi),
                     "swapped": _lists(rnn.swap_lstm_gates(
                         api.jnp.arange(w.shape[0]), size, hidden, layers, bidi))}
    x, h0, c0, w, seq = lstm_inputs(api, *LSTM_CONFIGS["one_layer"])

    def loss(w):
        unpacked = rnn.unpack_lstm_weights(w, 3, 4, 1, False)
        return rnn.lstm_ref(x, h0, c0, *unpacked, seq, 3, 4, 1, 0.0, False)[0].sum()
    out["grad_weights"] = _lists(api.jax.grad(loss)(w))
    return out


def sparse_matrix():
    """A nonsymmetric 6x6 CSR matrix (float32) and a right-hand side."""
    random = scipy.sparse.random(6, 6, density=0.5, random_state=1, format="csr")
    matrix = (random + scipy.sparse.eye(6) * 3).astype(np.float32).tocsr()
    return matrix, np.arange(6, dtype=np.float32) - 2


def spsolve(api):
    jax, jnp, sl = api.jax, api.jnp, api.splinalg
    matrix, b = sparse_matrix()
    data, indices, indptr = (jnp.asarray(a) for a in (matrix.data, matrix.indices,
                                                       matrix.indptr))
    b = jnp.asarray(b)
    return {"x": _lists(sl.spsolve(data, indices, indptr, b)),
            "jit": _lists(jax.jit(sl.spsolve)(data, indices, indptr, b)),
            "grad_b": _lists(jax.grad(lambda b: (sl.spsolve(data, indices, indptr, b)
                                                  ** 2).sum())(b)),
            "grad_data": _lists(jax.grad(lambda d: (sl.spsolve(d, indices, indptr, b)
                                                     ** 2).sum())(data)),
            "jvp_data": _lists(jax.jvp(lambda d: sl.spsolve(d, indices, indptr, b),
                                       (data,), (jnp.ones_like(data),))[1])}


def symmetric_problem(n=30, k=3):
    rs = np.random.RandomState(0)
    m = rs.randn(n, n).astype(np.float32)
    a = (m + m.T) / 2 + np.diag(np.arange(n, dtype=np.float32))
    return a, rs.randn(n, k).astype(np.float32)


def lobpcg(api):
    jnp, sl = api.jnp, api.splinalg
    a, x = symmetric_problem()
    theta, u, steps = sl.lobpcg_standard(jnp.asarray(a), jnp.asarray(x))
    theta5, _, steps5 = sl.lobpcg_standard(lambda v: jnp.asarray(a) @ v, jnp.asarray(x), m=5)
    return {"theta": _lists(theta), "steps": int(steps), "theta_m5": _lists(theta5),
            "steps_m5": int(steps5), "u_shape": list(u.shape)}


def run_all(api):
    return {"stateful_rng": stateful_rng(api), "lstm": lstm(api), "spsolve": spsolve(api),
            "lobpcg": lobpcg(api)}
