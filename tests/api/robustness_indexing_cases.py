"""Cases run on JAX 0.10.2 (recorded by record_with_jax.py robustness_indexing) and on jaxlite
(test_robustness_indexing.py): start indices and array indices of narrow integer dtypes
(int8, uint8, int16, uint16, uint32), whose negative values JAX counts from the end in
the index's own dtype, and whose starts XLA clamps into [0, dim - size]; and arrays that
cannot exist (JAX's RESOURCE_EXHAUSTED) or Python ints too large for int32.

`run_all(api)` takes a namespace with `jax`, `jnp` and `lax` and returns
{case: ["ok", nested list] or ["error", exception type name, message]}.

One JAX quirk is not recorded as such: eager `dynamic_update_slice` with an int8/uint8
start on a dimension of 300 clamps to int8(300 - size) (34 here) while the same call under
jit writes at the start itself. jaxlite follows the overflow-free clamp (XLA's semantics,
JAX's jit result) in both modes, so the cases check eager updates against JAX's jit values.
"""
from __future__ import annotations

import numpy as np

STARTS = [("int8", 100), ("int8", -5), ("int8", 127), ("int8", -128), ("uint8", 255),
          ("uint8", 250), ("int16", 32767), ("int16", -300), ("int16", -301),
          ("int16", 290), ("uint16", 65535), ("uint32", 2**32 - 1), ("int32", -1),
          ("int32", 1000)]

INDEX_VALUES = {"int8": [-100, -1, 100, 127, -128, 0, 5],
                "int16": [-100, -1, 100, 127, -128, 0, 5],
                "uint8": [0, 5, 100, 127, 199, 200, 255]}


def _call(fun):
    try:
        return ["ok", np.asarray(fun()).tolist()]
    except Exception as e:  # noqa: BLE001  (the exception is the recorded answer)
        return ["error", type(e).__name__, str(e).split("\n")[0][:120]]


def dynamic_slice_cases(api):
    jax, jnp, lax = api.jax, api.jnp, api.lax
    x = jnp.arange(300, dtype=jnp.float32)
    small = jnp.arange(20, dtype=jnp.float32)
    grid = jnp.arange(90000.0, dtype=jnp.float32).reshape(300, 300)
    ten = jnp.full((10,), -1.0)
    ds = jax.jit(lambda x, i: lax.dynamic_slice(x, (i,), (10,)))
    dus = jax.jit(lambda x, i: lax.dynamic_update_slice(x, ten, (i,)))
    out = {}
    for dt, v in STARTS:
        i = np.array(v, dtype=dt)
        name = f"{dt}({v})"
        out[f"ds eager {name}"] = _call(lambda: lax.dynamic_slice(x, (i,), (10,))[:2])
        out[f"ds jit {name}"] = _call(lambda: ds(x, i)[:2])
        out[f"ds small {name}"] = _call(lambda: ds(small, i)[:2])
        out[f"dus jit {name}"] = _call(lambda: jnp.argmin(dus(x, i)))
        out[f"dus vmap {name}"] = _call(lambda: jnp.argmin(jax.vmap(
            lambda j: lax.dynamic_update_slice(x, ten, (j,)))(jnp.stack([i, i])), axis=1))
        out[f"ds vmap {name}"] = _call(lambda: jax.vmap(
            lambda j: lax.dynamic_slice(x, (j,), (3,)))(jnp.stack([i, i]))[:, 0])
    for v in (-5, -128, 100):
        i8 = np.int8(v)
        out[f"np.int8 ds {v}"] = _call(lambda: lax.dynamic_slice(x, (i8,), (3,)))
        out[f"np.int8 index_in_dim {v}"] = _call(
            lambda: lax.dynamic_index_in_dim(x, i8, keepdims=False))
        out[f"np.int8 slice_in_dim {v}"] = _call(lambda: lax.dynamic_slice_in_dim(x, i8, 2))
        out[f"jnp.int8 slice_in_dim axis 1 {v}"] = _call(lambda: lax.dynamic_slice_in_dim(
            grid[:2], jnp.int8(v), 2, axis=1))
        out[f"np.int8 update_index_in_dim {v}"] = _call(lambda: jnp.argmax(
            lax.dynamic_update_index_in_dim(x, 1000.0, i8, 0)))
        out[f"x[jnp.int8({v})]"] = _call(lambda: x[jnp.int8(v)])
        out[f"jit x[int8({v})]"] = _call(lambda: jax.jit(lambda i: x[i])(jnp.int8(v)))
    u32 = np.uint32(2**32 - 1)
    out["np.uint32 max ds"] = _call(lambda: lax.dynamic_slice(x, (u32,), (3,)))
    out["np.uint32 max dus"] = _call(lambda: lax.dynamic_update_slice(x, jnp.ones(3), (u32,))[-4:])
    out["python int 2**32-1 ds"] = _call(lambda: lax.dynamic_slice(x, (2**32 - 1,), (3,)))
    out["mixed int8 int32"] = _call(lambda: lax.dynamic_slice(
        grid, (np.array(-5, np.int8), np.array(7, np.int32)), (3, 3)))
    out["mixed int8 np.int32"] = _call(lambda: jax.jit(lambda a: lax.dynamic_slice(
        grid, (a, np.int32(7)), (1, 1)))(np.array(1, np.int8)))
    out["int16 both"] = _call(lambda: lax.dynamic_slice(
        grid, (np.array(-1, np.int16), np.array(-300, np.int16)), (1, 1)))
    return out


