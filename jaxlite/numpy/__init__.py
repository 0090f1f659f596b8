"""`jaxlite.numpy`: the numpy API on jaxlite arrays (mirrors `jax.numpy`).

Functions follow JAX's semantics rather than numpy's where the two differ: JAX's type
promotion (weak Python scalars, no silent 64-bit with x64 off), immutable arrays, and
results that are always jaxlite arrays. Every function is written with `jaxlite.lax`, so it
works eagerly and under `jit`, `grad` and `vmap` alike. Importing this package also fills
the operator table behind the Python operators and methods of arrays and tracers.
"""
import numpy as _np

from jaxlite.numpy import _operators
from jaxlite.numpy._array_api import *  # noqa: F401,F403
from jaxlite.numpy._creation import *  # noqa: F401,F403
from jaxlite.numpy._differences import *  # noqa: F401,F403
from jaxlite.numpy._einsum import *  # noqa: F401,F403
from jaxlite.numpy._float_functions import *  # noqa: F401,F403
from jaxlite.numpy._functional import *  # noqa: F401,F403
from jaxlite.numpy._grids import *  # noqa: F401,F403
from jaxlite.numpy._index_tricks import *  # noqa: F401,F403
from jaxlite.numpy._io import *  # noqa: F401,F403
from jaxlite.numpy._joining import *  # noqa: F401,F403
from jaxlite.numpy._histograms import *  # noqa: F401,F403
from jaxlite.numpy._linalg_basic import *  # noqa: F401,F403
from jaxlite.numpy._math import *  # noqa: F401,F403
from jaxlite.numpy._nan_reductions import *  # noqa: F401,F403
from jaxlite.numpy._nonzero import *  # noqa: F401,F403
from jaxlite.numpy._packbits import *  # noqa: F401,F403
from jaxlite.numpy._padding import *  # noqa: F401,F403
from jaxlite.numpy._polynomial import *  # noqa: F401,F403
from jaxlite.numpy._predicates import *  # noqa: F401,F403
from jaxlite.numpy._rearranging import *  # noqa: F401,F403
from jaxlite.numpy._reductions import *  # noqa: F401,F403
from jaxlite.numpy._scalar_types import *  # noqa: F401,F403
from jaxlite.numpy._selection import *  # noqa: F401,F403
from jaxlite.numpy._sets import *  # noqa: F401,F403
from jaxlite.numpy._scalar_types import bool_ as bool  # noqa: F401,A004 (JAX's name)
from jaxlite.numpy._scalar_types import narrow_scalar_types as _narrow_scalar_types
from jaxlite.numpy._shape import *  # noqa: F401,F403
from jaxlite.numpy._sorting import *  # noqa: F401,F403
from jaxlite.numpy._statistics import *  # noqa: F401,F403
from jaxlite.numpy._special_math import *  # noqa: F401,F403
from jaxlite.numpy._triangles import *  # noqa: F401,F403
from jaxlite.numpy._ufuncs import *  # noqa: F401,F403
from jaxlite.numpy._ufunc_class import *  # noqa: F401,F403
from jaxlite.numpy._ufunc_objects import *  # noqa: F401,F403  (after the plain functions)
from jaxlite.numpy._windows import *  # noqa: F401,F403

globals().update(_narrow_scalar_types())  # float8_e4m3fn, int4, ... as this ml_dtypes has

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
euler_gamma = _np.euler_gamma
newaxis = None

from jaxlite.numpy import fft  # noqa: E402  (the jax.numpy.fft submodule)
from jaxlite.numpy import linalg  # noqa: E402  (the jax.numpy.linalg submodule)
_operators.install()
