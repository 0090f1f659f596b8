"""`jaxlite.nn`: neural-network activation functions and initializers (mirrors `jax.nn`)."""
from jaxlite.nn import initializers  # noqa: F401
from jaxlite.nn._attention import dot_product_attention  # noqa: F401
from jaxlite.nn._extra_functions import log1mexp, logmeanexp, tanh  # noqa: F401
from jaxlite.nn._scaled import (get_scaled_dot_general_config,  # noqa: F401
                                scaled_dot_general, scaled_matmul)
from jaxlite.nn._functions import (celu, elu, gelu, glu, hard_sigmoid, hard_silu,  # noqa: F401
                                   hard_swish, hard_tanh, identity, leaky_relu, log_sigmoid,
                                   log_softmax, logsumexp, mish, one_hot, relu, relu6, selu,
                                   sigmoid, silu, soft_sign, softmax, softplus, sparse_plus,
                                   sparse_sigmoid, squareplus, standardize, swish)

__all__ = [
    "celu", "dot_product_attention", "elu", "gelu", "get_scaled_dot_general_config", "glu",
    "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity", "initializers",
    "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish",
    "one_hot", "relu", "relu6", "scaled_dot_general", "scaled_matmul", "selu", "sigmoid",
    "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
    "standardize", "swish", "tanh",
]
