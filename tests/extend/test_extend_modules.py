"""jax.extend's modules and jax.api_util: linear_util, source_info_util, backend, the
hand-written-lowering path of mlir, xla.apply_primitive; api_util results recorded from
JAX 0.10.2 (tests/extend/record_jax_extend.py)."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import api_util, lax
from jaxlite.extend import backend, linear_util as lu, source_info_util as siu
from jaxlite.extend.core import Primitive
from jaxlite.interpreters import mlir, xla
from jaxlite.tree_util import tree_flatten, tree_structure

import recorded


# ------------------------------------------------------------------------------ linear_util

def test_wrap_init_binds_params_and_transformations_stack():
    fun = lu.wrap_init(lambda x, *, k: x * k, {"k": 3})
    assert fun.call_wrapped(2) == 6 and fun.params == (("k", 3),)

    @lu.transformation2
    def add_one(f, x):
        return f(x) + 1

    def scale_then(x, factor):
        out = yield (x * factor,), {}
        yield out - 100

    twice = add_one(fun)
    assert twice.call_wrapped(2) == 7
    gen = lu.transformation(scale_then, twice, 10)
    assert gen.call_wrapped(2) == (2 * 10) * 3 + 1 - 100
    assert "add_one" in repr(twice)


def test_auxiliary_outputs_and_merge():
    @lu.transformation_with_aux2
    def with_len(f, store, *xs):
        store.store(len(xs))
        return f(*xs)

    fun, aux = with_len(lu.wrap_init(lambda *xs: sum(xs)))
    assert fun.call_wrapped(1, 2, 3) == 6 and aux() == 3

    def counted(*xs):
        out = yield xs, {}
        yield out, len(xs)
    fun2, aux2 = lu.transformation_with_aux(counted, lu.wrap_init(lambda *xs: max(xs)))
    assert fun2.call_wrapped(4, 9) == 9 and aux2() == 2
    _, empty = with_len(lu.wrap_init(lambda: 0))
    assert lu.merge_linear_aux(aux, empty) == (True, 3)
    assert lu.merge_linear_aux(empty, aux2) == (False, 2)
    with pytest.raises(lu.StoreException):
        empty()
    with pytest.raises(lu.StoreException, match="both"):
        lu.merge_linear_aux(aux, aux2)


def test_cache_memoizes_and_refills_stores():
    calls = []

    @lu.cache
    def trace(fun, n):
        calls.append(n)
        return fun.call_wrapped(n)

    def make():
        flat, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(_pair),
                                                       tree_structure((0,)))
        return flat, out_tree
    flat1, tree1 = make()
    flat2, tree2 = make()
    assert trace(flat1, 5) == trace(flat2, 5) == [5, 10]
    assert calls == [5] and tree2() == tree1() == tree_structure((0, 0))


def _pair(n):
    return n, 2 * n


# -------------------------------------------------------------------------------- api_util

def test_flatten_fun_with_kwargs():
    args, in_tree = tree_flatten(((1., {"a": 2.}), {"scale": 3.}))
    flat, out_tree = api_util.flatten_fun(
        lu.wrap_init(lambda x, d, scale: {"out": (x + d["a"]) * scale}), in_tree)
    assert flat.call_wrapped(*args) == [9.0]
    assert out_tree() == tree_structure({"out": 0})


def test_argnums_partial():
    f, dyn = api_util.argnums_partial(lu.wrap_init(lambda a, b, c: a * 100 + b * 10 + c),
                                      (0, 2), (1, 2, 3))
    assert dyn == (1, 3) and f.call_wrapped(4, 5) == 425
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        api_util.argnums_partial(lu.wrap_init(lambda a, b: a), 0, (1, [2]))


def test_api_util_results_as_in_jax():
    recorded.check("api_util")
    with pytest.raises(ValueError, match="tree prefix"):
        api_util.flatten_axes("in_axes", tree_structure((1, 2)), (0, 1, 2))
    assert api_util.safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    with pytest.raises(ValueError, match="length mismatch"):
        api_util.safe_map(lambda a, b: a, [1], [1, 2])
    aval = api_util.shaped_abstractify(1.)
    assert aval.weak_type and aval.shape == ()


def test_debug_info_names_the_arguments():
    def loss(params, batch, *, reg):
        return params
    dbg = api_util.debug_info("jit", loss, ({"w": 1, "b": 2}, 3), {"reg": 4},
                              static_argnames=("reg",))
    assert dbg.traced_for == "jit" and dbg.func_name == "loss"
    assert dbg.arg_names == ("params['b']", "params['w']", "batch")
    assert "test_extend_modules.py" in dbg.func_src_info


# ------------------------------------------------------------------------ source_info_util

def test_name_stacks():
    assert str(siu.current_name_stack()) == ""
    with siu.extend_name_stack("outer"):
        with siu.transform_name_stack("jvp"):
            with siu.extend_name_stack("inner"):
                assert str(siu.current_name_stack()) == "jvp(outer)/inner"
        with siu.reset_name_stack():
            assert str(siu.current_name_stack()) == ""
    with siu.set_name_stack(siu.new_name_stack("a").extend("b")):
        assert str(siu.current_name_stack()) == "a/b"
    with jax.named_scope("layer"):
        assert str(siu.current_name_stack()) == "layer"
    with pytest.raises(TypeError, match="must be a string"):
        jax.named_scope(3)
    assert str(siu.current_name_stack()) == ""
    siu.register_exclusion("/nonexistent/library/")
    assert "test_extend_modules.py" in siu.summarize(siu.current())


# ----------------------------------------------------------------------------------- backend

def test_backend_functions():
    platforms = set(backend.backends())
    assert {"cpu", "interpreter"} <= platforms
    assert backend.get_backend("cpu").platform == "cpu"
    client = backend.get_backend("interpreter")
    assert backend.get_backend(client) is client
    assert backend.get_default_device() == jax.devices()[0]
    assert backend.backend_xla_version() is None
    with pytest.raises(NotImplementedError, match="one device"):
        backend.get_compile_options(2, 1)
    before = jnp.arange(3.) * 2
    cleared = []

    class Cache:
        def cache_clear(self):
            cleared.append(True)
    backend.register_backend_cache(Cache(), "a test")
    backend.clear_backends()
    assert cleared == [True]
    np.testing.assert_allclose(jax.jit(lambda x: x + 1)(before), [1., 3., 5.])


# ------------------------------------------------------------------------- mlir and xla

def test_hand_written_lowering_rules_that_pass_operands():
    ident_p = Primitive("identity_lowered_by_hand")
    ident_p.def_impl(lambda x: x)
    ident_p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(ident_p, lambda ctx, x: [x])
    double_p = Primitive("double_lowered_through_lower_fun")
    double_p.def_impl(lambda x: x * 2)
    double_p.def_abstract_eval(lambda x: x)

    def rule(ctx, x):
        assert ctx.avals_in[0].shape == (3,) and ctx.primitive is double_p
        return mlir.lower_fun(lambda y: y * 2, multiple_results=False)(ctx, x)
    mlir.register_lowering(double_p, rule)
    x = np.float32([1., 2., 3.])
    np.testing.assert_allclose(jax.jit(lambda x: double_p.bind(ident_p.bind(x)))(x), 2 * x)


def test_rules_for_other_platforms_are_kept_aside():
    p = Primitive("gpu_only")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, lambda ctx, x: [x], platform="cuda")
    with pytest.raises(NotImplementedError, match="gpu_only"):
        jax.jit(p.bind)(1.)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x + 1, multiple_results=False),
                           platform="cpu")
    assert float(jax.jit(p.bind)(1.)) == 2.0


def test_stablehlo_rules_fail_naming_the_primitive():
    p = Primitive("stablehlo_rule")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, lambda ctx, x: [mlir.ir_constant(1.0)])
    with pytest.raises(NotImplementedError) as info:
        jax.jit(p.bind)(1.)
    assert "stablehlo_rule" in "".join(getattr(info.value, "__notes__", []))


def test_apply_primitive():
    assert float(xla.apply_primitive(lax.sin_p, 0.5)) == pytest.approx(np.sin(0.5), rel=1e-6)
    jax.jit(lambda x: np.testing.assert_allclose(
        xla.apply_primitive(lax.cos_p, np.float32(0.)), 1.0) or x)(1.)
