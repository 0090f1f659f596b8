"""Cases for the tests and cleanups of values in jaxlite.numpy: classification (isnan, ...),
closeness and whole-array equality, NaN replacement, and the functions of the float format
(frexp, modf, spacing, signbit, bitwise_count).

Most draw from the "special" domain, which mixes NaN, infinities and signed zeros into the
values. The tolerances given to `isclose` are powers of two, so that the decision at the
boundary is exact in every dtype and numpy can judge it.
"""
from hypothesis import strategies as st

from np_cases import ALL, BOOL, COMPLEX, FLOATS, INTS, REAL, Case, same_shapes

PREDICATE = {"grad": False, "domain": "special"}


def predicate(name: str, dtypes=ALL, **options) -> Case:
    """A case calling `xp.<name>(x)` on values with NaN, infinities and signed zeros."""
    return Case(name, lambda xp, x: getattr(xp, name)(x), dtypes=dtypes,
                **{**PREDICATE, **options})


def _closeness_kwargs(shapes) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional={
        "rtol": st.sampled_from([0.0, 0.25, 0.5]), "atol": st.sampled_from([0.0, 0.5, 1.0]),
        "equal_nan": st.booleans()})


def _replacement_kwargs(shapes) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional={
        "nan": st.sampled_from([0.0, -1.5]), "posinf": st.sampled_from([9.0, 100.0]),
        "neginf": st.sampled_from([-9.0, -100.0])})


CASES = [
    # classification
    predicate("isfinite"), predicate("isnan"), predicate("isinf"),
    predicate("isposinf", dtypes=REAL + COMPLEX), predicate("isneginf", dtypes=REAL + COMPLEX),
    predicate("signbit", dtypes=REAL + COMPLEX),
    predicate("iscomplex"), predicate("isreal"),
    # closeness and equality
    Case("isclose", lambda xp, a, b, **kw: xp.isclose(a, b, **kw), nargs=2,
         kwargs=_closeness_kwargs, upcast=False, **PREDICATE),
    Case("allclose", lambda xp, a, b, **kw: xp.allclose(a, b, **kw), nargs=2,
         kwargs=_closeness_kwargs, upcast=False, **PREDICATE),
    Case("isclose", lambda xp, a, b: xp.isclose(a, a + b * 1e-5), nargs=2,
         shapes=same_shapes(2), dtypes=("f32", "c64"), variant="near", upcast=False,
         grad=False),
    Case("array_equal", lambda xp, a, b, **kw: xp.array_equal(a, b, **kw), nargs=2,
         kwargs=lambda shapes: st.fixed_dictionaries({"equal_nan": st.booleans()}),
         dtypes=ALL, **PREDICATE),
    Case("array_equal", lambda xp, a: xp.array_equal(a, a.copy()), dtypes=ALL,
         variant="same", **PREDICATE),
    Case("array_equiv", lambda xp, a, b: xp.array_equiv(a, b), nargs=2, domain="int",
         dtypes=ALL, grad=False),
    # cleanup: explicit replacement values for every dtype; the defaults (the dtype's
    # extremes) where numpy computes in the same dtype
    Case("nan_to_num", lambda xp, x, **kw: xp.nan_to_num(x, **kw), dtypes=ALL,
         kwargs=_replacement_kwargs, example_kwargs={"nan": 1.0}, **PREDICATE),
    Case("nan_to_num", lambda xp, x: xp.nan_to_num(x), dtypes=BOOL + INTS + ("f16", "f32"),
         variant="defaults", upcast=False, **PREDICATE),
    # the float format
    Case("frexp", lambda xp, x: xp.frexp(x), dtypes=REAL + COMPLEX, **PREDICATE),
    # eager only: compiled code flushes subnormals as XLA's does (tests/backends/cpu/
    # test_subnormals.py checks jit against JAX's numbers)
    Case("frexp", lambda xp, x: xp.frexp(x * 1e-39), dtypes=("f32",), variant="subnormal",
         upcast=False, grad=False, jit=False),
    Case("modf", lambda xp, x: xp.modf(x), dtypes=REAL + COMPLEX),
    Case("spacing", lambda xp, x: xp.spacing(x), dtypes=("f16", "f32"), upcast=False,
         **PREDICATE),
    Case("bitwise_count", lambda xp, x: xp.bitwise_count(x), dtypes=BOOL + INTS + FLOATS,
         grad=False),
]
