"""`jax.extend.core.primitives`: JAX's primitive objects, by JAX's names.

Each name is jaxlite's primitive of the same operation (`add_p`, `jit_p`, `scan_p`, ...),
so a library comparing `eqn.primitive is primitives.jit_p` sees jaxlite's equations. The
few JAX primitives that jaxlite does not have (`NOT_PROVIDED`, with the reason) are absent:
reading one raises AttributeError saying why. `call_p` and `closed_call_p` call their
function (or jaxpr) under the current trace. The typed-key primitives (`random_seed_p`,
`random_split_p`, `random_fold_in_p`, `random_bits_p`), `empty2_p`, and `get_p`/`swap_p`
(on eager refs, without indexers) are composed of jaxlite's operations
(`_composed_primitives`): binding one gives JAX's values.
"""
from __future__ import annotations

from typing import Any

from jaxlite import lax  # noqa: F401  (declares jaxlite's primitives)
from jaxlite.core.jaxpr import ClosedJaxpr, eval_jaxpr
from jaxlite.core.primitive import Primitive, registry
from jaxlite.extend.core._composed_primitives import (  # noqa: F401 (JAX's names)
    empty2_p, get_p, random_bits_p, random_fold_in_p, random_seed_p, random_split_p, swap_p)
from jaxlite.extend.core._primitive import CallPrimitive

# JAX 0.10.2's names, without the `_p`.
_JAX_NAMES = """
abs acos acosh add_jaxvals add after_all all_gather all_to_all and approx_top_k argmax argmin
asin asinh atan2 atan atanh axis_index bessel_i0e bessel_i1e bitcast_convert_type
broadcast_in_dim call cbrt ceil cholesky clamp closed_call clz complex concatenate cond conj
conv_general_dilated convert_element_type copy cos cosh create_token cumlogsumexp cummax
cummin cumprod cumsum custom_jvp_call custom_lin custom_vjp_call device_put digamma div
dot_general dynamic_slice dynamic_update_slice eig eigh empty2 eq eq_to erf_inv erf erfc exp2
exp expm1 fft floor gather ge get gt hessenberg householder_product igamma_grad_a igamma
igammac imag integer_pow iota is_finite jit le le_to lgamma linear_solve log1p log logistic
lt lt_to lu max min mul name ne neg nextafter not or pad pmax pmin polygamma
population_count pow ppermute psum qr ragged_all_to_all random_bits random_fold_in
random_gamma random_seed random_split real reduce_and reduce_max reduce_min reduce_or reduce
reduce_precision reduce_prod reduce_sum reduce_window_max reduce_window_min reduce_window
reduce_window_sum reduce_xor regularized_incomplete_beta rem remat reshape rev
rng_bit_generator rng_uniform round rsqrt scan scatter_add scatter_max scatter_min
scatter_mul scatter schur select_and_gather_add select_and_scatter_add select_and_scatter
select_n sharding_constraint shift_left shift_right_arithmetic shift_right_logical sign sin
sinh slice sort sqrt square squeeze stop_gradient sub svd swap tan tanh threefry2x32 top_k
transpose triangular_solve tridiagonal tridiagonal_solve while xor zeta
""".split()

# JAX's name -> jaxlite's, where they differ.
_JAXLITE_NAME = {"add_jaxvals": "add_any", "remat": "checkpoint",
                 "linear_solve": "custom_linear_solve"}

# JAX's primitives with no jaxlite counterpart, and why (none at present).
NOT_PROVIDED: dict[str, str] = {}


class ClosedCallPrimitive(CallPrimitive):
    """`closed_call_p`: binds with a `call_jaxpr` parameter and evaluates it (JAX's)."""

    def bind(self, *args: Any, **params: Any) -> Any:  # type: ignore[override]
        closed = params.get("call_jaxpr")
        if isinstance(closed, ClosedJaxpr):
            return eval_jaxpr(closed.jaxpr, closed.consts, *args)
        return super().bind(*args, **params)


def _lookup(jax_name: str) -> Primitive:
    name = _JAXLITE_NAME.get(jax_name, jax_name)
    for candidate in (name, name.replace("_", "-")):
        if candidate in registry:
            return registry[candidate]
    raise LookupError(f"jaxlite has no primitive for JAX's {jax_name}_p")


call_p = CallPrimitive("call")
closed_call_p = ClosedCallPrimitive("closed_call")
globals().update({f"{n}_p": _lookup(n) for n in _JAX_NAMES
                  if f"{n}_p" not in globals() and f"{n}_p" not in NOT_PROVIDED})


def __getattr__(name: str) -> Any:
    if name in NOT_PROVIDED:
        raise AttributeError(f"module 'jax.extend.core.primitives' has no attribute {name!r} "
                             f"in jaxlite: {NOT_PROVIDED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
