"""An HLO module as a Graphviz picture (in the spirit of XLA's `--xla_dump_hlo_as_dot`).

`module_to_dot(module)` writes the module as DOT text: one node per instruction, an edge
from each operand to its user labelled with the value's shape (`f32[128,256]`). A fusion
is drawn as a box (`subgraph "cluster_<fusion name>"`) around the instructions it fused:
the operands flow into its parameters and its users read its root. The computations that
while loops, conditionals and calls run are boxes of their own beside the entry, linked to
the instruction that runs them by dashed edges (into their parameter, back from their
root). The entry's parameters are the blue houses at the top, its root the gold node with
a double border. Small computations applied per element (a reduce's `to_apply`) are named
in the node's label rather than drawn.

`render_svg(dot_text)` runs Graphviz's `dot` program to make an SVG picture of it.
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np

from jaxlite.xla.ir import HloComputation, HloInstruction, HloModule
from jaxlite.xla.opcodes import Kind, Opcode
from jaxlite.xla.text import format_literal, print_instruction

__all__ = ["module_to_dot", "render_svg"]

# Fill colours: by the kind of work an instruction does, and of the fusions by their kind.
_NODE_COLORS = {Kind.CONTRACTION: "#fbd7a5", Kind.REDUCTION: "#c9e8c4",
                Kind.CONTROL: "#e3d3f2", Kind.MOVEMENT: "#f2f2f2"}
_FUSION_COLORS = {"kLoop": "#eef4fc", "kInput": "#eefaeb", "kOutput": "#fdf3e4"}
_PARAMETER_COLOR = "#cfe3f7"
_ROOT_COLOR = "#ffe08a"
# Attributes worth a place in a node's label (the rest are in `as_text()`).
_SHOWN_ATTRIBUTES = ("dimensions", "index", "direction", "custom_call_target")
# Tooltips (the instruction's HLO text, shown on hovering in an SVG) are cut at this length:
# a large constant's literal would otherwise be the bulk of the file.
_TOOLTIP_CHARS = 400
# Opcodes that run other computations drawn as boxes of their own.
_RUNS_COMPUTATIONS = frozenset({Opcode.WHILE, Opcode.CONDITIONAL, Opcode.CALL})


def module_to_dot(module: HloModule) -> str:
    """The module as Graphviz DOT text (for `Compiled.as_dot`, which mirrors the graphs
    XLA's `--xla_dump_hlo_as_dot` writes)."""
    return _DotWriter(module).write()


def render_svg(dot_text: str) -> str:
    """An SVG picture of DOT text, drawn by Graphviz's `dot` program.

    Raises
    ------
    RuntimeError
        When no `dot` program is on the PATH (naming what to install), or when `dot`
        rejects the text (with its message).
    """
    program = shutil.which("dot")
    if program is None:
        raise RuntimeError("as_svg needs the `dot` program of Graphviz, which is not on the "
                           "PATH. Install Graphviz (apt-get install graphviz, brew install "
                           "graphviz, or conda install graphviz; `pip install graphviz` "
                           "installs only its Python binding), or render the text of "
                           "as_dot() elsewhere.")
    done = subprocess.run([program, "-Tsvg"], input=dot_text, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz's dot could not draw the graph (exit status "
                           f"{done.returncode}): {done.stderr.strip()}")
    return done.stdout


def quote(text: str) -> str:
    """A DOT string: in double quotes, with backslashes and quotes escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def shape_label(shape) -> str:
    """A shape as an edge label: `f32[128,256]`, the layout only where it is not the
    default row-major one."""
    if shape.is_tuple:
        return "(" + ", ".join(shape_label(s) for s in shape.tuple_shapes) + ")"
    text = str(shape)
    if shape.layout == tuple(range(shape.rank - 1, -1, -1)):
        text = text.split("{", 1)[0]
    return text


class _DotWriter:
    """Writes one module: nodes and clusters as it walks, the edges collected for the
    end (so that an edge never pulls a node into the cluster it is written in)."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        self.lines: list[str] = []
        self.edges: list[str] = []
        self.node_ids: dict[int, str] = {}   # id(instruction) -> DOT node id
        self.drawn: set[int] = set()         # id(computation) already drawn as a box
        self.pending: list[HloComputation] = []
        self.result = self.output_of(module.entry.root)  # the node the result leaves

    def write(self) -> str:
        entry = self.module.entry
        self.lines += [f"digraph {quote(self.module.name)} {{",
                       "  rankdir=TB; compound=true; newrank=true;",
                       f"  label={quote(f'HloModule {self.module.name}')}; labelloc=t;",
                       '  node [shape=box, style="rounded,filled", fillcolor=white, '
                       'fontname="Helvetica", fontsize=10];',
                       '  edge [fontname="Helvetica", fontsize=9];']
        self.drawn.add(id(entry))
        self.instructions(entry, entry=True, indent="  ")
        while self.pending:  # the computations of loops, branches and calls
            self.computation_box(self.pending.pop(0))
        return "\n".join(self.lines + self.edges + ["}"]) + "\n"

    # ----------------------------------------------------------------- nodes and boxes
    def node_id(self, inst: HloInstruction) -> str:
        if id(inst) not in self.node_ids:
            self.node_ids[id(inst)] = f"n{len(self.node_ids)}"
        return self.node_ids[id(inst)]

    def output_of(self, inst: HloInstruction) -> str:
        """The node an edge from `inst`'s value starts at: a fusion's value leaves its root."""
        while inst.opcode is Opcode.FUSION:
            inst = inst.called[0].root
        return self.node_id(inst)

    def input_of(self, inst: HloInstruction, k: int) -> str:
        """The node operand `k` of `inst` flows into: a fusion's parameter `k`."""
        while inst.opcode is Opcode.FUSION:
            inst = inst.called[0].parameters[k]
            k = 0
        return self.node_id(inst)

    def instructions(self, comp: HloComputation, entry: bool, indent: str) -> None:
        for inst in comp.instructions:
            if inst.opcode is Opcode.FUSION:
                self.fusion_box(inst, indent)
            else:
                self.node(inst, comp, entry, indent)
            for k, operand in enumerate(inst.operands):
                self.edge(self.output_of(operand), self.input_of(inst, k),
                          shape_label(operand.shape))
            if inst.opcode in _RUNS_COMPUTATIONS:
                self.link_called(inst)

    def node(self, inst: HloInstruction, comp: HloComputation, entry: bool,
             indent: str) -> None:
        lines = [inst.name, _describe(inst)]
        style = [f"fillcolor={quote(_NODE_COLORS.get(inst.opcode.kind, 'white'))}"]
        if inst.opcode is Opcode.PARAMETER:
            style = [f"fillcolor={quote(_PARAMETER_COLOR)}"]
            if entry:
                lines = [f"Parameter {inst.attr('number')}", inst.name,
                         shape_label(inst.shape)]
                style.append("shape=invhouse")
        if inst is comp.root:
            lines[0] = "ROOT " + lines[0]
            style.append("peripheries=2")
        if self.node_id(inst) == self.result:
            lines.append(shape_label(inst.shape))
            style = [f"fillcolor={quote(_ROOT_COLOR)}"] + style[1:]
        style.append(f"tooltip={quote(_tooltip(inst))}")
        self.lines.append(f"{indent}{self.node_id(inst)} [label={quote(chr(10).join(lines))}"
                          f", {', '.join(style)}];")

    def fusion_box(self, fusion: HloInstruction, indent: str) -> None:
        kind = fusion.attr("kind", "")
        fused = fusion.called[0]
        label = f"{fusion.name} ({kind})"
        border = 'color="#8a8a8a"'
        if fusion is self.module.entry.root:
            label, border = "ROOT " + label, 'color="#c79a00"; penwidth=2'
        self.lines += [f"{indent}subgraph {quote('cluster_' + fusion.name)} {{",
                       f"{indent}  label={quote(label)}; style=filled; "
                       f"fillcolor={quote(_FUSION_COLORS.get(kind, '#f4f4f4'))}; {border}; "
                       f"tooltip={quote(_tooltip(fusion))};"]
        self.instructions(fused, entry=False, indent=indent + "  ")
        self.lines.append(f"{indent}}}")

    def computation_box(self, comp: HloComputation) -> None:
        self.lines += [f"  subgraph {quote('cluster_' + comp.name)} {{",
                       f"    label={quote(comp.name)}; style=dashed; color=\"#6a5a8a\";"]
        self.instructions(comp, entry=False, indent="    ")
        self.lines.append("  }")

    # ------------------------------------------------------------------------ edges
    def edge(self, source: str, target: str, label: str, extra: str = "") -> None:
        self.edges.append(f"  {source} -> {target} [label={quote(label)}{extra}];")

    def link_called(self, inst: HloInstruction) -> None:
        """Dashed edges from a while, conditional or call into the computations it runs
        and back from their roots; each computation is drawn once, however many run it."""
        for role, comp in zip(_roles(inst), inst.called):
            if id(comp) not in self.drawn:
                self.drawn.add(id(comp))
                self.pending.append(comp)
            dashed = ', style=dashed, color="#6a5a8a", fontcolor="#6a5a8a"'
            for param in comp.parameters:
                self.edge(self.node_id(inst), self.node_id(param), role, dashed)
            self.edge(self.output_of(comp.root), self.node_id(inst),
                      f"{role} result", dashed + ", constraint=false")


def _roles(inst: HloInstruction) -> list[str]:
    """What each computation an instruction calls is to it, for the edge labels."""
    if inst.opcode is Opcode.WHILE:
        return ["condition", "body"]
    if inst.opcode is Opcode.CONDITIONAL:
        selector = inst.operands[0].shape
        if len(inst.called) == 2 and not selector.is_tuple and selector.dtype == np.bool_:
            return ["true", "false"]
        return [f"branch {k}" for k in range(len(inst.called))]
    return ["calls"] * len(inst.called)


def _tooltip(inst: HloInstruction) -> str:
    text = print_instruction(inst).strip()
    return text if len(text) <= _TOOLTIP_CHARS else text[:_TOOLTIP_CHARS] + " ..."


def _describe(inst: HloInstruction) -> str:
    """The second line of a node's label: the opcode and its telling attributes."""
    parts = [inst.opcode.text]
    if inst.opcode is Opcode.PARAMETER:
        parts.append(str(inst.attr("number")))
    elif inst.opcode is Opcode.CONSTANT:
        literal = np.asarray(inst.attr("literal"))
        parts.append(format_literal(literal) if literal.size == 1 else shape_label(inst.shape))
    for name in _SHOWN_ATTRIBUTES:
        value = inst.attr(name)
        if value is not None:
            shown = "{" + ",".join(map(str, value)) + "}" if isinstance(value, tuple) else value
            parts.append(f"{name}={shown}")
    if inst.called and inst.opcode not in _RUNS_COMPUTATIONS:
        parts.append("to_apply=" + ",".join(c.name for c in inst.called))
    return " ".join(parts)
