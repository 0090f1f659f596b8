"""`jax.experimental.rnn`: LSTMs in cuDNN's layout.

JAX's `lstm` calls cuDNN's fused LSTM and runs on NVIDIA GPUs only; on a CPU, JAX 0.10.2
fails when it asks jaxlib for cuDNN's workspace sizes (AttributeError). jaxlite has one CPU
device, so `lstm` (and `lstm_fwd`, the primitive `rnn_fwd_p`) raise `CudnnOnlyError`, which
is both that AttributeError and a NotImplementedError. The rest is plain jnp and gives JAX's
numbers: the weight layout helpers and `lstm_ref`, the LSTM written with `lax.scan`.

cuDNN's weights are one flat vector: for each pseudo-layer (a layer and a direction; a
bidirectional LSTM has forward then reverse per layer) `W_ih` then `W_hh`, then for each
pseudo-layer `b_ih` then `b_hh`. Each holds the four gates (input, forget, cell, output)
stacked on its first axis.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite import random
from jaxlite.custom_derivatives import custom_vjp
from jaxlite.core.avals import ShapedArray
from jaxlite.extend.core import Primitive
from jaxlite.lax.dot import Precision, canonicalize_precision
from jaxlite.nn import sigmoid, tanh
from jaxlite.runtime.array import Array
from jaxlite.transforms.jit import jit
from jaxlite.transforms.vmap import vmap

__all__ = ["get_num_params_in_lstm", "init_lstm_weight", "lstm", "lstm_bwd", "lstm_fwd",
           "lstm_ref", "rnn_abstract_eval", "rnn_bwd_abstract_eval", "rnn_bwd_p",
           "rnn_fwd_p", "swap_lstm_gates", "unpack_lstm_weights"]

PRNGKeyArray = Any
Shape = Sequence[int]


class CudnnOnlyError(NotImplementedError, AttributeError):
    """JAX's cuDNN LSTM on a machine without cuDNN (JAX raises AttributeError there)."""


def _cudnn_only(*_: Any, **__: Any) -> Any:
    raise CudnnOnlyError(
        "jax.experimental.rnn.lstm runs on cuDNN (NVIDIA GPUs) only; JAX 0.10.2 on a CPU "
        "fails here too (module 'jaxlib.gpu_rnn' has no attribute "
        "'compute_rnn_workspace_reserve_space_sizes'). jaxlite has one CPU device: use "
        "`lstm_ref` with `unpack_lstm_weights(weights, ...)`, which computes the same LSTM.")


# --------------------------------------------------------------------- the weight layout

def _param_shapes(input_size: int, hidden_size: int, num_layers: int,
                  bidirectional: bool) -> list[tuple[int, ...]]:
    """The shapes of the flat vector's pieces, in cuDNN's order (see the module doc)."""
    directions = 2 if bidirectional else 1
    pseudo_layers = num_layers * directions
    matrices, biases = [], []
    for layer in range(pseudo_layers):
        layer_input = input_size if layer < directions else directions * hidden_size
        matrices += [(4 * hidden_size, layer_input), (4 * hidden_size, hidden_size)]
        biases += [(4 * hidden_size,), (4 * hidden_size,)]
    return matrices + biases


def get_num_params_in_lstm(input_size: int, hidden_size: int, num_layers: int,
                           bidirectional: bool) -> int:
    """The length of the flat weight vector (mirrors
    `jax.experimental.rnn.get_num_params_in_lstm`)."""
    return sum(math.prod(shape) for shape in
               _param_shapes(input_size, hidden_size, num_layers, bidirectional))


def init_lstm_weight(rng: PRNGKeyArray, input_size: int, hidden_size: int, num_layers: int,
                     bidirectional: bool) -> Any:
    """Flat float32 weights drawn from U(-k, k), k = 1/sqrt(hidden_size) (mirrors
    `jax.experimental.rnn.init_lstm_weight`)."""
    count = get_num_params_in_lstm(input_size, hidden_size, num_layers, bidirectional)
    bound = np.sqrt(1.0 / hidden_size)
    return random.uniform(rng, shape=(count,), dtype=jnp.float32, minval=-bound,
                          maxval=bound)


def _pieces(weights: Any, shapes: list[tuple[int, ...]]) -> list[Any]:
    offsets = np.cumsum([0] + [math.prod(shape) for shape in shapes])
    return [weights[start:stop].reshape(shape)
            for start, stop, shape in zip(offsets[:-1], offsets[1:], shapes)]


def swap_lstm_gates(weights: Any, input_size: int, hidden_size: int, num_layers: int,
                    bidirectional: bool) -> Any:
    """Exchange the third and fourth gate of every piece of the flat weights (mirrors
    `jax.experimental.rnn.swap_lstm_gates`), converting between gate orders."""
    weights = jnp.asarray(weights)
    shapes = _param_shapes(input_size, hidden_size, num_layers, bidirectional)
    swapped = []
    for piece in _pieces(weights, shapes):
        gates = jnp.split(piece, 4, axis=0)
        swapped.append(jnp.concatenate([gates[0], gates[1], gates[3], gates[2]]).ravel())
    return jnp.concatenate(swapped) if swapped else weights


