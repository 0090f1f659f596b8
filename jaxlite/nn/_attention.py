"""Scaled dot-product attention (mirrors `jax.nn.dot_product_attention`, its XLA path).

Shapes are (batch B, sequence T or S, heads N, head size H); query, key and value of rank
3 or less get leading dimensions of size 1. Keys and values may have fewer heads K than the
query (grouped-query attention): query head n uses key head n // (N / K). The logits
`query . key` are computed in at least float32 (bfloat16 operands accumulate in float32),
scaled (by 1 / sqrt(H) by default), offset by `bias`, and masked (boolean `mask`,
`is_causal`, a local window, and the valid lengths of query and key sequences) by replacing
them with a large negative number; the softmax is taken in float32, converted to the key's
dtype, and weighs the values. Query positions past their sequence length give zeros.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite.core import dtypes
from jaxlite.nn._functions import softmax
from jaxlite.scipy.special import logsumexp

__all__ = ["dot_product_attention"]


def _large_negative(dtype: Any) -> Any:
    # Capped at float32's range: the softmax runs in float32, where it must stay finite.
    largest = min(float(dtypes.finfo(dtype).max), float(np.finfo(np.float32).max))
    return jnp.asarray(-0.7 * largest, dtype=dtype)


def _mask(logits_shape: tuple, mask: Any, is_causal: bool, q_lengths: Any, kv_lengths: Any,
          window: tuple[int, int] | None) -> Any:
    """The combined boolean mask over logits (B, K, G, T, S), or None when nothing masks."""
    if mask is None and not is_causal and q_lengths is None and kv_lengths is None \
            and window is None:
        return None
    combined = jnp.ones(logits_shape, dtype=bool)
    if mask is not None:
        combined = jnp.logical_and(combined, mask)
    t, s = logits_shape[-2], logits_shape[-1]
    query_pos, key_pos = jnp.arange(t)[:, None], jnp.arange(s)[None, :]
    if is_causal:
        combined = jnp.logical_and(combined, query_pos >= key_pos)
    if window is not None:
        left, right = window
        combined = jnp.logical_and(combined, jnp.logical_and(query_pos <= key_pos + left,
                                                             query_pos >= key_pos - right))
    if q_lengths is not None or kv_lengths is not None:
        valid = jnp.ones((logits_shape[0], t, s), dtype=bool)
        if q_lengths is not None:
            valid = jnp.logical_and(valid, query_pos[None] < q_lengths[:, None, None])
        if kv_lengths is not None:
            valid = jnp.logical_and(valid, key_pos[None] < kv_lengths[:, None, None])
        combined = jnp.logical_and(combined, valid[:, None, None])
    return combined


def _grouped(t: Any, heads: int, groups: int) -> Any:
    """A (B, N or 1, T, S) bias or mask as (B, K, G, T, S)."""
    if t is None:
        return None
    b, n, q, k = t.shape
    if n == 1:
        return jnp.broadcast_to(t[:, :, None], (b, 1, groups, q, k))
    return jnp.reshape(t, (b, heads, groups, q, k))


def _attention(query: Any, key: Any, value: Any, bias: Any, mask: Any, is_causal: bool,
               scale: float, q_lengths: Any, kv_lengths: Any,
               window: tuple[int, int] | None, return_residual: bool) -> Any:
    b, t, n, h = query.shape
    _, s, k, _ = key.shape
    g = n // k
    query = jnp.reshape(query, (b, t, k, g, h))
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    precision = lax.DotAlgorithmPreset.BF16_BF16_F32 if query.dtype == jnp.bfloat16 else None
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", query, key, precision=precision,
                        preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, k, g)).astype(logits.dtype)
    combined = _mask(logits.shape, _grouped(mask, k, g), is_causal, q_lengths, kv_lengths,
                     window)
    if combined is not None:
        logits = jnp.where(combined, logits, _large_negative(logits.dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, value)
    if q_lengths is not None:
        valid = jnp.arange(t)[None, :] < q_lengths[:, None]
        encoded = encoded * valid[:, :, None, None, None].astype(encoded.dtype)
    encoded = jnp.reshape(encoded, (b, t, n, h))
    if not return_residual:
        return encoded
    residual = logsumexp(logits, axis=-1).astype(key.dtype)  # (B, K, G, T)
    residual = jnp.reshape(jnp.moveaxis(residual, -1, 1), (b, t, n))
    return encoded, lax.stop_gradient(residual)


def _check(t: Any, shape: Sequence[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    if any(want != -1 and got != want for want, got in zip(shape, t.shape)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {t.shape}")


def _four_d(t: Any) -> Any:
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """softmax(scale * query . key + bias, masked) . value over the key sequence
    (mirrors `jax.nn.dot_product_attention`); see the module docstring.

    `implementation` may be None or 'xla' (the only one on the CPU; 'cudnn' raises, as
    without a GPU in JAX). With `return_residual`, also the log-sum-exp of the logits,
    shaped (B, T, N).
    """
    output_shape = tuple(np.shape(query))
    q, k, v = _four_d(query), _four_d(key), _four_d(value)
    bias = None if bias is None else _four_d(bias)
    mask = None if mask is None else _four_d(mask)
    q_lengths = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_lengths = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, heads, h = k.shape
    _check(v, [b, s, heads, h], k.dtype, "value")
    _check(q, [b, -1, -1, h], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_lengths, [b], np.dtype("int32"), "query_seq_lengths")
    _check(kv_lengths, [b], np.dtype("int32"), "key_value_seq_lengths")
    if q.shape[-2] % heads != 0:
        raise ValueError("The number of query heads must be a multiple of key/value heads, "
                         f"but got {q.shape[-2]} vs {heads}")
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise RuntimeError("dot_product_attention: the cudnn implementation needs an "
                               "NVIDIA GPU; jaxlite runs on the CPU (use 'xla' or None).")
        raise ValueError(f"Unsupported implementation option: {implementation}")
    scale_value = 1.0 / np.sqrt(h) if scale is None else scale
    out = _attention(q, k, v, bias, mask, is_causal, scale_value, q_lengths, kv_lengths,
                     local_window_size, return_residual)
    if return_residual:
        encoded, residual = out
        return jnp.reshape(encoded, output_shape), jnp.reshape(residual, output_shape[:-1])
    return jnp.reshape(out, output_shape)
