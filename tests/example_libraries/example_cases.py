"""stax models trained a few steps by each optimizer, run the same way on JAX (to record)
and on jaxlite (to test).

`run_all(api)` takes a namespace with `jax`, `jnp`, `optimizers` and `stax` and returns,
per case, nested lists of floats (output shapes, parameters, losses), or the exception's
type name and message.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from case_util import run_cases


def _data(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    x = rng.normal(size=(6, n_in)).astype(np.float32)
    y = np.eye(n_out, dtype=np.float32)[rng.randint(0, n_out, size=6)]
    return x, y


def _train(api: Any, model: tuple, opt: Any, x: np.ndarray, y: np.ndarray, steps: int,
           jit: bool = True) -> list:
    jax, jnp = api.jax, api.jnp
    init_fun, apply_fun = model
    out_shape, params = init_fun(jax.random.PRNGKey(0), (-1,) + x.shape[1:])
    opt_init, opt_update, get_params = opt

    def loss(params):
        return -jnp.mean(jnp.sum(apply_fun(params, x) * y, axis=-1))

    def step(i, state):
        value, grads = jax.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, grads, state)
    step = jax.jit(step) if jit else step
    state, losses = opt_init(params), []
    for i in range(steps):
        value, state = step(i, state)
        losses.append(value)
    return [list(out_shape), params, losses, get_params(state)]


def _cases(api: Any) -> dict[str, Callable[[], Any]]:
    jax, jnp, optimizers, stax = api.jax, api.jnp, api.optimizers, api.stax
    cases: dict[str, Callable[[], Any]] = {}
    mlp = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(6), stax.Tanh, stax.Dense(3),
                      stax.LogSoftmax)
    x, y = _data(5, 3)
    makers = {
        "sgd": lambda: optimizers.sgd(0.1),
        "momentum": lambda: optimizers.momentum(0.1, 0.9),
        "nesterov": lambda: optimizers.nesterov(optimizers.exponential_decay(0.1, 2, 0.5),
                                                0.8),
        "adagrad": lambda: optimizers.adagrad(0.1),
        "rmsprop": lambda: optimizers.rmsprop(0.01),
        "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.01),
        "adam": lambda: optimizers.adam(optimizers.inverse_time_decay(0.01, 2, 0.3, True)),
        "adamax": lambda: optimizers.adamax(0.02),
        "sm3": lambda: optimizers.sm3(0.1),
    }
    for name, make in makers.items():
        # (sm3 keeps the parameter's shape in its state, so it cannot be jitted, in JAX too)
        cases[f"mlp {name}"] = lambda make=make, name=name: _train(
            api, mlp, make(), x, y, 3, jit=name != "sm3")
    cases["mlp sgd eager"] = lambda: _train(api, mlp, optimizers.sgd(
        optimizers.piecewise_constant([1], [0.1, 0.01])), x, y, 2, jit=False)

    images = np.random.RandomState(1).normal(size=(2, 6, 6, 2)).astype(np.float32)
    labels = np.eye(2, dtype=np.float32)[[0, 1]]
    cnn = stax.serial(
        stax.Conv(3, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2)),
        stax.AvgPool((2, 2), strides=(1, 1), padding="SAME"), stax.SumPool((2, 2)),
        stax.Flatten, stax.Dense(2), stax.LogSoftmax)
    cases["cnn adam"] = lambda: _train(api, cnn, optimizers.adam(1e-2), images, labels, 2)
    # (BatchNorm makes the convolution's bias gradient zero up to rounding, which Adam
    # would scale up to full steps: plain SGD here)
    normalized = stax.serial(stax.Conv(3, (3, 3)), stax.BatchNorm(), stax.Relu,
                             stax.Flatten, stax.Dense(2), stax.LogSoftmax)
    cases["cnn batchnorm sgd"] = lambda: _train(api, normalized, optimizers.sgd(0.1), images,
                                                labels, 2)
    transposed = stax.serial(
        stax.ConvTranspose(2, (2, 2), strides=(2, 2)), stax.Elu,
        stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (3, 3), padding="SAME"), stax.Gelu,
        stax.Flatten, stax.Dense(2), stax.Softmax)
    cases["transposed conv momentum"] = lambda: _train(
        api, transposed, optimizers.momentum(0.05, 0.5), images, labels, 2)

    def branches():
        model = stax.serial(
            stax.Dense(4), stax.FanOut(3),
            stax.parallel(stax.Dense(4), stax.serial(stax.Selu, stax.Dense(4)),
                          stax.Identity),
            stax.FanInSum, stax.FanOut(2), stax.parallel(stax.LeakyRelu, stax.Softplus),
            stax.FanInConcat(), stax.Sigmoid, stax.Dense(3), stax.Exp)
        return _train(api, model, optimizers.adam(0.01), x, y, 2)
    cases["fan out and in adam"] = branches

    def dropout():
        init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Dropout(0.7),
                                          stax.Dense(2))
        _, params = init_fun(jax.random.PRNGKey(3), (-1, 5))
        key = jax.random.PRNGKey(7)
        eval_fun = stax.serial(stax.Dense(4), stax.Dropout(0.7, mode="test"),
                               stax.Dense(2))[1]
        return apply_fun(params, x, rng=key), eval_fun(params, x, rng=key)
    cases["dropout"] = dropout

    def conv1d_transpose():
        init_fun, apply_fun = stax.Conv1DTranspose(3, (2,), strides=(2,), padding="SAME")
        shape, params = init_fun(jax.random.PRNGKey(4), (1, 4, 2))
        signal = np.arange(8, dtype=np.float32).reshape(1, 4, 2) / 8
        return list(shape), params, apply_fun(params, signal)
    cases["conv1d transpose"] = conv1d_transpose

    def shape_dependent():
        layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
        shape, params = layer[0](jax.random.PRNGKey(5), (2, 3))
        return list(shape), params, layer[1](params, x[:2, :3])
    cases["shape_dependent"] = shape_dependent

    def batchnorm_options():
        outs = []
        for center, scale in ((True, False), (False, True), (False, False)):
            init_fun, apply_fun = stax.BatchNorm(axis=0, center=center, scale=scale)
            _, params = init_fun(jax.random.PRNGKey(6), x.shape)
            outs.append(apply_fun(params, x))
        return outs
    cases["batchnorm options"] = batchnorm_options

    def schedules():
        made = [optimizers.exponential_decay(0.5, 3, 0.1),
                optimizers.inverse_time_decay(0.5, 2, 0.5),
                optimizers.inverse_time_decay(0.5, 2, 0.5, staircase=True),
                optimizers.polynomial_decay(1.0, 4, 0.1, power=2.0),
                optimizers.piecewise_constant([1, 3], [1.0, 0.5, 0.25]),
                optimizers.constant(0.3)]
        return [[schedule(jnp.int32(i)) for i in range(6)] for schedule in made]
    cases["schedules"] = schedules

    def utilities():
        tree = {"a": jnp.array([3.0, 4.0]), "b": [jnp.array(12.0)]}
        opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
        state = opt_update(0, tree, opt_init(tree))
        marked = optimizers.unpack_optimizer_state(state)
        again = optimizers.pack_optimizer_state(marked)
        return [optimizers.l2_norm(tree), optimizers.clip_grads(tree, 6.5),
                optimizers.clip_grads(tree, 100.0), get_params(again),
                jax.tree_util.tree_leaves(again)]
    cases["utilities"] = utilities

    def mismatched_tree():
        opt_init, opt_update, _ = optimizers.sgd(0.1)
        return opt_update(0, [1.0, 2.0], opt_init((1.0, 2.0)))
    cases["error: gradient tree"] = mismatched_tree
    cases["error: dropout without rng"] = lambda: stax.Dropout(0.5)[1]((), x)
    cases["error: bad schedule"] = lambda: optimizers.make_schedule([0.1, 0.2])
    cases["error: piecewise lengths"] = lambda: optimizers.piecewise_constant([1, 2], [1.0])
    return cases


def run_all(api: Any) -> dict:
    return run_cases(_cases(api), api.jax)
