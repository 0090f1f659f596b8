"""Small reproductions of how equinox, lineax, optimistix, diffrax, flax and numpyro use
JAX's extension API, written here from reading those libraries (no code of theirs).

Each test builds what a library builds (a primitive whose parameters carry pytree
definitions and stateful objects, rules that inspect `ad.Zero` and `UndefinedPrimal`,
batching rules in each of JAX's three conventions, partial evaluation with
`PartialVal`s, ...) and checks values and errors.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import api_util, lax
from jaxlite.core.avals import ShapedArray
from jaxlite.extend import core as jex_core
from jaxlite.extend import linear_util as lu
from jaxlite.extend.core import primitives
from jaxlite.interpreters import ad, batching, mlir
from jaxlite.interpreters import partial_eval as pe
from jaxlite.tree_util import tree_flatten, tree_unflatten


# ------------------------------------------- pytree-carrying primitive (equinox's filter_*)

class OutputRecorder:
    """Called by the rules to flatten outputs; remembers their structure (as equinox's)."""

    def __call__(self, out):
        leaves, self.treedef = tree_flatten(out)
        return leaves


def _rebuild(dynamic, treedef, static):
    it = iter(dynamic)
    return tree_unflatten(treedef, [next(it) if s is None else s for s in static])


def _scaled_pair(args):
    (x, y), factor = args
    return {"sum": (x + y) * factor, "prod": x * y * factor}


filter_p = jex_core.Primitive("filter_pair")
filter_p.multiple_results = True


@filter_p.def_impl
def _filter_impl(*dynamic, treedef, static, record):
    return record(_scaled_pair(_rebuild(dynamic, treedef, static)))


@filter_p.def_abstract_eval
def _filter_abstract_eval(*dynamic, treedef, static, record):
    x = dynamic[0]
    return record({"sum": ShapedArray(x.shape, x.dtype), "prod": ShapedArray(x.shape, x.dtype)})


def _filter_jvp(primals, tangents, *, treedef, static, record):
    (x, y), factor = _rebuild(primals, treedef, static)
    tx, ty = [ad.instantiate_zeros(t) for t in tangents]
    outs = filter_p.bind(*primals, treedef=treedef, static=static, record=record)
    out_tangents = record({"sum": (tx + ty) * factor, "prod": (tx * y + x * ty) * factor})
    return outs, out_tangents


def _filter_transpose(cts, *dynamic, treedef, static, record):
    (x, y), factor = _rebuild(dynamic, treedef, static)
    ct = dict(zip(["prod", "sum"], cts))  # dict leaves flatten in key order
    ct = {k: None if type(v) is ad.Zero else v for k, v in ct.items()}
    assert ad.is_undefined_primal(x) and not ad.is_undefined_primal(y)
    ct_x = 0.
    if ct["sum"] is not None:
        ct_x = ct_x + ct["sum"] * factor
    if ct["prod"] is not None:
        ct_x = ct_x + ct["prod"] * y * factor
    return [ct_x, None]


def _filter_batch(dynamic, dims, *, treedef, static, record):
    size = next(d.shape[b] for d, b in zip(dynamic, dims) if b is not None)
    moved = [batching.bdim_at_front(d, b, size) for d, b in zip(dynamic, dims)]
    return filter_p.bind(*moved, treedef=treedef, static=static, record=record), [0, 0]


ad.primitive_jvps[filter_p] = _filter_jvp
ad.primitive_transposes[filter_p] = _filter_transpose
batching.primitive_batchers[filter_p] = _filter_batch
mlir.register_lowering(filter_p, mlir.lower_fun(_filter_impl, multiple_results=True))


def filter_bind(x, y, factor):
    leaves, treedef = tree_flatten(((x, y), factor))
    static = tuple(None if isinstance(leaf, (np.ndarray, jax.Array)) or hasattr(leaf, "aval")
                   else leaf for leaf in leaves)
    dynamic = [leaf for leaf, s in zip(leaves, static) if s is None]
    record = OutputRecorder()
    outs = filter_p.bind(*dynamic, treedef=treedef, static=static, record=record)
    return tree_unflatten(record.treedef, outs)


def test_pytree_carrying_primitive():
    x, y = np.float32([1., 2.]), np.float32([3., -1.])
    for fn in (filter_bind, jax.jit(filter_bind, static_argnums=2)):
        out = fn(x, y, 2.0)
        np.testing.assert_allclose(out["sum"], (x + y) * 2)
        np.testing.assert_allclose(out["prod"], x * y * 2)
    loss = lambda x: jnp.sum(filter_bind(x, y, 2.0)["prod"] + filter_bind(x, y, 2.0)["sum"])
    np.testing.assert_allclose(jax.grad(loss)(x), 2 * y + 2)
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(x), 2 * y + 2)
    xs = np.stack([x, 2 * x])
    out = jax.vmap(lambda x: filter_bind(x, y, 3.0)["sum"])(xs)
    np.testing.assert_allclose(out, (xs + y) * 3)
    per_example = jax.vmap(jax.grad(loss))(xs)
    np.testing.assert_allclose(per_example, np.stack([2 * y + 2] * 2))


