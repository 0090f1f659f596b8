"""Tests of the trace machinery: the current trace, parent links, the life of a trace, and
how tracers answer Python's conversions."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax
from jaxlite.core.avals import ShapedArray
from jaxlite.core.trace import (EvalTrace, Trace, check_ancestor, current_trace,
                                new_transformation, set_current_trace)
from jaxlite.errors import (ConcretizationTypeError, TracerArrayConversionError,
                            TracerBoolConversionError, TracerIntegerConversionError,
                            UnexpectedTracerError)
from jaxlite.interpreters.ad import JVPTrace
from jaxlite.interpreters.batching import BatchTrace
from jaxlite.interpreters.staging import StagingTrace

f32 = np.float32
AVAL = ShapedArray((), np.dtype(f32))


def test_idle_trace_is_the_eval_root():
    root = current_trace()
    assert isinstance(root, EvalTrace) and root.parent is None and root.depth == 0


def test_transformations_chain_their_traces():
    seen = []

    def f(x):
        seen.append(current_trace())
        return jax.vmap(lambda y: seen.append(current_trace()) or lax.mul(x, y))(
            np.ones(2, f32))
    jax.jit(f)(1.0)
    staging, batching = seen
    assert isinstance(staging, StagingTrace) and isinstance(batching, BatchTrace)
    assert batching.parent is staging and staging.parent is current_trace()
    assert (staging.depth, batching.depth) == (1, 2)
    assert not staging.alive and not batching.alive


def test_set_current_trace_restores_on_exit():
    root = current_trace()
    trace = StagingTrace(root)
    with set_current_trace(trace):
        assert current_trace() is trace
    assert current_trace() is root


def test_new_transformation_ends_the_trace_even_on_error():
    trace = StagingTrace(current_trace())
    with pytest.raises(RuntimeError):
        with new_transformation(trace):
            assert trace.alive
            raise RuntimeError("boom")
    assert not trace.alive
    assert isinstance(current_trace(), EvalTrace)


def test_check_ancestor():
    root = current_trace()
    a = StagingTrace(root)
    b = StagingTrace(a)
    sibling = StagingTrace(root)
    check_ancestor(b, a)
    check_ancestor(b, root)
    with pytest.raises(UnexpectedTracerError, match="not nested inside"):
        check_ancestor(b, sibling)  # alive, but not below b
    a.invalidate()
    with pytest.raises(UnexpectedTracerError, match="no longer active"):
        check_ancestor(b, a)


def test_tracer_of_a_live_sibling_trace_is_rejected():
    root = current_trace()
    with new_transformation(StagingTrace(root)) as first:
        x = first.new_arg(AVAL)
        with new_transformation(StagingTrace(root)) as second:
            second.new_arg(AVAL)
            assert first.alive
            with pytest.raises(UnexpectedTracerError, match="does not run within it"):
                lax.neg(x)


def test_eval_trace_rejects_tracers():
    with new_transformation(StagingTrace(current_trace())) as trace:
        x = trace.new_arg(AVAL)
    with pytest.raises(UnexpectedTracerError, match="StagingTrace"):
        lax.neg(x)


def test_base_trace_is_abstract():
    with pytest.raises(NotImplementedError):
        Trace(None).process_primitive(lax.neg_p, [1.0], {})


def test_tracer_attributes_and_repr():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size,
                    weak=x.weak_type, repr=repr(x), len=len(x))
        return x
    jax.jit(f)(np.ones((2, 3), f32))
    assert seen == dict(shape=(2, 3), dtype=np.dtype(f32), ndim=2, size=6, weak=False,
                        repr="Traced<f32[2,3]>with<StagingTrace>", len=2)


# The classes JAX 0.10.2 raises for each conversion under jit.
@pytest.mark.parametrize("convert, error", [
    (bool, TracerBoolConversionError), (int, ConcretizationTypeError),
    (float, ConcretizationTypeError), (complex, ConcretizationTypeError),
    (lambda x: x.item(), ConcretizationTypeError), (lambda x: x.tolist(),
                                                   ConcretizationTypeError),
    (lambda x: [0, 1][x], TracerIntegerConversionError),
    (np.asarray, TracerArrayConversionError),
])
def test_conversions_of_abstract_tracers_raise(convert, error):
    with pytest.raises(error):
        jax.jit(lambda x: convert(x))(np.int32(1))
    with pytest.raises(error):
        jax.vmap(lambda x: convert(x))(np.ones(2, np.int32))


def test_conversions_under_grad_and_jvp_see_the_concrete_primal():
    def f(x):
        assert float(x) == 2.0 and bool(lax.gt(x, 1.0)) and int(x) == 2
        np.testing.assert_array_equal(np.asarray(x), 2.0)
        return lax.mul(x, x)
    assert float(jax.grad(f)(2.0)) == 4.0
    assert float(jax.jvp(f, (2.0,), (1.0,))[1]) == 4.0


def test_jvp_trace_uses_its_parent_for_tangents():
    root = current_trace()
    trace = JVPTrace(root)
    assert trace.tangent_trace is root and trace.parent is root
