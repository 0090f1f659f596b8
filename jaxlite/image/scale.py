"""Resizing, scaling and translating images: `resize`, `scale_and_translate` and
`ResizeMethod`.

Mirrors `jax.image`. Each resampled dimension is a matrix product: output sample i sits at
input coordinate s_i = (i + 0.5) / scale - translation / scale - 0.5 (half-centred pixels),
and input pixel j contributes kernel(|s_i - j| / kernel_scale), where the kernel is the
triangle (linear), Keys' cubic, OpenCV's cubic (cubic-pytorch), Lanczos 3 or 5, or the box
of area resampling; when downsampling with `antialias`, kernel_scale = 1 / scale widens the
kernel into a low-pass filter. Each output's weights are normalized to sum to one, and
outputs whose sample falls outside [-0.5, size - 0.5] get zero weight (except with edge
padding, used by cubic-pytorch without antialiasing, which repeats the border pixels). The
weight matrices of all resampled dimensions are contracted with the image in one einsum.
`nearest` instead gathers input pixel floor((i + 0.5) * m / n).
"""
from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core.trace import Tracer
from jaxlite.errors import ConcretizationTypeError
from jaxlite.transforms.jit import jit

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The resampling methods of `resize` (mirrors `jax.image.ResizeMethod`)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
                 "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
                 "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
                 "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
                 "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return ResizeMethod[names[s]]


# ------------------------------------------------------------------------------ kernels

def _lanczos(radius: float) -> Callable[[Any], Any]:
    def kernel(x: Any) -> Any:
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
        return jnp.where(x > radius, 0.0, out)
    return kernel


def _keys_cubic(x: Any) -> Any:
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x: Any) -> Any:
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _triangle(x: Any) -> Any:
    return jnp.maximum(0, 1 - jnp.abs(x))


_AREA = "area"  # the box kernel: overlaps of output and input pixel intervals

# method -> (radius, kernel)
_KERNELS: dict[ResizeMethod, tuple[int, Any]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


# ----------------------------------------------------------------------- weight matrices

def _normalized(weights: Any) -> Any:
    """Columns divided by their sums; columns summing to (nearly) zero become zero."""
    total = jnp.sum(weights, axis=0, keepdims=True)
    return jnp.where(jnp.abs(total) > 1000.0 * float(np.finfo(np.float32).eps),
                     jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def _window_halo(radius: int, scale: Any, antialias: bool) -> int:
    """How many pixels past each border the kernel reaches (for edge padding)."""
    if not antialias:
        return radius
    if isinstance(scale, Tracer) and scale.concrete_value() is None:
        raise ConcretizationTypeError("Antialiasing with edge padding requires a static "
                                      "scale.")
    return math.ceil(radius * max(1.0 / float(np.asarray(scale)), 1.0))


def weight_matrix(input_size: int, output_size: int, scale: Any, translation: Any,
                  kernel: Any, antialias: bool, edge_padding: bool, radius: int) -> Any:
    """The (input_size, output_size) resampling matrix of one dimension."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
              - translation * inv_scale - 0.5)
    halo = _window_halo(radius, scale, antialias) if edge_padding else 0
    inputs = jnp.arange(-halo, input_size + halo, dtype=dtype)
    if kernel is _AREA:
        left = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right = left + inv_scale
        pixel = jnp.arange(input_size, dtype=dtype)
        weights = jnp.maximum(0.0, jnp.minimum(right[None, :], pixel[:, None] + 1.0)
                              - jnp.maximum(left[None, :], pixel[:, None]))
    else:
        weights = kernel(jnp.abs(sample[None, :] - inputs[:, None]) / kernel_scale)
    if edge_padding:
        # Pixels past the border repeat the border: their weights go to the border pixel.
        clamped = jnp.clip(inputs.astype(jnp.int32), 0, input_size - 1)
        columns = lax.broadcast_in_dim(jnp.arange(output_size), (inputs.shape[0], output_size),
                                       (1,))
        gathered = jnp.zeros((input_size, output_size), dtype=dtype)
        return _normalized(gathered.at[clamped[:, None], columns].add(weights))
    weights = _normalized(weights)
    inside = jnp.logical_and(sample >= -0.5, sample <= input_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _contract(image: Any, output_shape: Sequence[int], spatial_dims: Sequence[int],
              scale: Sequence[Any], translation: Sequence[Any], kernel: Any, antialias: bool,
              precision: Any, edge_padding: bool, radius: int) -> Any:
    if not spatial_dims:
        return image
    operands: list[Any] = [image, list(range(image.ndim))]
    out_indices = list(range(image.ndim))
    for i, d in enumerate(spatial_dims):
        d = d % image.ndim
        w = weight_matrix(image.shape[d], output_shape[d], scale[i], translation[i], kernel,
                          antialias, edge_padding, radius).astype(image.dtype)
        operands += [w, [d, image.ndim + i]]
        out_indices[d] = image.ndim + i
    return jnp.einsum(*operands, out_indices, precision=precision)


def _method(method: str | ResizeMethod) -> ResizeMethod:
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _kernel_for(method: ResizeMethod, antialias: bool) -> tuple[int, Any, bool]:
    """(radius, kernel, edge padding): cubic-pytorch is cubic when antialiasing."""
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    return radius, kernel, method == ResizeMethod.CUBIC_PYTORCH and not antialias


def _check_rank(shape: Sequence[int], image: Any) -> None:
    if len(shape) != np.ndim(image):
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {tuple(shape)} vs {tuple(np.shape(image))}")


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: str | ResizeMethod,
                        antialias: bool = True,
                        precision: Any = lax.Precision.HIGHEST) -> Any:
    """Resample `image` to `shape`, mapping input location x of each dimension in
    `spatial_dims` to x * scale + translation (mirrors `jax.image.scale_and_translate`);
    output samples whose source lies outside the image are zero."""
    shape = tuple(int(d) for d in shape)
    _check_rank(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    radius, kernel, edge_padding = _kernel_for(method, antialias)
    image = _inexact(image)
    scale, translation = _inexact_pair(scale, translation)
    return _contract(image, shape, spatial_dims, scale, translation, kernel, antialias,
                     precision, edge_padding, radius)


def _inexact(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float32)


def _inexact_pair(scale: Any, translation: Any) -> tuple[Any, Any]:
    dtype = jnp.result_type(scale, translation)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.float32
    return jnp.asarray(scale, dtype), jnp.asarray(translation, dtype)


def _resize_nearest(x: Any, output_shape: Sequence[int]) -> Any:
    for d, (m, n) in enumerate(zip(x.shape, output_shape)):
        if m == n:
            continue
        offsets = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
        index: list[Any] = [slice(None)] * x.ndim
        index[d] = jnp.floor(offsets.astype(np.float32)).astype(np.int32)
        x = x[tuple(index)]
    return x


def _resize(image: Any, shape: tuple[int, ...], method: str | ResizeMethod, antialias: bool,
            precision: Any) -> Any:
    _check_rank(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    spatial_dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
    radius, kernel, edge_padding = _kernel_for(method, antialias)
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _contract(image, shape, spatial_dims, scale, [0.0] * len(spatial_dims), kernel,
                     antialias, precision, edge_padding, radius)


_resize_jit = jit(_resize, static_argnums=(1, 2, 3, 4))


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = lax.Precision.HIGHEST) -> Any:
    """`image` resampled to `shape` (every dimension; unchanged ones are left alone) with
    `method` (mirrors `jax.image.resize`). `nearest` keeps the dtype; the others compute in
    a floating type."""
    return _resize_jit(image, tuple(int(d) for d in shape), method, antialias, precision)
