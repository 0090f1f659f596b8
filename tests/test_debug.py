"""jaxlite.debug: print, log, callback, breakpoint and the sharding views (against JAX 0.10.2).

The programs of tests/data/callbacks/programs.py print exactly what they printed under JAX
0.10.2 (recorded there by record.py), on the cpu backend and on the interpreter.
"""
from __future__ import annotations

import importlib.util
import io
import logging
import sys
from pathlib import Path

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.config import config
from jaxlite.errors import JaxRuntimeError

RECORDED = Path(__file__).parent / "data" / "callbacks"
_spec = importlib.util.spec_from_file_location("callback_programs", RECORDED / "programs.py")
_programs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_programs)
PROGRAMS = _programs.PROGRAMS
# The sharding views name the device, which is the interpreter's on that backend.
DEVICE_NEUTRAL = sorted(name for name in PROGRAMS if name != "sharding_views")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_prints_what_jax_prints(name, capsys):
    PROGRAMS[name](jax)
    jax.effects_barrier()
    assert capsys.readouterr().out == (RECORDED / f"{name}.txt").read_text()


@pytest.mark.parametrize("name", DEVICE_NEUTRAL)
def test_program_prints_what_jax_prints_on_the_interpreter(name, capsys):
    with config.override("jax_platforms", "interpreter"):
        PROGRAMS[name](jax)
    assert capsys.readouterr().out == (RECORDED / f"{name}.txt").read_text()


# ------------------------------------------------------------------------------- print

@pytest.mark.parametrize("fmt, args, kwargs, error, message", [
    ("{} {}", (1,), {}, IndexError, None),
    ("{a}", (), {"b": 1}, KeyError, "'a'"),
    ("{}", (1, 2), {}, ValueError, "Unused positional arguments to `jax.debug.print`: [2]"),
    ("{a}", (), {"a": 1, "b": 2}, ValueError,
     "Unused keyword arguments to `jax.debug.print`: ['b']. You may be passing an f-string"),
    ("no placeholders", (1,), {}, ValueError,
     "Unused positional arguments to `jax.debug.print`: [1]"),
])
def test_print_checks_the_format_when_called(fmt, args, kwargs, error, message, capsys):
    with pytest.raises(error) as info:
        jax.jit(lambda: jax.debug.print(fmt, *args, **kwargs))()
    if message is not None:
        assert message in str(info.value)
    assert capsys.readouterr().out == ""


def test_print_two_call_form_takes_no_values():
    with pytest.raises(TypeError, match="debug_print received unexpected arguments in the "
                                        "two-call form"):
        jax.debug.print(foo=1)
    assert callable(jax.debug.print(ordered=True))


def test_print_of_a_bad_format_spec_raises_when_it_runs():
    # formatting waits for the values: eagerly the error is raised as it is, from a compiled
    # program as JaxRuntimeError (both as in JAX)
    with pytest.raises(ValueError, match="Unknown format code 'd'"):
        jax.debug.print("{:d}", 1.5)
    with pytest.raises(JaxRuntimeError, match="CpuCallback error") as info:
        jax.jit(lambda: jax.debug.print("{:d}", 1.5))()
    assert "ValueError: Unknown format code 'd'" in str(info.value)


def test_print_runs_every_time_the_program_runs(capsys):
    f = jax.jit(lambda x: (jax.debug.print("x={}", x), x + 1)[1])
    assert float(f(1.0)) == 2.0 and float(f(5.0)) == 6.0
    assert capsys.readouterr().out == "x=1.0\nx=5.0\n"


def test_print_in_a_function_without_results_runs(capsys):
    jax.jit(lambda x: jax.debug.print("only {}", x))(jnp.arange(2))
    jax.jit(lambda p: jax.lax.cond(p, lambda: jax.debug.print("T"),
                                   lambda: jax.debug.print("F")))(False)
    assert capsys.readouterr().out == "only [0 1]\nF\n"


def test_ordered_prints_keep_program_order_around_loops(capsys):
    def f(x):
        jax.debug.print("before", ordered=True)
        y = jax.lax.fori_loop(0, 3, lambda i, c: (jax.debug.print("i={}", i, ordered=True),
                                                  c + i)[1], x)
        jax.debug.print("after {}", y, ordered=True)
        return y
    for backend in ("cpu", "interpreter"):
        assert int(jax.jit(f, backend=backend)(0)) == 3
        assert capsys.readouterr().out == "before\ni=0\ni=1\ni=2\nafter 3\n"


def test_log_goes_to_the_logger_with_the_callers_line(caplog, capsys):
    with caplog.at_level(logging.INFO, logger="jax._src.debugging"):
        jax.jit(lambda x: jax.debug.log("logged {}", x))(jnp.float32(2.5))
        jax.debug.log("eager {x}", x=1)
    records = [r for r in caplog.records if r.name == "jax._src.debugging"]
    assert [r.getMessage() for r in records] == ["logged 2.5", "eager 1"]
    assert all(r.levelno == logging.INFO and r.pathname == __file__ for r in records)
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------------------- callback

def test_callback_receives_arrays_and_static_leaves():
    seen = []
    jax.jit(lambda x: jax.debug.callback(lambda a, s, k=None: seen.append((a, s, k)), x,
                                         "static", k=x * 2))(jnp.arange(3))
    (a, s, k), = seen
    assert isinstance(a, jax.Array) and s == "static"
    np.testing.assert_array_equal(np.asarray(a), [0, 1, 2])
    np.testing.assert_array_equal(np.asarray(k), [0, 2, 4])


