"""`Compiled.as_dot` / `as_svg` (jaxlite/xla/dot_graph.py): the optimized module as a
Graphviz graph. The DOT text is parsed back here and compared with the module itself:
every instruction one node, every fusion one cluster, every operand one edge labelled
with its shape."""
from __future__ import annotations

import collections
import re
import shutil
import subprocess

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.xla import dot_graph
from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Opcode

_STRING = r'"((?:[^"\\]|\\.)*)"'
_NODE = re.compile(r"^\s*(n\d+) \[label=" + _STRING + r"(.*)\];$")
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+) \[label=" + _STRING + r"(.*)\];$")
_CLUSTER = re.compile(r'^\s*subgraph "cluster_([^"]+)" \{$')
_TOOLTIP = re.compile(r'tooltip="%([^ ]+) = ')


def _unquote(text: str) -> str:
    return text.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


class Graph:
    """The DOT text parsed: nodes (id -> instruction name, label, attributes), edges
    (source name, target name, label, attributes) and cluster names."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.names: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.attrs: dict[str, str] = {}
        self.clusters: list[str] = []
        raw_edges = []
        for line in text.splitlines():
            if m := _NODE.match(line):
                node, label, rest = m.groups()
                assert node not in self.names, f"node {node} declared twice"
                self.names[node] = _TOOLTIP.search(rest).group(1)
                self.labels[node] = _unquote(label)
                self.attrs[node] = rest
            elif m := _EDGE.match(line):
                raw_edges.append(m.groups())
            elif m := _CLUSTER.match(line):
                self.clusters.append(m.group(1))
        self.edges = [(self.names[a], self.names[b], _unquote(label), rest)
                      for a, b, label, rest in raw_edges]

    def node_of(self, name: str) -> str:
        (node,) = [n for n, v in self.names.items() if v == name]
        return node


def _drawn_computations(module: HloModule) -> list[HloComputation]:
    """The entry and what its while loops, conditionals and calls run, then the fused
    computations inside any of them."""
    order, stack, seen = [], [module.entry], set()
    while stack:
        comp = stack.pop()
        if id(comp) in seen:
            continue
        seen.add(id(comp))
        order.append(comp)
        for inst in comp.instructions:
            if inst.opcode in (Opcode.FUSION, Opcode.WHILE, Opcode.CONDITIONAL, Opcode.CALL):
                stack.extend(inst.called)
    return order


def _value_source(inst: HloInstruction) -> HloInstruction:
    while inst.opcode is Opcode.FUSION:
        inst = inst.called[0].root
    return inst


def _operand_target(inst: HloInstruction, k: int) -> HloInstruction:
    while inst.opcode is Opcode.FUSION:
        inst, k = inst.called[0].parameters[k], 0
    return inst


def check_graph(module: HloModule, text: str) -> Graph:
    """Every non-fusion instruction of the drawn computations is one node; every fusion a
    cluster; every operand an edge with its shape, into the fused parameter it feeds."""
    graph = Graph(text)
    comps = _drawn_computations(module)
    instructions = [i for c in comps for i in c.instructions]
    expected_nodes = collections.Counter(i.name for i in instructions
                                         if i.opcode is not Opcode.FUSION)
    assert collections.Counter(graph.names.values()) == expected_nodes
    assert sorted(graph.clusters) == sorted(
        [i.name for i in instructions if i.opcode is Opcode.FUSION]
        + [c.name for c in comps if c is not module.entry and not _is_fused(module, c)])
    expected_edges = collections.Counter(
        (_value_source(o).name, _operand_target(i, k).name, dot_graph.shape_label(o.shape))
        for i in instructions for k, o in enumerate(i.operands))
    data_edges = collections.Counter((a, b, label) for a, b, label, rest in graph.edges
                                     if "dashed" not in rest)
    assert data_edges == expected_edges
    return graph


def _is_fused(module: HloModule, comp: HloComputation) -> bool:
    return any(i.opcode is Opcode.FUSION and i.called[0] is comp
               for c in _drawn_computations(module) for i in c.instructions)


def _dot_accepts(text: str) -> None:
    """Graphviz's own parser, where it is installed; else the shape of the statements."""
    program = shutil.which("dot")
    if program is not None:
        done = subprocess.run([program, "-Tsvg"], input=text, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "<svg" in done.stdout
        return
    assert text.startswith("digraph ") and text.rstrip().endswith("}")
    assert text.count("{") - text.count("\\{") == text.count("}") - text.count("\\}")


def mlp(w1, b1, w2, x):
    h = jnp.tanh(x @ w1 + b1)
    return jax.nn.softmax(h @ w2)


MLP_ARGS = (jnp.ones((64, 128)), jnp.ones(128), jnp.ones((128, 256)), jnp.ones((8, 64)))


def loop(x):
    return jax.lax.fori_loop(0, 10, lambda i, v: jnp.sin(v) * 2.0 + i, x)


def test_mlp_fusions_are_clusters_and_edges_carry_shapes():
    compiled = jax.jit(mlp).lower(*MLP_ARGS).compile()
    module = compiled.runtime_executable().hlo_module()
    text = compiled.as_dot()
    graph = check_graph(module, text)
    fusions = [i.name for i in module.entry.instructions if i.opcode is Opcode.FUSION]
    assert fusions and all(f'subgraph "cluster_{f}"' in text for f in fusions)
    # The weights and the input flow in with their shapes; x @ w1 is [8,128].
    shapes = {label for _, _, label, _ in graph.edges}
    assert {"f32[64,128]", "f32[128]", "f32[128,256]", "f32[8,64]", "f32[8,128]"} <= shapes
    _dot_accepts(text)


def test_entry_parameters_and_root_are_marked():
    compiled = jax.jit(mlp).lower(*MLP_ARGS).compile()
    module = compiled.runtime_executable().hlo_module()
    graph = Graph(compiled.as_dot())
    for param in module.entry.parameters:
        node = graph.node_of(param.name)
        assert "shape=invhouse" in graph.attrs[node]
        assert graph.labels[node].startswith(f"Parameter {param.attr('number')}\n")
    result = graph.node_of(_value_source(module.entry.root).name)
    assert 'fillcolor="#ffe08a"' in graph.attrs[result]
    assert graph.labels[result].endswith("\nf32[8,256]")
    marked = [n for n, a in graph.attrs.items() if "#ffe08a" in a]
    assert marked == [result]


def test_while_loop_body_and_condition_are_linked_clusters():
    compiled = jax.jit(loop).lower(jnp.ones(5)).compile()
    module = compiled.runtime_executable().hlo_module()
    text = compiled.as_dot()
    graph = check_graph(module, text)
    (while_inst,) = [i for i in module.entry.instructions if i.opcode is Opcode.WHILE]
    condition, body = while_inst.called
    assert f'subgraph "cluster_{condition.name}"' in text
    assert f'subgraph "cluster_{body.name}"' in text
    links = {(a, b, label) for a, b, label, rest in graph.edges if "dashed" in rest}
    assert (while_inst.name, condition.parameters[0].name, "condition") in links
    assert (while_inst.name, body.parameters[0].name, "body") in links
    assert (_value_source(body.root).name, while_inst.name, "body result") in links
    _dot_accepts(text)


def test_conditional_branches_are_drawn_once_each():
    f = jax.jit(lambda i, x: jax.lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x))
    compiled = f.lower(1, jnp.ones(4)).compile()
    module = compiled.runtime_executable().hlo_module()
    graph = check_graph(module, compiled.as_dot())
    labels = {label for _, _, label, rest in graph.edges if "dashed" in rest}
    assert {"branch 0", "branch 1", "branch 2"} <= labels
    _dot_accepts(compiled.as_dot())