# ------------------------------------------- nontraceable / nondifferentiable (equinox)

def _refuse(what):
    def rule(*args, **params):
        raise RuntimeError(f"Detected {what} of {params['name']}")
    return rule


nontraceable_p = jex_core.Primitive("nontraceable")
nontraceable_p.def_impl(lambda x, *, name: x)
nontraceable_p.def_abstract_eval(lambda x, *, name: x)
ad.primitive_jvps[nontraceable_p] = _refuse("differentiation")
ad.primitive_transposes[nontraceable_p] = _refuse("transposition")
batching.primitive_batchers[nontraceable_p] = _refuse("batching")
mlir.register_lowering(nontraceable_p,
                       mlir.lower_fun(lambda x, *, name: x, multiple_results=False))

backward_only_p = jex_core.Primitive("nondifferentiable_backward")
backward_only_p.def_impl(lambda x, *, msg: x)
backward_only_p.def_abstract_eval(lambda x, *, msg: x)
ad.primitive_jvps[backward_only_p] = lambda p, t, *, msg: (
    backward_only_p.bind(p[0], msg=msg), backward_only_p.bind(t[0], msg=msg))


def _backward_only_transpose(ct, x, *, msg):
    if isinstance(ct, ad.Zero):
        return [None]
    raise RuntimeError(msg)


ad.primitive_transposes[backward_only_p] = _backward_only_transpose
batching.primitive_batchers[backward_only_p] = lambda a, d, *, msg: (
    backward_only_p.bind(a[0], msg=msg), d[0])
mlir.register_lowering(backward_only_p, mlir.lower_fun(lambda x, *, msg: x,
                                                       multiple_results=False))


def test_nontraceable_rules_raise_their_errors():
    f = lambda x: nontraceable_p.bind(x, name="the check") * 2  # noqa: E731
    assert float(f(3.)) == 6.0
    assert float(jax.jit(f)(3.)) == 6.0
    with pytest.raises(RuntimeError, match="Detected differentiation of the check"):
        jax.grad(f)(3.)
    with pytest.raises(RuntimeError, match="Detected batching of the check"):
        jax.vmap(f)(np.ones(2, np.float32))


def test_forward_mode_only_primitive():
    f = lambda x: jnp.sin(backward_only_p.bind(x, msg="no reverse mode"))  # noqa: E731
    out, t = jax.jvp(f, (1.,), (2.,))
    np.testing.assert_allclose(t, 2 * np.cos(1.), rtol=1e-6)
    with pytest.raises(RuntimeError, match="no reverse mode"):
        jax.grad(f)(1.)
    # A value whose cotangent is zero never reaches the transpose.
    np.testing.assert_allclose(jax.grad(lambda x: x + 0. * jnp.sum(
        jax.lax.stop_gradient(f(x))))(1.), 1.)


# --------------------------------------------------- batching in JAX's other conventions

