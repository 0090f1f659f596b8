"""int32 index arithmetic for kernel IR, folded as it is built (so that the rendered C
reads `i * 33 + j`, not `((i * 33) + (j * 1)) + 0`), and the maps between a logical
multi-index and the linear position of an element in memory under a shape's layout."""
from __future__ import annotations

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.xla.shape import Shape

__all__ = ["add", "delinearize", "div", "linear_index", "mul", "rem", "strides"]


def _value(e: ir.Expr) -> int | None:
    return e.value if isinstance(e, ir.Const) else None


def _int(e: ir.Expr | int) -> ir.Expr:
    return ir.index_const(e) if isinstance(e, int) else e


def add(a: ir.Expr | int, b: ir.Expr | int) -> ir.Expr:
    a, b = _int(a), _int(b)
    if _value(a) is not None and _value(b) is not None:
        return ir.index_const(_value(a) + _value(b))
    if _value(a) == 0:
        return b
    if _value(b) == 0:
        return a
    return ir.Binary("add", a, b)


def mul(a: ir.Expr, factor: int) -> ir.Expr:
    if factor == 0:
        return ir.index_const(0)
    if factor == 1:
        return a
    if _value(a) is not None:
        return ir.index_const(_value(a) * factor)
    return ir.Binary("mul", a, ir.index_const(factor))


def div(a: ir.Expr, divisor: int) -> ir.Expr:
    """a / divisor for a >= 0."""
    if divisor == 1:
        return a
    if _value(a) is not None:
        return ir.index_const(_value(a) // divisor)
    return ir.Binary("div", a, ir.index_const(divisor))


def rem(a: ir.Expr, divisor: int) -> ir.Expr:
    """a % divisor for a >= 0."""
    if divisor == 1:
        return ir.index_const(0)
    if _value(a) is not None:
        return ir.index_const(_value(a) % divisor)
    return ir.Binary("rem", a, ir.index_const(divisor))


def strides(shape: Shape) -> list[int]:
    """Elements between neighbours along each logical dimension, in memory."""
    result, step = [0] * len(shape.dims), 1
    for d in shape.layout:  # minor to major
        result[d] = step
        step *= shape.dims[d]
    return result


def linear_index(index: tuple, shape: Shape) -> ir.Expr:
    """The memory position of the element at logical `index` of `shape`."""
    total: ir.Expr = ir.index_const(0)
    for i, stride, size in zip(index, strides(shape), shape.dims):
        if size != 1:
            total = add(total, mul(i, stride))
    return total


def delinearize(linear: ir.Expr, shape: Shape) -> tuple:
    """The logical index of the element at memory position `linear` (< shape.size)."""
    index: list[ir.Expr] = [ir.index_const(0)] * len(shape.dims)
    major = shape.layout[-1] if shape.layout else None
    for d, stride in enumerate(strides(shape)):
        if shape.dims[d] == 1:
            continue
        position = div(linear, stride)
        index[d] = position if d == major else rem(position, shape.dims[d])
    return tuple(index)
