"""JAX's configuration options: every one exists, the implemented ones change behaviour as
in JAX 0.10.2, and an unimplemented non-default value raises instead of being ignored."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import dtypes
from jaxlite._jax_options import DEFAULT_ONLY, NO_EFFECT
from jaxlite.config import config

# Names of JAX 0.10.2's options (`sorted(jax.config.values)`), recorded from real JAX.
JAX_OPTION_COUNT = 133


def test_every_jax_option_exists_with_jax_default():
    values = jax.config.values
    jax_options = [n for n in values if not n.startswith("jaxlite_")]
    assert len(jax_options) == JAX_OPTION_COUNT
    assert values["jax_threefry_partitionable"] is True
    assert values["jax_default_prng_impl"] == "threefry2x32"
    assert values["jax_numpy_dtype_promotion"] == "standard"
    assert values["jax_numpy_rank_promotion"] == "allow"
    assert values["jax_debug_nans"] is False


def test_unknown_option_is_attribute_error_like_jax():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nonexistent"):
        jax.config.update("jax_nonexistent", 1)


@pytest.mark.parametrize("name", sorted(DEFAULT_ONLY))
def test_default_only_options_refuse_other_values(name):
    default, _ = DEFAULT_ONLY[name]
    other = {True: False, False: True, 0: 3, -1: 4, None: "disallow"}.get(default, "other")
    with pytest.raises(NotImplementedError, match=name):
        jax.config.update(name, other)
    jax.config.update(name, default)
    assert jax.config.read(name) == default


def test_no_effect_options_take_any_value():
    for name in ("jax_pprint_use_color", "jax_traceback_in_locations_limit", "jax_enable_checks"):
        with jax.config.override(name, NO_EFFECT[name]):
            assert jax.config.read(name) == NO_EFFECT[name]


def test_state_functions_are_context_managers():
    assert jax.debug_nans.value is False
    with jax.debug_nans(True):
        assert jax.config.jax_debug_nans is True
    with jax.debug_nans():  # no value means True, as in JAX
        assert jax.config.jax_debug_nans is True
    assert jax.config.jax_debug_nans is False
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks is True


# (a, b) -> JAX 0.10.2's strict result as (dtype, weak), or None where it raises
# TypePromotionError; recorded with jax.numpy_dtype_promotion('strict').
STRICT = [
    ("float32", "float16", None), ("float32", "float32", ("float32", False)),
    ("int32", "int8", None), ("bool", "int32", None), ("float32", float, ("float32", False)),
    ("int32", float, None), ("int32", int, ("int32", False)), ("bool", int, None),
    ("float32", complex, None), (int, float, ("float32", True)),
    ("bfloat16", float, ("bfloat16", False)), ("uint8", "int8", None),
    ("float32", "int32", None), ("float32", int, ("float32", False)),
    ("complex64", int, ("complex64", False)), ("complex64", float, ("complex64", False)),
    ("uint8", int, ("uint8", False)), (int, complex, ("complex64", True)),
    (float, complex, ("complex64", True)), ("float16", int, ("float16", False)),
    ("int8", int, ("int8", False)), ("bool", bool, ("bool", False)), ("bool", float, None),
]


@pytest.mark.parametrize("a,b,expected", STRICT)
def test_strict_dtype_promotion_matches_jax(a, b, expected):
    with jax.numpy_dtype_promotion("strict"):
        if expected is None:
            with pytest.raises(dtypes.TypePromotionError, match="strict"):
                dtypes.result_type(a, b)
        else:
            dt, weak = dtypes.result_type(a, b, return_weak_type_flag=True)
            assert (str(dt), weak) == expected


def test_strict_promotion_reaches_operators_and_jit_retraces():
    x, i = jnp.ones(2, jnp.float32), jnp.ones(2, jnp.int32)
    f = jax.jit(lambda a, b: a + b)
    assert f(x, i).dtype == np.float32
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(dtypes.TypePromotionError):
            x + i
        with pytest.raises(dtypes.TypePromotionError):
            f(x, i)  # a cached trace from standard mode must not be reused
        assert (i + 1).dtype == np.int32
    assert f(x, i).dtype == np.float32


def test_rank_promotion_modes():
    a, b = jnp.ones((2, 3)), jnp.ones(3)
    with jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="Operands could not be broadcast together for add"):
            a + b
        assert (a + 1.0).shape == (2, 3) and (a + jnp.ones((1, 3))).shape == (2, 3)
    with jax.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="jax_numpy_rank_promotion='warn'"):
            a * b
    with pytest.raises(ValueError, match="must be in"):
        jax.config.update("jax_numpy_rank_promotion", "sometimes")


@pytest.mark.parametrize("fn,kind,prim", [
    (lambda x: jnp.log(x), "inf", "log"),
    (lambda x: 0.0 / x, "nan", "div"),
    (lambda x: 1.0 / x, "inf", "div"),
])
def test_debug_nans_and_infs_name_the_primitive(fn, kind, prim):
    zero = jnp.float32(0.0)
    with jax.debug_nans(True), jax.debug_infs(True):
        for f in (fn, jax.jit(fn)):
            with pytest.raises(FloatingPointError,
                               match=rf"invalid value \({kind}\) encountered in {prim}"):
                f(zero)
    assert np.isnan(jax.jit(lambda x: 0.0 / x)(zero))  # off again: no check


def test_debug_nans_ignores_infs_and_integers():
    with jax.debug_nans(True):
        assert np.isinf(jnp.float32(1.0) / jnp.float32(0.0))
        assert jax.jit(lambda x: x // 1)(jnp.int32(3)) == 3


def test_parse_flags_reads_jax_flags_from_argv(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["prog", "--jax_debug_nans", "--other=1",
                                      "--jax_numpy_rank_promotion=raise"])
    try:
        jax.config.parse_flags_with_absl()
        assert jax.config.jax_debug_nans is True
        assert jax.config.jax_numpy_rank_promotion == "raise"
    finally:
        jax.config.update("jax_debug_nans", False)
        jax.config.update("jax_numpy_rank_promotion", "allow")


def test_debug_nans_skips_key_outputs():
    with jax.debug_nans(True):
        assert jax.random.split(jax.random.key(0)).shape == (2,)
        assert jax.jit(jax.random.split)(jax.random.key(1)).shape == (2,)


def test_random_seed_offset_is_added_to_every_seed():
    # JAX 0.10.2 with jax_random_seed_offset=5: key_data(key(0)) == PRNGKey(0) == [0, 5].
    make = jax.jit(jax.random.key)
    assert jax.random.key_data(make(0)).tolist() == [0, 0]
    with jax.config.override("jax_random_seed_offset", 5):
        assert jax.random.PRNGKey(0).tolist() == [0, 5]
        assert jax.random.key_data(jax.random.key(0)).tolist() == [0, 5]
        assert jax.random.key_data(make(0)).tolist() == [0, 5]  # retraced: a trace option
    assert jax.random.PRNGKey(0).tolist() == [0, 0]
    with pytest.raises(ValueError, match="new int config value must be None or of type int"):
        jax.config.update("jax_random_seed_offset", "x")


def test_legacy_prng_key_allows_warns_or_refuses_raw_keys():
    raw = jax.random.PRNGKey(0)
    expected = float(jax.random.normal(raw))
    assert float(jax.random.normal(jax.random.key(0))) == expected
    with jax.legacy_prng_key("warn"):
        with pytest.warns(UserWarning, match="Legacy uint32 key array passed as key"):
            assert float(jax.random.normal(raw)) == expected
        float(jax.random.normal(jax.random.key(0)))  # typed keys never warn
    with jax.legacy_prng_key("error"):
        with pytest.raises(ValueError, match='set jax_legacy_prng_key="allow"'):
            jax.random.uniform(raw)
    with pytest.raises(ValueError, match="is not a valid LegacyPrngKeyState"):
        jax.config.update("jax_legacy_prng_key", "sometimes")


def _in_thread(fn):
    seen = []
    worker = threading.Thread(target=lambda: seen.append(fn()))
    worker.start()
    worker.join()
    return seen[0]


def test_update_is_seen_by_every_thread_as_in_jax():
    read = config.reader("jax_enable_x64")
    before = config.trace_context()
    try:
        jax.config.update("jax_enable_x64", True)
        assert _in_thread(lambda: jnp.zeros(1).dtype) == np.float64
        assert _in_thread(read) is True
        assert _in_thread(config.trace_context) == config.trace_context() != before
        # a worker started before the update sees it too
        started, go, seen = threading.Event(), threading.Event(), []

        def worker():
            started.set()
            go.wait()
            seen.append(jnp.ones(2).dtype)
        thread = threading.Thread(target=worker)
        jax.config.update("jax_enable_x64", False)
        thread.start()
        started.wait()
        jax.config.update("jax_enable_x64", True)
        go.set()
        thread.join()
        assert seen == [np.float64]
    finally:
        jax.config.update("jax_enable_x64", False)
    assert config.trace_context() == before and read() is False


def test_override_stays_in_its_thread_and_wins_over_update():
    before = config.trace_context()
    with jax.enable_x64(True):
        assert jnp.zeros(1).dtype == np.float64
        assert _in_thread(lambda: jnp.zeros(1).dtype) == np.float32
        assert _in_thread(config.trace_context) == before
        jax.config.update("jax_debug_infs", True)  # another thread's update, seen here
        try:
            assert config.read("jax_debug_infs") is True
            assert config.trace_context() == tuple(
                config.read(name) for name in config._trace_options)
            jax.config.update("jax_enable_x64", False)  # the block's own value stays
            assert config.read("jax_enable_x64") is True
        finally:
            jax.config.update("jax_debug_infs", False)
    assert config.read("jax_enable_x64") is False and config.trace_context() == before


def test_jit_caches_follow_the_trace_context_in_threads():
    f = jax.jit(lambda x: x + 1)
    assert f(np.float32(1)).dtype == np.float32
    try:
        jax.config.update("jax_enable_x64", True)
        assert _in_thread(lambda: f(np.float64(1)).dtype) == np.float64
    finally:
        jax.config.update("jax_enable_x64", False)
    assert _in_thread(lambda: f(np.float64(1)).dtype) == np.float32