def array_index_cases(api):
    jax, jnp = api.jax, api.jnp
    x = jnp.arange(200, dtype=jnp.float32)
    x3 = jnp.arange(300, dtype=jnp.float32)
    out = {}
    for dt, values in INDEX_VALUES.items():
        i = jnp.array(np.array(values, dtype=dt))
        out[f"{dt} x[i]"] = _call(lambda: x[i])
        out[f"{dt} jit x[i]"] = _call(lambda: jax.jit(lambda x, i: x[i])(x, i))
        out[f"{dt} x[:100][i]"] = _call(lambda: x[:100][i])
        out[f"{dt} x3[i]"] = _call(lambda: x3[i])
        out[f"{dt} take"] = _call(lambda: jnp.take(x, i))
        out[f"{dt} jit take"] = _call(lambda: jax.jit(lambda x, i: jnp.take(x, i))(x, i))
        out[f"{dt} take x[:100]"] = _call(lambda: jnp.take(x[:100], i))
        out[f"{dt} take clip"] = _call(lambda: jnp.take(x, i, mode="clip"))
        out[f"{dt} take wrap"] = _call(lambda: jnp.take(x, i, mode="wrap"))
        out[f"{dt} take_along_axis"] = _call(lambda: jnp.take_along_axis(x, i, axis=0))
        out[f"{dt} at get fill"] = _call(lambda: x.at[i].get(mode="fill", fill_value=-7))
        out[f"{dt} at get clip"] = _call(lambda: x.at[i].get(mode="clip"))
        out[f"{dt} at get no wrap"] = _call(lambda: x.at[i].get(
            wrap_negative_indices=False, mode="fill", fill_value=-3))
        out[f"{dt} at set"] = _call(lambda: jnp.nonzero(x3.at[i].set(-1.0) < 0)[0])
        out[f"{dt} jit at add"] = _call(lambda: jnp.nonzero(
            jax.jit(lambda x, i: x.at[i].add(-1000.0))(x3, i) < 0)[0])
        out[f"{dt} scalar x3[i[0]]"] = _call(lambda: x3[i[0]])
        out[f"{dt} vmap x3[j]"] = _call(lambda: jax.vmap(lambda j: x3[j])(i))
        out[f"{dt} 2d [i, 1]"] = _call(lambda: jnp.arange(600.0).reshape(300, 2)[i, 1])
    i16 = jnp.array(np.array([-300, -301, -32768, 32767], np.int16))
    out["int16 extremes x3[i]"] = _call(lambda: x3[i16])
    out["int16 extremes take 40000"] = _call(
        lambda: jnp.take(jnp.arange(40000.0), jnp.array([-1, -30000], jnp.int16)))
    out["numpy int8 x3[i]"] = _call(lambda: x3[np.array([-100, -1, -128], np.int8)])
    out["numpy int8 x[:100][i]"] = _call(lambda: x[:100][np.array([-1, -100], np.int8)])
    return out


def creation_cases(api):
    """Arrays that cannot exist, and Python ints too large for any array (issue 11's
    sections 1 and 4). Shapes whose byte count overflows int64 abort JAX's process, so
    they are tested literally in test_robustness_indexing.py instead."""
    jax, jnp, lax = api.jax, api.jnp, api.lax
    huge = (10**6, 10**6)
    out = {
        "zeros huge": _call(lambda: jnp.zeros(huge)),
        "ones huge": _call(lambda: jnp.ones(huge)),
        "full huge": _call(lambda: jnp.full(huge, 3.0)),
        "empty huge": _call(lambda: jnp.empty(huge)),
        "broadcast_to huge": _call(lambda: jnp.broadcast_to(1.0, huge)),
        "zeros_like huge": _call(lambda: jnp.zeros_like(jax.ShapeDtypeStruct(huge, jnp.float32))),
        "lax.full huge": _call(lambda: lax.full(huge, 0.0)),
        "jit zeros huge": _call(lambda: jax.jit(lambda: jnp.zeros(huge))()),
        "jit zeros huge sum": _call(lambda: jax.jit(lambda: jnp.zeros(huge).sum())()),
        "eval_shape zeros huge": _call(lambda: jax.eval_shape(lambda: jnp.zeros(huge)).shape),
        "zeros small": _call(lambda: jnp.zeros((2, 3)) + 1),
        "split 2.5": _call(lambda: jax.random.split(jax.random.key(0), 2.5)),
        "split 0": _call(lambda: jax.random.key_data(jax.random.split(jax.random.key(0), 0))),
    }
    for value in (2**70, -2**70, 2**40, 2**31):
        out[f"array {value}"] = _call(lambda: jnp.array(value))
        out[f"asarray {value}"] = _call(lambda: jnp.asarray(value))
    out["array 2**31 - 1"] = _call(lambda: jnp.array(2**31 - 1))
    out["array -2**31"] = _call(lambda: jnp.array(-2**31))
    return out


def run_all(api):
    return {**dynamic_slice_cases(api), **array_index_cases(api), **creation_cases(api)}
