"""jax.experimental.custom_partitioning on one device, and the Shardy rule parser.

Expected behaviour recorded from JAX 0.10.2 (/tmp/jaxvenv/bin/python, one CPU device): the
rule strings' parses (printed SdyShardingRule), every error message below, the function
running as written eagerly and under jit, and grad/vmap/jvp raising NotImplementedError
(JAX's primitive has no such rules).
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.errors import UnexpectedTracerError
from jaxlite.experimental import custom_partitioning as cpm
from jaxlite.experimental._sharding_rule import str_to_sdy_sharding_rule
from jaxlite.experimental.custom_partitioning import (BATCHING, ArrayMapping, CompoundFactor,
                                                      SdyShardingRule, custom_partitioning)

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)
Y = np.ones((3, 2), np.float32)


def _matmul_with_rule():
    calls = []

    @custom_partitioning
    def f(x, y):
        return jnp.sin(x) @ y

    f.def_partition(partition=lambda *a: calls.append(a),
                    infer_sharding_from_operands=lambda *a: calls.append(a),
                    sharding_rule="i j, j k -> i k")
    return f, calls


def test_runs_as_written_eagerly_and_under_jit():
    f, calls = _matmul_with_rule()
    expected = np.sin(X) @ Y
    np.testing.assert_allclose(np.asarray(f(X, Y)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(X, Y)), expected, rtol=1e-6)
    assert calls == []  # one device: the callbacks are recorded, never called (as JAX)


def test_jaxpr_holds_one_custom_partitioning_equation():
    f, _ = _matmul_with_rule()
    (eqn,) = jax.make_jaxpr(f)(X, Y).jaxpr.eqns
    assert eqn.primitive is cpm.custom_partitioning_p and cpm.custom_partitioning_p.multiple_results
    assert str(eqn.params["sharding_rule"]) == "SdyShardingRule((('i', 'j'), ('j', 'k')), (('i', 'k'),), {})"
    assert eqn.params["infer_sharding_from_operands"] is None  # Shardy reads the rule only
    assert eqn.params["static_args"] == () and eqn.params["decode_shardings"] is True


@pytest.mark.parametrize("transform,message", [
    (lambda f: jax.grad(lambda a: f(a, Y).sum())(X), "Differentiation rule"),
    (lambda f: jax.vmap(f, (0, None))(np.ones((4, 2, 3), np.float32), Y), "Batching rule"),
    (lambda f: jax.jvp(f, (X, Y), (X, Y)), "Differentiation rule"),
])
def test_no_derivative_or_batching_rule_as_jax(transform, message):
    f, _ = _matmul_with_rule()
    with pytest.raises(NotImplementedError, match=message + " for 'custom_partitioning' not "
                                                            "implemented"):
        transform(f)


def test_static_arguments_pytrees_and_constants():
    g = custom_partitioning(lambda x, n: x * n, static_argnums=(1,))
    g.def_partition(lambda *a: None, sharding_rule="i -> i")
    np.testing.assert_array_equal(np.asarray(g(jnp.ones(3), 2.0)), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(g(jnp.ones(3), n=2.0)), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(
        np.asarray(jax.jit(g, static_argnums=1)(jnp.ones(3), 2.0)), [2.0, 2.0, 2.0])
    with pytest.raises(UnexpectedTracerError, match="position indicated as static"):
        jax.jit(lambda a, n: g(a, n))(jnp.ones(3), 2.0)
    h = custom_partitioning(lambda x: {"a": x, "b": (x * 2, x + 1)})
    h.def_partition(lambda *a: None)
    out = jax.jit(h)(jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(out["b"][1]), [2.0, 2.0])
    k = custom_partitioning(lambda x: x * jnp.arange(2.0))
    k.def_partition(lambda *a: None, sharding_rule="i -> i")
    np.testing.assert_array_equal(np.asarray(jax.jit(k)(jnp.ones(2))), [0.0, 1.0])


def test_call_before_def_partition_and_attribute_forwarding():
    def doubled(x):
        return 2 * x
    h = custom_partitioning(doubled)
    assert h.__name__ == "doubled"
    with pytest.raises(AttributeError):
        h(jnp.ones(2))


def test_callbacks_without_rule_under_shardy():
    f = custom_partitioning(lambda x: x)
    f.def_partition(lambda *a: None, infer_sharding_from_operands=lambda *a: None)
    with pytest.raises(NotImplementedError, match="Shardy is used, but sharding propagation "
                                                  "callbacks"):
        f(jnp.ones(2))


def test_def_partition_keywords_as_jax():
    f = custom_partitioning(lambda x: x)
    with pytest.raises(ValueError, match="Unknown keyword arguments: {'j': 3}"):
        f.def_partition(lambda: None, sharding_rule=None, j=3)
    with pytest.raises(ValueError, match="Unknown keyword arguments: {'reduction_factors': "):
        f.def_partition(lambda: None, sharding_rule=lambda *a: None, reduction_factors=("j",))
    part = lambda: None
    assert f.def_partition(part, sharding_rule="i j -> i", reduction_factors=("j",)) is part
    assert f.sharding_rule.reduction_factors == ("j",)


@pytest.mark.parametrize("rule,sizes,printed", [
    ("i j, j k -> i k", {}, "SdyShardingRule((('i', 'j'), ('j', 'k')), (('i', 'k'),), {})"),
    ("... i, ...1 j -> ... (i j)", {},
     "SdyShardingRule((('\u20260', 'i'), ('\u20261', 'j')), (('\u20260', ('i', 'j')),), {})"),
    ("i (j k) -> i", {"j": 2, "k": 3},
     "SdyShardingRule((('i', ('j', 'k')),), (('i',),), {'j': 2, 'k': 3})"),
    (" -> ", {}, "SdyShardingRule(((),), ((),), {})"),
    ("i j -> i k", {}, "SdyShardingRule((('i', 'j'),), (('i', 'k'),), {})"),
])
def test_rule_strings_parse_as_jax(rule, sizes, printed):
    assert str(str_to_sdy_sharding_rule(rule, **sizes)) == printed


@pytest.mark.parametrize("rule,message", [
    ("i.j -> i", "Character '.' must be used inside ellipsis '...'"),
    ("(i) -> i", "Brackets should contain at least two factors"),
    ("((i j)) -> i", "Compound factors should be one level, nested brackets are not allowed"),
    ("(i j -> i", "Brackets are not balanced in rule: '(i j'"),
    ("1i -> i", "Factor names have to start with a letter, but got '1'"),
    ("i$ -> i", "Unknown character '$'"),
    ("i j", "There is no -> in rule: 'i j'"),
    ("\u2026 i -> i", "Unknown character '\u2026'"),
    ("i ... -> i", "Ellipsis can only be used at the beginning of a dimension"),
])
def test_rule_string_errors_as_jax(rule, message):
    with pytest.raises(ValueError) as info:
        str_to_sdy_sharding_rule(rule)
    assert str(info.value) == message


def test_rule_objects_as_jax():
    rule = SdyShardingRule((ArrayMapping("i", "j"),), (ArrayMapping("i"),),
                           reduction_factors=("j",))
    assert str(rule) == "SdyShardingRule((('i', 'j'),), (('i',),), {} reduction_factors=('j',))"
    assert BATCHING == "\u2026" and ArrayMapping(BATCHING, "i") == ("\u2026", "i")
    assert type(ArrayMapping("a", "b")) is ArrayMapping
    assert repr(CompoundFactor("a", "b")) == "('a', 'b')"


@pytest.mark.parametrize("make,message", [
    (lambda: SdyShardingRule((ArrayMapping("i", "j"),), (ArrayMapping("i"),), j=3),
     "Factor j represents a whole dimension; do not specify its size"),
    (lambda: SdyShardingRule((ArrayMapping("i", CompoundFactor("j", "k")),),
                             (ArrayMapping("i"),), j=3),
     "Factor k is only used in compound factors; must specify its size"),
    (lambda: SdyShardingRule((ArrayMapping("i", "j"),), (ArrayMapping("i"),),
                             reduction_factors=["j"]),
     "reduction_factors must be a tuple of factors"),
    (lambda: SdyShardingRule((ArrayMapping("i", "j"),), (ArrayMapping("i"),),
                             reduction_factors=("j", "j")),
     "reduction_factors contains duplicated factors"),
    (lambda: SdyShardingRule((ArrayMapping("i", "j"),), (ArrayMapping("i"),),
                             reduction_factors=("z",)),
     "Factor z in reduction_factors is not used in the rule"),
    (lambda: SdyShardingRule((ArrayMapping("i", "j"),), (ArrayMapping("i"),),
                             reduction_factors=("j",), permutation_factors=("j",)),
     "Factor j can only be in one of the reduction, need replication, or permutation "
     "factor sets."),
    (lambda: ArrayMapping("i", 3),
     "Each element of ArrayMapping must be a str or CompoundFactor, but got <class 'int'>"),
    (lambda: ArrayMapping("i", BATCHING),
     "Ellipsis can only be used at the beginning of a dimension"),
    (lambda: CompoundFactor("i"), "A compound factor should contain at least two factors"),
    (lambda: CompoundFactor("i", BATCHING), "Ellipsis can't be used in a compound factor"),
    (lambda: CompoundFactor("i", 3),
     "Each element of CompoundFactor must be a str, but got <class 'int'>"),
    (lambda: CompoundFactor("i", "3a"), "Factor names have to start with a letter, but got '3'"),
])
def test_rule_object_errors_as_jax(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message
