"""The table of elementary functions and activations probed at extreme values.

Shared by the recorder (`record_extreme_values.py`, run with real JAX 0.10.2) and the test
(`test_extreme_values.py`, run with jaxlite): `cases(jax)` takes either framework's top
module and returns (name, function) pairs, so both sides evaluate the same expressions.
"""
from __future__ import annotations

import math

# No subnormal inputs: compiled code (XLA's and jaxlite's) reads them as zero (DAZ), eager
# jaxlite keeps IEEE values.
F32_INPUTS = [0.0, -0.0, 1.2e-38, -1.2e-38, 1e-30, -1e-30, 1e-7, -1e-7, 0.5, -0.5,
              1.0, -1.0, 3.0, -3.0, 9.0, -9.0, 9.5, -9.5, 10.0, -10.0, 20.0, -20.0, 88.0,
              -88.0, 89.0, -104.0, 1e4, -1e4, 1e6, -1e6, 1e30, -1e30, 3.4e38, -3.4e38,
              math.inf, -math.inf, math.nan]
F64_INPUTS = [0.0, -0.0, 2.3e-308, -2.3e-308, 1e-300, -1e-300, 1e-16, -1e-16, 0.5, -0.5, 1.0,
              -1.0, 19.0, -19.0, 20.0, -20.0, 709.0, 710.0, -745.0, 1e6, -1e6, 1e300,
              -1e300, math.inf, -math.inf, math.nan]
# The arguments of the two-argument functions: every pair of these.
PAIR_VALUES = [0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 3.0, 1e30, -1e30,
               math.inf, -math.inf, math.nan]
F64_NAMES = ("exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "logistic", "softplus",
             "erf", "erfc", "lgamma", "atan2", "pow", "sqrt", "gelu", "silu")


def unary_cases(jax):
    """(name, f) for the one-argument functions of `jax` (real JAX or jaxlite)."""
    jnp, lax, nn = jax.numpy, jax.lax, jax.nn
    return [
        ("exp", jnp.exp), ("exp2", jnp.exp2), ("log", jnp.log), ("log1p", jnp.log1p),
        ("expm1", jnp.expm1), ("sin", jnp.sin), ("cos", jnp.cos), ("tan", jnp.tan),
        ("tanh", jnp.tanh), ("sinh", jnp.sinh), ("cosh", jnp.cosh), ("arctan", jnp.arctan),
        ("logistic", lax.logistic), ("erf", lax.erf), ("erfc", lax.erfc),
        ("erf_inv", lax.erf_inv), ("lgamma", lax.lgamma), ("digamma", lax.digamma),
        ("sqrt", jnp.sqrt), ("rsqrt", lax.rsqrt), ("cbrt", jnp.cbrt),
        ("relu", nn.relu), ("relu6", nn.relu6), ("sigmoid", nn.sigmoid),
        ("softplus", nn.softplus), ("sparse_plus", nn.sparse_plus),
        ("soft_sign", nn.soft_sign), ("silu", nn.silu), ("log_sigmoid", nn.log_sigmoid),
        ("leaky_relu", nn.leaky_relu), ("hard_sigmoid", nn.hard_sigmoid),
        ("hard_silu", nn.hard_silu), ("hard_tanh", nn.hard_tanh), ("elu", nn.elu),
        ("celu", nn.celu), ("selu", nn.selu), ("gelu", nn.gelu),
        ("gelu_exact", lambda x: nn.gelu(x, approximate=False)),
        ("squareplus", nn.squareplus), ("mish", nn.mish),
        ("sparse_sigmoid", nn.sparse_sigmoid),
        ("one_plus_tanh", lambda x: 1 + jnp.tanh(x)),
    ]


def binary_cases(jax):
    """(name, f) for the two-argument functions."""
    jnp = jax.numpy
    return [("atan2", jnp.arctan2), ("pow", jnp.power)]


def pairs():
    """The (x, y) argument lists of the two-argument functions."""
    xs = [a for a in PAIR_VALUES for _ in PAIR_VALUES]
    ys = [b for _ in PAIR_VALUES for b in PAIR_VALUES]
    return xs, ys
