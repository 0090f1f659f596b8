"""Cases for the unary elementwise functions of jaxlite.numpy: signs, rounding, exponentials,
logarithms, trigonometry, complex parts and a few special functions.

Bool inputs are left out of the transcendental functions: numpy computes them in float16,
JAX in float32, so numpy is no reference there (the result dtypes are in test_basic.py).
"""
from hypothesis import strategies as st

import ml_dtypes
import numpy as np

from np_cases import ALL, BOOL, COMPLEX, FLOATS, INEXACT, INTS, NUMERIC, REAL, Case

DTYPE_OF_NAME = {"bfloat16": np.dtype(ml_dtypes.bfloat16)}
DTYPE_OF_NAME.update((name, np.dtype(name)) for name in
                     ["bool", "int8", "int32", "uint8", "float16", "float32", "complex64"])

NON_BOOL_REAL = INTS + FLOATS


def unary(name: str, dtypes=NUMERIC, domain: str = "real", **options) -> Case:
    """A case calling `xp.<name>(x)`."""
    return Case(name, lambda xp, x: getattr(xp, name)(x), dtypes=dtypes, domain=domain,
                **options)


def _decimals(shapes) -> st.SearchStrategy:
    return st.fixed_dictionaries({"decimals": st.integers(-1, 3)})


def _astype_kwargs(shapes) -> st.SearchStrategy:
    targets = ["bool", "int8", "int32", "uint8", "float16", "bfloat16", "float32", "complex64"]
    return st.fixed_dictionaries({"dtype": st.sampled_from(targets).map(DTYPE_OF_NAME.get)})


def _angle_kwargs(shapes) -> st.SearchStrategy:
    return st.fixed_dictionaries({"deg": st.booleans()})


EXACT = {"grad": False}  # integer-valued or piecewise-constant results

CASES = [
    # signs and magnitudes
    unary("negative", dtypes=ALL),
    unary("positive", dtypes=ALL),
    unary("abs", dtypes=ALL),
    unary("absolute", dtypes=ALL),
    unary("fabs", dtypes=REAL + COMPLEX),
    unary("sign", dtypes=ALL, **EXACT),
    # rounding
    unary("floor", dtypes=ALL, **EXACT),
    unary("ceil", dtypes=ALL, **EXACT),
    unary("trunc", dtypes=ALL, **EXACT),
    unary("rint", dtypes=ALL, **EXACT),
    Case("round", lambda xp, x, **kw: xp.round(x, **kw), dtypes=INEXACT, kwargs=_decimals,
         example_kwargs={"decimals": 1}, grad=False),
    Case("round", lambda xp, x, **kw: xp.round(x, **kw), dtypes=BOOL + INTS,
         kwargs=lambda shapes: st.fixed_dictionaries({"decimals": st.integers(0, 2)}),
         variant="integers", grad=False),
    Case("around", lambda xp, x: xp.around(x, 2), dtypes=INEXACT, grad=False),
    # exponentials and logarithms
    unary("exp", domain="small"),
    unary("exp2", domain="small"),
    unary("expm1", domain="small"),
    unary("log", domain="positive"),
    unary("log1p", domain="positive"),
    unary("log2", domain="positive"),
    unary("log10", domain="positive"),
    unary("sqrt", domain="positive"),
    unary("cbrt", domain="real"),
    unary("square", dtypes=ALL),
    unary("reciprocal", dtypes=INEXACT, domain="positive"),
    # trigonometry and hyperbolic functions, with the array API's short names
    unary("sin"), unary("cos"), unary("tan", domain="unit"),
    unary("arcsin", domain="unit"), unary("asin", domain="unit"),
    unary("arccos", domain="unit"), unary("acos", domain="unit"),
    unary("arctan"), unary("atan"),
    unary("sinh", domain="small"), unary("cosh", domain="small"), unary("tanh"),
    unary("arcsinh"), unary("asinh"),
    unary("arccosh", domain="above1"), unary("acosh", domain="above1"),
    unary("arctanh", domain="unit"), unary("atanh", domain="unit"),
    unary("deg2rad", dtypes=NON_BOOL_REAL), unary("radians", dtypes=NON_BOOL_REAL),
    unary("rad2deg", dtypes=NON_BOOL_REAL), unary("degrees", dtypes=NON_BOOL_REAL),
    # complex parts
    unary("real", dtypes=ALL),
    unary("imag", dtypes=ALL, grad=False),
    unary("conj", dtypes=ALL),
    unary("conjugate", dtypes=ALL),
    Case("angle", lambda xp, x, **kw: xp.angle(x, **kw), dtypes=NUMERIC, kwargs=_angle_kwargs,
         grad=False),
    # conversion (nonnegative values: float to unsigned of negatives is undefined in C)
    Case("astype", lambda xp, x, dtype: xp.astype(x, dtype), dtypes=REAL, domain="positive",
         kwargs=_astype_kwargs, example_kwargs={"dtype": np.dtype("float16")}, grad=False),
    # special functions
    unary("sinc", dtypes=NUMERIC),
    unary("sinc", dtypes=FLOATS, domain="int", variant="integers"),
    unary("i0", dtypes=NON_BOOL_REAL + COMPLEX, ulps=16),
    Case("i0", lambda xp, x: xp.i0(x * 10), dtypes=("f32", "f64"), variant="large", ulps=16),
]
