"""The fused epilogue of a generated GEMM: what runs on each output vector before it is stored.

XLA's CPU compiler fuses a `dot` with the elementwise consumers of its output (bias, scaling,
an activation) so that the product never makes a round trip through memory. Here the fusion
pass hands the GEMM generator an `Epilogue`: a callable that emits LLVM IR for one output
vector, given an `EpilogueContext` (the IR builder, the epilogue's own function arguments,
helpers for loads and calls), the vector, and the row and first column it holds. Extra
function arguments (a bias pointer, a scale) are declared in `Epilogue.args` and appended to
the GEMM function's parameters.

The stock epilogues below are cached, so that equal requests give equal (and hashable) specs.
The callable sees the final value of each element exactly once, after the whole sum over k
(and after alpha and beta), with lanes past the edge of C masked off in `ctx.valid`.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from jaxlite.backends.cpu.gemm_ir import I64, PTR, VectorOps, get_function, scalar_type


@dataclass
class EpilogueContext:
    """What an epilogue may use while it emits code for one output vector.

    builder : the IR builder, positioned where the vector is about to be stored.
    ops : vector helpers for this dtype (`ops.vector` is the vector type, `ops.lanes` its width).
    args : the epilogue's function arguments by name (as declared in `Epilogue.args`).
    batch : the batch index (i64).
    valid : lanes of this vector inside C (== ops.lanes except at the right edge).
    """

    builder: ir.IRBuilder
    ops: VectorOps
    args: dict[str, ir.Value]
    batch: ir.Value
    valid: int

    @property
    def module(self) -> ir.Module:
        return self.ops.module

    def splat(self, value: float) -> ir.Constant:
        """A constant vector."""
        return self.ops.splat_constant(value)

    def load_vector(self, base: ir.Value, index: ir.Value) -> ir.Value:
        """The vector of elements `base[index : index + lanes]`, lanes past C's edge left out."""
        return self.ops.load(self.ops.element(base, index), self.valid)

    def load_splat(self, base: ir.Value, index: ir.Value) -> ir.Value:
        """`base[index]` in every lane."""
        return self.ops.splat(self.ops.load_scalar(self.ops.element(base, index)))

    def call(self, name: str, *values: ir.Value) -> ir.Value:
        """Call the vector function `name` (declared as `<vec> @name(<vec>, ...)` if absent).

        This is how an epilogue reaches the vector math library (tanh, exp, ...): the function
        is defined elsewhere in the module, or linked in before compilation.
        """
        fnty = ir.FunctionType(self.ops.vector, [v.type for v in values])
        return self.builder.call(get_function(self.module, name, fnty), list(values))


EmitFn = Callable[[EpilogueContext, ir.Value, ir.Value, ir.Value], ir.Value]


@dataclass(frozen=True)
class Epilogue:
    """An elementwise operation fused after the GEMM.

    emit(ctx, vector, row, col) -> vector : emits IR for one output vector; `row` (i64) is the
        row of C it belongs to and `col` (i64) the column of its first lane.
    args : (name, kind) of extra function parameters, kind one of "ptr", "i64", "float32",
        "float64"; they follow C in the GEMM function's parameters.
    name : for printing.
    """

    emit: EmitFn
    args: tuple[tuple[str, str], ...] = ()
    name: str = "epilogue"


def arg_type(kind: str) -> ir.Type:
    """The IR type of an argument kind ("ptr", "i64", "float32", "float64")."""
    if kind == "ptr":
        return PTR
    if kind == "i64":
        return I64
    return scalar_type(kind)


@functools.cache
def bias_add(arg: str = "bias", axis: str = "column") -> Epilogue:
    """x + bias[col] (axis="column", a vector of n) or x + bias[row] (axis="row", m values)."""
    if axis not in ("column", "row"):
        raise ValueError(f"bias_add: axis must be 'column' or 'row', got {axis!r}.")

    def emit(ctx: EpilogueContext, x: ir.Value, row: ir.Value, col: ir.Value) -> ir.Value:
        if axis == "column":
            bias = ctx.load_vector(ctx.args[arg], col)
        else:
            bias = ctx.load_splat(ctx.args[arg], row)
        return ctx.builder.fadd(x, bias)

    return Epilogue(emit, ((arg, "ptr"),), f"bias_add[{axis}]")


@functools.cache
def scale(factor: float) -> Epilogue:
    """x * factor, with the factor a compile-time constant."""
    def emit(ctx: EpilogueContext, x: ir.Value, row: ir.Value, col: ir.Value) -> ir.Value:
        return ctx.builder.fmul(x, ctx.splat(factor))

    return Epilogue(emit, (), f"scale[{factor}]")


@functools.cache
def scale_by(arg: str = "scale", dtype: str = "float32") -> Epilogue:
    """x * s with s a scalar function argument of the GEMM's dtype."""
    def emit(ctx: EpilogueContext, x: ir.Value, row: ir.Value, col: ir.Value) -> ir.Value:
        return ctx.builder.fmul(x, ctx.ops.splat(ctx.args[arg]))

    return Epilogue(emit, ((arg, dtype),), f"scale_by[{arg}]")


@functools.cache
def relu() -> Epilogue:
    """max(x, 0); NaN stays NaN, as in `jax.nn.relu`."""
    def emit(ctx: EpilogueContext, x: ir.Value, row: ir.Value, col: ir.Value) -> ir.Value:
        zero = ctx.splat(0.0)
        negative = ctx.builder.fcmp_ordered("<", x, zero)
        return ctx.builder.select(negative, zero, x)

    return Epilogue(emit, (), "relu")


@functools.cache
def vector_call(function: str) -> Epilogue:
    """f(x) for a vector function `<vec> @function(<vec>)` of the vector math library."""
    def emit(ctx: EpilogueContext, x: ir.Value, row: ir.Value, col: ir.Value) -> ir.Value:
        return ctx.call(function, x)

    return Epilogue(emit, (), f"call[{function}]")


@functools.cache
def chain(*epilogues: Epilogue) -> Epilogue:
    """The epilogues applied in order; their arguments are concatenated (names must differ)."""
    args: list[tuple[str, str]] = []
    for epilogue in epilogues:
        for name, kind in epilogue.args:
            if any(name == other for other, _ in args):
                raise ValueError(f"chain: two epilogues declare the argument {name!r}; give "
                                 f"them different names.")
            args.append((name, kind))

    def emit(ctx: EpilogueContext, x: ir.Value, row: ir.Value, col: ir.Value) -> ir.Value:
        for epilogue in epilogues:
            x = epilogue.emit(ctx, x, row, col)
        return x

    return Epilogue(emit, tuple(args), " -> ".join(e.name for e in epilogues))
