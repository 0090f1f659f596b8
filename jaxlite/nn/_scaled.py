"""Block-scaled matrix products of `jax.nn`: `scaled_matmul`, `scaled_dot_general` and
`get_scaled_dot_general_config`.

Mirrors those functions of `jax.nn` as they behave on the CPU: JAX computes block-scaled
products only with the GPU kernels of cuDNN (Blackwell) or ROCm, and on the CPU raises
NotImplementedError, which jaxlite (a CPU library) does too. `scaled_dot_general` without
`configs` is `lax.dot_general`, and the configurations are JAX's.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxlite.errors import warn_at_user
from jaxlite import lax
from jaxlite import numpy as jnp

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_dot_general",
           "scaled_matmul"]

_NO_CPU_KERNEL = ("MLIR translation rule for primitive 'scaled_matmul' not found for "
                  "platform cpu (JAX computes block-scaled products with GPU kernels only).")


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """How one operand of a block-scaled product is quantized (mirrors JAX's
    `BlockScaleConfig`)."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(mode: str, global_scale: Any = None) -> BlockScaleConfig:
    """The quantization of 'mxfp8' (float8_e4m3fn values, float8_e8m0fnu scales, blocks of
    32) or 'nvfp4' (float4_e2m1fn values, float8_e4m3fn scales, blocks of 16, a float32
    global scale) (mirrors `jax.nn.get_scaled_dot_general_config`)."""
    if mode == "nvfp4":
        one = jnp.ones((1,), dtype=jnp.float32)
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=jnp.float4_e2m1fn,
                                scale_type=jnp.float8_e4m3fn,
                                global_scale=one if global_scale is None else global_scale,
                                infer_only=False)
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=jnp.float8_e4m3fn,
                                scale_type=jnp.float8_e8m0fnu, global_scale=None,
                                infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_matmul(lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any,
                  preferred_element_type: Any = np.float32) -> Any:
    """The block-scaled product einsum('BMK,BNK->BMN') of scaled operands (mirrors
    `jax.nn.scaled_matmul`); like JAX on the CPU, it raises NotImplementedError."""
    raise NotImplementedError(_NO_CPU_KERNEL)


def scaled_dot_general(lhs: Any, rhs: Any, dimension_numbers: Any,
                       preferred_element_type: Any = np.float32, configs: Any = None,
                       implementation: Any = None) -> Any:
    """A dot_general of operands quantized by `configs` (mirrors
    `jax.nn.scaled_dot_general`); without configs it is `lax.dot_general`, with them it
    raises NotImplementedError as JAX does on the CPU."""
    if implementation is not None:
        warn_at_user("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    raise NotImplementedError(_NO_CPU_KERNEL)
