"""Cases for the elementwise functions of jaxlite.numpy (ufuncs and friends)."""
from np_cases import ALL, FLOATS, INEXACT, NUMERIC, Case, axis_kwargs, same_shapes

CASES = [
    Case("add", lambda xp, x, y: xp.add(x, y), nargs=2),
    Case("exp", lambda xp, x: xp.exp(x), dtypes=NUMERIC, domain="small"),
    Case("sum", lambda xp, x, **kw: xp.sum(x, **kw), kwargs=lambda shapes: axis_kwargs(shapes, allow_tuple=True)),
]
