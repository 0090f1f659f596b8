"""Cases for the binary (and ternary) elementwise functions of jaxlite.numpy: arithmetic,
division, powers, extrema, comparisons, bitwise and logical operations, selection, and the
two-argument special functions.

Integer division by zero differs between numpy and JAX on purpose, so divisors are made
nonzero inside the case (`_nonzero`); shift amounts and integer exponents are made
nonnegative the same way.
"""
from hypothesis import strategies as st

from np_cases import ALL, BOOL, COMPLEX, FLOATS, INEXACT, INTS, NUMERIC, REAL, Case

NON_BOOL_REAL = INTS + FLOATS


def binary(name: str, dtypes=ALL, domain: str = "real", **options) -> Case:
    """A case calling `xp.<name>(x, y)` on broadcastable arguments."""
    return Case(name, lambda xp, x, y: getattr(xp, name)(x, y), nargs=2, dtypes=dtypes,
                domain=domain, **options)


def _nonzero(xp, y):
    return xp.where(y == 0, xp.ones_like(y), y)


def divider(name: str, dtypes=NUMERIC, **options) -> Case:
    """A case calling `xp.<name>(x, y)` with the zeros of `y` replaced by ones."""
    return Case(name, lambda xp, x, y: getattr(xp, name)(x, _nonzero(xp, y)), nargs=2,
                dtypes=dtypes, **options)


COMPARISON = {"grad": False}

CASES = [
    # arithmetic
    binary("add"), binary("subtract"), binary("multiply"),
    divider("divide"), divider("true_divide"),
    divider("floor_divide", dtypes=NON_BOOL_REAL + COMPLEX, grad=False),
    divider("remainder", dtypes=NON_BOOL_REAL + COMPLEX, grad=False),
    divider("mod", dtypes=NON_BOOL_REAL, grad=False),
    divider("fmod", dtypes=NON_BOOL_REAL + COMPLEX, grad=False),
    divider("divmod", dtypes=NON_BOOL_REAL, grad=False),
    # powers: integer exponents kept nonnegative (numpy refuses negative ones)
    Case("power", lambda xp, x, y: xp.power(x, xp.abs(y)), nargs=2, dtypes=ALL,
         domain="positive"),
    Case("pow", lambda xp, x, y: xp.pow(x, y), nargs=2, dtypes=INEXACT, domain="positive"),
    Case("power", lambda xp, x: xp.power(x, 3), dtypes=ALL, variant="python_int"),
    Case("power", lambda xp, x: xp.power(x, 0.5), dtypes=INEXACT, domain="positive",
         variant="python_float"),
    Case("float_power", lambda xp, x, y: xp.float_power(x, xp.abs(y)), nargs=2,
         dtypes=NON_BOOL_REAL + COMPLEX, domain="positive"),
    # extrema
    binary("maximum"), binary("minimum"), binary("fmax"), binary("fmin"),
    # complex NaNs: JAX picks by its own ordering, numpy keeps the first (docs/numpy_differences.md)
    binary("maximum", dtypes=FLOATS, domain="special", variant="special", grad=False),
    binary("fmin", domain="special", variant="special", grad=False),
    # two-argument real functions
    binary("arctan2", dtypes=NON_BOOL_REAL), binary("atan2", dtypes=NON_BOOL_REAL),
    binary("hypot", dtypes=NON_BOOL_REAL),
    binary("logaddexp", dtypes=NON_BOOL_REAL), binary("logaddexp2", dtypes=NON_BOOL_REAL),
    binary("logaddexp", dtypes=FLOATS, domain="special", variant="special", grad=False),
    binary("copysign", dtypes=NON_BOOL_REAL, grad=False),
    binary("copysign", dtypes=FLOATS, domain="special", variant="special", grad=False),
    binary("heaviside", dtypes=NON_BOOL_REAL, domain="int", grad=False),
    Case("nextafter", lambda xp, x, y: xp.nextafter(x, y), nargs=2, dtypes=("f16", "f32"),
         upcast=False, grad=False),
    Case("ldexp", lambda xp, x, n: xp.ldexp(x, (n * 4).astype("int32")), nargs=2,
         dtypes=FLOATS, upcast=False, grad=False),  # numpy computes ints in float16 here
    Case("ldexp", lambda xp, x, n: xp.ldexp(x, n), nargs=2, dtypes=INTS, domain="real",
         variant="integers", grad=False),
    binary("gcd", dtypes=BOOL + INTS, grad=False),
    binary("lcm", dtypes=BOOL + INTS, grad=False),
    # comparisons
    binary("equal", **COMPARISON), binary("not_equal", **COMPARISON),
    binary("less", **COMPARISON), binary("less_equal", **COMPARISON),
    binary("greater", **COMPARISON), binary("greater_equal", **COMPARISON),
    binary("equal", dtypes=INEXACT, domain="special", variant="special", **COMPARISON),
    binary("less", dtypes=INEXACT, domain="special", variant="special", **COMPARISON),
    # bitwise operations
    binary("bitwise_and", dtypes=BOOL + INTS), binary("bitwise_or", dtypes=BOOL + INTS),
    binary("bitwise_xor", dtypes=BOOL + INTS),
    Case("bitwise_not", lambda xp, x: xp.bitwise_not(x), dtypes=BOOL + INTS),
    Case("invert", lambda xp, x: xp.invert(x), dtypes=BOOL + INTS),
    Case("bitwise_invert", lambda xp, x: xp.bitwise_invert(x), dtypes=BOOL + INTS),
    *[Case(name, lambda xp, x, y, name=name: getattr(xp, name)(x, xp.abs(y)), nargs=2,
           dtypes=INTS)
      for name in ("left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift")],
    # logical operations
    binary("logical_and", **COMPARISON), binary("logical_or", **COMPARISON),
    binary("logical_xor", **COMPARISON),
    Case("logical_not", lambda xp, x: xp.logical_not(x), **COMPARISON),
    # selection
    Case("where", lambda xp, c, x, y: xp.where(c > 0, x, y), nargs=3),
    Case("where", lambda xp, c, x: xp.where(c > 0, x, 2), nargs=2, variant="python_scalar"),
    Case("where", lambda xp, c: xp.where(c > 0), variant="indices", jit=False, vmap=False,
         grad=False),
    Case("clip", lambda xp, x, lo, hi: xp.clip(x, lo, hi), nargs=3, dtypes=REAL),
    Case("clip", lambda xp, x, **kw: xp.clip(x, **kw), dtypes=REAL, variant="one_bound",
         kwargs=lambda shapes: st.sampled_from([{"min": 1}, {"max": 1}, {"min": -1, "max": 2}]),
         example_kwargs={"min": 1}),
]
