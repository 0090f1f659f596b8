"""HLO instructions carry the user's operation: its name stack and source line (XLA's
OpMetadata), through lowering, the passes, the text format and the profiler."""
from __future__ import annotations

import inspect
import re
import tempfile

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import profiler
from jaxlite.xla.ir import OpMetadata
from jaxlite.xla.text import parse_module, print_module

HERE = __file__


def _line_of(fun, text: str) -> int:
    """The line of `fun`'s source holding `text`."""
    lines, first = inspect.getsourcelines(fun)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _metadata(text: str) -> list[tuple[str, str, int]]:
    """(op_name, source_file, source_line) of every instruction printed with metadata."""
    found = re.findall(r'metadata=\{op_name="([^"]*)"(?: source_file="([^"]*)")?'
                       r'(?: source_line=(\d+))?\}', text)
    return [(name, file, int(line or 0)) for name, file, line in found]


def inner(x):
    with jax.named_scope("inner"):
        y = jnp.sin(x) * 2.0
    return jnp.sum(y @ x.T)


def outer(x):
    with jax.named_scope("outer"):
        r = jax.jit(inner)(x) + 1.0
    return r


def test_lowered_text_names_scopes_nested_jit_and_lines():
    text = jax.jit(outer).lower(jnp.ones((4, 4))).as_text()
    found = {name: (file, line) for name, file, line in _metadata(text)}
    sin_line = _line_of(inner, "jnp.sin(x)")
    assert found["jit(outer)/outer/jit(inner)/inner/sin"] == (HERE, sin_line)
    assert found["jit(outer)/outer/jit(inner)/inner/mul"] == (HERE, sin_line)
    assert found["jit(outer)/outer/jit(inner)/dot_general"] == (
        HERE, _line_of(inner, "y @ x.T"))
    assert found["jit(outer)/outer/add"] == (HERE, _line_of(outer, "+ 1.0"))
    # The call of the nested jit is named after its function, as JAX names it.
    assert found["jit(outer)/outer/jit(inner)"] == (HERE, _line_of(outer, "+ 1.0"))


def test_compiled_text_keeps_metadata_on_fusions_and_their_bodies():
    compiled = jax.jit(outer).lower(jnp.ones((4, 4))).compile()
    text = compiled.as_text()
    fusions = re.findall(r"= \S+ fusion\(.*", text)
    assert fusions
    # A fusion is named after its root's operation; the fused computation keeps every
    # member's own metadata.
    assert all('metadata={op_name="jit(outer)/' in line for line in fusions)
    names = {name for name, _, _ in _metadata(text)}
    assert "jit(outer)/outer/jit(inner)/inner/sin" in names
    np.testing.assert_allclose(compiled(jnp.ones((4, 4))), outer(np.ones((4, 4))),
                               rtol=1e-6)


def test_scan_bodies_are_named_under_the_loop():
    def f(x):
        return jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)
    text = jax.jit(f).lower(jnp.ones(3)).as_text()
    names = {name for name, _, _ in _metadata(text)}
    assert "jit(f)/scan/mul" in names and "jit(f)/scan" in names


def test_metadata_round_trips_through_the_text():
    text = jax.jit(outer).lower(jnp.ones((4, 4))).as_text()
    module = parse_module(text)
    assert print_module(module) == text
    sines = [i for c in module.computations for i in c.instructions
             if i.opcode.text == "sine"]
    assert sines[0].metadata == OpMetadata("jit(outer)/outer/jit(inner)/inner/sin", HERE,
                                           _line_of(inner, "jnp.sin(x)"))
    assert "metadata" not in print_module(module, metadata=False)


def test_xla_metadata_with_other_fields_is_read():
    text = """HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

ENTRY %main (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0), metadata={op_name="x"}
  ROOT %n = f32[2]{0} negate(%p), metadata={op_type="neg" op_name="jit(f)/a b/neg" source_file="/w/f.py" source_line=7 stack_frame_id=3}
}
"""
    module = parse_module(text)
    assert module.entry.root.metadata == OpMetadata("jit(f)/a b/neg", "/w/f.py", 7)
    assert module.entry.parameters[0].metadata == OpMetadata("x")


def test_programs_from_other_lines_share_compiled_code_but_keep_their_own_text():
    def first(x):
        return jnp.tanh(x) * 3.0 + 0.25

    def second(x):
        return jnp.tanh(x) * 3.0 + 0.25
    x = jnp.linspace(-1.0, 1.0, 37)
    client = jax.devices()[0].client
    a = jax.jit(first).lower(x).compile()
    compiles = client.stats["llvm_compiles"]
    b = jax.jit(second).lower(x).compile()
    # The optimized modules differ only in metadata: the object code is found again.
    assert client.stats["llvm_compiles"] == compiles
    assert {line for _, _, line in _metadata(a.as_text())} == {
        _line_of(first, "jnp.tanh")}
    assert {line for _, _, line in _metadata(b.as_text())} == {
        _line_of(second, "jnp.tanh")}
    np.testing.assert_array_equal(np.asarray(a(x)), np.asarray(b(x)))


def test_profiler_summary_names_the_users_operation():
    @jax.jit
    def step(w, x):
        with jax.named_scope("layer1"):
            h = jnp.tanh(x @ w)
        return jnp.mean(h ** 2)
    w, x = jnp.ones((64, 64)), jnp.ones((32, 64))
    step(w, x)
    folder = tempfile.mkdtemp()
    with profiler.trace(folder):
        step(w, x).block_until_ready()
    text = profiler.summary(folder)
    dot_row = next(line for line in text.splitlines() if " dot" in line)
    assert dot_row.endswith(f"jit(step)/layer1/dot_general (test_op_metadata.py:"
                            f"{_line_of(step, 'x @ w')})")


def loss(w, x):
    with jax.named_scope("layer"):
        h = jnp.tanh(x @ w)
    return jnp.mean(h ** 2)


def test_backward_pass_is_attributed_to_the_forward_operations():
    # Transposition runs after `loss` returned; its operations still name loss's lines and
    # scopes, as JAX's do.
    text = jax.jit(jax.grad(loss)).lower(jnp.ones((4, 4)), jnp.ones((2, 4))).as_text()
    found = _metadata(text)
    dots = [(name, line) for name, file, line in found if name.endswith("dot_general")]
    assert len(dots) == 2  # forward x @ w, and the transposed product for w's gradient
    assert set(dots) == {("jit(loss)/layer/dot_general", _line_of(loss, "x @ w"))}
    tanh_line = _line_of(loss, "jnp.tanh")
    assert all(line == tanh_line for name, _, line in found if name.startswith("jit(loss)/layer"))


def test_restaged_equations_keep_their_source():
    closed = jax.make_jaxpr(loss)(jnp.ones((4, 4)), jnp.ones((2, 4)))
    again = jax.make_jaxpr(lambda w, x: jax.core.eval_jaxpr(closed.jaxpr, closed.consts, w, x))(
        jnp.ones((4, 4)), jnp.ones((2, 4)))
    before = [(str(e.source_info.name_stack), e.source_info.traceback[-1].line)
              for e in closed.jaxpr.eqns]
    after = [(str(e.source_info.name_stack), e.source_info.traceback[-1].line)
             for e in again.jaxpr.eqns]
    assert after == before