def test_axis_primitive_batchers_and_mapped_avals():
    """equinox's vprim: a rule in the (axis_size, axis_name, trace_type, ...) convention and
    abstract evaluation through mapped_aval / unmapped_aval."""
    seen = []
    p = jex_core.Primitive("vprim_like")
    p.multiple_results = True
    p.def_impl(lambda x, y: [x * y])
    p.def_abstract_eval(lambda x, y: [x])

    def rule(axis_size, axis_name, trace_type, inputs, batch_axes):
        seen.append((axis_size, axis_name, tuple(batch_axes)))
        x, y = [jnp.moveaxis(v, b, 0) if b is not None else v for v, b in zip(inputs, batch_axes)]
        avals = [jex_core.mapped_aval(axis_size, 0, ShapedArray(x.shape, x.dtype))]
        assert avals[0].shape == x.shape[1:]
        assert jex_core.unmapped_aval(axis_size, 0, avals[0]).shape == x.shape
        return p.bind(x, y), [0]
    batching.axis_primitive_batchers[p] = rule
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    out = jax.vmap(lambda x: p.bind(x, np.float32(2.))[0], in_axes=1)(xs)
    np.testing.assert_allclose(out, xs.T * 2)
    assert seen == [(2, None, (1, None))]


def test_unbatching_rule_returns_unmapped_output():
    """equinox's unvmap_any: the batching rule reduces the batch away (out dim None)."""
    any_p = jex_core.Primitive("unvmap_any")
    any_p.def_impl(lambda x: jnp.any(x))
    any_p.def_abstract_eval(lambda x: ShapedArray((), np.dtype(bool)))
    batching.primitive_batchers[any_p] = lambda a, d: (jnp.any(a[0]), None)
    mlir.register_lowering(any_p, mlir.lower_fun(lambda x: jnp.any(x), multiple_results=False))
    flags = np.array([False, True, False])
    out = jax.vmap(lambda b: any_p.bind(b), out_axes=None)(flags)
    assert bool(out) is True
    assert bool(jax.jit(jax.vmap(lambda b: any_p.bind(b), out_axes=None))(flags[[0, 2]])) \
        is False


def test_fancy_batcher_sees_axis_data():
    p = jex_core.Primitive("fancy")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda x: x)
    sizes = []

    def rule(axis_data, vals, dims):
        sizes.append(axis_data.size)
        return p.bind(vals[0]), dims[0]
    batching.fancy_primitive_batchers[p] = rule
    out = jax.vmap(p.bind, in_axes=1)(np.zeros((2, 5), np.float32))
    assert out.shape == (5, 2) and sizes == [5]
    assert batching.fancy_primitive_batchers[p] is rule


# ------------------------------------------------------------------ trace-state queries

def test_find_top_trace_identifies_the_jvp():
    """equinox's filter_jvp marks outputs by comparing `_trace.main` with the top trace."""
    mains = []

    def f(x):
        main = jex_core.find_top_trace([x]).main
        mains.append(main)
        y = x * 2
        assert isinstance(y, ad.JVPTracer) and y._trace.main is main
        return y
    _, t = jax.jvp(f, (1.,), (1.,))
    assert float(t) == 2.0
    jax.jvp(f, (1.,), (1.,))
    assert mains[0] is not mains[1]


def test_opaque_trace_state_and_under_flags():
    states = []

    def f(x):
        states.append(jex_core.get_opaque_trace_state(convention="flax"))
        states.append(jex_core.get_opaque_trace_state())
        assert jex_core.unsafe_am_i_under_a_jit_DO_NOT_USE()
        assert not jex_core.unsafe_am_i_under_a_vmap_DO_NOT_USE()
        return x
    jax.jit(f)(1.)
    assert states[0] == states[1]
    outer = jex_core.get_opaque_trace_state()
    assert outer != states[0]
    assert not jex_core.unsafe_am_i_under_a_jit_DO_NOT_USE()
    jax.vmap(lambda x: jex_core.unsafe_am_i_under_a_vmap_DO_NOT_USE() or x)(np.ones(2))


