"""Shape polymorphism in `jaxlite.export`: symbolic dimensions (`symbolic_shape`), programs
exported once for a batch dimension `b` and called at several sizes, their serialized form,
gradients through `call`, and JAX's errors. Expected strings and errors were recorded with
JAX 0.10.2."""
import json
import operator
import struct

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import export, lax
from jaxlite.errors import InconclusiveDimensionOperation

F32 = np.float32
S = jax.ShapeDtypeStruct


# ------------------------------------------------------------------ symbolic dimensions

A, B = export.symbolic_shape("a, b")

# (expression, str as JAX 0.10.2 prints it, or an int when it simplifies to one)
ARITHMETIC = [
    (lambda: B * 4, "4*b"), (lambda: 4 * B, "4*b"), (lambda: B + 1, "b + 1"),
    (lambda: 1 + B, "b + 1"), (lambda: B - 1, "b - 1"), (lambda: 1 - B, "- b + 1"),
    (lambda: -B, "- b"), (lambda: 2 * A + B, "b + 2*a"), (lambda: A * B, "a*b"),
    (lambda: B * B, "b^2"), (lambda: B * B * A + 3, "a*b^2 + 3"),
    (lambda: -3 * B + A * B - 2, "a*b - 3*b - 2"), (lambda: B // 2, "floordiv(b, 2)"),
    (lambda: (4 * B) // 2, "2*b"), (lambda: B % 2, "mod(b, 2)"), (lambda: (4 * B) % 2, 0),
    (lambda: (4 * B) // B, 4), (lambda: (4 * B + 1) // B, "floordiv(4*b + 1, b)"),
    (lambda: B // A, "floordiv(b, a)"), (lambda: 5 // B, "floordiv(5, b)"),
    (lambda: B - B, 0), (lambda: B * 0, 0), (lambda: B * 1, "b"), (lambda: B - B + 3, 3),
    (lambda: (4 * A * B) // A, "4*b"), (lambda: (4 * A * B) % A, 0),
]


@pytest.mark.parametrize("case", range(len(ARITHMETIC)))
def test_dimension_arithmetic_prints_as_jax(case):
    make, want = ARITHMETIC[case]
    got = make()
    if isinstance(want, int):
        assert type(got) is int and got == want
    else:
        assert export.is_symbolic_dim(got) and str(got) == want


def test_comparisons_decide_what_holds_for_every_size():
    assert (B == B, B == 3, B != 0, A == B) == (True, False, True, False)
    assert (B >= 1, B < 0, B + 1 > B, bool(B)) == (True, False, True, True)
    for compare in (lambda: B > 2, lambda: A > B, lambda: B <= 1):
        with pytest.raises(InconclusiveDimensionOperation) as info:
            compare()
        assert "is inconclusive" in str(info.value)
    with pytest.raises(InconclusiveDimensionOperation) as info:
        int(B)
    assert str(info.value).startswith(
        "Symbolic dimension 'b' used in a context that requires a constant")
    with pytest.raises(TypeError):
        operator.index(B)
    assert max(B, 1) is B and divmod(B, 2) == (B // 2, B % 2)


def test_symbolic_shape_specifications():
    assert [str(d) for d in export.symbolic_shape("b, 4")] == ["b", "4"]
    assert export.symbolic_shape("b, 4")[1] == 4
    assert [str(d) for d in export.symbolic_shape("(2*b, b + 1)")] == ["2*b", "b + 1"]
    batch, *rest = export.symbolic_shape("b, ...", like=(3, 4, 5))
    assert str(batch) == "b" and rest == [4, 5]
    assert export.symbolic_shape("_, n", like=(7, None))[0] == 7
    with pytest.raises(ValueError) as info:
        export.symbolic_shape("b, 3", like=(3, 4))
    assert "different size 3 for known dimension; like=(3, 4)" in str(info.value)
    c, d = export.symbolic_shape("c, d", constraints=("c <= 4", "d == 2*c"))
    assert str(d) == "2*c" and c <= 4 and not c > 4
    with pytest.raises(ValueError, match="Invalid mixing of symbolic scopes"):
        export.symbolic_shape("a")[0] + B
    structs = export.symbolic_args_specs((np.ones((3, 4)), np.ones(5)), "b, ...")
    assert [tuple(str(d) for d in s.shape) for s in structs] == [("b", "4"), ("b",)]


# ------------------------------------------------------------------ programs, several sizes

def _mlp(x, w1, b1, w2):
    h = jnp.tanh(x @ w1 + b1)
    return jax.nn.log_softmax(h @ w2, axis=-1)


def _layernorm_softmax(x, scale):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mu) / jnp.sqrt(var + 1e-5) * scale
    return jax.nn.softmax(y, axis=-1) + jax.nn.logsumexp(y, axis=-1, keepdims=True)


def _reductions(x):
    n = x.shape[0]
    flat = jnp.reshape(x, (n * 4,))
    return (x.sum(axis=0), x.max(axis=1), jnp.argmax(x, axis=1), jnp.argmax(x, axis=0),
            jnp.cumsum(x, axis=1), jnp.cumsum(x, axis=0), flat[: n * 2].sum(),
            jnp.arange(n).astype(F32) @ x,
            x.T @ x, jnp.concatenate([x, x[:, 1:]], axis=1), jnp.concatenate([x, x]),
            jnp.broadcast_to(x[:, :1], (n, 3)), jnp.where(x > 0, x, 0.0), x[1:] - x[:-1],
            jnp.mean(x, axis=0), x / x.shape[0], x[::2], x[-1], jnp.var(x, axis=0),
            jnp.take(x, jnp.array([0, -1]), axis=0), x[jnp.argmax(x[:, 0])])


def _scanned(x, w):
    def step(carry, row):
        c = jnp.tanh(carry @ w + row)
        return c, c.sum()
    final, sums = lax.scan(step, jnp.zeros((x.shape[1],), x.dtype), x)
    total = lax.fori_loop(0, x.shape[0], lambda i, acc: acc + x[i], jnp.zeros(4, x.dtype))
    return final, sums, total


PROGRAMS = {  # name: (function, argument shapes with None for the batch dimension)
    "mlp": (_mlp, [(None, 4), (4, 5), (5,), (5, 3)]),
    "layernorm_softmax": (_layernorm_softmax, [(None, 6), (6,)]),
    "reductions": (_reductions, [(None, 4)]),
    "scan": (_scanned, [(None, 4), (4, 4)]),
}


def _arguments(shapes, batch, seed=0):
    rng = np.random.default_rng(seed + batch)
    return [rng.standard_normal([batch if d is None else d for d in s]).astype(F32)
            for s in shapes]


def _export(name):
    fun, shapes = PROGRAMS[name]
    examples = _arguments(shapes, 2)
    # One scope for all the arguments (None: the example's shape as it is).
    specs = export.symbolic_args_specs(examples, [
        "b, ..." if s[0] is None else None for s in shapes])
    return export.export(jax.jit(fun))(*specs)


def _assert_close(got, want):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_one_export_runs_at_every_batch_size(name):
    exp = _export(name)
    fun, shapes = PROGRAMS[name]
    assert str(exp.in_avals[0].shape[0]) == "b" and exp.uses_shape_polymorphism
    for batch in (1, 3, 8):
        args = _arguments(shapes, batch)
        _assert_close(exp.call(*args), jax.jit(fun)(*args))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_serialized_round_trip_keeps_the_symbolic_shapes(name):
    exp = _export(name)
    back = export.deserialize(exp.serialize())
    assert [str(a) for a in back.in_avals] == [str(a) for a in exp.in_avals]
    assert [str(a) for a in back.out_avals] == [str(a) for a in exp.out_avals]
    fun, shapes = PROGRAMS[name]
    for batch in (2, 5):
        args = _arguments(shapes, batch, seed=7)
        _assert_close(back.call(*args), jax.jit(fun)(*args))


def test_avals_and_module_text():
    exp = _export("mlp")
    assert str(exp.in_avals[0]) == "float32[b,4]" and str(exp.out_avals[0]) == "float32[b,3]"
    text = exp.mlir_module()
    assert "jax.uses_shape_polymorphism = true" in text
    assert "func.func public @main(%arg0: tensor<?x4xf32>, %arg1: tensor<4x5xf32>" in text
    assert "stablehlo.get_dimension_size" in text
    assert "-> (tensor<?x3xf32>)" in text
    reshaped = export.export(jax.jit(lambda x: jnp.reshape(x, (x.shape[0] * 4,))))(
        S(export.symbolic_shape("b, 4"), F32))
    assert str(reshaped.out_avals[0]) == "float32[4*b]"
    assert "stablehlo.dynamic_reshape" in reshaped.mlir_module()
    np.testing.assert_array_equal(
        reshaped.call(np.arange(12, dtype=F32).reshape(3, 4)), np.arange(12, dtype=F32))


def test_sizes_as_values_and_in_shapes():
    b, = export.symbolic_shape("b")

    def f(x):
        n = x.shape[0]
        return (jnp.arange(n) * 2, jnp.broadcast_to(x[:, None], (n, 3)),
                jnp.reshape(x, (n, 1)), x.sum() / n, jnp.ones((n, 2)) * n, x * 2.0 * n)
    exp = export.export(jax.jit(f))(S((b,), F32))
    assert [str(a) for a in exp.out_avals] == [
        "int32[b]", "float32[b,3]", "float32[b,1]", "float32[]", "float32[b,2]",
        "float32[b]"]
    for size in (1, 4):
        x = np.arange(size, dtype=F32) + 1
        _assert_close(exp.call(x), jax.jit(f)(x))


def test_two_dimension_variables():
    b, t = export.symbolic_shape("b, t")

    def attention(x, mask):
        scores = jnp.einsum("btd,bsd->bts", x, x) + mask[:, None, :]
        return jax.nn.softmax(scores, axis=-1) @ x, x.reshape(x.shape[0], -1)
    exp = export.export(jax.jit(attention))(S((b, t, 4), F32), S((b, t), F32))
    assert [str(a) for a in exp.out_avals] == ["float32[b,t,4]", "float32[b,4*t]"]
    assert "tensor<?x?x4xf32>" in exp.mlir_module()
    for batch, length in ((2, 3), (1, 5)):
        rng = np.random.default_rng(batch)
        x = rng.standard_normal((batch, length, 4)).astype(F32)
        mask = rng.standard_normal((batch, length)).astype(F32)
        _assert_close(exp.call(x, mask), jax.jit(attention)(x, mask))


def test_grad_through_call_and_call_inside_jit():
    exp = _export("mlp")
    fun, shapes = PROGRAMS["mlp"]

    def loss(f):
        return lambda *a: jnp.sum(f(*a) ** 2)
    for batch in (2, 6):
        args = _arguments(shapes, batch)
        want = jax.grad(loss(fun), argnums=(0, 1, 2, 3))(*args)
        _assert_close(jax.grad(loss(exp.call), argnums=(0, 1, 2, 3))(*args), want)
        _assert_close(jax.jit(exp.call)(*args), fun(*args))
    vjp = exp.vjp()
    assert [str(a) for a in vjp.in_avals[-1:]] == ["float32[b,3]"]
    back = export.deserialize(exp.serialize(vjp_order=1))
    args = _arguments(shapes, 4)
    _assert_close(jax.grad(loss(back.call))(*args), jax.grad(loss(fun))(*args))


def test_grad_through_call_with_integer_outputs_and_strided_slices():
    exp = _export("reductions")  # argmax outputs (float0 cotangents), x[::2], x[1:] - x[:-1]
    fun, shapes = PROGRAMS["reductions"]

    def loss(f):
        return lambda x: sum(jnp.sum(o) for o in jax.tree_util.tree_leaves(f(x))
                             if o.dtype == F32)
    assert [str(a.shape) for a in exp.vjp().in_avals if a.dtype == jax.dtypes.float0] == [
        "(b,)", "(4,)"]
    back = export.deserialize(exp.serialize(vjp_order=1))
    for batch in (1, 5):
        x, = _arguments(shapes, batch)
        _assert_close(jax.grad(loss(back.call))(x), jax.grad(loss(fun))(x))


def test_format_version_1_is_still_read():
    exp = export.export(jax.jit(jnp.sin))(S((3,), F32))
    blob = bytes(exp.serialize())
    data = json.loads(blob[12:].decode())
    assert struct.unpack("<I", blob[8:12])[0] == 2
    del data["symbolic_constraints"]  # what version 1 wrote
    old = blob[:8] + struct.pack("<I", 1) + json.dumps(data).encode()
    x = np.linspace(0, 1, 3).astype(F32)
    np.testing.assert_allclose(export.deserialize(old).call(x), np.sin(x), rtol=1e-6)


# ------------------------------------------------------------------ JAX's errors

def _exported_with_constraint():
    b, = export.symbolic_shape("b", constraints=("b >= 2",))
    return export.export(jax.jit(lambda x, y: jnp.sin(x) * y[:, :1]))(
        S((b, 4), F32), S((b, 3), F32))


@pytest.mark.parametrize("shapes, dtype, message", [
    ([(3, 5), (3, 3)], F32, "Shape mismatch for args[0].shape[1] (expected same constant): "
                            "expected (b, 4) and called with (3, 5)"),
    ([(3,), (3, 3)], F32, "Rank mismatch for args[0]: expected (b, 4) and called with (3,)"),
    ([(3, 4), (5, 3)], F32, "Input shapes do not match the polymorphic shapes specification. "
                            "Found inconsistency between dimension size args[1].shape[0] "
                            "(= 5) and the specification 'b' (= 3)."),
    ([(1, 4), (1, 3)], F32, "Input shapes do not match the symbolic shape constraint b >= 2. "
                            "Expected 'b - 2' to be greater or equal to 0, but found -1."),
    ([(3, 4), (3, 3)], np.int32, "Dtype mismatch for args[0]: expected float32 and called "
                                 "with int32"),
])
def test_calls_that_do_not_fit_raise_jax_errors(shapes, dtype, message):
    exp = _exported_with_constraint()
    args = [np.ones(shapes[0], dtype), np.ones(shapes[1], F32)]
    with pytest.raises(ValueError) as info:
        exp.call(*args)
    assert str(info.value).startswith(message), str(info.value)


def test_a_size_that_no_variable_value_gives():
    c, = export.symbolic_shape("c")
    exp = export.export(jax.jit(lambda x: x.reshape((2, -1))))(S((2 * c,), F32))
    assert str(exp.out_avals[0]) == "float32[2,c]"
    np.testing.assert_array_equal(exp.call(np.arange(6, dtype=F32)),
                                  np.arange(6, dtype=F32).reshape(2, 3))
    with pytest.raises(ValueError) as info:
        exp.call(np.ones(5, F32))
    assert "Division had remainder 1 when computing the value of 'c'" in str(info.value)


def test_python_control_flow_on_a_symbolic_size_is_inconclusive():
    c, = export.symbolic_shape("c")

    def f(x):
        if x.shape[0] > 2:
            return x
        return x + 1
    with pytest.raises(InconclusiveDimensionOperation) as info:
        export.export(jax.jit(f))(S((c, 4), F32))
    assert "Symbolic dimension comparison 'c' > '2' is inconclusive" in str(info.value)


def test_dimensions_of_two_scopes_cannot_meet():
    c, = export.symbolic_shape("c")
    d, = export.symbolic_shape("d")
    with pytest.raises(ValueError, match="Invalid mixing of symbolic scopes"):
        export.export(jax.jit(lambda x, y: x + y))(S((c,), F32), S((d,), F32))


def test_tracing_and_lowering_with_symbolic_shapes_outside_export():
    b, = export.symbolic_shape("b")
    spec = S((b, 4), F32)
    assert str(jax.eval_shape(lambda x: jnp.concatenate([x, x]), spec).shape[0]) == "2*b"
    assert "a:f32[b,4]" in str(jax.make_jaxpr(lambda x: jnp.tanh(x).sum(0))(spec))
    lowered = jax.jit(lambda x: jnp.tanh(x).sum(0)).lower(spec)
    assert "%arg0: tensor<?x4xf32>" in lowered.as_text(dialect="stablehlo")
    with pytest.raises(ValueError) as info:
        lowered.compile()  # JAX's ValueError: there is no size to compile for
    assert str(info.value).startswith("Error refining shapes")
