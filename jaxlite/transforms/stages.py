"""The stages of ahead-of-time compilation (mirrors `jax.stages`).

`jit(f).trace(*args)` gives a `Traced` (the jaxpr), `.lower()` a `Lowered` (the HLO module
before the pass pipeline) and `.compile()` a `Compiled` (the backend's executable, callable
with the non-static arguments). `Wrapped` is the base class of the functions `jit` returns.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from jaxlite.backends import analysis
from jaxlite.backends.base import Client, Executable, MemoryAnalysis
from jaxlite.core.avals import ShapedArray
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.shape_poly import is_symbolic_dim
from jaxlite.core.trace import Tracer
from jaxlite.interpreters.lowering import LoweredModule
from jaxlite.runtime import dispatch
from jaxlite.transforms import api_util as _api_util
from jaxlite.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from jaxlite.xla import dot_graph
from jaxlite.xla import stablehlo
from jaxlite.xla.ir import HloModule
from jaxlite.xla.text import print_module

# Options for `Lowered.compile(compiler_options=...)`: XLA flag names to values.
CompilerOptions = dict[str, Any]


class Wrapped:
    """The base class of the functions `jit` returns (mirrors `jax.stages.Wrapped`): call
    it, or stage it with `.trace(*args)` and `.lower(*args)`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def trace(self, *args: Any, **kwargs: Any) -> "Traced":
        raise NotImplementedError

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        raise NotImplementedError


@dataclass(frozen=True)
class ArgInfo:
    """One argument of a lowered function: its abstract value and whether it is donated
    (mirrors `jax.stages.ArgInfo`)."""

    _aval: ShapedArray
    donated: bool

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        return self._aval.dtype


class HloComputation:
    """What `Lowered.compiler_ir("hlo")` returns: the HLO module, with the methods of XLA's
    `XlaComputation` that users call on it."""

    def __init__(self, module: HloModule) -> None:
        self._module = module

    def as_hlo_text(self) -> str:
        """The module in XLA's HLO text format."""
        return print_module(self._module)

    def as_hlo_module(self) -> HloModule:
        """The module itself (jaxlite's HLO IR)."""
        return self._module

    def __str__(self) -> str:
        return self.as_hlo_text()


class StableHloModule:
    """What `Lowered.compiler_ir("stablehlo")` returns: the module as StableHLO text, with
    the parts of MLIR's `ir.Module` that users print it through (`str(module)`,
    `module.operation.get_asm()`)."""

    def __init__(self, text: str) -> None:
        self._text = text

    @property
    def operation(self) -> "StableHloModule":
        return self

    def get_asm(self, **options: Any) -> str:
        """The text; MLIR's printing options (`large_elements_limit`, ...) are accepted
        and ignored."""
        return self._text

    def __str__(self) -> str:
        return self._text


@dataclass
class Traced:
    """The result of `jit(f).trace(...)`: the jaxpr and the output structure (mirrors
    `jax.stages.Traced`)."""

    jaxpr: ClosedJaxpr
    out_tree: PyTreeDef
    _lower: Callable[[], "Lowered"] | None = field(default=None, repr=False)

    def lower(self) -> "Lowered":
        """Lower the traced program to HLO."""
        if self._lower is None:
            raise ValueError("lower: this Traced has no function to lower.")
        return self._lower()


class Lowered:
    """A jitted function lowered to HLO for one signature (mirrors `jax.stages.Lowered`).

    Differences from JAX: `as_text()` gives jaxlite's HLO text by default (JAX's default
    is StableHLO); `as_text(dialect="stablehlo")` gives StableHLO text.
    """

    def __init__(self, lowered: LoweredModule, traced: Any, name: str, client: Client,
                 donate_argnums: tuple[int, ...], lowering_seconds: float,
                 partitioned: Callable[[], Any] | None = None) -> None:
        self._lowered = lowered
        # Gives the per-device program (`runtime.spmd_call.SpmdCall`) when the arguments
        # are placed over a mesh of several devices, else None.
        self._partitioned = partitioned
        self._traced = traced
        self._name = name
        self._client = client
        self.donate_argnums = donate_argnums
        self._lowering_seconds = lowering_seconds

    @property
    def in_tree(self) -> PyTreeDef:
        """The structure of `(args, kwargs)`, static arguments left out."""
        return self._traced.in_tree

    @property
    def out_tree(self) -> PyTreeDef:
        return self._traced.out_tree

    @property
    def in_avals(self) -> Any:
        return tree_unflatten(self.in_tree, self._traced.jaxpr.in_avals)

    @property
    def args_info(self) -> Any:
        """An `ArgInfo` per argument leaf, in the structure of `(args, kwargs)`."""
        return _args_info(self._traced)

    def compiler_ir(self, dialect: str | None = None) -> HloComputation | StableHloModule:
        """The module as lowered, before any pass: `dialect="hlo"` (the default) gives the
        HLO module (`.as_hlo_text()` prints it), `"stablehlo"` the StableHLO text
        (`str(...)` prints it)."""
        _check_dialect(dialect)
        if dialect == "stablehlo":
            return StableHloModule(stablehlo.print_module(self._lowered.module))
        return HloComputation(self._lowered.module)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The text of the module before the pass pipeline: HLO text (`dialect="hlo"`, the
        default) or StableHLO in MLIR's text form (`dialect="stablehlo"`, as JAX prints
        it). Large constants that became leading parameters stay parameters."""
        _check_dialect(dialect)
        if dialect == "stablehlo":
            return stablehlo.print_module(self._lowered.module)
        return print_module(self._lowered.module)

    def as_dot(self) -> str:
        """The module before the pass pipeline as a Graphviz graph (DOT text); jaxlite's
        own, as `Compiled.as_dot`."""
        return dot_graph.module_to_dot(self._lowered.module)

    def cost_analysis(self) -> dict[str, float]:
        """Estimated work of the unoptimized module (see `jaxlite.backends.analysis`)."""
        return analysis.cost_analysis(self._lowered.module)

    def compile(self, compiler_options: dict[str, Any] | None = None) -> "Compiled":
        """Run the backend's compiler (passes included) on the module."""
        symbolic = [str(a) for a in self._traced.jaxpr.in_avals
                    if any(is_symbolic_dim(d) for d in a.shape)]
        if symbolic:
            raise ValueError(
                f"Error refining shapes: jit of {self._name} was lowered for symbolic shapes "
                f"({', '.join(symbolic)}), which have no size to compile for. Export it "
                "(`jax.export.export`) and call the Exported with arrays instead.")
        call = self._partitioned() if self._partitioned is not None else None
        if call is None:
            call = dispatch.compile_lowered(self._lowered, self._traced.jaxpr, self._name,
                                            self._client, self._traced.donated_invars,
                                            self._lowering_seconds)
        return Compiled(call, self._traced, self._name, self.donate_argnums)