def test_ensure_compile_time_eval_gives_concrete_values_under_jit():
    """diffrax and lineax branch in Python on values computed under this context."""
    def f(x):
        with jax.ensure_compile_time_eval():
            c = jnp.sin(np.float32(0.5)) > 0
            assert bool(c)  # concrete: a Python bool is allowed
            y = c + x  # the traced value still traces
        assert isinstance(y, jax.core.Tracer)
        return y
    assert float(jax.jit(f)(1.)) == 2.0
    with jax.core.eval_context():
        assert not isinstance(jnp.ones(2) + 1, jax.core.Tracer)


# ------------------------------------------------------------ jaxprs (equinox, optimistix)

def test_jaxpr_classes_and_eval():
    closed = jax.make_jaxpr(lambda x, y: jnp.sin(x) * 2.0 + y)(1., 2.)
    assert isinstance(closed, jex_core.ClosedJaxpr) and isinstance(closed.jaxpr, jex_core.Jaxpr)
    literals = [v for e in closed.jaxpr.eqns for v in e.invars
                if isinstance(v, jex_core.Literal)]
    assert [float(lit.val) for lit in literals] == [2.0]
    out = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, 1., 2.)
    np.testing.assert_allclose(out, [np.sin(1.) * 2 + 2], rtol=1e-6)
    np.testing.assert_allclose(jex_core.jaxpr_as_fun(closed)(1., 2.), out)
    jex_core.check_jaxpr(closed.jaxpr)
    outer = jax.make_jaxpr(lambda x: jax.jit(jnp.sin)(x))(1.)
    (inner,) = jex_core.jaxprs_in_params(outer.eqns[0].params)
    assert list(jex_core.subjaxprs(outer.jaxpr)) == [inner]
    assert outer.eqns[0].primitive is primitives.jit_p
    eqn = jex_core.new_jaxpr_eqn(closed.eqns[0].invars, closed.eqns[0].outvars,
                                 closed.eqns[0].primitive, {}, jex_core.no_effects)
    assert eqn.primitive is lax.sin_p and eqn.effects == frozenset()


def test_check_jaxpr_rejects_unbound_variables():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x))(1.)
    broken = closed.jaxpr.replace(invars=[])
    with pytest.raises(jax.errors.JaxprTypeError, match="not defined"):
        jex_core.check_jaxpr(broken)


def test_primitives_namespace():
    assert primitives.add_p is lax.add_p and primitives.scan_p.name == "scan"
    assert primitives.add_jaxvals_p is ad.add_jaxvals_p
    assert primitives.linear_solve_p.name == "custom_linear_solve"
    for name in primitives.NOT_PROVIDED:  # JAX's primitives jaxlite has none of: why
        with pytest.raises(AttributeError, match=name):
            getattr(primitives, name)
    from jaxlite.core.primitive import registry
    from jaxlite.extend.core import _composed_primitives  # bind composes, never in jaxprs
    assert all(getattr(primitives, n) is registry[getattr(primitives, n).name]
               for n in dir(primitives) if n.endswith("_p")
               and n not in ("call_p", "closed_call_p", *_composed_primitives.__all__))
    out = primitives.call_p.bind(lu.wrap_init(lambda x: [x * 2]), 3.)
    assert float(out[0]) == 6.0


# ------------------------------------------------------- partial evaluation (flax, numpyro)

def test_partial_evaluation_runs_known_work():
    """flax's lazy_init: known inputs are computed now, unknown ones only typed."""
    calls = []

    def init(seed_like, data):
        calls.append(1)
        params = {"w": seed_like * 2.0}
        return params, jnp.sum(data)

    args = (np.float32(3.), jax.ShapeDtypeStruct((4,), np.float32))
    leaves, in_tree = tree_flatten((args, {}))
    dbg = api_util.debug_info("lazy_init", init, (in_tree,), {})
    flat, out_tree = api_util.flatten_fun(lu.wrap_init(init, debug_info=dbg), in_tree)
    pvals = [pe.PartialVal.unknown(ShapedArray(x.shape, x.dtype))
             if isinstance(x, jax.ShapeDtypeStruct) else pe.PartialVal.known(x) for x in leaves]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(flat, pvals)
    (w_pv, w_const), (s_pv, s_const) = out_pvals
    assert w_pv is None and float(w_const) == 6.0
    assert s_pv == ShapedArray((), np.dtype(np.float32)) and s_const is None
    params, total = tree_unflatten(out_tree(), [w_const, s_pv])
    assert float(params["w"]) == 6.0
    assert [e.primitive.name for e in jaxpr.eqns] == ["reduce_sum"]
    assert calls == [1]


