"""The garbage collector paused while jaxlite lowers and compiles (runtime/collector.py)."""
from __future__ import annotations

import gc
import threading

import numpy as np

import jaxlite
from jaxlite.runtime import compiler
from jaxlite.runtime.collector import collection_paused


def test_pause_nests_across_threads_and_restores_the_collector():
    assert gc.isenabled()
    inside, leave = threading.Event(), threading.Event()
    seen = []

    def other():
        with collection_paused():
            inside.set()
            leave.wait(10)
            seen.append(gc.isenabled())

    worker = threading.Thread(target=other)
    worker.start()
    inside.wait(10)
    with collection_paused():
        assert not gc.isenabled()
    # the other thread still compiles: the collector stays off until it leaves
    assert not gc.isenabled()
    leave.set()
    worker.join(10)
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off():
    gc.disable()
    try:
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_inside_the_pause_turns_the_collector_back_on():
    try:
        with collection_paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()


def test_jit_compiles_with_the_collector_off_and_turns_it_back_on(monkeypatch):
    states = []
    original = compiler.backend_compile_and_load

    def spy(backend, module, options):
        states.append(gc.isenabled())
        return original(backend, module, options)

    monkeypatch.setattr(compiler, "backend_compile_and_load", spy)
    out = jaxlite.jit(lambda x: x * 3.0 + 1.0)(np.arange(4.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.arange(4.0, dtype=np.float32) * 3 + 1)
    assert states == [False]
    assert gc.isenabled()
