"""Lowering: a jaxpr becomes an HLO module, one rule per primitive (mirrors JAX's `mlir`).

`lower_jaxpr` builds the entry computation: one parameter per jaxpr input, the jaxpr's
constants as `constant` instructions (or, when large, as extra leading parameters that the
caller passes), then each equation through its primitive's `lower` rule. A rule is called as
`rule(ctx, *operands, **params)` with a `LoweringContext` and the operands' instructions,
and returns one instruction, or a list of them for a primitive with several results.

Each instruction a rule adds carries `OpMetadata`: the equation's name stack under the
names of the calls around it (`jit(f)/jit(g)/layer/mul`, as JAX's op_name) and the user's
line that traced it.

Differences from JAX: JAX lowers to StableHLO (MLIR) and XLA converts that to HLO; jaxlite
builds its own HLO IR directly. Constants of jaxprs nested inside higher-order primitives
(the body of a `jit`, ...) always become `constant` instructions of their computation.
"""
from __future__ import annotations

import traceback as _traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.avals import ShapedArray, physical_aval
from jaxlite.core.jaxpr import Atom, ClosedJaxpr, Jaxpr, Literal, Var
from jaxlite.core.primitive import MissingRuleError, check_extended_operands
from jaxlite.core.source_info import NameStack
from jaxlite.xla.ir import (ComputationBuilder, HloComputation, HloInstruction, HloModule,
                            NameUniquer, OpMetadata, reachable_computations)
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape, xla_type_name

# Constants with more elements than this become entry parameters rather than literals in
# the module text: a big array printed into HLO text bloats it and every pass that copies it.
MAX_CONSTANT_ELEMENTS = 1024

# The binary opcodes `scalar_computation` builds reducers for.
_REDUCER_OPCODES = (Opcode.ADD, Opcode.MULTIPLY, Opcode.MAXIMUM, Opcode.MINIMUM, Opcode.AND,
                    Opcode.OR, Opcode.XOR)


@dataclass(frozen=True)
class LoweredModule:
    """The result of `lower_jaxpr`.

    module : the HLO module; its entry takes `const_args` first, then the jaxpr's inputs.
    const_args : the values of the jaxpr constants that became leading entry parameters,
        in parameter order; the caller passes them before the jaxpr's arguments.
    """

    module: HloModule
    const_args: list[np.ndarray] = field(default_factory=list)


class _Scope:
    """Where a jaxpr's equations sit in the op names: `prefix` names the calls around them
    (`jit(f)/jit(g)`), and `outer` is the name stack of the equation that called the jaxpr,
    which the nested equations' stacks start with when they were traced inside it."""

    def __init__(self, prefix: str = "", outer: NameStack = NameStack()) -> None:
        self.prefix, self.outer = prefix, outer
        # Equations share their name stacks and primitives: each path is built once.
        self._paths: dict[tuple[NameStack, str], str] = {}

    def op_path(self, stack: NameStack, leaf: str) -> str:
        """`prefix/stack/leaf`, with the part of `stack` that repeats `outer` dropped."""
        path = self._paths.get((stack, leaf))
        if path is None:
            entries = stack.stack
            if entries[:len(self.outer.stack)] == self.outer.stack:
                entries = entries[len(self.outer.stack):]
            inner = str(NameStack(entries)) if entries else ""
            path = "/".join(part for part in (self.prefix, inner, leaf) if part)
            self._paths[(stack, leaf)] = path
        return path

    def metadata(self, eqn: Any) -> OpMetadata:
        """The metadata of the instructions lowered from `eqn`."""
        source = eqn.source_info
        stack = source.name_stack if source is not None else _NO_NAMES
        frames = source.traceback if source is not None else None
        file, line = "", 0
        if frames:
            frame = frames[-1]  # innermost: a staging Location, or a FrameSummary
            if isinstance(frame, _traceback.FrameSummary):  # its `line` is the source text
                file, line = frame.filename, frame.lineno or 0
            else:
                file, line = frame.file, frame.line
        return OpMetadata(self.op_path(stack, _callee_name(eqn)), file, line)

    def callee(self, eqn: Any) -> "_Scope":
        """The scope of the jaxprs `eqn` calls (a jit's body, a loop's body...)."""
        stack = eqn.source_info.name_stack if eqn.source_info is not None else _NO_NAMES
        return _Scope(self.op_path(stack, _callee_name(eqn)), stack)


