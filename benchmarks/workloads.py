"""The project's benchmark workloads, each written once against a JAX-like module `jx`.

`jx` is `jaxlite` or `jax`; the numpy variants (where one is meaningful) take `np`. Every
workload gives its inputs (numpy arrays from a fixed seed) and a builder that returns the
function to time. The set mirrors the yardstick in ../shared/bench (same shapes) and adds a
10,000-step `fori_loop`.
"""
from __future__ import annotations

import dataclasses
import importlib
import math
from typing import Any, Callable

import numpy as np


@dataclasses.dataclass
class Workload:
    """One timed computation: `inputs(rng)` -> tuple of numpy arrays (or pytrees of them);
    `build_jx(jx)` -> a function of those inputs; `build_np()` likewise for numpy (or None);
    `unit(seconds)` -> (figure, unit name) for the table."""
    name: str
    inputs: Callable[[np.random.Generator], tuple]
    build_jx: Callable[[Any], Callable]
    build_np: Callable[[], Callable] | None = None
    figure: Callable[[float], tuple[float, str]] = lambda s: (s * 1e3, "ms")


def _gelu(xp, x):
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + xp.tanh(inner))


def _softmax_rows(xp, x):
    shifted = x - x.max(axis=-1, keepdims=True)
    e = xp.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def _layernorm(xp, x, gain, bias):
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / xp.sqrt(var + 1e-5) * gain + bias


def _attention(xp, q, k, v):
    scores = xp.matmul(q, xp.swapaxes(k, -1, -2)) / math.sqrt(q.shape[-1])
    return xp.matmul(_softmax_rows(xp, scores), v)


def _mlp_logits(jx, params, x):
    for w, b in params[:-1]:
        x = jx.numpy.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def _cross_entropy(jx, params, x, labels):
    logits = _mlp_logits(jx, params, x)
    logits = logits - jx.lax.stop_gradient(logits.max(axis=-1, keepdims=True))
    log_probs = logits - jx.numpy.log(jx.numpy.exp(logits).sum(axis=-1, keepdims=True))
    return -(log_probs * labels).sum(axis=-1).mean()


def _mlp_params(rng, sizes):
    return [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def _one_hot(rng, rows, classes):
    return np.eye(classes, dtype=np.float32)[rng.integers(0, classes, rows)]


def _train_step(jx):
    def step(params, x, labels):
        loss, grads = jx.value_and_grad(lambda p: _cross_entropy(jx, p, x, labels))(params)
        new = [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return loss, new
    return jx.jit(step)


def _per_example_grads(jx):
    def loss(params, x, label):
        return _cross_entropy(jx, params, x[None], label[None])
    return jx.jit(jx.vmap(jx.grad(loss), in_axes=(None, 0, 0)))


def _scan_rnn(jx):
    def loss(params, xs, h0):
        w_in, w_h = params

        def cell(h, x):
            h = jx.numpy.tanh(x @ w_in + h @ w_h)
            return h, h.sum()
        _, sums = jx.lax.scan(cell, h0, xs)
        return sums.sum()
    return jx.jit(jx.value_and_grad(loss))


def _conv2d(jx):
    def conv(x, w):
        return jx.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                           dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jx.jit(conv)


def _fori_loop(jx):
    def run(x):
        return jx.lax.fori_loop(0, 10_000, lambda i, c: c * 0.999 + 0.001, x)
    return jx.jit(run)


def _elementwise(body):
    return lambda jx: jx.jit(lambda *a: body(jx.numpy, *a))


def _gbytes_per_s(nbytes):
    return lambda seconds: (nbytes / seconds / 1e9, "GB/s")


def _gflops(flops):
    return lambda seconds: (flops / seconds / 1e9, "GFLOP/s")


def _per_call_us(seconds):
    return seconds * 1e6, "us/call"


def _uniform(shape):
    return lambda rng: (rng.uniform(-3, 3, shape).astype(np.float32),)


N_GELU, ROWS, COLS = 1 << 22, 4096, 1024
WORKLOADS = [
    Workload("gelu_chain/4M", _uniform((N_GELU,)), _elementwise(_gelu),
             lambda: lambda x: _gelu(np, x), _gbytes_per_s(8 * N_GELU)),
    Workload("softmax_rows/4096x1024", _uniform((ROWS, COLS)), _elementwise(_softmax_rows),
             lambda: lambda x: _softmax_rows(np, x), _gbytes_per_s(8 * ROWS * COLS)),
    Workload("layernorm/8192x1024",
             lambda rng: (rng.standard_normal((8192, 1024)).astype(np.float32),
                          np.ones(1024, np.float32), np.zeros(1024, np.float32)),
             _elementwise(_layernorm), lambda: lambda *a: _layernorm(np, *a),
             _gbytes_per_s(8 * 8192 * 1024)),
    Workload("sum_reduce/16M", _uniform((1 << 24,)), _elementwise(lambda xp, x: xp.sum(x)),
             lambda: np.sum, _gbytes_per_s(4 << 24)),
    Workload("matmul/1024", lambda rng: _uniform((1024, 1024))(rng) * 2,
             _elementwise(lambda xp, a, b: xp.matmul(a, b)), lambda: np.matmul,
             _gflops(2 * 1024 ** 3)),
    Workload("mlp_train_step/784-1024-1024-10_b256",
             lambda rng: (_mlp_params(rng, [784, 1024, 1024, 10]),
                          rng.standard_normal((256, 784)).astype(np.float32),
                          _one_hot(rng, 256, 10)), _train_step),
    Workload("per_example_grads/784-256-10_b128",
             lambda rng: (_mlp_params(rng, [784, 256, 10]),
                          rng.standard_normal((128, 784)).astype(np.float32),
                          _one_hot(rng, 128, 10)), _per_example_grads),
    Workload("scan_rnn/T200_b32_in128_h256",
             lambda rng: ((rng.standard_normal((128, 256)).astype(np.float32) * 0.05,
                           rng.standard_normal((256, 256)).astype(np.float32) * 0.05),
                          rng.standard_normal((200, 32, 128)).astype(np.float32),
                          np.zeros((32, 256), np.float32)), _scan_rnn),
    Workload("conv2d/n32_56x56_64to64_3x3",
             lambda rng: (rng.standard_normal((32, 56, 56, 64)).astype(np.float32),
                          rng.standard_normal((3, 3, 64, 64)).astype(np.float32) * 0.05),
             _conv2d, None, _gflops(2 * 32 * 56 * 56 * 64 * 64 * 9)),
    Workload("attention/b8_s1024_d64",
             lambda rng: tuple(rng.standard_normal((8, 1024, 64)).astype(np.float32)
                               for _ in range(3)),
             _elementwise(_attention), lambda: lambda *a: _attention(np, *a),
             _gflops(4 * 8 * 1024 * 1024 * 64)),
    Workload("fori_loop/10k_scalar_steps", lambda rng: (np.float32(1.0),), _fori_loop),
    Workload("dispatch_tiny/scalar", lambda rng: (np.float32(1.0), np.float32(2.0)),
             _elementwise(lambda xp, a, b: a * b + 1.0), lambda: lambda a, b: a * b + 1.0,
             _per_call_us),
]


# The workloads of issue 12's patterns live beside this file, one module per area.
for _area in ("eager", "transformed", "conv", "linalg", "kernels", "model"):
    WORKLOADS += importlib.import_module(f"workloads_{_area}").WORKLOADS
