"""`jaxlite.lax`: the primitives and their user-facing functions (mirrors `jax.lax`).

Each module declares a family of primitives, every one with all of its rules; this package
collects their public functions and registers the array operations that transformations
need (see `jaxlite.core.array_ops`).
"""
from jaxlite.core.array_ops import ARRAY_OPS
from jaxlite.lax.ad_util import (add_any, add_any_p, stop_gradient,  # noqa: F401
                                 stop_gradient_p, zeros)
from jaxlite.lax.arithmetic import *  # noqa: F401,F403
from jaxlite.lax.bitwise import *  # noqa: F401,F403
from jaxlite.lax.broadcast import (broadcast, broadcast_axis, broadcast_in_dim,  # noqa: F401
                                   broadcast_in_dim_p, moveaxis, reduce_sum, reduce_sum_p,
                                   reshape, reshape_p, transpose, transpose_p)
from jaxlite.lax.comparisons import *  # noqa: F401,F403
from jaxlite.lax.control_flow import *  # noqa: F401,F403
from jaxlite.lax.loops import *  # noqa: F401,F403
from jaxlite.lax.scan import *  # noqa: F401,F403
from jaxlite.lax.scan_functions import *  # noqa: F401,F403
from jaxlite.lax.convert import (_convert_element_type, bitcast_convert_type,  # noqa: F401
                                 bitcast_convert_type_p,
                                 convert_element_type, convert_element_type_p)
from jaxlite.lax.cumulative import *  # noqa: F401,F403
from jaxlite.lax.fft import *  # noqa: F401,F403
from jaxlite.lax.dot import *  # noqa: F401,F403
from jaxlite.lax.dot_algorithms import *  # noqa: F401,F403
from jaxlite.lax.accuracy import *  # noqa: F401,F403
from jaxlite.lax.convolution import *  # noqa: F401,F403
from jaxlite.lax.dynamic_slicing import *  # noqa: F401,F403
from jaxlite.lax.gather_scatter import *  # noqa: F401,F403
from jaxlite.lax.scatter import *  # noqa: F401,F403
from jaxlite.lax.higher_order import *  # noqa: F401,F403
from jaxlite.lax.math_functions import *  # noqa: F401,F403
from jaxlite.lax.reductions import *  # noqa: F401,F403
from jaxlite.lax.selection import *  # noqa: F401,F403
from jaxlite.lax.shape_ops import *  # noqa: F401,F403
from jaxlite.lax.slicing import *  # noqa: F401,F403
from jaxlite.lax.sorting import *  # noqa: F401,F403
from jaxlite.lax.windows import *  # noqa: F401,F403
from jaxlite.lax.joining import *  # noqa: F401,F403
from jaxlite.lax.identities import *  # noqa: F401,F403
from jaxlite.lax.sharding_constraint import *  # noqa: F401,F403
from jaxlite.lax.bit_math import *  # noqa: F401,F403
from jaxlite.lax.general_reduce import *  # noqa: F401,F403
from jaxlite.lax.general_windows import *  # noqa: F401,F403
from jaxlite.lax.select_scatter import *  # noqa: F401,F403
from jaxlite.lax.solves import *  # noqa: F401,F403
from jaxlite.lax.approx_top_k import *  # noqa: F401,F403
from jaxlite.lax.composites import *  # noqa: F401,F403
from jaxlite.lax.rng import *  # noqa: F401,F403
from jaxlite.lax.conv_patches import *  # noqa: F401,F403
from jaxlite.lax.ragged_dot import *  # noqa: F401,F403
from jaxlite.lax.scaled_dot import *  # noqa: F401,F403
from jaxlite.lax.tokens import *  # noqa: F401,F403
from jaxlite.lax.shape_utils import *  # noqa: F401,F403
from jaxlite.lax.special_functions import *  # noqa: F401,F403
from jaxlite.lax.special_functions_gamma import *  # noqa: F401,F403
from jaxlite.lax.special_functions_bessel import *  # noqa: F401,F403
from jaxlite.lax.parallel import *  # noqa: F401,F403
from jaxlite.lax import linalg  # noqa: F401  (the namespace jaxlite.lax.linalg)

ARRAY_OPS.update(
    zeros=zeros,
    add_any=add_any,
    moveaxis=moveaxis,
    broadcast_axis=broadcast_axis,
    convert=convert_element_type,
    reduce_sum=reduce_sum,
)
