"""Building blocks of the primitives' lowering rules (jaxpr equation -> HLO instructions).

Each helper adds instructions to the rule's computation (`ctx.builder`) and works out the
result shape from its operands, so that rules state only which operations they use. Also
the pieces several rules share: the rule of a primitive that is one elementwise opcode,
identity values and reducers of reductions, lexicographic max/min of complex numbers (XLA
orders them by real part, then imaginary part), and calls of nested jaxprs.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlite.core import dtypes
from jaxlite.core.jaxpr import ClosedJaxpr
from jaxlite.core.shape_poly import is_symbolic_dim
from jaxlite.interpreters.lowering import LoweringContext
from jaxlite.xla.ir import HloComputation, HloInstruction
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape, xla_type_name

Rule = Callable[..., Any]


# ------------------------------------------------------------------------- instructions

def emit(ctx: LoweringContext, opcode: Opcode, shape: Shape,
         operands: Sequence[HloInstruction] = (), **attrs: Any) -> HloInstruction:
    """Add one instruction (attributes as keywords) to the rule's computation."""
    return ctx.builder.add(opcode, shape, operands, attrs)


def result(ctx: LoweringContext, opcode: Opcode, operands: Sequence[HloInstruction] = (),
           **attrs: Any) -> HloInstruction:
    """One instruction whose shape is the equation's (only) output."""
    return emit(ctx, opcode, ctx.shape(ctx.avals_out[0]), operands, **attrs)


def unary(ctx: LoweringContext, opcode: Opcode, x: HloInstruction,
          dtype: Any = None) -> HloInstruction:
    """`opcode(x)`, of `x`'s shape and `dtype` (default: `x`'s)."""
    shape = x.shape if dtype is None else x.shape.with_dtype(dtype)
    return emit(ctx, opcode, shape, (x,))


def binary(ctx: LoweringContext, opcode: Opcode, x: HloInstruction, y: HloInstruction,
           dtype: Any = None) -> HloInstruction:
    """`opcode(x, y)` on operands of one shape, of `dtype` (default: `x`'s)."""
    shape = x.shape if dtype is None else x.shape.with_dtype(dtype)
    return emit(ctx, opcode, shape, (x, y))


def compare(ctx: LoweringContext, x: HloInstruction, y: HloInstruction,
            direction: str) -> HloInstruction:
    """`compare(x, y)` with an XLA direction (EQ, NE, LT, LE, GT, GE): a pred array."""
    return emit(ctx, Opcode.COMPARE, x.shape.with_dtype(np.bool_), (x, y), direction=direction)


def select(ctx: LoweringContext, pred: HloInstruction, on_true: HloInstruction,
           on_false: HloInstruction) -> HloInstruction:
    return emit(ctx, Opcode.SELECT, on_true.shape, (pred, on_true, on_false))


def constant(ctx: LoweringContext, value: Any, dtype: Any,
             dims: Sequence[int] = ()) -> HloInstruction:
    """The scalar `value` of `dtype`, broadcast to `dims` when they are given. A symbolic
    dimension (shape polymorphism) gives a constant whose literal is that expression: it
    takes its value when the module is specialized to concrete sizes."""
    if is_symbolic_dim(value):
        literal = np.array(value, dtype=object)
        scalar = emit(ctx, Opcode.CONSTANT, Shape(np.dtype(dtype), ()), literal=literal)
        return broadcast(ctx, scalar, dims, ()) if len(dims) else scalar
    literal = np.asarray(value).astype(np.dtype(dtype))
    scalar = emit(ctx, Opcode.CONSTANT, Shape(literal.dtype, ()), literal=literal)
    return broadcast(ctx, scalar, dims, ()) if len(dims) else scalar


def full_like(ctx: LoweringContext, x: HloInstruction, value: Any) -> HloInstruction:
    """An array of `x`'s shape and dtype filled with `value`."""
    return constant(ctx, value, x.shape.dtype, x.shape.dims)


