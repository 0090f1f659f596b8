"""Promotion of weakly typed arrays of other widths than the default (a weak float32 under
x64, a weak uint8): `result_type` widens a weak result to its kind's default, while
jax.numpy's own promotion keeps the inputs' width. Expected values recorded from JAX 0.10.2
(jax._src.lax.lax._convert_element_type(..., weak_type=True) makes the weak inputs)."""
import numpy as np
import pytest

import jaxlite.numpy as jnp
from jaxlite import dtypes, lax
from jaxlite.config import config

# (x64, a, b): (result_type(Wa, Wb), result_type(Wa, 1), result_type(Wa, 1.0), result_type(Wa))
RESULT_TYPE = {
    (True, "float16", "float16"): ("float64", "float64", "float64", "float64"),
    (True, "int32", "int32"): ("int64", "int64", "float64", "int64"),
    (True, "complex64", "complex64"): ("complex128",) * 4,
    (True, "int32", "float16"): ("float64", "int64", "float64", "int64"),
    (True, "int16", "int16"): ("int64", "int64", "float64", "int64"),
    (True, "uint8", "uint8"): ("uint64", "int64", "float64", "uint64"),
    (False, "float16", "float16"): ("float32",) * 4,
    (False, "int32", "float16"): ("float32", "int32", "float32", "int32"),
    (False, "uint8", "uint8"): ("uint32", "int32", "float32", "uint32"),
}


def weak(dtype):
    return lax._convert_element_type(np.zeros(2, dtype), np.dtype(dtype), weak_type=True)


@pytest.mark.parametrize("case", sorted(RESULT_TYPE))
def test_result_type_of_weak_arrays_widens_to_the_kind(case):
    x64, a, b = case
    with config.override("jax_enable_x64", x64):
        got = (dtypes.result_type(weak(a), weak(b), return_weak_type_flag=True),
               dtypes.result_type(weak(a), 1, return_weak_type_flag=True),
               dtypes.result_type(weak(a), 1.0, return_weak_type_flag=True),
               dtypes.result_type(weak(a), return_weak_type_flag=True))
    assert got == tuple((np.dtype(d), True) for d in RESULT_TYPE[case])


@pytest.mark.parametrize("name, fn, dtype", [
    ("sin", lambda w: jnp.sin(w), "float32"),
    ("square", lambda w: w * w, "float32"),
    ("times half", lambda w: w * 0.5, "float64"),
    ("plus one", lambda w: w + 1, "float32"),
    ("negative", lambda w: -w, "float32"),
])
def test_jnp_keeps_the_width_of_weak_float32_under_x64(name, fn, dtype):
    with config.override("jax_enable_x64", True):
        out = fn(weak("float32"))
    assert (out.dtype, out.weak_type) == (np.dtype(dtype), True)