@pytest.mark.parametrize("transform", ["grad", "vmap"])
def test_as_dot_of_transformed_functions(transform):
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    w, x = jnp.ones((16, 8)), jnp.ones((4, 16))
    if transform == "grad":
        f, args = jax.jit(jax.grad(loss)), (w, x)
    else:
        f, args = jax.jit(jax.vmap(loss, in_axes=(None, 0))), (w, jnp.ones((3, 4, 16)))
    compiled = f.lower(*args).compile()
    module = compiled.runtime_executable().hlo_module()
    check_graph(module, compiled.as_dot())
    _dot_accepts(compiled.as_dot())
    np.testing.assert_allclose(compiled(*args), f(*args))


def test_lowered_as_dot_shows_the_module_before_fusion():
    lowered = jax.jit(mlp).lower(*MLP_ARGS)
    module = lowered.compiler_ir().as_hlo_module()
    graph = check_graph(module, lowered.as_dot())
    assert graph.clusters == []  # nothing is fused before the passes
    assert "dot" in {label.split("\n")[1].split(" ")[0] for label in graph.labels.values()}


def test_as_svg_draws_with_graphviz_or_says_what_to_install(monkeypatch):
    compiled = jax.jit(loop).lower(jnp.ones(5)).compile()
    if shutil.which("dot") is not None:
        svg = compiled.as_svg()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        assert "while" in svg  # the while node's label
    monkeypatch.setattr(dot_graph.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz.*apt-get install graphviz"):
        compiled.as_svg()


def test_text_is_quoted_for_dot():
    assert dot_graph.quote('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'


def test_shape_labels_drop_only_the_default_layout():
    from jaxlite.xla.shape import Shape
    assert dot_graph.shape_label(Shape(np.float32, (128, 256))) == "f32[128,256]"
    assert dot_graph.shape_label(Shape(np.float32, (128, 256), (0, 1))) == "f32[128,256]{0,1}"
    pair = Shape.tuple([Shape(np.int32, ()), Shape(np.float32, (5,))])
    assert dot_graph.shape_label(pair) == "(s32[], f32[5])"