_NO_NAMES = NameStack()


def _callee_name(eqn: Any) -> str:
    """A call's name in op names: `jit(g)` for a jit of g, else the primitive's name."""
    name = eqn.primitive.name
    return f"jit({eqn.params['name']})" if name == "jit" and "name" in eqn.params else name


class _ModuleState:
    """What all computations of one module under construction share."""

    def __init__(self, spmd_mesh: Any = None) -> None:
        self.names = NameUniquer()
        # The mesh of a module lowered for the SPMD partitioner (None otherwise): sharding
        # constraints over it become `Sharding` custom calls the partitioner obeys.
        self.spmd_mesh = spmd_mesh
        self.computations: dict[Hashable, HloComputation] = {}
        # Keeps each lowered jaxpr alive while its id() is a cache key.
        self.jaxprs: dict[int, tuple[Jaxpr, HloComputation]] = {}


class LoweringContext:
    """What a lowering rule needs besides its operands.

    builder : the computation being built; rules add their instructions to it.
    avals_in, avals_out : the abstract values of the equation's operands and results.
    names : the module's name uniquer.
    """

    def __init__(self, state: _ModuleState, builder: ComputationBuilder,
                 avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray],
                 origin: tuple[_Scope, Any] | None = None) -> None:
        self._state = state
        self.builder = builder
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)
        # The scope and equation being lowered: the jaxprs it calls are named under it.
        self._origin = origin

    @property
    def names(self) -> NameUniquer:
        return self._state.names

    @property
    def spmd_mesh(self) -> Any:
        """The mesh the module is lowered to be partitioned over, or None."""
        return self._state.spmd_mesh

    def shape(self, aval: ShapedArray) -> Shape:
        """The HLO array shape of an abstract value (of its physical data, for keys)."""
        return _hlo_shape(aval)

    def with_builder(self, builder: ComputationBuilder,
                     avals_in: Sequence[ShapedArray] = (),
                     avals_out: Sequence[ShapedArray] = ()) -> "LoweringContext":
        """A context that adds to another computation of the same module."""
        return LoweringContext(self._state, builder, avals_in, avals_out, self._origin)

    def new_builder(self, name: str) -> ComputationBuilder:
        """A builder for a new computation of this module (a reducer, a comparator...)."""
        return ComputationBuilder(name, self._state.names)

    def cached_computation(self, key: Hashable,
                           build: Callable[[], HloComputation]) -> HloComputation:
        """The computation cached under `key` in this module, built on first use."""
        computations = self._state.computations
        if key not in computations:
            computations[key] = build()
        return computations[key]

    def scalar_computation(self, opcode: Opcode, dtype: Any) -> HloComputation:
        """`(a, b) -> opcode(a, b)` on scalars of `dtype`: the reducer of a `reduce`.

        One per opcode and dtype in each module.
        """
        if opcode not in _REDUCER_OPCODES:
            raise ValueError(f"scalar_computation: {opcode.text} is not a reducer; expected "
                             f"one of {', '.join(op.text for op in _REDUCER_OPCODES)}.")
        dtype = _hlo_dtype(dtype)

        def build() -> HloComputation:
            builder = self.new_builder(f"{opcode.text}_{xla_type_name(dtype)}")
            scalar = Shape(dtype, ())
            lhs, rhs = builder.parameter(scalar, "lhs"), builder.parameter(scalar, "rhs")
            return builder.build(builder.add(opcode, scalar, (lhs, rhs)))
        return self.cached_computation(("scalar", opcode, dtype), build)

    def import_module(self, module: HloModule, name: str) -> HloComputation:
        """`module`'s entry as a computation `name` of this module, its callees brought
        along with fresh names (a program lowered elsewhere: an exported function's). Once
        per module object."""
        def build() -> HloComputation:
            renamed: dict[int, HloComputation] = {}
            for comp in reachable_computations(module.entry):  # callees first
                renamed[id(comp)] = _renamed_copy(
                    comp, name if comp is module.entry else comp.name, renamed,
                    self._state.names)
            return renamed[id(module.entry)]
        return self.cached_computation(("imported", id(module)), build)

    def lower_jaxpr_as_computation(self, closed_jaxpr: ClosedJaxpr,
                                   name: str) -> HloComputation:
        """A computation of this module that computes `closed_jaxpr` (for calls).

        Its parameters are the jaxpr's inputs; its root is the one output, or a tuple of
        the outputs when there are several (or none). Lowered once per jaxpr object.
        """
        cached = self._state.jaxprs.get(id(closed_jaxpr.jaxpr))
        if cached is not None and cached[0] is closed_jaxpr.jaxpr:
            return cached[1]
        builder = self.new_builder(name)
        jaxpr = closed_jaxpr.jaxpr
        args = [builder.parameter(self.shape(v.aval), f"Arg_{i}")
                for i, v in enumerate(jaxpr.invars)]
        consts = [_constant(builder, value, v.aval)
                  for v, value in zip(jaxpr.constvars, closed_jaxpr.consts)]
        scope = self._origin[0].callee(self._origin[1]) if self._origin else _Scope()
        outs = _lower_equations(self._state, builder, jaxpr, consts, args, scope)
        computation = builder.build(_root(builder, outs))
        self._state.jaxprs[id(jaxpr)] = (jaxpr, computation)
        return computation