def unpack_lstm_weights(weights: Any, input_size: int, hidden_size: int, num_layers: int,
                        bidirectional: bool) -> tuple[dict, dict, dict, dict]:
    """The flat weights as dicts `W_ih, W_hh, b_ih, b_hh` keyed by pseudo-layer (mirrors
    `jax.experimental.rnn.unpack_lstm_weights`)."""
    shapes = _param_shapes(input_size, hidden_size, num_layers, bidirectional)
    pieces = _pieces(weights, shapes)
    pseudo_layers = len(shapes) // 4
    matrices, biases = pieces[:2 * pseudo_layers], pieces[2 * pseudo_layers:]
    return ({i: matrices[2 * i] for i in range(pseudo_layers)},
            {i: matrices[2 * i + 1] for i in range(pseudo_layers)},
            {i: biases[2 * i] for i in range(pseudo_layers)},
            {i: biases[2 * i + 1] for i in range(pseudo_layers)})


# ------------------------------------------------------------------ the reference LSTM

def _cell(carry: tuple[Any, Any], x: Any, W_ih: Any, W_hh: Any, b_ih: Any,
          b_hh: Any) -> tuple[tuple[Any, Any], Any]:
    """One LSTM step in PyTorch's/cuDNN's formulation (two biases per gate)."""
    h, c = carry
    pre = [x @ wi.T + bi[None] + h @ wh.T + bh[None] for wi, wh, bi, bh in
           zip(jnp.split(W_ih, 4), jnp.split(W_hh, 4), jnp.split(b_ih, 4),
               jnp.split(b_hh, 4))]
    i, f, g, o = sigmoid(pre[0]), sigmoid(pre[1]), tanh(pre[2]), sigmoid(pre[3])
    c = f * c + i * g
    h = o * tanh(c)
    return (h, c), h


def _run_layer(seq_first: Any, h0: Any, c0: Any, weights: tuple[Any, ...],
               seq_lengths: Any) -> tuple[Any, Any, Any]:
    """One direction of one layer over a time-major batch: its outputs (zero past each
    sequence's length) and the state at each sequence's last step."""
    def step(carry: Any, x: Any) -> Any:
        carry, y = _cell(carry, x, *weights)
        return carry, (carry, y)
    _, ((hs, cs), ys) = lax.scan(step, (h0, c0), seq_first)
    batch = jnp.arange(hs.shape[1])
    last = seq_lengths - 1
    valid = seq_lengths[None] > jnp.arange(ys.shape[0], dtype=jnp.int32)[:, None]
    return jnp.where(valid[..., None], ys, 0), hs[last, batch], cs[last, batch]


def _reverse_valid_steps(seq_first: Any, seq_lengths: Any) -> Any:
    """Reverse each sequence's first `length` steps in time, padding kept at the end."""
    roll = vmap(functools.partial(jnp.roll, axis=0), in_axes=(1, 0), out_axes=1)
    return roll(seq_first, seq_first.shape[0] - seq_lengths)[::-1]


@functools.partial(jit, static_argnums=(8, 9, 10, 11, 12))
def lstm_ref(x: Array, h_0: Array, c_0: Array, W_ih: dict[int, Array],
             W_hh: dict[int, Array], b_ih: dict[int, Array], b_hh: dict[int, Array],
             seq_lengths: Array, input_size: int, hidden_size: int, num_layers: int,
             dropout: float, bidirectional: bool) -> tuple[Array, Array, Array]:
    """A (multi-layer, optionally bidirectional) LSTM over batch-major `x` with the unpacked
    weights (mirrors `jax.experimental.rnn.lstm_ref`): `(y, h_n, c_n)`, `y` zero past each
    sequence's length. `seq_lengths` must be int32 and `dropout` 0."""
    if seq_lengths.dtype != jnp.dtype("int32"):
        raise NotImplementedError("`seq_lengths` can only be int32.")
    if dropout != 0.0:
        raise NotImplementedError(
            "Dropout not supported in LSTM reference because we cannot determine CUDNN "
            "dropout mask.")
    directions = 2 if bidirectional else 1
    seq_first = x.transpose(1, 0, 2)
    final_h, final_c = [], []
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            i = layer * directions + direction
            weights = (W_ih[i], W_hh[i], b_ih[i], b_hh[i])
            if direction == 0:
                y, h, c = _run_layer(seq_first, h_0[i], c_0[i], weights, seq_lengths)
            else:
                reversed_in = _reverse_valid_steps(seq_first, seq_lengths)
                y, h, c = _run_layer(reversed_in, h_0[i], c_0[i], weights, seq_lengths)
                y = _reverse_valid_steps(y, seq_lengths)
            outputs.append(y)
            final_h.append(h)
            final_c.append(c)
        seq_first = jnp.concatenate(outputs, axis=-1) if directions == 2 else outputs[0]
    return seq_first.transpose(1, 0, 2), jnp.stack(final_h), jnp.stack(final_c)


# --------------------------------------------------------- cuDNN's LSTM (GPU-only in JAX)

