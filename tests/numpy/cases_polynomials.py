"""Cases for the polynomial functions and 1-d convolution of jaxlite.numpy."""
import numpy as np
from hypothesis import strategies as st

from np_cases import FLOATS, INTS, NUMERIC, SIGNED, Case, small_shapes

COEFFS = small_shapes(1, 1, min_side=1, max_side=5)
TWO_POLYS = st.tuples(COEFFS, COEFFS)
MODES = st.fixed_dictionaries({"mode": st.sampled_from(["full", "same", "valid"])})


def _leading_nonzero(xp, p):
    """`p` with a leading coefficient kept away from zero (division and roots need it)."""
    return p + xp.where(p[:1] >= 0, 1.5, -1.5) * (xp.arange(p.shape[0]) == 0)


def _division(xp, u, v):
    """Quotient, and the remainder as values (numpy trims its leading zeros, JAX not)."""
    q, r = xp.polydiv(u, _leading_nonzero(xp, v))
    return q, xp.polyval(r, xp.asarray([0.5, 1.5, -2.0], dtype=r.dtype))


def _sorted_roots(xp, p):
    r = xp.roots(_leading_nonzero(xp, p))
    # Sorting by (real, imag) on rounded values makes the order of close roots stable.
    return xp.sort_complex(xp.round(r, 3))


CASES = [
    Case("polyval", lambda xp, p, x: xp.polyval(p, x), nargs=2, domain="small",
         shapes=st.tuples(COEFFS, small_shapes()), dtypes=NUMERIC, ulps=32),
    Case("polyadd", lambda xp, a, b: xp.polyadd(a, b), nargs=2, shapes=TWO_POLYS,
         dtypes=NUMERIC),
    Case("polysub", lambda xp, a, b: xp.polysub(a, b), nargs=2, shapes=TWO_POLYS,
         dtypes=NUMERIC),
    Case("polymul", lambda xp, a, b: xp.polymul(a, b), nargs=2, shapes=TWO_POLYS,
         dtypes=NUMERIC, ulps=32),
    Case("polymul", lambda xp, a, b: xp.polymul(a, b, trim_leading_zeros=True)
         if xp is not np else np.polymul(a, b), nargs=2, shapes=TWO_POLYS,
         dtypes=("f32", "f64"), variant="trim", jit=False, vmap=False, ulps=32),
    Case("polydiv", lambda xp, u, v: _division(xp, u, v), nargs=2,
         shapes=st.tuples(COEFFS, COEFFS).filter(lambda s: s[0][0] >= s[1][0]),
         example_shapes=((4,), (2,)), dtypes=("f32", "f64") + SIGNED, ulps=256),
    Case("polyder", lambda xp, p, **kw: xp.polyder(p, **kw), shapes=COEFFS.map(lambda s: (s,)),
         kwargs=lambda s: st.fixed_dictionaries({"m": st.integers(0, 3)}), dtypes=NUMERIC),
    Case("polyint", lambda xp, p, **kw: xp.polyint(p, **kw), shapes=COEFFS.map(lambda s: (s,)),
         kwargs=lambda s: st.fixed_dictionaries({"m": st.integers(0, 3)}), dtypes=NUMERIC,
         ulps=16),
    Case("polyint", lambda xp, p: xp.polyint(p, 2, k=p[:2]), dtypes=FLOATS, variant="k",
         shapes=small_shapes(1, 1, min_side=2).map(lambda s: (s,)), ulps=16),
    Case("poly", lambda xp, r: xp.poly(r), shapes=COEFFS.map(lambda s: (s,)),
         dtypes=INTS + FLOATS + ("c64", "c128"), domain="small", ulps=64),
    Case("roots", _sorted_roots, shapes=small_shapes(1, 1, min_side=2, max_side=4).map(
        lambda s: (s,)), dtypes=("f32", "f64"), domain="int", grad=False, jit=False,
         vmap=False, ulps=1e4),
    Case("convolve", lambda xp, a, v, **kw: xp.convolve(a, v, **kw), nargs=2, shapes=TWO_POLYS,
         kwargs=lambda s: MODES, dtypes=NUMERIC, ulps=32),
    Case("correlate", lambda xp, a, v, **kw: xp.correlate(a, v, **kw), nargs=2,
         shapes=TWO_POLYS, kwargs=lambda s: MODES, dtypes=NUMERIC, ulps=32),
    Case("polyfit", lambda xp, x, y: xp.polyfit(xp.arange(x.shape[0]) * 0.5 + x * 0.1, y, 2),
         nargs=2, shapes=st.integers(4, 7).map(lambda n: ((n,), (n,))),
         dtypes=("f32", "f64"), example_shapes=((5,), (5,)), grad=False, vmap=False,
         ulps=1e4),
]
