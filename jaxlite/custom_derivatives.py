"""`jax.custom_derivatives`: functions with user-defined derivatives.

Implemented in `jaxlite.lax.custom_derivatives` (custom_jvp, custom_vjp and their symbolic
zeros), `jaxlite.lax.custom_derivative_helpers` (custom_gradient, closure_convert) and
`jaxlite.lax.linear_call`.
"""
from jaxlite.core.primitive import Primitive as _Primitive
from jaxlite.lax.custom_derivative_helpers import closure_convert, custom_gradient
from jaxlite.lax.custom_derivatives import (CustomVJPPrimal, SymbolicZero, custom_jvp,
                                            custom_vjp, custom_vjp_primal_tree_values,
                                            zero_from_primal)
from jaxlite.lax.higher_order import custom_jvp_call_p, custom_vjp_call_p
from jaxlite.lax.linear_call import linear_call

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient",
           "custom_jvp", "custom_jvp_call_p", "custom_vjp", "custom_vjp_call_p",
           "custom_vjp_primal_tree_values", "linear_call", "remat_opt_p", "zero_from_primal"]

# JAX's primitive for custom_vjp's `optimize_remat`. jaxlite's custom_vjp with that option
# computes the same values without it, so this primitive appears in no jaxlite jaxpr.
remat_opt_p = _Primitive("remat_opt", multiple_results=True, register=False)
