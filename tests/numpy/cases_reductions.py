"""Cases for the reductions and statistics of jaxlite.numpy (sum ... quantile, cov)."""
import numpy as np
from hypothesis import strategies as st

from np_cases import (ALL, FLOATS, INTS, NUMERIC, REAL, Case, axis_kwargs, same_shapes,
                      small_shapes)

REAL_NUMERIC = INTS + FLOATS
NONEMPTY = small_shapes(min_dims=1, min_side=1).map(lambda s: (s,))
NONEMPTY_2D = small_shapes(min_dims=2, max_dims=2, min_side=1).map(lambda s: (s,))
VECTOR = small_shapes(min_dims=1, max_dims=1, min_side=1).map(lambda s: (s,))


def axes(allow_tuple=True, **extra):
    """`axis` (None, negative, tuples) plus keepdims, and any fixed `extra` choices."""
    def strategy(shapes):
        base = axis_kwargs(shapes, allow_tuple=allow_tuple)
        choices = {"keepdims": st.booleans()}
        choices.update({k: st.sampled_from(v) for k, v in extra.items()})
        return st.tuples(base, st.fixed_dictionaries(choices)).map(lambda p: {**p[0], **p[1]})
    return strategy


def one_axis(shapes):
    return axis_kwargs(shapes, allow_none=True)


def _with_nans(xp, x):
    """`x` with its entries above 1 turned into NaN (float inputs)."""
    return xp.where(x > 1, xp.nan, x)


# Quantiles away from ties of `nearest` (a fraction of exactly .5 rounds differently in JAX).
QS = (0.0, 0.123, 0.377, 0.811, 1.0)

