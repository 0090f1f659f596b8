"""The long-compile report of `jax_log_compiles` (jaxlite/xla/compile_progress.py): past
`THRESHOLD_SECONDS`, each phase of a compilation is logged on JAX's "jax._src.dispatch"
logger, and a phase still running at the mark says so while it runs. The threshold is set
low here and the functions sleep while they are traced, so that the tests do not depend
on how fast the machine compiles."""
from __future__ import annotations

import logging
import re
import time

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.config import config
from jaxlite.xla import compile_progress

LOGGER = "jax._src.dispatch"
CPU_PHASES = ["tracing", "lowering", "HLO passes", "LLVM IR emission", "LLVM compilation",
              "linking"]
_TOOK = re.compile(r"Compiling (.+): (.+) took (\d+\.\d+) s \((\d+\.\d+) s into compiling\)$")
_RUNNING = re.compile(r"Compiling (.+): (.+) running for (\d+\.\d+) s")


@pytest.fixture
def report(caplog, monkeypatch):
    """Log compiles, the mark at 0.2 s, no persistent cache (its hits skip the passes);
    returns a function giving the (program, phase, seconds, total) of each 'took' line and
    the (program, phase) of each 'running' line so far."""
    monkeypatch.setattr(compile_progress, "THRESHOLD_SECONDS", 0.2)
    caplog.set_level(logging.WARNING, logger=LOGGER)

    def lines():
        messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
        took = [(m.group(1), m.group(2), float(m.group(3)), float(m.group(4)))
                for m in map(_TOOK.match, messages) if m]
        running = [(m.group(1), m.group(2)) for m in map(_RUNNING.match, messages) if m]
        return took, running
    with config.override("jax_log_compiles", True), \
            config.override("jax_enable_compilation_cache", False):
        yield lines


def slow_to_trace(x):
    time.sleep(0.5)  # runs once, while jit traces
    return jnp.tanh(x * 1.61803) + 0.57721


def test_a_long_compile_reports_each_phase_in_order(report):
    x = jnp.ones(16)
    np.testing.assert_allclose(jax.jit(slow_to_trace)(x), np.tanh(1.61803) + 0.57721,
                               rtol=1e-6)
    took, running = report()
    assert [phase for _, phase, _, _ in took] == CPU_PHASES
    assert {program for program, _, _, _ in took} == {"jit(slow_to_trace)"}
    assert took[0][2] >= 0.5  # the sleep was part of tracing
    totals = [total for _, _, _, total in took]
    assert totals == sorted(totals)
    np.testing.assert_allclose(totals[-1], sum(s for _, _, s, _ in took), atol=5e-3)
    # Tracing was still running when the chain passed 0.2 s: said while it ran.
    assert ("jit(slow_to_trace)", "tracing") in running


def test_a_short_compile_says_nothing(report, monkeypatch):
    monkeypatch.setattr(compile_progress, "THRESHOLD_SECONDS", 60.0)
    jax.jit(lambda x: jnp.cos(x) * 2.71828)(jnp.ones(3))
    assert report() == ([], [])


def test_nothing_is_reported_without_jax_log_compiles(report):
    with config.override("jax_log_compiles", False):
        jax.jit(slow_to_trace)(jnp.ones(17))
    assert report() == ([], [])


def test_the_phases_of_a_nested_jit_belong_to_its_caller(report):
    inner = jax.jit(lambda x: jnp.sin(x) * 1.41421)

    def outer_slow(x):
        time.sleep(0.3)
        return inner(x) + 1.73205
    jax.jit(outer_slow)(jnp.ones(5))
    took, _ = report()
    assert [phase for _, phase, _, _ in took] == CPU_PHASES
    assert {program for program, _, _, _ in took} == {"jit(outer_slow)"}


def test_jit_of_grad_and_of_vmap(report):
    def loss_slow(w):
        time.sleep(0.3)
        return jnp.sum(jnp.tanh(w * 0.8660254))
    grads = jax.jit(jax.grad(loss_slow))(jnp.ones(4))
    np.testing.assert_allclose(grads, 0.8660254 / np.cosh(0.8660254) ** 2, rtol=1e-5)
    batched = jax.jit(jax.vmap(loss_slow))(jnp.ones((3, 4)))
    np.testing.assert_allclose(batched, 4 * np.tanh(0.8660254), rtol=1e-6)
    took, _ = report()
    # Both are named after the function, as jit names them (JAX says jit(loss_slow) too).
    assert [(program, p) for program, p, _, _ in took] == [
        ("jit(loss_slow)", p) for p in CPU_PHASES * 2]


def test_grad_of_jit_reports_the_trace_with_the_compile_that_follows_it(report):
    def inside_slow(w):
        time.sleep(0.3)
        return jnp.sum(jnp.sin(w * 0.31831))
    grads = jax.grad(jax.jit(inside_slow))(jnp.ones(6))
    np.testing.assert_allclose(grads, 0.31831 * np.cos(0.31831), rtol=1e-5)
    took, _ = report()
    phases = [phase for program, phase, _, _ in took if program == "jit(inside_slow)"]
    assert phases[:2] == ["tracing", "lowering"] and "LLVM compilation" in phases


def test_a_lowering_continues_only_the_trace_of_its_own_program(report):
    def phases(*steps):
        for name, program, seconds in steps:
            with compile_progress.phase(name, program):
                time.sleep(seconds)
        compile_progress.finish()
    # jit(f) traced and never compiled (`jit(f).trace`), then another program compiled
    # from its jaxpr: the second chain starts at its lowering, and stays under the mark.
    phases(("tracing", "jit(f)", 0.3))
    phases(("lowering", "jit(g)", 0.0), ("HLO passes", "jit_g", 0.0))
    took, _ = report()
    assert [(program, phase) for program, phase, _, _ in took] == [("jit(f)", "tracing")]
    # A lowering of what was just traced carries on its chain, past the mark.
    phases(("tracing", "jit(h)", 0.3), ("lowering", "jit(h)", 0.0),
           ("HLO passes", "jit_h", 0.0))
    took, _ = report()
    assert [(program, phase) for program, phase, _, _ in took[1:]] == [
        ("jit(h)", "tracing"), ("jit(h)", "lowering"), ("jit(h)", "HLO passes")]


def test_a_phase_inside_a_phase_is_part_of_it(report):
    with compile_progress.phase("tracing", "jit(outer)"):
        time.sleep(0.3)
        with compile_progress.phase("lowering", "jit(inner)"):
            pass
        compile_progress.finish()  # the inner compile's end: not the outer chain's
    with compile_progress.phase("lowering", "jit(outer)"):
        pass
    compile_progress.finish()
    took, _ = report()
    assert [(program, phase) for program, phase, _, _ in took] == [
        ("jit(outer)", "tracing"), ("jit(outer)", "lowering")]