def lower_jaxpr(closed_jaxpr: ClosedJaxpr, name: str, scope: str = "",
                max_constant_elements: int = MAX_CONSTANT_ELEMENTS,
                spmd_mesh: Any = None) -> LoweredModule:
    """Lower a closed jaxpr to an HLO module whose entry computes it.

    Parameters
    ----------
    closed_jaxpr : the program, e.g. from `jax.make_jaxpr(f)(*args)`.
    name : the module's name.
    scope : the first part of every instruction's op_name (`jit(f)` for `jit(f)`).
    max_constant_elements : constants with more elements become leading parameters
        (a module that must stand alone, an exported one, passes a larger bound).
    spmd_mesh : the mesh of a module that the SPMD partitioner will split (sharding
        constraints over it lower to `Sharding` custom calls), or None.

    Returns
    -------
    LoweredModule
        The module, and the constants that became its leading parameters. The entry's
        result is the jaxpr's one output, or a tuple of its outputs.
    """
    state = _ModuleState(spmd_mesh)
    builder = ComputationBuilder("main", state.names)
    jaxpr = closed_jaxpr.jaxpr
    if len(closed_jaxpr.consts) != len(jaxpr.constvars):
        raise ValueError(f"lower_jaxpr: the jaxpr has {len(jaxpr.constvars)} constant "
                         f"variables but {len(closed_jaxpr.consts)} constant values.")
    values = [_const_value(c, v.aval) for v, c in zip(jaxpr.constvars, closed_jaxpr.consts)]
    large = [value.size > max_constant_elements for value in values]
    const_params = {i: builder.parameter(Shape(value.dtype, value.shape), f"const_{i}")
                    for i, (value, big) in enumerate(zip(values, large)) if big}
    args = [builder.parameter(_hlo_shape(v.aval), f"Arg_{i}")
            for i, v in enumerate(jaxpr.invars)]
    consts = [const_params[i] if big else _constant(builder, value, v.aval)
              for i, (v, value, big) in enumerate(zip(jaxpr.constvars, values, large))]
    outs = _lower_equations(state, builder, jaxpr, consts, args, _Scope(scope))
    module = HloModule(name, builder.build(_root(builder, outs)))
    return LoweredModule(module, [v for v, big in zip(values, large) if big])


# ----------------------------------------------------------------------------- helpers

def _hlo_dtype(dtype: Any) -> np.dtype:
    # float0 (the tangent type of integers) has no storage; JAX passes it as bool.
    if dtype == dtypes.float0:
        return np.dtype(np.bool_)
    return np.dtype(dtype)


def _hlo_shape(aval: ShapedArray) -> Shape:
    aval = physical_aval(aval)
    return Shape(_hlo_dtype(aval.dtype), tuple(aval.shape))


