"""`jax_explain_cache_misses`: each tracing cache miss of `jit` logs, on JAX's logger and in
JAX's layout, why the function traced again (the lines JAX 0.10.2 prints are the model:
"TRACING CACHE MISS at file:line (function):", "never seen function:", "all previously
seen cache keys differ. For the closest previous key:", "different input types:",
"different input pytree:", "Tracing context doesn't match, ...")."""
import functools
import logging

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.config import config

HERE = __file__
LOGGER = "jax._src.interpreters.partial_eval"


@pytest.fixture
def misses(caplog):
    """The explanations logged while the test runs with the option on (a list that fills
    as calls are made)."""
    caplog.set_level(logging.WARNING, logger=LOGGER)
    with config.override("jax_explain_cache_misses", True):
        yield _Records(caplog)


class _Records:
    def __init__(self, caplog):
        self.caplog = caplog
        self.taken = 0

    def new(self):
        """The messages logged since the last call."""
        records = [r for r in self.caplog.records if r.name == LOGGER]
        fresh = records[self.taken:]
        self.taken = len(records)
        assert all(r.levelno == logging.WARNING for r in fresh)
        return [r.getMessage() for r in fresh]


def defined(fun):
    return f"{HERE}:{fun.__code__.co_firstlineno}"


def call_line():
    """`file:line (function)` of the caller's current line."""
    import sys
    frame = sys._getframe(1)
    return f"{HERE}:{frame.f_lineno + 1} ({frame.f_code.co_name})"


def test_new_function_then_hits_then_each_kind_of_type_change(misses):
    def f(x, y):
        return x + y
    jf = jax.jit(f)
    where = call_line()
    jf(jnp.ones(3), 1.0)
    assert misses.new() == [f"TRACING CACHE MISS at {where}:\n  never seen function:\n"
                            f"    f id={id(f)} defined at {defined(f)}"]
    jf(jnp.ones(3), 2.0)
    assert misses.new() == []  # same signature: a hit, nothing logged
    header = (f"  for f defined at {defined(f)}\n  all previously seen cache keys differ. "
              "For the closest previous key:\n")
    where = call_line()
    jf(jnp.ones(4), 1.0)
    assert misses.new() == [f"TRACING CACHE MISS at {where}:\n" + header +
                            "  different input types:\n  * at x, now f32[4] and before f32[3]"]
    jf(jnp.ones(4, jnp.int32), 1.0)
    (message,) = misses.new()
    assert message.endswith("different input types:\n  * at x, now i32[4] and before f32[4]")
    jf(jnp.ones(4, jnp.int32), jnp.float32(1.0))
    (message,) = misses.new()
    assert message.endswith(
        "  * at y, now f32[]{weak_type=False} and before f32[]{weak_type=True} "
        "(see https://docs.jax.dev/en/latest/type_promotion.html#weak-types)")
    np.testing.assert_allclose(np.asarray(jf(jnp.ones(3), 1.0)), [2.0, 2.0, 2.0])


def test_static_arguments_and_keywords(misses):
    @functools.partial(jax.jit, static_argnums=1, static_argnames="mode")
    def g(x, n, mode="a"):
        return x * n if mode == "a" else x - n
    g(jnp.ones(2), 2)
    misses.new()
    g(jnp.ones(2), 3)
    (message,) = misses.new()
    assert message.endswith("  different input pytree:\n  * at n (static argument), now 3 "
                            "and before 2, so the static argument values differ")
    out = g(jnp.ones(2), 3, mode="b")
    (message,) = misses.new()
    assert "* at mode (static argument), now passed and before not passed" in message
    np.testing.assert_allclose(np.asarray(out), [-2.0, -2.0])


def test_pytree_paths_name_the_leaves(misses):
    @jax.jit
    def p(params, x):
        return params["w"] * x + params["b"]
    p({"w": jnp.ones(3), "b": jnp.ones(3)}, 1.0)
    misses.new()
    p({"w": jnp.ones(4), "b": jnp.ones(4)}, 1.0)
    (message,) = misses.new()
    assert message.endswith("  different input types:\n"
                            "  * at params['b'], now f32[4] and before f32[3]\n"
                            "  * at params['w'], now f32[4] and before f32[3]")
    p({"w": jnp.ones(4), "b": jnp.ones(4), "c": 1.0}, 1.0)
    (message,) = misses.new()
    assert message.endswith(
        "  different input pytree:\n  * at params, now <class 'dict'> with 3 children and "
        "before <class 'dict'> with 2 children, so the numbers of children do not match, "
        "with the symmetric difference of key sets: {'c'}")

    first = jax.jit(lambda t: t[0])
    first((1.0, 2.0))
    misses.new()
    first([1.0, 2.0])
    (message,) = misses.new()
    assert message.endswith("  * at t, now <class 'list'> and before <class 'tuple'>, so "
                            "their Python types differ")
    nested = jax.jit(lambda t: t["a"][0])
    nested({"a": [1.0, 2.0]})
    misses.new()
    nested({"a": [1.0, 2.0, 3.0]})
    (message,) = misses.new()
    assert "* at t['a'], now <class 'list'> with 3 children and before <class 'list'> " \
        "with 2 children, so the numbers of children do not match" in message