def test_callback_checks_its_arguments():
    with pytest.raises(TypeError, match="first argument to jax.debug.callback must be callable"):
        jax.debug.callback(1, 2)
    with pytest.raises(TypeError, match="two-call form"):
        jax.debug.callback(ordered=True, partitioned=False, x=1)


def test_callback_exceptions_eagerly_as_they_are_and_wrapped_when_compiled(caplog):
    def fail(x):
        raise KeyError("boom")
    with pytest.raises(KeyError, match="boom"):
        jax.debug.callback(fail, 1.0)
    for backend in ("cpu", "interpreter"):
        with pytest.raises(JaxRuntimeError) as info:
            jax.jit(lambda x: jax.debug.callback(fail, x), backend=backend)(1.0)
        assert str(info.value).startswith("INTERNAL: CpuCallback error calling callback")
        assert str(info.value).rstrip().endswith("KeyError: 'boom'")
        assert isinstance(info.value.__cause__, KeyError)


def test_callback_sees_copies_of_the_programs_buffers():
    kept = []
    f = jax.jit(lambda x: (jax.debug.callback(kept.append, x * 2), x * 3)[1])
    for v in (1.0, 2.0, 3.0):
        f(jnp.full((4,), v))
    np.testing.assert_array_equal(np.stack([np.asarray(k) for k in kept]),
                                  np.repeat([[2.0], [4.0], [6.0]], 4, axis=1))


def test_debug_effects():
    assert str(jax.debug.DebugEffect()) == "Debug"
    assert str(jax.debug.OrderedDebugEffect()) == "OrderedDebug"
    jaxpr = jax.make_jaxpr(lambda x: jax.debug.print("{}", x, ordered=True))(1.0)
    eqn, = jaxpr.eqns
    assert eqn.primitive.name == "debug_callback"
    assert isinstance(eqn.params["effect"], jax.debug.OrderedDebugEffect)


# -------------------------------------------------------------------------- breakpoint

def _breakpoint_session(monkeypatch, capsys, commands, fun, *args):
    monkeypatch.setattr(sys, "stdin", io.StringIO(commands))
    result = fun(*args)
    return result, capsys.readouterr().out


def _stops(x):
    y = x * 2
    jax.debug.breakpoint()
    return y + 1


@pytest.mark.parametrize("wrap", [lambda f: f, jax.jit], ids=["eager", "jit"])
def test_breakpoint_shows_the_traced_values(monkeypatch, capsys, wrap):
    result, out = _breakpoint_session(monkeypatch, capsys, "p y\ny + x\nq2\nc\n", wrap(_stops),
                                      jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(result), [1.0, 3.0, 5.0])
    assert out == ("Entering jdb:\n(jdb) Array([0., 2., 4.], dtype=float32)\n"
                   "(jdb) Array([0., 3., 6.], dtype=float32)\n"
                   "(jdb) *** NameError: name 'q2' is not defined\n(jdb) ")


def test_breakpoint_under_vmap_stops_per_element(monkeypatch, capsys):
    _, out = _breakpoint_session(monkeypatch, capsys, "p y\nc\np y\nc\n", jax.vmap(_stops),
                                 jnp.arange(2.0))
    assert out == ("Entering jdb:\n(jdb) Array(0., dtype=float32)\n(jdb) "
                   "Entering jdb:\n(jdb) Array(2., dtype=float32)\n(jdb) ")


def test_breakpoint_lists_source_and_walks_frames(monkeypatch, capsys):
    _, out = _breakpoint_session(monkeypatch, capsys, "l\nd\nw\nc\n", _stops, 1.0)
    lines = out.splitlines()
    assert lines[1] == f"(jdb) > {__file__}({_stops.__code__.co_firstlineno + 2})"
    assert "->      jax.debug.breakpoint()" in lines
    assert "(jdb) At bottommost frame." in lines
    assert "(jdb) Traceback:" in lines and lines[-1] == "(jdb) "


def test_breakpoint_token_form_and_quit(monkeypatch, capsys):
    def f(x):
        return jax.debug.breakpoint(token=x) * 2
    result, out = _breakpoint_session(monkeypatch, capsys, "p x\nc\n", jax.jit(f), 1.5)
    assert float(result) == 3.0 and "Array(1.5, dtype=float32" in out
    with pytest.raises(ValueError, match="`ordered` and `token` are mutually exclusive"):
        jax.debug.breakpoint(token=1.0, ordered=True)
    with pytest.raises(SystemExit):
        _breakpoint_session(monkeypatch, capsys, "q\n", _stops, 1.0)


# --------------------------------------------------------------------- sharding views

def test_inspect_array_sharding_under_jit_sees_one_device():
    seen = []
    jax.jit(lambda x: jax.debug.inspect_array_sharding(x, callback=seen.append))(jnp.ones(3))
    sharding, = seen
    assert sharding.device_set == {jax.devices()[0]} and sharding.is_fully_replicated
    assert repr(sharding) == f"SingleDeviceSharding(device={jax.devices()[0]!r}, " \
                             "memory_kind=device)"
