"""Workloads of issue 12 (performance round 2): see benchmarks/workloads.py for the format.
Convolution speed: a CNN training step as flax's MNIST example builds it (NHWC, two 3x3
convolutions of 32 and 64 features, each followed by relu and a 2x2 average pool, a dense
head of 256 and 10, cross-entropy, SGD), and the two gradients of its second convolution
alone."""
from __future__ import annotations

import numpy as np

from workloads import Workload  # noqa: F401  (defined before this module is read)

_DN = ("NHWC", "HWIO", "NHWC")
_BATCH = 64


def _conv(jx, x, w):
    return jx.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=_DN)


def _avg_pool(jx, x):
    summed = jx.lax.reduce_window(x, 0.0, jx.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return summed / 4.0


def _cnn_logits(jx, params, x):
    (w1, b1), (w2, b2), (w3, b3), (w4, b4) = params
    x = _avg_pool(jx, jx.nn.relu(_conv(jx, x, w1) + b1))
    x = _avg_pool(jx, jx.nn.relu(_conv(jx, x, w2) + b2))
    x = x.reshape((x.shape[0], -1))
    x = jx.nn.relu(x @ w3 + b3)
    return x @ w4 + b4


def _cnn_inputs(rng):
    def init(shape, fan_in):
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
    params = [(init((3, 3, 1, 32), 9), np.zeros(32, np.float32)),
              (init((3, 3, 32, 64), 288), np.zeros(64, np.float32)),
              (init((7 * 7 * 64, 256), 7 * 7 * 64), np.zeros(256, np.float32)),
              (init((256, 10), 256), np.zeros(10, np.float32))]
    x = rng.standard_normal((_BATCH, 28, 28, 1)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, _BATCH)]
    return params, x, labels


def _cnn_train_step(jx):
    def loss(params, x, labels):
        logits = _cnn_logits(jx, params, x)
        return -(jx.nn.log_softmax(logits) * labels).sum(axis=-1).mean()

    def step(params, x, labels):
        value, grads = jx.value_and_grad(loss)(params, x, labels)
        new = [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return value, new
    return jx.jit(step)


def _layer2_inputs(rng):
    x = rng.standard_normal((_BATCH, 14, 14, 32)).astype(np.float32)
    w = (rng.standard_normal((3, 3, 32, 64)) / np.sqrt(288)).astype(np.float32)
    ct = rng.standard_normal((_BATCH, 14, 14, 64)).astype(np.float32)
    return x, w, ct


def _conv_grad(argnum):
    def build(jx):
        def grad(x, w, ct):
            return jx.grad(lambda x, w: (_conv(jx, x, w) * ct).sum(), argnum)(x, w)
        return jx.jit(grad)
    return build


WORKLOADS: list = [
    Workload("cnn_train_step/mnist_b64", _cnn_inputs, _cnn_train_step),
    Workload("conv_grad_weights/b64_14x14_32to64_3x3", _layer2_inputs, _conv_grad(1)),
    Workload("conv_grad_input/b64_14x14_32to64_3x3", _layer2_inputs, _conv_grad(0)),
]