def test_tracing_context_options(misses):
    f = jax.jit(lambda x: x * 2)
    f(jnp.ones(2))
    misses.new()
    with jax.enable_x64():
        f(np.ones(2))
    (message,) = misses.new()
    assert "  Tracing context doesn't match, e.g. due to config or context manager.\n" \
        "  * jax_enable_x64 differs: now True and before False" in message
    with jax.numpy_rank_promotion("raise"):
        f(jnp.ones(2))
    (message,) = misses.new()
    assert "  * jax_numpy_rank_promotion differs: now 'raise' and before 'allow'" in message


def test_nested_jit_names_the_call_inside_the_outer_function(misses):
    inner = jax.jit(lambda a: a * 2)

    def outer(a):
        return inner(a) + inner(a[:2]).sum()
    out = jax.jit(outer)(jnp.ones(4))
    messages = misses.new()
    assert len(messages) == 3
    assert messages[0].startswith(f"TRACING CACHE MISS at {HERE}:")
    assert "never seen function:\n    outer id=" in messages[0]
    inner_line = f"{HERE}:{outer.__code__.co_firstlineno + 1} (outer)"
    assert messages[1].startswith(f"TRACING CACHE MISS at {inner_line}:\n  never seen")
    assert messages[2].startswith(f"TRACING CACHE MISS at {inner_line}:")
    assert messages[2].endswith("  * at a, now f32[2] and before f32[4]")
    np.testing.assert_allclose(np.asarray(out), [6.0, 6.0, 6.0, 6.0])


def test_under_vmap_and_grad_the_per_example_types_are_compared(misses):
    inner = jax.jit(lambda a: a * 2)
    jax.vmap(inner)(jnp.ones((3, 7)))
    misses.new()
    jax.vmap(inner)(jnp.ones((3, 8)))
    (message,) = misses.new()
    assert message.endswith("  * at a, now f32[8] and before f32[7]")
    grad = jax.grad(lambda a: inner(a).sum())(jnp.ones(9))
    (message,) = misses.new()
    assert message.endswith("  * at a, now f32[9] and before f32[8]")
    np.testing.assert_allclose(np.asarray(grad), np.full(9, 2.0))


def test_another_jit_of_the_same_function_and_cleared_caches(misses):
    def k(x):
        return x + 1
    jax.jit(k)(1.0)
    misses.new()
    jax.jit(k)(1.0)  # a new jit object: jaxlite traces again (JAX shares its cache)
    (message,) = misses.new()
    assert message.endswith("  this cache key was seen before, by another jit of this "
                            "function: jaxlite keeps traces per jitted function, so jit a "
                            "function once and call the result")
    jk = jax.jit(k)
    jk(1.0)
    misses.new()
    jk.clear_cache()
    jk(1.0)
    (message,) = misses.new()
    assert "never seen function:" in message


def test_nothing_is_logged_when_the_option_is_off(caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    f = jax.jit(lambda x: x + 1)
    f(jnp.ones(2))
    f(jnp.ones(3))
    assert not [r for r in caplog.records if r.name == LOGGER]
    with jax.explain_cache_misses(True):
        f(jnp.ones(4))
    (record,) = [r for r in caplog.records if r.name == LOGGER]
    assert "* at x, now f32[4] and before f32[" in record.getMessage()


def test_a_new_typed_sharding_is_named(misses):
    # Over an Explicit mesh the arguments' shardings are part of the key (sharding in types).
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    jf = jax.jit(lambda a: a * 2)
    split = jax.device_put(np.ones((4, 2), np.float32),
                           jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x")))
    whole = jax.device_put(np.ones((4, 2), np.float32),
                           jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec()))
    jf(split)
    misses.new()
    jf(whole)
    (message,) = misses.new()
    assert "the arguments' shardings or the context mesh differ" in message
    assert "PartitionSpec('x',)" in message or "P('x'" in message