def test_provenance_through_make_jaxpr_of_a_wrapped_function():
    """numpyro's eval_provenance: flatten_fun over keyword arguments, then make_jaxpr."""
    def fn(x, y, z):
        return x + jax.jit(lambda a: a * 2)(y)
    kwargs = {"x": 1., "y": 2., "z": 3.}
    args, in_tree = tree_flatten(((), kwargs))
    wrapped, out_tree = api_util.flatten_fun(lu.wrap_init(fn), in_tree)
    closed = jax.make_jaxpr(wrapped.call_wrapped)(*args)
    env = dict(zip(closed.jaxpr.invars, [{"x"}, {"y"}, {"z"}]))
    read = lambda v: set() if isinstance(v, jex_core.Literal) else env.get(v, set())  # noqa
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive is primitives.jit_p:
            assert isinstance(eqn.params["jaxpr"].jaxpr, jex_core.Jaxpr)
        deps = set().union(*[read(v) for v in eqn.invars])
        env.update({v: deps for v in eqn.outvars})
    assert [read(v) for v in closed.jaxpr.outvars] == [{"x", "y"}]
    assert out_tree().num_leaves == 1


def test_dce_jaxpr_drops_unused_work():
    closed = jax.make_jaxpr(lambda x: (jnp.sin(x), jnp.cos(x) * 2))(1.)
    pruned, used_inputs = pe.dce_jaxpr(closed.jaxpr, [True, False])
    assert [e.primitive.name for e in pruned.eqns] == ["sin"] and used_inputs == [True]
    pruned, used_inputs = pe.dce_jaxpr(closed.jaxpr, [False, False])
    assert pruned.eqns == [] and used_inputs == [False]
    assert pe.dce_jaxpr(closed.jaxpr, [False, False], instantiate=True)[1] == [True]


def test_tracer_classes_for_isinstance():
    seen = []
    jax.jit(lambda x: seen.append(isinstance(x, pe.DynamicJaxprTracer)) or x)(1.)
    seen.append(isinstance(jnp.ones(2), pe.DynamicJaxprTracer))
    assert seen == [True, False]


# --------------------------------------------------------------- rules over lax's primitives

def test_overriding_a_lax_transpose_and_restoring_it():
    """lineax installs a transpose rule for stop_gradient; the table takes it, and the
    rule can be removed again."""
    from jaxlite.lax.ad_util import stop_gradient_p
    had_rule = stop_gradient_p in ad.primitive_transposes
    ad.primitive_transposes[stop_gradient_p] = lambda ct, x: (ct,)
    try:
        assert stop_gradient_p in ad.primitive_transposes
        np.testing.assert_allclose(jax.grad(lambda x: x * lax.stop_gradient(x))(3.), 3.)
    finally:
        del ad.primitive_transposes[stop_gradient_p]
    assert (stop_gradient_p in ad.primitive_transposes) == had_rule


def test_impl_gets_arrays_inside_eager_loops():
    """equinox's maybe_set primitive uses `xs.at[i].set(...)` in its impl; jaxlite's eager
    scan evaluates its body on numpy arrays, so the impl must still get jax Arrays."""
    set_first_p = jex_core.Primitive("set_first")
    set_first_p.def_impl(lambda xs, v: xs.at[0].set(v))
    set_first_p.def_abstract_eval(lambda xs, v: xs)
    mlir.register_lowering(set_first_p, mlir.lower_fun(lambda xs, v: xs.at[0].set(v),
                                                       multiple_results=False))

    def run(xs):
        def body(carry, v):
            return set_first_p.bind(carry, v), carry[0]
        return lax.scan(body, xs, np.float32([5., 6., 7.]))
    for fn in (run, jax.jit(run)):
        final, firsts = fn(np.zeros(3, np.float32))
        np.testing.assert_allclose(final, [7., 0., 0.])
        np.testing.assert_allclose(firsts, [0., 5., 6.])