def _allow_tf32(precision: Any) -> bool:
    """Whether cuDNN may use TensorFloat-32, from a matmul precision (JAX's checks)."""
    precision = canonicalize_precision(precision)
    if precision is None or not (isinstance(precision, tuple) and len(precision) == 2):
        return True
    if precision[0] == Precision.HIGHEST:
        return False
    if precision[0] == Precision.HIGH:
        return True
    if precision[0] == Precision.DEFAULT:
        raise NotImplementedError("bfloat16 support not implemented for LSTM")
    raise ValueError(f"Unexpected precision specifier value {precision}")


def rnn_abstract_eval(x_aval: Any, h_0_aval: Any, c_0_aval: Any, w_aval: Any,
                      seq_lengths_aval: Any, input_size: int, hidden_size: int,
                      num_layers: int, dropout: float, bidirectional: bool,
                      cudnn_allow_tf32: bool) -> Any:
    """The shape rule of `rnn_fwd_p` (mirrors JAX's): it needs cuDNN's reserve-space size,
    so without cuDNN it raises `CudnnOnlyError`, as JAX's does on a CPU."""
    return _cudnn_only()


def rnn_bwd_abstract_eval(dy_aval: Any, dhn_aval: Any, dcn_aval: Any, x_aval: Any,
                          h0_aval: Any, c0_aval: Any, w_aval: Any, y_aval: Any,
                          reserve_space_aval: Any, seq_lengths_aval: Any, input_size: int,
                          hidden_size: int, num_layers: int, dropout: float,
                          bidirectional: bool, cudnn_allow_tf32: bool) -> Any:
    """The shape rule of `rnn_bwd_p` (mirrors JAX's): gradients shaped like x, h_0, c_0
    and the weights."""
    return x_aval, h0_aval, c0_aval, w_aval


rnn_fwd_p = Primitive("rnn_fwd")
rnn_fwd_p.multiple_results = True
rnn_fwd_p.def_abstract_eval(rnn_abstract_eval)
rnn_fwd_p.def_impl(_cudnn_only)
# rnn_bwd has a shape rule but, as in JAX on a CPU, no way to run: binding it raises
# NotImplementedError (no eager rule, no lowering).
rnn_bwd_p = Primitive("rnn_bwd")
rnn_bwd_p.multiple_results = True
rnn_bwd_p.def_abstract_eval(rnn_bwd_abstract_eval)


def lstm_fwd(x: Array, h_0: Array, c_0: Array, w: Array, seq_lengths: Array,
             input_size: int, hidden_size: int, num_layers: int, dropout: float,
             bidirectional: bool, precision: Any) -> Any:
    """The forward pass of `lstm` for its custom VJP (mirrors
    `jax.experimental.rnn.lstm_fwd`): binds `rnn_fwd_p` (cuDNN only)."""
    if seq_lengths.dtype != jnp.dtype("int32"):
        raise NotImplementedError("`seq_lengths` can only be int32.")
    y, h_n, c_n, reserve = rnn_fwd_p.bind(
        x, h_0, c_0, w, seq_lengths, input_size=input_size, hidden_size=hidden_size,
        num_layers=num_layers, dropout=dropout, bidirectional=bidirectional,
        cudnn_allow_tf32=_allow_tf32(precision))
    return (y, h_n, c_n), (x, h_0, c_0, w, seq_lengths, y, reserve)


def lstm_bwd(input_size: int, hidden_size: int, num_layers: int, dropout: float,
             bidirectional: bool, precision: Any, residuals: Any, gradients: Any) -> Any:
    """The backward pass of `lstm` (mirrors `jax.experimental.rnn.lstm_bwd`): binds
    `rnn_bwd_p` (cuDNN only)."""
    x, h_0, c_0, w, seq_lengths, y, reserve = residuals
    dy, dh_n, dc_n = gradients
    dx, dh_0, dc_0, dw = rnn_bwd_p.bind(
        dy, dh_n, dc_n, x, h_0, c_0, w, y, reserve, seq_lengths, input_size=input_size,
        hidden_size=hidden_size, num_layers=num_layers, dropout=dropout,
        bidirectional=bidirectional, cudnn_allow_tf32=_allow_tf32(precision))
    return dx, dh_0, dc_0, dw, jnp.zeros_like(seq_lengths)


@functools.partial(custom_vjp, nondiff_argnums=(5, 6, 7, 8, 9, 10))
def lstm(x: Array, h_0: Array, c_0: Array, weights: Array, seq_lengths: Array,
         input_size: int, hidden_size: int, num_layers: int, dropout: float,
         bidirectional: bool, precision: Any = None) -> tuple[Array, Array, Array]:
    """cuDNN's LSTM over batch-major `x` with flat `weights` (mirrors
    `jax.experimental.rnn.lstm`). GPU-only in JAX: here it raises `CudnnOnlyError`."""
    (y, h_n, c_n), _ = lstm_fwd(x, h_0, c_0, weights, seq_lengths, input_size, hidden_size,
                                num_layers, dropout, bidirectional, precision)
    return y, h_n, c_n


lstm.defvjp(lstm_fwd, lstm_bwd)