def broadcast(ctx: LoweringContext, x: HloInstruction, dims: Sequence[int],
              dimensions: Sequence[int]) -> HloInstruction:
    """XLA's broadcast: operand dimension i becomes result dimension `dimensions[i]`."""
    return emit(ctx, Opcode.BROADCAST, x.shape.with_dims(tuple(dims)), (x,),
                dimensions=tuple(dimensions))


def broadcast_scalar_to(ctx: LoweringContext, x: HloInstruction,
                        like: HloInstruction) -> HloInstruction:
    """A 0-d `x` broadcast to the dimensions of `like` (other `x` unchanged)."""
    if x.shape.rank == 0 and like.shape.rank > 0:
        return broadcast(ctx, x, like.shape.dims, ())
    return x


def broadcast_in_dim(ctx: LoweringContext, x: HloInstruction, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> HloInstruction:
    """lax's broadcast_in_dim: XLA's broadcast maps dimensions of equal size only, so the
    size-1 dimensions that grow are reshaped away first."""
    kept = [i for i, (size, d) in enumerate(zip(x.shape.dims, broadcast_dimensions))
            if size == shape[d]]
    x = reshape(ctx, x, [x.shape.dims[i] for i in kept])
    if x.shape.dims == tuple(shape):
        return x
    return broadcast(ctx, x, shape, [broadcast_dimensions[i] for i in kept])


def reshape(ctx: LoweringContext, x: HloInstruction, dims: Sequence[int]) -> HloInstruction:
    if tuple(dims) == x.shape.dims:
        return x
    return emit(ctx, Opcode.RESHAPE, x.shape.with_dims(tuple(dims)), (x,))


def transpose(ctx: LoweringContext, x: HloInstruction,
              permutation: Sequence[int]) -> HloInstruction:
    if tuple(permutation) == tuple(range(x.shape.rank)):
        return x
    dims = tuple(x.shape.dims[p] for p in permutation)
    return emit(ctx, Opcode.TRANSPOSE, x.shape.with_dims(dims), (x,),
                dimensions=tuple(permutation))


def convert(ctx: LoweringContext, x: HloInstruction, dtype: Any) -> HloInstruction:
    """`x` converted to `dtype`; complex to real keeps the real part, as lax does."""
    dtype = np.dtype(dtype)
    if x.shape.dtype == dtype:
        return x
    if dtypes.is_complex(x.shape.dtype) and not dtypes.is_complex(dtype):
        x = unary(ctx, Opcode.REAL, x, dtypes.real_dtype(x.shape.dtype))
        if x.shape.dtype == dtype:
            return x
    return unary(ctx, Opcode.CONVERT, x, dtype)


def get_tuple_element(ctx: LoweringContext, t: HloInstruction, index: int) -> HloInstruction:
    shapes = t.shape.tuple_shapes or ()
    return emit(ctx, Opcode.GET_TUPLE_ELEMENT, shapes[index], (t,), index=index)


def emit_results(ctx: LoweringContext, opcode: Opcode, shapes: Sequence[Shape],
                 operands: Sequence[HloInstruction], attributes: dict,
                 computations: tuple = ()) -> list[HloInstruction]:
    """One instruction with a result of each of `shapes` (a tuple when there are several),
    returned as a list of results."""
    shape = shapes[0] if len(shapes) == 1 else Shape.tuple(list(shapes))
    out = ctx.builder.add(opcode, shape, operands, attributes, computations)
    if len(shapes) == 1:
        return [out]
    return [get_tuple_element(ctx, out, i) for i in range(len(shapes))]


def make_tuple(ctx: LoweringContext, items: Sequence[HloInstruction]) -> HloInstruction:
    return emit(ctx, Opcode.TUPLE, Shape.tuple([i.shape for i in items]), items)


def logical(ctx: LoweringContext, opcode: Opcode, *preds: HloInstruction) -> HloInstruction:
    """`and`/`or` of several pred arrays, or `not` of one."""
    if opcode is Opcode.NOT:
        return unary(ctx, opcode, preds[0])
    out = preds[0]
    for p in preds[1:]:
        out = binary(ctx, opcode, out, p)
    return out


# -------------------------------------------------------------------------- elementwise

def elementwise_rule(opcode: Opcode) -> Rule:
    """The lowering rule of a primitive that is the one elementwise `opcode`.

    The result takes the equation's output dtype, so that comparisons-like opcodes (is-finite)
    and dtype-changing ones (abs and real of complex, complex) need nothing more.
    """
    def rule(ctx: LoweringContext, *operands: HloInstruction, **params: Any) -> HloInstruction:
        return emit(ctx, opcode, ctx.shape(ctx.avals_out[0]), operands)
    rule.__name__ = f"lower_{opcode.name.lower()}"
    return rule


def _complex_parts(ctx: LoweringContext,
                   x: HloInstruction) -> tuple[HloInstruction, HloInstruction]:
    real_dtype = dtypes.real_dtype(x.shape.dtype)
    return unary(ctx, Opcode.REAL, x, real_dtype), unary(ctx, Opcode.IMAG, x, real_dtype)


def _extremum_opcode(dtype: np.dtype, larger: bool) -> Opcode:
    # Of bools, the larger is the logical or, the smaller the logical and.
    if dtype == np.bool_:
        return Opcode.OR if larger else Opcode.AND
    return Opcode.MAXIMUM if larger else Opcode.MINIMUM


def extremum(ctx: LoweringContext, x: HloInstruction, y: HloInstruction,
             larger: bool) -> HloInstruction:
    """max(x, y) (or min) elementwise; complex numbers are ordered lexicographically.

    XLA's maximum and minimum take no complex operands: those compare the real parts, and
    the imaginary parts where the real parts are equal, and select.
    """
    if not dtypes.is_complex(x.shape.dtype):
        return binary(ctx, _extremum_opcode(x.shape.dtype, larger), x, y)
    (x_re, x_im), (y_re, y_im) = _complex_parts(ctx, x), _complex_parts(ctx, y)
    direction = "GT" if larger else "LT"
    x_wins = select(ctx, compare(ctx, x_re, y_re, "EQ"), compare(ctx, x_im, y_im, direction),
                    compare(ctx, x_re, y_re, direction))
    return select(ctx, x_wins, x, y)


def extremum_rule(larger: bool) -> Rule:
    """The rule of lax's max (`larger`) or min."""
    def rule(ctx: LoweringContext, x: HloInstruction, y: HloInstruction) -> HloInstruction:
        return extremum(ctx, x, y, larger)
    rule.__name__ = "lower_max" if larger else "lower_min"
    return rule


def extremum_computation(ctx: LoweringContext, dtype: Any, larger: bool) -> HloComputation:
    """The scalar reducer `(a, b) -> max(a, b)` (or min), complex dtypes included."""
    dtype = np.dtype(dtype)
    if not dtypes.is_complex(dtype):
        return ctx.scalar_computation(_extremum_opcode(dtype, larger), dtype)

    def build() -> HloComputation:
        name = f"{'maximum' if larger else 'minimum'}_{xla_type_name(dtype)}"
        builder = ctx.new_builder(name)
        inner = ctx.with_builder(builder)
        scalar = Shape(dtype, ())
        lhs, rhs = builder.parameter(scalar, "lhs"), builder.parameter(scalar, "rhs")
        return builder.build(extremum(inner, lhs, rhs, larger))
    return ctx.cached_computation(("extremum", larger, dtype), build)


def select_n(ctx: LoweringContext, which: HloInstruction,
             cases: Sequence[HloInstruction]) -> HloInstruction:
    """The case `which` names, per element: a select for a bool `which`, else a balanced tree
    of `which < k` selects (out-of-range indices reach the first or the last case)."""
    which = broadcast_scalar_to(ctx, which, cases[0])
    if len(cases) == 1:
        return cases[0]
    if which.shape.dtype == np.bool_:
        return select(ctx, which, cases[1], cases[0])

    def tree(first: int, stop: int) -> HloInstruction:
        if stop - first == 1:
            return cases[first]
        middle = (first + stop) // 2
        below = compare(ctx, which, full_like(ctx, which, middle), "LT")
        return select(ctx, below, tree(first, middle), tree(middle, stop))
    return tree(0, len(cases))


def clamp(ctx: LoweringContext, low: HloInstruction, x: HloInstruction,
          high: HloInstruction) -> HloInstruction:
    """`x` limited to [low, high]; 0-d bounds are broadcast. XLA's clamp takes neither bool
    nor complex operands: those are max then min (lexicographic for complex)."""
    low, high = broadcast_scalar_to(ctx, low, x), broadcast_scalar_to(ctx, high, x)
    if x.shape.dtype == np.bool_ or dtypes.is_complex(x.shape.dtype):
        return extremum(ctx, extremum(ctx, x, low, larger=True), high, larger=False)
    return emit(ctx, Opcode.CLAMP, x.shape, (low, x, high))


def integer_power(ctx: LoweringContext, x: HloInstruction, exponent: int) -> HloInstruction:
    """`x ** exponent` by repeated squaring, multiplying in the same order as the reference
    (so that rounding and wrap-around agree); a negative power divides one by the result."""
    if exponent == 0:
        return full_like(ctx, x, 1)
    base, remaining, acc = x, abs(exponent), None
    while remaining:
        if remaining & 1:
            acc = base if acc is None else binary(ctx, Opcode.MULTIPLY, acc, base)
        remaining >>= 1
        if remaining:
            base = binary(ctx, Opcode.MULTIPLY, base, base)
    assert acc is not None
    if exponent < 0:
        acc = binary(ctx, Opcode.DIVIDE, full_like(ctx, x, 1), acc)
    return acc


def lower_integer_pow(ctx: LoweringContext, x: HloInstruction, *, y: int) -> HloInstruction:
    """The rule of lax's integer_pow (here, beside its expansion, to keep arithmetic.py
    short)."""
    return integer_power(ctx, x, y)


def lower_conj(ctx: LoweringContext, x: HloInstruction, *,
               input_dtype: np.dtype) -> HloInstruction:
    """The rule of lax's conj: complex(real(x), -imag(x)); a real `x` is converted to the
    complex result type."""
    dtype = ctx.shape(ctx.avals_out[0]).dtype
    if not dtypes.is_complex(x.shape.dtype):
        return convert(ctx, x, dtype)
    real, imag = _complex_parts(ctx, x)
    return binary(ctx, Opcode.COMPLEX, real, unary(ctx, Opcode.NEGATE, imag), dtype)


# --------------------------------------------------------------------------- reductions

def zero(dtype: Any) -> Any:
    """The identity of add, or, xor."""
    return 0


def one(dtype: Any) -> Any:
    """The identity of multiply."""
    return 1


def lowest(dtype: Any) -> Any:
    """The identity of max: -inf for floats (complex: -inf + 0j), the least value else."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return -np.inf
    if dtype == np.bool_:
        return False
    return np.iinfo(dtype).min


def highest(dtype: Any) -> Any:
    """The identity of min: inf for floats, the greatest value else."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.inf
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).max


