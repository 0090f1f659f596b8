"""Process, environment and monitoring functions of the `jax` namespace, with one process."""
from __future__ import annotations

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp


def test_one_process_owns_everything():
    assert jax.process_count() == jax.host_count() == 1
    assert jax.process_index() == jax.host_id() == 0
    assert jax.process_indices() == jax.host_ids() == [0]


def test_versions():
    assert jax.__version__ == "0.1.0" and jax.__version_info__ == (0, 1, 0)
    assert jax.version.JAX_API_VERSION == "0.10.2"


def test_print_environment_info(capsys):
    text = jax.print_environment_info(return_string=True)
    assert "jaxlite: 0.1.0 (JAX 0.10.2's API)" in text and "process_count: 1" in text
    assert f"numpy:   {np.__version__}" in text
    assert jax.print_environment_info() is None
    assert capsys.readouterr().out == text


def test_clear_caches_retraces_and_user_contexts_key_the_cache():
    context = jax.make_user_context(default_value=0)
    traces = []
    f = jax.jit(lambda x: traces.append(1) or x * 2)
    f(1.0)
    f(1.0)
    assert len(traces) == 1
    with context(5):
        assert float(f(1.0)) == 2.0
    assert len(traces) == 2
    f(1.0)
    assert len(traces) == 2
    jax.clear_caches()
    f(1.0)
    assert len(traces) == 3


def test_live_arrays_and_copy_to_host_async():
    x = jnp.arange(3.0) + 1
    assert any(a is x for a in jax.live_arrays())
    x.delete()
    assert not any(a is x for a in jax.live_arrays())
    assert jax.copy_to_host_async({"a": jnp.ones(2)}) == {"a": None}


def test_make_array_from_callbacks_and_parts():
    sharding = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    data = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = jax.make_array_from_callback((2, 3), sharding, lambda index: data[index])
    np.testing.assert_array_equal(out, data)
    assert out.sharding == sharding
    out = jax.make_array_from_single_device_arrays((2, 3), sharding, [jnp.asarray(data)])
    np.testing.assert_array_equal(out, data)
    out = jax.make_array_from_process_local_data(sharding, data.ravel(), (2, 3))
    np.testing.assert_array_equal(out, data)


def test_monitoring_listeners_see_jaxlite_compiles():
    events, durations = [], []
    on_event = lambda name, **kw: events.append((name, kw))  # noqa: E731
    on_duration = lambda name, secs, **kw: durations.append((name, kw))  # noqa: E731
    jax.monitoring.register_event_listener(on_event)
    jax.monitoring.register_event_duration_secs_listener(on_duration)
    try:
        jax.jit(lambda v: v * 3 + 1)(jnp.ones(7))
        jax.monitoring.record_event("/my/event", step=1)
    finally:
        jax.monitoring.unregister_event_listener(on_event)
        jax.monitoring.unregister_event_duration_listener(on_duration)
    assert events == [("/my/event", {"step": 1})]
    assert ("/jax/core/compile/backend_compile_duration",
            {"fun_name": "jit(<lambda>)"}) in durations


def test_check_jvp_and_check_vjp_take_jax_signature():
    import functools

    from jaxlite.test_util import check_jvp, check_vjp

    def f(x):
        return jnp.sin(x) * x

    with jax.enable_x64():
        x = np.linspace(0.1, 1.0, 4)
        check_jvp(f, functools.partial(jax.jvp, f), (x,))
        check_vjp(f, functools.partial(jax.vjp, f), (x,))

        def wrong_jvp(primals, tangents):
            out, t = jax.jvp(f, primals, tangents)
            return out, 2 * t

        import pytest
        with pytest.raises(AssertionError, match="finite differences"):
            check_jvp(f, wrong_jvp, (x,))
