"""Tests of jaxprs as users see them: `make_jaxpr` printing, `eval_shape`, and the
equations that `jit`, `checkpoint` and `grad` leave in a jaxpr.

The expected strings were printed by jax 0.10.2 for the same functions (written with
`jax.lax`), except where a comment says what jaxlite does differently and why.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.core.avals import ShapedArray
from jaxlite.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr

f32 = np.float32


def nest_sin(x, depth):
    for _ in range(depth):
        x = lax.sin(x)
    return x


@pytest.mark.parametrize("fun, args, expected", [
    (lambda x: lax.mul(lax.sin(x), 2.0), (1.0,),
     "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }"),
    (lambda x, y: lax.add(lax.mul(x, y), x), (1.0, 2.0),
     "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b; d:f32[] = add c a in (d,) }"),
    (lambda x: x, (1.0,), "{ lambda ; a:f32[]. let  in (a,) }"),
    (lambda x: (x, 3.0), (1.0,), "{ lambda ; a:f32[]. let  in (a, 3.0:f32[]) }"),
    (lambda x: lax.convert_element_type(x, np.int32), (1.0,),
     "{ lambda ; a:f32[]. let\n"
     "    b:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
     "  in (b,) }"),
    (lambda x: lax.mul(x, np.arange(3, dtype=f32)), (np.ones(3, f32),),
     "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }"),
    (lambda x: lax.stop_gradient(x), (1.0,),
     "{ lambda ; a:f32[]. let b:f32[] = stop_gradient a in (b,) }"),
    (lambda x: lax.sin(x), (f32(1.0),), "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }"),
    (lambda x: x, (jax.ShapeDtypeStruct((2, 3), f32),),
     "{ lambda ; a:f32[2,3]. let  in (a,) }"),
])
def test_make_jaxpr_prints_like_jax(fun, args, expected):
    assert str(jax.make_jaxpr(fun)(*args)) == expected


def test_long_jaxprs_break_lines_and_names_go_past_z():
    text = str(jax.make_jaxpr(lambda x: nest_sin(x, 27))(1.0))
    lines = text.split("\n")
    assert lines[0] == "{ lambda ; a:f32[]. let"
    assert lines[1] == "    b:f32[] = sin a"
    assert lines[-3:] == ["    ba:f32[] = sin z", "    bb:f32[] = sin ba", "  in (bb,) }"]


def test_grad_jaxpr_marks_unused_values():
    assert str(jax.make_jaxpr(jax.grad(lax.sin))(1.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    _:f32[] = sin a\n"
        "    b:f32[] = cos a\n"
        "    c:f32[] = mul 1.0:f32[] b\n"
        "  in (c,) }")


def test_nested_jit_is_one_equation_with_its_own_names():
    text = str(jax.make_jaxpr(lambda x: lax.add(jax.jit(lambda y: lax.mul(y, 2.0))(x), 1.0))(
        1.0))
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }\n"
        "    ] a\n"
        "    c:f32[] = add b 1.0:f32[]\n"
        "  in (c,) }")


def test_jit_stays_a_call_under_grad_and_vmap():
    f = jax.jit(lambda x: lax.mul(lax.sin(x), x))
    grad_text = str(jax.make_jaxpr(jax.grad(f))(1.0))
    # One call computes the value and the residuals, one call the transposed derivative.
    assert grad_text.count("jit[") == 2
    vmap_text = str(jax.make_jaxpr(jax.vmap(f))(np.ones(3, f32)))
    assert vmap_text.count("jit[") == 1 and "sin a" in vmap_text
    jvp_text = str(jax.make_jaxpr(lambda x: jax.jvp(f, (x,), (x,)))(1.0))
    assert jvp_text.count("jit[") == 1 and "cos" in jvp_text


def test_checkpoint_is_visible_in_the_function_and_its_grad():
    g = jax.checkpoint(lambda x: lax.sin(lax.sin(x)))
    text = str(jax.make_jaxpr(g)(1.0))
    assert text == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = checkpoint[\n"
        "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) }\n"
        "      policy=None\n"
        "      prevent_cse=True\n"
        "    ] a\n"
        "  in (b,) }")
    grad_text = str(jax.make_jaxpr(jax.grad(g))(1.0))
    # The backward pass is a checkpoint equation of its own that recomputes sin(x) from x.
    assert grad_text.count("checkpoint[") == 2
    backward = grad_text[grad_text.rindex("checkpoint["):]
    assert "sin" in backward and "cos" in backward and "] a 1.0:f32[]" in backward


def test_make_jaxpr_options():
    closed, shapes = jax.make_jaxpr(lambda x: (lax.sin(x), x), return_shape=True)(1.0)
    assert isinstance(closed, ClosedJaxpr)
    assert shapes == (jax.ShapeDtypeStruct((), f32, weak_type=True),) * 2
    text = str(jax.make_jaxpr(lambda x, n: lax.mul(x, float(n)), static_argnums=1)(1.0, 3))
    assert text == "{ lambda ; a:f32[]. let b:f32[] = mul a 3.0:f32[] in (b,) }"
    text = str(jax.make_jaxpr(lambda d: lax.neg(d["a"]))({"a": np.ones(2, f32)}))
    assert text == "{ lambda ; a:f32[2]. let b:f32[2] = neg a in (b,) }"


def test_make_jaxpr_names_the_argument_in_concretization_errors():
    def f(x):
        return x if lax.gt(x, 0.0) else lax.neg(x)
    with pytest.raises(jax.ConcretizationTypeError, match="argument\\(s\\) x of the function 'f'"):
        jax.make_jaxpr(f)(1.0)


def test_eval_shape():
    out = jax.eval_shape(lambda x: lax.mul(x, 2.0), jax.ShapeDtypeStruct((2, 3), f32))
    assert out == jax.ShapeDtypeStruct((2, 3), f32)
    assert repr(out) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    out = jax.eval_shape(lambda d: {"o": lax.convert_element_type(d["a"], f32), "c": 1.0},
                         {"a": jax.ShapeDtypeStruct((3,), np.int32)})
    assert out["o"] == jax.ShapeDtypeStruct((3,), f32)
    assert out["c"].weak_type and out["c"].shape == ()
    calls = []
    jax.eval_shape(lambda x: calls.append(x) or x, np.ones(2, f32))
    assert len(calls) == 1 and not isinstance(calls[0], np.ndarray)


def test_a_hand_built_jaxpr_prints_and_evaluates():
    a, b = Var(ShapedArray((2,), np.dtype(f32))), Var(ShapedArray((2,), np.dtype(f32)))
    eqn = JaxprEqn([a, a], [b], lax.mul_p, {})
    jaxpr = Jaxpr([], [a], [b, Literal(1.0, ShapedArray((), np.dtype(f32), True))], [eqn])
    assert str(jaxpr) == "{ lambda ; a:f32[2]. let b:f32[2] = mul a a in (b, 1.0:f32[]) }"
    out, one = eval_jaxpr(jaxpr, [], np.array([2.0, 3.0], f32))
    np.testing.assert_array_equal(np.asarray(out), [4.0, 9.0])
    assert one == 1.0
    with pytest.raises(TypeError, match="takes 1 arguments, got 2"):
        eval_jaxpr(jaxpr, [], 1.0, 2.0)


def test_cond_branches_print_one_jaxpr_per_line_as_jax_does():
    text = str(jax.make_jaxpr(
        lambda p, x: lax.cond(p, lambda v: lax.add(v, 1.0), lambda v: lax.mul(v, 2.0), x))(
            True, 1.0))
    assert text == """{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = mul e 2.0:f32[] in (f,) }
        { lambda ; g:f32[]. let h:f32[] = add g 1.0:f32[] in (h,) }
      )
    ] c b
  in (d,) }"""


def test_converted_python_scalars_are_arrays_to_user_code_and_literals_in_jaxprs():
    # Regression: the folded literal used to reach user code as an internal object without
    # ndim/astype, so jnp.asarray(3) failed under jit.
    assert int(jax.jit(lambda x: jnp.asarray(3) + x)(1)) == 4
    assert str(jax.make_jaxpr(lambda x: jnp.asarray(3) + x)(1)) == \
        "{ lambda ; a:i32[]. let b:i32[] = add 3:i32[] a in (b,) }"
    doubled = jax.jit(lambda x: jnp.broadcast_to(2.0, (3,)) * x)(2.0)
    np.testing.assert_array_equal(doubled, [4.0, 4.0, 4.0])
