"""`jaxlite.example_libraries.optimizers` (mirrors `jax.example_libraries.optimizers`):
optimizers as `(init_fun, update_fun, get_params)` triples.

`init_fun(params)` makes an optimizer state from a pytree of parameters,
`update_fun(step, grads, state)` applies one step, `get_params(state)` reads the
parameters back. Each optimizer is written for one array and lifted to pytrees by the
`optimizer` decorator; its state is an `OptimizerState` pytree that `jit` and the other
transformations accept. Step sizes are numbers or schedules (functions of the step).
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

from jaxlite import numpy as jnp
from jaxlite.core.util import safe_map, safe_zip, unzip2
from jaxlite.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

map = safe_map
zip = safe_zip

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """An optimizer's state: the per-leaf states, flattened
(`packed_state`), the parameters' treedef and each leaf state's treedef (mirrors
`optimizers.OptimizerState`); a pytree whose leaves are the states' arrays."""
register_pytree_node(OptimizerState,
                     lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Array = Any
Params = Any  # a pytree of arrays
State = Any  # one array's optimizer state
Updates = Params  # gradients, shaped like the parameters
InitFn = Callable[[Params], OptimizerState]
Step = int
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    """An `(init_fn, update_fn, params_fn)` triple (mirrors `optimizers.Optimizer`)."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def optimizer(opt_maker: Callable[..., tuple[Callable[[Params], State],
                                              Callable[[Step, Updates, Params], Params],
                                              Callable[[State], Params]]]
              ) -> Callable[..., Optimizer]:
    """Lift an optimizer written for single arrays to pytrees of parameters (mirrors
    `optimizers.optimizer`): the returned maker gives an `Optimizer` whose functions map
    the per-array ones over the parameters' leaves."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_flat, tree = tree_flatten(x0_tree)
            states_flat, subtrees = unzip2(map(tree_flatten, [init(x0) for x0 in x0_flat]))
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState
                        ) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not "
                    "match the parameter tree structure with which it was initialized: "
                    f"parameter tree {tree} and grad tree {grad_tree_def}.")
            states = map(tree_unflatten, subtrees, states_flat)
            new_states = map(functools.partial(update, i), grad_flat, states)
            new_flat, new_subtrees = unzip2(map(tree_flatten, new_states))
            for subtree, new_subtree in zip(subtrees, new_subtrees):
                if new_subtree != subtree:
                    raise TypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {subtree} and output "
                        f"{new_subtree}.")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            states_flat, tree, subtrees = opt_state
            states = map(tree_unflatten, subtrees, states_flat)
            return tree_unflatten(tree, map(get_params, states))
        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _first(state: tuple) -> Any:
    return state[0]


def _with_zeros(count: int) -> Callable[[Any], tuple]:
    """The init function of a state of the parameters and `count` zero arrays like them."""
    def init(x0):
        return (x0,) + tuple(jnp.zeros_like(x0) for _ in range(count))
    return init


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x ← x - η·g (mirrors `optimizers.sgd`)."""
    step_size = make_schedule(step_size)

    def update(i, g, x):
        return x - step_size(i) * g
    return Optimizer(lambda x0: x0, update, lambda x: x)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """SGD with momentum: v ← μ·v + g, x ← x - η·v (mirrors `optimizers.momentum`)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return _with_zeros(1), update, _first


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """SGD with Nesterov momentum: v ← μ·v + g, x ← x - η·(μ·v + g) (mirrors
    `optimizers.nesterov`)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return _with_zeros(1), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient (mirrors
    `optimizers.adagrad`)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq += jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return _with_zeros(2), update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a running mean of g² scales the step (mirrors `optimizers.rmsprop`)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return _with_zeros(1), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the scaled step (mirrors `optimizers.rmsprop_momentum`)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return _with_zeros(2), update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2015) with bias-corrected moments (mirrors
    `optimizers.adam`)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v
    return _with_zeros(2), update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam with an infinity norm for the second moment (mirrors
    `optimizers.adamax`)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        corrected = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - corrected * m / (u + eps), m, u
    return _with_zeros(2), update, _first


def _without(seq: Any, i: int, items: list) -> list:
    # The sequence with position i replaced by `items` (which may be empty).
    out = list(seq)
    out[i:i + 1] = items
    return out


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): one accumulator per index of each axis, their minimum
    standing for the per-element one (mirrors `optimizers.sm3`)."""
    step_size = make_schedule(step_size)

    def along(ndim: int, v: Any, axis: int) -> Any:
        # v (one axis's accumulator) broadcastable along `axis` of an ndim array.
        return v[tuple(_without([None] * ndim, axis, [slice(None)]))]

    def init(x0):
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        vs = [along(g.ndim, v, axis) for axis, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(_without(range(x.ndim), j, [])) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        return state[0].reshape(state[3])
    return init, update, get_params


# ---------------------------------------------------------------------------- schedules

def constant(step_size) -> Schedule:
    """The schedule that is always `step_size` (mirrors `optimizers.constant`)."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """η·r^(i/T) (mirrors `optimizers.exponential_decay`)."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """η / (1 + r·i/T), with i/T floored if `staircase` (mirrors
    `optimizers.inverse_time_decay`)."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From `step_size` to `final_step_size` as (1 - i/T)^power, constant after T
    (mirrors `optimizers.polynomial_decay`)."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any):
    """`values[k]` for steps after k of the `boundaries` (mirrors
    `optimizers.piecewise_constant`)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as it is, a scalar as a constant schedule (mirrors
    `optimizers.make_schedule`)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---------------------------------------------------------------------------- utilities

def l2_norm(tree):
    """The Euclidean norm of all the leaves together (mirrors `optimizers.l2_norm`)."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """The gradients scaled down to norm `max_norm` if their norm is larger (mirrors
    `optimizers.clip_grads`)."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)),
                    grad_tree)


class JoinPoint:
    """The boundary between the parameters' tree and a leaf's state tree in an unpacked
    optimizer state (mirrors `optimizers.JoinPoint`)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        # Looks iterable, like the containers serializers walk.
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An `OptimizerState` as the parameters' tree with a `JoinPoint` (holding the
    leaf's state) at each leaf, for serialization (mirrors
    `optimizers.unpack_optimizer_state`)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(tree_unflatten, subtree_defs, states_flat)
    return tree_unflatten(tree_def, [JoinPoint(subtree) for subtree in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of `unpack_optimizer_state` (mirrors
    `optimizers.pack_optimizer_state`)."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise AssertionError("pack_optimizer_state takes a tree whose leaves are "
                             "JoinPoints, as unpack_optimizer_state makes.")
    states_flat, subtree_defs = unzip2(map(tree_flatten, [s.subtree for s in sentinels]))
    return OptimizerState(states_flat, tree_def, subtree_defs)
