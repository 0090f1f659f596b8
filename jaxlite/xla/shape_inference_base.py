"""What every shape rule shares: the rule context, error wording, and the attribute helpers.

A shape rule (mirrors one case of xla::ShapeInference) receives a `RuleContext`: the opcode,
the operand shapes, the attributes, the called computations and, for opcodes whose result
type is not a function of their operands (convert, iota, parameter, ...), the declared
shape. A broken rule raises `ValueError` naming the instruction, the opcode, the rule and
the shapes involved. This module also reads the attributes that both the shape rules and
the evaluator need in one normalized form: windows (`Window`) and convolution dimension
labels (`ConvDims`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from jaxlite.xla.ir import HloComputation
from jaxlite.xla.opcodes import Opcode
from jaxlite.xla.shape import Shape

_REQUIRED = object()
PRED = np.dtype(np.bool_)


def describe(shapes: Sequence[Shape]) -> str:
    """Shapes as a comma-separated list, for error messages."""
    return ", ".join(str(s) for s in shapes)


@dataclass(frozen=True)
class RuleContext:
    """Everything one shape rule may look at, and the ways it reports a broken rule."""

    opcode: Opcode
    operands: tuple[Shape, ...]
    attrs: Mapping[str, Any]
    called: tuple[HloComputation, ...]
    declared: Shape | None
    name: str | None

    @property
    def label(self) -> str:
        return f"%{self.name} ({self.opcode.text})" if self.name else self.opcode.text

    def fail(self, rule: str) -> NoReturn:
        raise ValueError(f"{self.label}: {rule}")

    def attr(self, key: str, default: Any = _REQUIRED) -> Any:
        if key in self.attrs:
            return self.attrs[key]
        if default is _REQUIRED:
            self.fail(f"the attribute {key!r} is missing (attributes given: "
                      f"{sorted(self.attrs) or 'none'})")
        return default

    def ints(self, key: str, default: Any = _REQUIRED) -> tuple[int, ...]:
        value = self.attr(key, default)
        if isinstance(value, (int, np.integer)):
            return (int(value),)
        try:
            return tuple(int(v) for v in value)
        except (TypeError, ValueError):
            self.fail(f"the attribute {key!r} must be a sequence of integers, got {value!r}")

    def array(self, index: int, role: str = "") -> Shape:
        shape = self.operands[index]
        if shape.is_tuple:
            what = role or f"operand {index}"
            self.fail(f"{what} must be an array, got the tuple {shape}")
        return shape

    def arrays(self) -> list[Shape]:
        return [self.array(i) for i in range(len(self.operands))]

    def need_declared(self) -> Shape:
        if self.declared is None:
            self.fail("the result type of this opcode is not implied by its operands: pass "
                      "the instruction's declared shape as `declared`")
        return self.declared

    def declared_array(self) -> Shape:
        out = self.need_declared()
        if out.is_tuple:
            self.fail(f"the result of this opcode is an array, but {out} was declared")
        return out

    def count(self, low: int, high: int | None = None) -> None:
        n = len(self.operands)
        if n < low or (high is not None and n > high):
            expected = str(low) if high == low else (
                f"at least {low}" if high is None else f"{low} to {high}")
            self.fail(f"expects {expected} operands, got {n}")

    def computation(self, index: int, role: str) -> HloComputation:
        if index >= len(self.called):
            self.fail(f"needs a {role} computation (called computation {index}), got "
                      f"{len(self.called)} called computation(s)")
        return self.called[index]

    def check_dims(self, dims: Sequence[int], rank: int, what: str) -> None:
        if any(not 0 <= d < rank for d in dims) or len(set(dims)) != len(dims):
            self.fail(f"{what} {tuple(dims)} must be distinct dimensions in [0, {rank})")

    def check_signature(self, comp: HloComputation, role: str, params: Sequence[Shape],
                        result: Shape) -> None:
        """`comp` must take exactly `params` and return `result` (layouts aside)."""
        got = comp.parameter_shapes
        if len(got) != len(params) or not all(a.same_array(b) for a, b in zip(got, params)):
            self.fail(f"the {role} computation %{comp.name} must take ({describe(params)}), "
                      f"but takes ({describe(got)})")
        if not comp.root.shape.same_array(result):
            self.fail(f"the {role} computation %{comp.name} must return {result}, but "
                      f"returns {comp.root.shape}")


def scalar(dtype: Any) -> Shape:
    """The rank-0 shape of `dtype`."""
    return Shape(np.dtype(dtype), ())


def tuple_or_single(shapes: Sequence[Shape]) -> Shape:
    """One shape as itself, several as a tuple (variadic reduce, sort, scatter)."""
    return shapes[0] if len(shapes) == 1 else Shape.tuple(list(shapes))


def check_combiner(ctx: RuleContext, comp: HloComputation, role: str,
                   dtypes: Sequence[np.dtype]) -> None:
    """A reduction's `to_apply`: 2N scalars (N accumulators, N values) to N scalars."""
    scalars = [scalar(d) for d in dtypes]
    ctx.check_signature(comp, role, scalars + scalars, tuple_or_single(scalars))


# ------------------------------------------------------------------------------- windows

