"""The lean path of a repeated `jit` call (`transforms/jit.py`, `runtime/dispatch.py`,
`backends/cpu/executable.py`): options read through `config.reader`, the default backend
memo, results rebuilt without unflattening a single leaf, and arguments the dispatcher
has checked handed over unchecked. Each shortcut must give what the general path gives."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.backends.registry import get_backend
from jaxlite.config import config


def test_reader_follows_update_override_and_threads():
    read = config.reader("jax_debug_nans")
    assert read() is config.read("jax_debug_nans") is False
    with config.override("jax_debug_nans", True):
        assert read() is True
    assert read() is False
    seen = []
    with config.override("jax_debug_nans", True):
        thread = threading.Thread(target=lambda: seen.append(read() == config.read(
            "jax_debug_nans")))
        thread.start()
        thread.join()
    assert seen == [True]
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such"):
        config.reader("jax_no_such")


def test_disable_jit_is_seen_by_a_function_already_called():
    traced = []

    def f(x):
        traced.append(type(x).__name__)
        return x * 2.0

    g = jaxlite.jit(f)
    x = jnp.float32(3.0)
    for _ in range(2):
        assert float(g(x)) == 6.0
    calls = len(traced)
    with jaxlite.disable_jit():
        assert float(g(x)) == 6.0
    assert len(traced) == calls + 1 and traced[-1] == "ArrayImpl"  # run as Python
    assert float(g(x)) == 6.0 and len(traced) == calls + 1  # the plan again


@pytest.mark.parametrize("make", [
    lambda y: y, lambda y: (y,), lambda y: [y], lambda y: {"a": y}, lambda y: (y, None),
    lambda y: ((y, y), {"b": [y]})])
def test_results_keep_their_tree_on_planned_calls(make):
    f = jaxlite.jit(lambda x: make(x + 1.0))
    x = jnp.arange(3.0, dtype=jnp.float32)
    first, second = f(x), f(x)  # the second call runs from the plan
    s1, s2 = jaxlite.tree.structure(first), jaxlite.tree.structure(second)
    assert s1 == s2 == jaxlite.tree.structure(make(0.0))
    for leaf in jaxlite.tree.leaves(second):
        np.testing.assert_array_equal(np.asarray(leaf), np.float32([1, 2, 3]))


def test_default_backend_follows_jax_platforms():
    assert get_backend().platform == "cpu"
    with config.override("jax_platforms", "interpreter"):
        assert get_backend().platform == "interpreter"
        f = jaxlite.jit(lambda x: x + 1)
        x = jnp.arange(4, dtype=jnp.int32)
        np.testing.assert_array_equal(np.asarray(f(x)), [1, 2, 3, 4])
        assert f.lower(x).compile().runtime_executable().client.platform == "interpreter"
    assert get_backend().platform == "cpu"


def test_arguments_that_are_not_as_the_parameters_are_converted():
    f = jaxlite.jit(lambda x: x * 2)
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    strided = jnp.asarray(base)[:, ::2]  # an Array over a non-contiguous view, maybe
    plain = jnp.asarray(base[:, ::2].copy())
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(plain)), base[:, ::2] * 2)
        np.testing.assert_array_equal(np.asarray(f(strided)), base[:, ::2] * 2)
        np.testing.assert_array_equal(np.asarray(f(jnp.zeros((3, 2), jnp.float32))),
                                      np.zeros((3, 2), np.float32))


def test_executable_checks_unless_told_the_caller_did():
    f = jaxlite.jit(lambda x: x + 1.0)
    executable = f.lower(jnp.float32(0)).compile().runtime_executable()
    x = np.float32(1.0)  # a numpy scalar, not an ndarray: must be converted
    np.testing.assert_array_equal(executable.execute_arrays([x])[0], np.float32(2.0))
    with pytest.raises(ValueError, match="expects"):
        executable.execute_arrays([np.zeros(3, np.float32)])
    np.testing.assert_array_equal(
        executable.execute_arrays([np.asarray(np.float32(4.0))], checked=True)[0], 5.0)
