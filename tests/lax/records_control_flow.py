"""Test records of the control-flow primitives: cond (lax.cond, lax.switch), while
(lax.while_loop) and scan (lax.scan, lax.fori_loop with static bounds).

Each case is a small program around one primitive, with branches and loop bodies that close
over arguments and carry pytrees; the references are the same programs written as Python
`if` and `for`/`while` over numpy. Predicates and trip counts depend on the arguments, so
that vmap meets batched predicates (cond becomes a select, while runs until every member is
done) and unbatched ones. Predicates compare with thresholds far from where drawn values
sit densely enough to matter for finite differences.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import lax
from records import Case, Record


def _values(rng: np.random.Generator, shape: tuple, dtype: Any) -> np.ndarray:
    """Normal floats; integers (trip counts) in [0, 5]."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 6, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _vector_shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(1, 3))))


# --------------------------------------------------------------------------------- cond

def _cond_on_x(x, y):
    return lax.cond(jnp.sum(x) > 0.25, lambda a, b: jnp.sin(a) * b, lambda a, b: a * a - b,
                    x, y)


def _cond_on_x_reference(x, y):
    return np.sin(x) * y if np.sum(x) > 0.25 else x * x - y


def _cond_closure(x, y):
    # Branches close over x and take a pytree; the predicate depends on y only.
    return lax.cond(jnp.sum(y) > 0.25,
                    lambda ops: (ops[0] * x, ops[1]["b"] + x),
                    lambda ops: (ops[1]["b"], ops[0] - jnp.cos(x)),
                    (y, {"b": y * 2}))


def _cond_closure_reference(x, y):
    if np.sum(y) > 0.25:
        return y * x, y * 2 + x
    return y * 2, y - np.cos(x)


_SWITCH_BRANCHES = (lambda a, b: jnp.sin(a) * b, lambda a, b: a - b,
                    lambda a, b: jnp.exp(0.5 * a) * b)
_SWITCH_REFERENCES = (lambda a, b: np.sin(a) * b, lambda a, b: a - b,
                      lambda a, b: np.exp(0.5 * a) * b)


def _switch_index(y):
    # floor(2 y[0] + 1.5): -1 .. 3 for usual draws, so that clamping is exercised.
    return jnp.floor(2 * y.reshape(-1)[0] + 1.5).astype(jnp.int32)


def _switch(x, y):
    return lax.switch(_switch_index(y), _SWITCH_BRANCHES, x, y)


def _switch_reference(x, y):
    index = int(np.floor(2 * y.reshape(-1)[0] + 1.5))
    return _SWITCH_REFERENCES[min(max(index, 0), 2)](x, y)


def _cond_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _vector_shape(rng)
    args = [_values(rng, shape, dtype), _values(rng, shape, dtype)]
    fun, reference = [(_cond_on_x, _cond_on_x_reference),
                      (_cond_closure, _cond_closure_reference),
                      (_switch, _switch_reference)][int(rng.integers(0, 3))]
    return Case(fun, reference, args, values=_values)


# -------------------------------------------------------------------------------- while

def _while_on_values(x, y):
    # Each member stops at its own step: when its sum passes 8 or after 6 steps.
    def cond(state):
        return jnp.logical_and(state[0] < 6, jnp.sum(state[1]) < 8.0)

    def body(state):
        return state[0] + 1, state[1] * 1.5 + jnp.abs(y)
    return lax.while_loop(cond, body, (0, x))


def _while_on_values_reference(x, y):
    i, v = 0, x
    while i < 6 and np.sum(v) < 8.0:
        i, v = i + 1, (v * 1.5 + np.abs(y)).astype(x.dtype)
    return np.int32(i), v


def _while_counted(x, n):
    return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, jnp.sin(s[1]) + s[1]),
                          (0, x))[1]


def _while_counted_reference(x, n):
    for _ in range(int(n)):
        x = np.sin(x) + x
    return x


def _while_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _vector_shape(rng)
    if rng.random() < 0.5:
        args = [_values(rng, shape, dtype), _values(rng, shape, dtype)]
        return Case(_while_on_values, _while_on_values_reference, args, values=_values)
    args = [_values(rng, shape, dtype), _values(rng, (), np.int32)]
    return Case(_while_counted, _while_counted_reference, args, values=_values)


# --------------------------------------------------------------------------------- scan

def _scan_basic(reverse: bool):
    def fun(c, xs, w):
        return lax.scan(lambda c, x: (jnp.tanh(c * x + w), c * x), c, xs, reverse=reverse)

    def reference(c, xs, w):
        ys = [None] * len(xs)
        for i in (reversed(range(len(xs))) if reverse else range(len(xs))):
            c, ys[i] = np.tanh(c * xs[i] + w), c * xs[i]
        return c, np.stack(ys) if ys else np.zeros((0, *c.shape), c.dtype)
    return fun, reference


def _scan_no_xs(length: int):
    def fun(c, w):
        def body(carry, _):
            a, b = carry
            return (a * w + 0.5 * b, jnp.sin(b)), {"sum": a + b}
        return lax.scan(body, (c, c * 0.5), None, length=length)

    def reference(c, w):
        a, b, sums = c, c * 0.5, []
        for _ in range(length):
            sums.append(a + b)
            a, b = a * w + 0.5 * b, np.sin(b)
        stacked = np.stack(sums) if sums else np.zeros((0, *c.shape), c.dtype)
        return (a, b), {"sum": stacked}
    return fun, reference


def _fori_static(length: int):
    def fun(c, w):
        return lax.fori_loop(0, length, lambda i, v: v * jnp.cos(w) + i * 0.25, c)

    def reference(c, w):
        for i in range(length):
            c = (c * np.cos(w) + i * 0.25).astype(c.dtype)
        return c
    return fun, reference


def _flatten(value):
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _flatten(value[k])]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _flat_outputs(fun):
    # The shared tests compare a flat list of outputs.
    return lambda *args: _flatten(fun(*args))


def _scan_case(rng: np.random.Generator, dtype: Any) -> Case:
    shape = _vector_shape(rng)
    length = int(rng.integers(0, 5))
    variant = int(rng.integers(0, 3))
    if variant == 0:
        fun, reference = _scan_basic(bool(rng.random() < 0.5))
        args = [_values(rng, shape, dtype), _values(rng, (length, *shape), dtype),
                _values(rng, shape, dtype)]
    elif variant == 1:
        fun, reference = _scan_no_xs(length)
        args = [_values(rng, shape, dtype), _values(rng, shape, dtype)]
    else:
        fun, reference = _fori_static(length)
        args = [_values(rng, shape, dtype), _values(rng, shape, dtype)]
    return Case(_flat_outputs(fun), _flat_outputs(reference), args, values=_values)


RECORDS = [
    Record("cond", _cond_case, notes="lax.cond and lax.switch; batched predicates select"),
    Record("while", _while_case, grad=False,
           notes="reverse mode is refused as in JAX; jvp is tested in test_control_flow.py"),
    Record("scan", _scan_case, notes="lax.scan (reverse, xs=None, pytrees) and fori_loop"),
]