@dataclass(frozen=True)
class Window:
    """A window over an array, per dimension (mirrors xla::Window).

    `base_dilation` is XLA's lhs_dilate (holes between operand elements), `window_dilation`
    its rhs_dilate (holes between window elements).
    """

    size: tuple[int, ...]
    stride: tuple[int, ...]
    pad_low: tuple[int, ...]
    pad_high: tuple[int, ...]
    base_dilation: tuple[int, ...]
    window_dilation: tuple[int, ...]
    reversal: tuple[bool, ...]

    def output_size(self, dim: int, base: int) -> int:
        """Number of window positions along `dim` over a base of `base` elements."""
        dilated_base = (base - 1) * self.base_dilation[dim] + 1 if base else 0
        padded = dilated_base + self.pad_low[dim] + self.pad_high[dim]
        extent = (self.size[dim] - 1) * self.window_dilation[dim] + 1 if self.size[dim] else 0
        if padded < extent or self.stride[dim] <= 0:
            return 0
        return (padded - extent) // self.stride[dim] + 1


_WINDOW_KEYS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal",
                "window_reversal")


def _window_field(window: Any, key: str) -> Any:
    if isinstance(window, Mapping):
        return window.get(key)
    return getattr(window, key, None)


def _reversal(window: Any, rank: int) -> tuple:
    for key in ("rhs_reversal", "window_reversal"):
        got = _window_field(window, key)
        if got is not None:
            return tuple(got)
    return (False,) * rank


def window_of(ctx: RuleContext, rank: int, key: str = "window") -> Window:
    """The instruction's window as a `Window`, checked against the operand rank.

    The attribute is a `Window`, or a mapping with XLA's text keys: `size`, `stride`, `pad`
    ((low, high) per dimension), `lhs_dilate`, `rhs_dilate`, `rhs_reversal` (also read as
    `window_reversal`); all but `size` may be missing.
    """
    value = ctx.attr(key)
    if isinstance(value, Window):
        window = value
    else:
        unknown = set(value) - set(_WINDOW_KEYS) if isinstance(value, Mapping) else set()
        if unknown:
            ctx.fail(f"unknown window fields {sorted(unknown)}; known: {_WINDOW_KEYS}")

        def field(name: str, default: int | bool) -> tuple:
            got = _window_field(value, name)
            return (default,) * rank if got is None else tuple(got)
        pad = _window_field(value, "pad")
        pads = ((0, 0),) * rank if pad is None else tuple(tuple(p) for p in pad)
        if any(len(p) != 2 for p in pads):
            ctx.fail(f"window pad must be (low, high) pairs, got {pad}")
        try:
            window = Window(tuple(int(s) for s in field("size", 1)),
                            tuple(int(s) for s in field("stride", 1)),
                            tuple(int(p[0]) for p in pads), tuple(int(p[1]) for p in pads),
                            tuple(int(d) for d in field("lhs_dilate", 1)),
                            tuple(int(d) for d in field("rhs_dilate", 1)),
                            tuple(bool(r) for r in _reversal(value, rank)))
        except (TypeError, ValueError):
            ctx.fail(f"malformed window {value!r}")
    lengths = {len(getattr(window, f)) for f in Window.__dataclass_fields__}
    if lengths != {rank}:
        ctx.fail(f"the window has {sorted(lengths)} dimensions; the operand has {rank}")
    if any(s < 0 for s in window.size) or any(s < 1 for s in window.stride) or any(
            d < 1 for d in window.base_dilation + window.window_dilation):
        ctx.fail(f"window sizes must be >= 0 and strides and dilations >= 1, got {window}")
    return window


# --------------------------------------------------------------------- convolution labels

@dataclass(frozen=True)
class ConvDims:
    """Convolution dimension numbers, read from XLA's `dim_labels` (e.g. b01f_01io->b01f)."""

    lhs_batch: int
    lhs_feature: int
    lhs_spatial: tuple[int, ...]
    rhs_input: int
    rhs_output: int
    rhs_spatial: tuple[int, ...]
    out_batch: int
    out_feature: int
    out_spatial: tuple[int, ...]


def _split_labels(ctx: RuleContext, labels: str, letters: str, rank: int,
                  what: str) -> tuple[int, int, tuple[int, ...]]:
    if len(labels) != rank:
        ctx.fail(f"dim_labels {what} part {labels!r} has {len(labels)} letters; the {what} "
                 f"has rank {rank}")
    spatial_labels = sorted(c for c in labels if c.isdigit())
    if (sorted(labels) != sorted(letters + "".join(spatial_labels))
            or spatial_labels != [str(i) for i in range(len(spatial_labels))]):
        ctx.fail(f"dim_labels {what} part {labels!r} must use {letters[0]!r}, {letters[1]!r} "
                 "and the spatial digits 0, 1, ... once each")
    spatial = tuple(labels.index(str(i)) for i in range(len(spatial_labels)))
    return labels.index(letters[0]), labels.index(letters[1]), spatial


def conv_dims_of(ctx: RuleContext, lhs_rank: int, rhs_rank: int) -> ConvDims:
    labels = ctx.attr("dim_labels")
    if isinstance(labels, ConvDims):
        return labels
    try:
        operands, out = str(labels).split("->")
        lhs, rhs = operands.split("_")
    except ValueError:
        ctx.fail(f"dim_labels must look like 'b01f_01io->b01f', got {labels!r}")
    lb, lf, ls = _split_labels(ctx, lhs, "bf", lhs_rank, "lhs")
    ri, ro, rs = _split_labels(ctx, rhs, "io", rhs_rank, "rhs")
    ob, of, os_ = _split_labels(ctx, out, "bf", lhs_rank, "output")
    if not len(ls) == len(rs) == len(os_):
        ctx.fail(f"dim_labels {labels!r} give different numbers of spatial dimensions")
    return ConvDims(lb, lf, ls, ri, ro, rs, ob, of, os_)