def all_ones(dtype: Any) -> Any:
    """The identity of bitwise and: every bit set (True for bool)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).max if dtypes.is_unsigned(dtype) else -1


def widen_low_precision(dtype: Any) -> np.dtype:
    """float32 for float16 and bfloat16 (sums and products are computed in it and rounded
    once, as the references and XLA's CPU compiler do); other dtypes unchanged."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype in (np.float16, dtypes.bfloat16) else dtype


def reduce(ctx: LoweringContext, xs: Sequence[HloInstruction], axes: Sequence[int],
           computation: HloComputation, inits: Sequence[Any]) -> HloInstruction:
    """`reduce(*xs, *inits)` over `axes` with the scalar reducer `computation` (of 2N
    scalars); a tuple of N results when N > 1."""
    init_values = [constant(ctx, init, x.shape.dtype) for x, init in zip(xs, inits)]
    kept = tuple(s for d, s in enumerate(xs[0].shape.dims) if d not in axes)
    shapes = [x.shape.with_dims(kept) for x in xs]
    shape = shapes[0] if len(shapes) == 1 else Shape.tuple(shapes)
    return ctx.builder.add(Opcode.REDUCE, shape, (*xs, *init_values),
                           {"dimensions": tuple(sorted(axes))}, (computation,))


def reduction_computation(ctx: LoweringContext, opcode: Opcode, dtype: Any) -> HloComputation:
    """The scalar reducer of `opcode`; max and min order complex numbers
    lexicographically."""
    if opcode in (Opcode.MAXIMUM, Opcode.MINIMUM):
        return extremum_computation(ctx, dtype, opcode is Opcode.MAXIMUM)
    return ctx.scalar_computation(opcode, dtype)


def reduction_rule(opcode: Opcode, identity: Callable[[np.dtype], Any]) -> Rule:
    """The rule of a reduction over `axes` with a binary opcode and its identity."""
    def rule(ctx: LoweringContext, x: HloInstruction, *,
             axes: Sequence[int]) -> HloInstruction:
        if all(x.shape.dims[d] == 1 for d in axes):
            # One term per output: XLA's simplifier drops the identity start (JAX's sum of
            # [-0.] is -0., its product of [0 + inf j] is 0 + inf j), as the references do.
            return reshape(ctx, x, [n for d, n in enumerate(x.shape.dims) if d not in axes])
        dtype = x.shape.dtype
        wide = widen_low_precision(dtype) if opcode in (Opcode.ADD, Opcode.MULTIPLY) else dtype
        computation = reduction_computation(ctx, opcode, wide)
        out = reduce(ctx, [convert(ctx, x, wide)], axes, computation, [identity(wide)])
        return convert(ctx, out, dtype)
    rule.__name__ = f"lower_reduce_{opcode.name.lower()}"
    return rule


def cumulative_window(ctx: LoweringContext, x: HloInstruction, axis: int, reverse: bool,
                      computation: HloComputation, init: Any) -> HloInstruction:
    """The running reduction of `x` along `axis` as XLA's reduce-window: a window as long as
    the axis, padded with n - 1 identities before (after, if `reverse`) the elements, so
    that the window at position i covers elements 0..i (i..n-1). The pass
    xla/passes/cumulative_scan.py makes it a scan of blocks when the axis is long."""
    n, rank = x.shape.dims[axis], x.shape.rank
    size, pad = [1] * rank, [(0, 0)] * rank
    size[axis] = n
    pad[axis] = (0, n - 1) if reverse else (n - 1, 0)
    window = {"size": tuple(size), "pad": tuple(pad)}
    return ctx.builder.add(Opcode.REDUCE_WINDOW, x.shape, (x, constant(ctx, init, x.shape.dtype)),
                           {"window": window}, (computation,))


# -------------------------------------------------------------------------------- calls

def call_jaxpr(ctx: LoweringContext, closed: ClosedJaxpr, operands: Sequence[HloInstruction],
               name: str) -> list[HloInstruction]:
    """Call the computation of a nested jaxpr; returns one instruction per output."""
    computation = ctx.lower_jaxpr_as_computation(closed, name)
    call = ctx.builder.add(Opcode.CALL, computation.root.shape, operands, None, (computation,),
                           name=name)
    if len(closed.out_avals) == 1:
        return [call]
    return [get_tuple_element(ctx, call, i) for i in range(len(closed.out_avals))]


def computation_name(name: Any) -> str:
    """A name usable for a computation: letters, digits, `_` and `-` (`<lambda>` becomes
    `lambda`)."""
    text = "".join(c if c.isalnum() or c in "_-" else "_" for c in str(name)).strip("_")
    return text or "call"
