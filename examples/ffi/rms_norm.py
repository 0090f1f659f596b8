"""Using the example handlers from Python: the same code runs on jaxlite and on JAX.

    import jaxlite as jax            # or: import jax
    import rms_norm
    rms_norm.register(jax, "/path/to/librms_norm.so")
    norm = rms_norm.make_rms_norm(jax)
    y = norm(x, 1e-5)                # under jit, vmap and grad too
"""
from __future__ import annotations

import ctypes
from typing import Any, Callable

import numpy as np


def register(jax: Any, library: str) -> None:
    """Register the library's three handlers as FFI targets."""
    lib = ctypes.cdll.LoadLibrary(str(library))
    for name, symbol in (("rms_norm", lib.RmsNorm), ("rms_norm_bwd", lib.RmsNormBwd),
                         ("affine", lib.Affine)):
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(symbol), platform="cpu")


def make_rms_norm(jax: Any, vmap_method: str = "broadcast_all") -> Callable[..., Any]:
    """rms_norm(x, eps): the forward handler, differentiated with the backward handler
    (a custom_vjp: FFI calls have no derivative of their own)."""
    def call(target: str, x: Any, *more: Any, eps: float) -> Any:
        result = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return jax.ffi.ffi_call(target, result, vmap_method=vmap_method)(
            x, *more, eps=np.float32(eps))

    def rms_norm(x: Any, eps: float) -> Any:
        return call("rms_norm", x, eps=eps)

    def forward(x: Any, eps: float) -> tuple[Any, Any]:
        return call("rms_norm", x, eps=eps), x

    def backward(eps: float, x: Any, dy: Any) -> tuple[Any]:
        return (call("rms_norm_bwd", x, dy, eps=eps),)

    differentiable = jax.custom_vjp(rms_norm, nondiff_argnums=(1,))
    differentiable.defvjp(forward, backward)
    return differentiable
