"""Each staged equation records the user's line it came from (JaxprEqn.source_info, as JAX's
jaxprs do), and jax_debug_nans names that line when it traces a NaN to its operation."""
from __future__ import annotations

import sys

import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def _line() -> int:
    return sys._getframe(1).f_lineno


def test_equations_carry_the_users_line_and_name_stack():
    lines = {}

    def f(x):
        lines["sin"] = _line() + 1
        y = jnp.sin(x)
        with jax.named_scope("scaled"):
            lines["mul"] = _line() + 1
            return y * 2.0
    eqns = jax.make_jaxpr(f)(1.0).jaxpr.eqns
    by_name = {e.primitive.name: e for e in eqns}
    for name in ("sin", "mul"):
        (where,) = by_name[name].source_info.traceback
        assert (where.file, where.line, where.function) == (__file__, lines[name], "f")
    assert str(by_name["mul"].source_info.name_stack) == "scaled"
    assert str(by_name["sin"].source_info.name_stack) == ""


def test_pretty_print_annotates_equations_with_lines_and_name_stacks():
    lines = {}

    def f(x):
        with jax.named_scope("layer"):
            lines["sin"] = _line() + 1
            y = jnp.sin(x)
        lines["exp"] = _line() + 1
        return jnp.exp(y)
    closed = jax.make_jaxpr(f)(1.0)
    text = closed.pretty_print(source_info=True, name_stack=True)
    assert text == closed.jaxpr.pretty_print(source_info=True, name_stack=True)
    assert text.splitlines() == [
        "{ lambda ; a:f32[]. let",
        f"    b:f32[] = sin a    # {__file__}:{lines['sin']} (f)",
        "                       # [layer]",
        f"    c:f32[] = exp b    # {__file__}:{lines['exp']} (f)",
        "                       # []",
        "  in (c,) }"]
    assert closed.pretty_print(name_stack=True).splitlines()[1] == \
        "    b:f32[] = sin a    # [layer]"
    assert closed.pretty_print(print_shapes=False) == (
        "{ lambda ; a. let b = sin a; c = exp b in (c,) }")
    assert closed.pretty_print() == str(closed)


@pytest.mark.parametrize("nested", [False, True])
def test_debug_nans_names_the_line_of_the_operation(nested):
    lines = []

    def g(x):
        lines.append(_line() + 1)
        y = jnp.log(x)
        return y * 2.0
    f = jax.jit(lambda x: jax.jit(g)(x) + 1.0) if nested else jax.jit(g)
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"
                           ) as info:
            f(-1.0)
    notes = [n for n in info.value.__notes__ if "was traced at" in n]
    assert notes == [f"The operation log was traced at {__file__}:{lines[0]} (g)."]
