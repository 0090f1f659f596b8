"""`jaxlite.nn`: neural-network activation functions and initializers (mirrors `jax.nn`)."""
from jaxlite.nn import initializers  # noqa: F401
from jaxlite.nn._functions import (celu, elu, gelu, glu, hard_sigmoid, hard_silu,  # noqa: F401
                                   hard_swish, hard_tanh, identity, leaky_relu, log_sigmoid,
                                   log_softmax, logsumexp, mish, one_hot, relu, relu6, selu,
                                   sigmoid, silu, soft_sign, softmax, softplus, sparse_plus,
                                   sparse_sigmoid, squareplus, standardize, swish)

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "identity", "initializers", "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp",
    "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax",
    "softplus", "sparse_plus", "sparse_sigmoid", "squareplus", "standardize", "swish",
]
