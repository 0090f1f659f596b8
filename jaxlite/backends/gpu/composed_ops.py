"""HLO elementwise operations that have no kernel IR operation of their own, written with
the IR's arithmetic (so that fusions holding them stay on the device):

- `erf_inv` of float32 (16-bit floats are computed as float32): CHLO's expansion, the
  polynomials of Giles in w - 2.5 (w < 5) or sqrt(w) - 3, where w = -log1p(-x*x), as the
  cpu backend computes it (`xla.cpu_f32_kernels.erf_inv_f32`): +-inf at +-1, NaN outside
  [-1, 1]. float64 has its own, longer expansion in XLA and is not built here.
- `popcnt` of any integer type: the bits counted in parallel within a 64-bit unsigned
  word (sums of pairs, nibbles, bytes), whose wrap-around arithmetic C defines.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from jaxlite.backends.gpu import kernel_ir as ir
from jaxlite.xla.cpu_f32_kernels import ERF_INV_LARGE_W, ERF_INV_SMALL_W

__all__ = ["erf_inv", "popcnt"]

Let = Callable[[ir.Expr], ir.Expr]  # binds an expression to a variable (`Elemental.let`)


def erf_inv(x: ir.Expr, let: Let) -> ir.Expr:
    """The inverse error function of a float32 `x` (`lax.erf_inv`)."""
    if x.dtype != "float32":
        raise ValueError(f"erf-inv of {x.dtype}: only float32 is built")

    def f32(value: float) -> ir.Const:
        return ir.Const(value, "float32")
    w = let(ir.Unary("neg", ir.Unary("log1p", ir.Binary("mul", x, ir.Unary("neg", x)))))
    small = let(ir.Binary("lt", w, f32(5.0)))
    u = let(ir.Select(small, ir.Binary("sub", w, f32(2.5)),
                      ir.Binary("sub", ir.Unary("sqrt", w), f32(3.0))))
    p: ir.Expr = ir.Select(small, f32(ERF_INV_SMALL_W[0]), f32(ERF_INV_LARGE_W[0]))
    for a, b in zip(ERF_INV_SMALL_W[1:], ERF_INV_LARGE_W[1:]):
        p = let(ir.Binary("add", ir.Binary("mul", p, u), ir.Select(small, f32(a), f32(b))))
    at_one = ir.Binary("eq", ir.Unary("abs", x), f32(1.0))
    return ir.Select(at_one, ir.Binary("mul", x, f32(np.inf)), ir.Binary("mul", p, x))


def popcnt(x: ir.Expr, let: Let) -> ir.Expr:
    """The number of set bits of an integer `x`, in `x`'s type (`lax.population_count`)."""
    bits = ir.dtype_of(x.dtype).itemsize * 8
    unsigned = f"uint{bits}"
    raw = x if x.dtype == unsigned else ir.Bitcast(x, unsigned)
    word = let(raw if bits == 64 else ir.Cast(raw, "uint64"))  # zero-extended

    def u64(value: int) -> ir.Const:
        return ir.Const(value, "uint64")

    def masked(value: ir.Expr, mask: int) -> ir.Expr:
        return ir.Binary("and", value, u64(mask))
    pairs = let(ir.Binary("sub", word, masked(ir.Binary("shr", word, u64(1)),
                                              0x5555555555555555)))
    nibbles = let(ir.Binary("add", masked(pairs, 0x3333333333333333),
                            masked(ir.Binary("shr", pairs, u64(2)), 0x3333333333333333)))
    octets = let(masked(ir.Binary("add", nibbles, ir.Binary("shr", nibbles, u64(4))),
                        0x0F0F0F0F0F0F0F0F))
    # the byte counts summed into the top byte by one multiplication (mod 2**64)
    total = ir.Binary("shr", ir.Binary("mul", octets, u64(0x0101010101010101)), u64(56))
    return ir.Cast(total, x.dtype)