def _const_value(value: Any, aval: ShapedArray) -> np.ndarray:
    """A constant or literal as a numpy array of its aval's dtype (weak scalars included)."""
    if dtypes.is_extended(aval.dtype):  # a typed key closed over: its physical data
        value, aval = aval.dtype.to_physical(value), physical_aval(aval)
    dtype = _hlo_dtype(aval.dtype)
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtype)
    array = np.asarray(value)
    if array.dtype != dtype:
        array = array.astype(dtype)
    return np.array(np.broadcast_to(array, aval.shape))


def _renamed_copy(comp: HloComputation, name: str, renamed: dict[int, HloComputation],
                  names: NameUniquer) -> HloComputation:
    """`comp` named `name` (or a numbered variant) with fresh instruction names, calling
    the copies in `renamed` (ids of originals to copies) in place of its callees."""
    copy_of: dict[int, HloInstruction] = {}
    for inst in comp.instructions:
        copy_of[id(inst)] = inst.replace(
            name=names(inst.name.split(".")[0]),
            operands=tuple(copy_of[id(o)] for o in inst.operands),
            called=tuple(renamed[id(c)] for c in inst.called))
    return HloComputation(names.reserve(name), tuple(copy_of[id(i)] for i in comp.instructions),
                          copy_of[id(comp.root)])


def _constant(builder: ComputationBuilder, value: Any, aval: ShapedArray) -> HloInstruction:
    literal = _const_value(value, aval)
    return builder.add(Opcode.CONSTANT, Shape(literal.dtype, literal.shape),
                       attrs={"literal": literal})


def _root(builder: ComputationBuilder, outs: list[HloInstruction]) -> HloInstruction:
    if len(outs) == 1:
        return outs[0]
    return builder.add(Opcode.TUPLE, Shape.tuple([o.shape for o in outs]), outs)


def _lower_equations(state: _ModuleState, builder: ComputationBuilder, jaxpr: Jaxpr,
                     consts: Sequence[HloInstruction], args: Sequence[HloInstruction],
                     scope: _Scope) -> list[HloInstruction]:
    """Add the jaxpr's equations to `builder`; returns the instructions of its outputs."""
    env: dict[Var, HloInstruction] = {}
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(atom: Atom) -> HloInstruction:
        if isinstance(atom, Literal):
            return _constant(builder, atom.value, atom.aval)
        return env[atom]

    for eqn in jaxpr.eqns:
        primitive = eqn.primitive
        if not primitive.has_rule("lower"):
            raise MissingRuleError(f"Primitive '{primitive.name}' has no rule for lowering to "
                                   "HLO (jit).")
        check_extended_operands(primitive, [v.aval for v in eqn.invars])
        # Rules see physical avals: a typed key's is its uint32 data's.
        ctx = LoweringContext(state, builder, [physical_aval(v.aval) for v in eqn.invars],
                              [physical_aval(v.aval) for v in eqn.outvars], (scope, eqn))
        operands = list(map(read, eqn.invars))
        outer_metadata, builder.metadata = builder.metadata, scope.metadata(eqn)
        try:
            result = primitive.lower(ctx, *operands, **eqn.params)
        except Exception as error:
            error.add_note(f"while lowering the equation of '{primitive.name}' with operands "
                           f"{[a.str_short() for a in ctx.avals_in]}")
            raise
        finally:
            builder.metadata = outer_metadata
        outs = list(result) if isinstance(result, (list, tuple)) else [result]
        _check_results(primitive.name, ctx, outs)
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _check_results(name: str, ctx: LoweringContext, outs: list[HloInstruction]) -> None:
    """A rule's results must match the equation's abstract results (an internal invariant)."""
    if len(outs) != len(ctx.avals_out):
        raise TypeError(f"the lowering rule of '{name}' returned {len(outs)} results for "
                        f"{len(ctx.avals_out)} outputs.")
    for i, (out, aval) in enumerate(zip(outs, ctx.avals_out)):
        expected = ctx.shape(aval)
        if not isinstance(out, HloInstruction) or not out.shape.same_array(expected):
            got = out.shape if isinstance(out, HloInstruction) else type(out).__name__
            raise TypeError(f"the lowering rule of '{name}' returned {got} for output {i}, "
                            f"whose abstract value is {aval.str_short()} (HLO {expected}).")