class Compiled:
    """A jitted function compiled for one signature and backend (mirrors
    `jax.stages.Compiled`). Call it with the non-static arguments only."""

    def __init__(self, call: dispatch.CompiledCall, traced: Any, name: str,
                 donate_argnums: tuple[int, ...]) -> None:
        self._call = call
        self._traced = traced
        self._name = name
        self.donate_argnums = donate_argnums

    @property
    def in_tree(self) -> PyTreeDef:
        return self._traced.in_tree

    @property
    def out_tree(self) -> PyTreeDef:
        return self._traced.out_tree

    @property
    def args_info(self) -> Any:
        """An `ArgInfo` per argument leaf, in the structure of `(args, kwargs)`."""
        return _args_info(self._traced)

    def runtime_executable(self) -> Executable:
        """The backend's executable."""
        return self._call.executable

    def as_text(self, stage: str = "optimized_hlo") -> str:
        """The program after compilation as text (mirrors `jax.stages.Compiled.as_text`).

        `stage` goes beyond JAX: "optimized_hlo" (the default, the HLO after the pass
        pipeline), "hlo" (before it), and what the backend generates, e.g. "llvm" (LLVM IR)
        and "asm" (host assembly) on the cpu backend. An unknown stage raises `ValueError`
        naming the stages the backend has.
        """
        return self._call.executable.text(stage)

    def as_dot(self) -> str:
        """The optimized module as a Graphviz graph (DOT text), as XLA draws it with
        `--xla_dump_hlo_as_dot`; jaxlite's own, JAX has no such method. Each fusion is a
        box of the instructions it fused; edges carry the shapes of the values."""
        return dot_graph.module_to_dot(self._call.executable.hlo_module(optimized=True))

    def as_svg(self) -> str:
        """`as_dot()` drawn as an SVG picture by Graphviz's `dot` program (a
        `RuntimeError` says what to install when it is missing). In a notebook,
        `IPython.display.SVG(compiled.as_svg())` shows it."""
        return dot_graph.render_svg(self.as_dot())

    def cost_analysis(self) -> dict[str, float]:
        """Estimated 'flops', 'transcendentals' and 'bytes accessed' of the optimized module."""
        return self._call.executable.cost_analysis()

    def memory_analysis(self) -> MemoryAnalysis:
        """Argument, output, alias and temporary sizes in bytes."""
        return self._call.executable.memory_analysis()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, in_tree = tree_flatten((tuple(args), kwargs))
        if in_tree != self.in_tree:
            raise TypeError(f"Function {self._name} compiled with input pytree does not match "
                            f"the input pytree it was called with: compiled for "
                            f"{self.in_tree}, called with {in_tree}. Pass the non-static "
                            "arguments only, with the same structure.")
        if any(isinstance(x, Tracer) for x in leaves):
            raise TypeError(f"Compiled function {self._name} cannot be called on traced "
                            "values (inside jit, grad or vmap); call the jitted function "
                            "instead.")
        _api_util.check_array_leaves(leaves, self._traced.names, f"compiled {self._name}")
        self._check_types(leaves)
        return tree_unflatten(self.out_tree, self._call(leaves))

    def _check_types(self, leaves: Sequence[Any]) -> None:
        expected = self._traced.jaxpr.in_avals
        mismatches = []
        for name, leaf, aval in zip(self._traced.names, leaves, expected):
            got = _api_util.abstractify(leaf)
            if got.shape != aval.shape or got.dtype != aval.dtype:
                mismatches.append(f"Argument '{name}' compiled with {_describe(aval)} and "
                                  f"called with {_describe(got)}")
        if mismatches:
            raise TypeError("Argument types differ from the types for which this computation "
                            "was compiled. The mismatches are:\n" + "\n".join(mismatches))


def _args_info(traced: Any) -> Any:
    first = len(traced.consts)
    donated = set(traced.donated_invars)
    infos = [ArgInfo(aval, first + i in donated)
             for i, aval in enumerate(traced.jaxpr.in_avals[first:])]
    return tree_unflatten(traced.in_tree, infos)


def _describe(aval: ShapedArray) -> str:
    dims = ",".join(str(d) for d in aval.shape)
    return f"{aval.dtype.name}[{dims}]"


def _check_dialect(dialect: str | None) -> None:
    if dialect not in (None, "hlo", "stablehlo"):
        raise ValueError(f"Unknown dialect {dialect!r}: jaxlite prints dialect='hlo' (the "
                         "default) and dialect='stablehlo'.")