CASES = [
    Case("sum", lambda xp, x, **kw: xp.sum(x, **kw), kwargs=axes(), variant="axes"),
    Case("sum", lambda xp, x: xp.sum(x, axis=-1, dtype=np.float32, initial=2,
                                     where=x > 0), dtypes=REAL, variant="where",
         example_shapes=((2, 3),), shapes=small_shapes(1).map(lambda s: (s,)), grad=False),
    Case("prod", lambda xp, x, **kw: xp.prod(x, **kw), kwargs=axes(), domain="small"),
    Case("prod", lambda xp, x: xp.prod(x, axis=0, where=x > 0, initial=2), dtypes=NUMERIC,
         variant="where", shapes=small_shapes(1).map(lambda s: (s,)), domain="small",
         grad=False),
    Case("max", lambda xp, x, **kw: xp.max(x, **kw), kwargs=axes(), shapes=NONEMPTY,
         dtypes=REAL),
    Case("max", lambda xp, x: xp.max(x, axis=-1, initial=0, where=x < 2), dtypes=REAL,
         variant="where", shapes=small_shapes(1).map(lambda s: (s,)), grad=False),
    Case("min", lambda xp, x, **kw: xp.min(x, **kw), kwargs=axes(), shapes=NONEMPTY,
         dtypes=REAL),
    Case("amax", lambda xp, x, **kw: xp.amax(x, **kw), kwargs=axes(), shapes=NONEMPTY,
         dtypes=REAL),
    Case("amin", lambda xp, x, **kw: xp.amin(x, **kw), kwargs=axes(), shapes=NONEMPTY,
         dtypes=REAL),
    Case("ptp", lambda xp, x, **kw: xp.ptp(x, **kw), kwargs=axes(), shapes=NONEMPTY,
         dtypes=INTS + FLOATS),
    Case("mean", lambda xp, x, **kw: xp.mean(x, **kw), kwargs=axes(), shapes=NONEMPTY),
    Case("mean", lambda xp, x: xp.mean(x, axis=0, where=x > 0), dtypes=REAL_NUMERIC,
         variant="where", shapes=small_shapes(1, min_side=1).map(lambda s: (s,)), grad=False),
    Case("var", lambda xp, x, **kw: xp.var(x, **kw), kwargs=axes(ddof=(0, 1)),
         shapes=small_shapes(1, min_side=2).map(lambda s: (s,)), ulps=32),
    Case("std", lambda xp, x, **kw: xp.std(x, **kw), kwargs=axes(ddof=(0, 1)),
         shapes=small_shapes(1, min_side=2).map(lambda s: (s,)), ulps=32, grad=False),
    Case("any", lambda xp, x, **kw: xp.any(x, **kw), kwargs=axes(), grad=False),
    Case("all", lambda xp, x, **kw: xp.all(x, **kw), kwargs=axes(), grad=False),
    Case("count_nonzero", lambda xp, x, **kw: xp.count_nonzero(x, **kw),
         kwargs=lambda s: axis_kwargs(s, allow_tuple=True), grad=False),
    Case("argmax", lambda xp, x, **kw: xp.argmax(x, **kw), kwargs=one_axis, shapes=NONEMPTY,
         dtypes=REAL, grad=False),
    Case("argmin", lambda xp, x, **kw: xp.argmin(x, **kw), kwargs=one_axis, shapes=NONEMPTY,
         dtypes=REAL, grad=False),
    Case("cumsum", lambda xp, x, **kw: xp.cumsum(x, **kw), kwargs=one_axis),
    Case("cumprod", lambda xp, x, **kw: xp.cumprod(x, **kw), kwargs=one_axis, domain="small"),
    Case("cumulative_sum", lambda xp, x: xp.cumulative_sum(x, axis=-1, include_initial=True),
         shapes=small_shapes(1).map(lambda s: (s,)), example_shapes=((2, 3),)),
    Case("cumulative_prod", lambda xp, x: xp.cumulative_prod(x, axis=0),
         shapes=small_shapes(1).map(lambda s: (s,)), domain="small"),
    Case("average", lambda xp, x, **kw: xp.average(x, **kw), kwargs=axes(),
         shapes=NONEMPTY, dtypes=NUMERIC),
    Case("average", lambda xp, x, w: xp.average(x, axis=-1, weights=w, returned=True),
         nargs=2, shapes=same_shapes(2, min_dims=1, min_side=1), domain="positive",
         dtypes=FLOATS, variant="weights"),
    # NaN-skipping reductions: entries above 1 become NaN first.
    Case("nansum", lambda xp, x, **kw: xp.nansum(_with_nans(xp, x), **kw), kwargs=axes(),
         dtypes=FLOATS, grad=False),
    Case("nansum", lambda xp, x, **kw: xp.nansum(x, **kw), kwargs=axes(), variant="plain"),
    Case("nanprod", lambda xp, x, **kw: xp.nanprod(_with_nans(xp, x), **kw), kwargs=axes(),
         dtypes=FLOATS, domain="small", grad=False),
    Case("nanmax", lambda xp, x, **kw: xp.nanmax(_with_nans(xp, x), **kw), kwargs=axes(),
         dtypes=FLOATS + INTS, shapes=NONEMPTY, grad=False),
    Case("nanmin", lambda xp, x, **kw: xp.nanmin(_with_nans(xp, x), **kw), kwargs=axes(),
         dtypes=FLOATS + INTS, shapes=NONEMPTY, grad=False),
    Case("nanmean", lambda xp, x, **kw: xp.nanmean(_with_nans(xp, x), **kw), kwargs=axes(),
         dtypes=FLOATS, shapes=NONEMPTY, grad=False),
    Case("nanvar", lambda xp, x, **kw: xp.nanvar(_with_nans(xp, x), **kw),
         kwargs=axes(ddof=(0, 1)), dtypes=FLOATS, shapes=NONEMPTY, grad=False, ulps=32),
    Case("nanstd", lambda xp, x, **kw: xp.nanstd(_with_nans(xp, x), **kw), kwargs=axes(),
         dtypes=FLOATS, shapes=NONEMPTY, grad=False, ulps=32),
    Case("nanargmax", lambda xp, x, **kw: xp.nanargmax(xp.where(x > 2, xp.nan, x), **kw),
         kwargs=one_axis, dtypes=FLOATS, shapes=NONEMPTY, grad=False),
    Case("nanargmin", lambda xp, x, **kw: xp.nanargmin(xp.where(x < -2, xp.nan, x), **kw),
         kwargs=one_axis, dtypes=FLOATS, shapes=NONEMPTY, grad=False),
    Case("nancumsum", lambda xp, x, **kw: xp.nancumsum(_with_nans(xp, x), **kw),
         kwargs=one_axis, dtypes=FLOATS, grad=False),
    Case("nancumprod", lambda xp, x, **kw: xp.nancumprod(_with_nans(xp, x), **kw),
         kwargs=one_axis, dtypes=FLOATS, domain="small", grad=False),
    # Order statistics.
    Case("median", lambda xp, x, **kw: xp.median(x, **kw), kwargs=axes(), shapes=NONEMPTY,
         dtypes=REAL_NUMERIC),
    Case("median", lambda xp, x: xp.median(_with_nans(xp, x), axis=-1), shapes=NONEMPTY,
         dtypes=FLOATS, variant="nan", grad=False),
    Case("nanmedian", lambda xp, x, **kw: xp.nanmedian(_with_nans(xp, x), **kw),
         kwargs=axes(), shapes=NONEMPTY, dtypes=FLOATS, grad=False),
    Case("quantile", lambda xp, x, **kw: xp.quantile(x, **kw),
         kwargs=axes(q=QS, method=("linear", "lower", "higher", "midpoint", "nearest")),
         shapes=NONEMPTY, dtypes=REAL_NUMERIC, example_kwargs={"q": 0.3}),
    Case("quantile", lambda xp, x: xp.quantile(x, np.array([0.1, 0.5, 0.9]), axis=0),
         shapes=NONEMPTY, dtypes=FLOATS, variant="vector_q"),
    Case("quantile", lambda xp, x: xp.quantile(x, 0.3, method="inverted_cdf"),
         shapes=NONEMPTY, dtypes=("f32", "f64"), variant="inverted_cdf", grad=False),
    Case("percentile", lambda xp, x, **kw: xp.percentile(x, **kw),
         kwargs=axes(q=(0, 12.3, 50, 81.1, 100)), shapes=NONEMPTY, dtypes=REAL_NUMERIC,
         example_kwargs={"q": 30}),
    Case("nanquantile", lambda xp, x, **kw: xp.nanquantile(_with_nans(xp, x), **kw),
         kwargs=axes(q=QS, method=("linear", "lower", "higher", "midpoint")),
         shapes=NONEMPTY, dtypes=FLOATS, example_kwargs={"q": 0.3}, grad=False),
    Case("nanpercentile", lambda xp, x, **kw: xp.nanpercentile(_with_nans(xp, x), **kw),
         kwargs=axes(q=(0, 37.7, 100)), shapes=NONEMPTY, dtypes=FLOATS,
         example_kwargs={"q": 30}, grad=False),
    # Covariance and correlation.
    Case("cov", lambda xp, x, **kw: xp.cov(x, **kw),
         kwargs=lambda s: st.fixed_dictionaries({"rowvar": st.booleans(),
                                                 "bias": st.booleans()}),
         shapes=small_shapes(2, 2, min_side=2).map(lambda s: (s,)), dtypes=NUMERIC,
         example_shapes=((2, 3),), ulps=64),
    Case("cov", lambda xp, x, f, w: xp.cov(x, fweights=f, aweights=w, ddof=1), nargs=3,
         shapes=st.integers(3, 5).map(lambda n: ((2, n), (n,), (n,))), dtypes=("i32",),
         domain="positive", variant="weights", example_shapes=((2, 4), (4,), (4,)),
         upcast=False, ulps=64),
    Case("cov", lambda xp, x, y: xp.cov(x, y), nargs=2, variant="y",
         shapes=small_shapes(1, 1, min_side=2).map(lambda s: (s, s)), dtypes=FLOATS,
         ulps=64),
    Case("corrcoef", lambda xp, x, **kw: xp.corrcoef(x, **kw),
         kwargs=lambda s: st.fixed_dictionaries({"rowvar": st.booleans()}),
         shapes=small_shapes(2, 2, min_side=3).map(lambda s: (s,)), dtypes=FLOATS + INTS,
         example_shapes=((2, 3),), ulps=256, grad=False),
]
