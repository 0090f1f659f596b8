"""Reduction of trigonometric arguments: x = k pi/2 + r with |r| <= pi/4 (about).

Fast path (every lane): k = nearest integer to x 2/pi, then three fma steps of Cody-Waite with
pi/2 split into three parts of the working precision. The first step is exact (its result is
a multiple of the last place of x and below 1 in magnitude), the others round once, so r is
good to about half an ulp while |x| < 2**16 (float32) or 2**27 (float64).

Slow path (only when some lane has a larger finite |x|; one branch on "any lane"): a
Payne-Hanek style reduction in float64 arithmetic. 2/pi is stored as 53-bit integer chunks
C_i (2/pi = sum C_i 2**(-53 (i+1))); the products x C_i 2**(-53 (i+1)) are split exactly into
high and low parts with fma, each part is reduced modulo 4 (exactly), and the parts are summed
in double-double. float32 lanes (|x| < 2**128) use the first five chunks for every lane;
float64 lanes gather five chunks starting at the first one whose product is not a multiple of 4
(index (e - 54) / 53 for x = m 2**e), after scaling x by 2**(-53 (j + 1)) so that nothing
underflows.
"""
from __future__ import annotations

from ._ir import (
    BIAS,
    CONSTANTS,
    INT_OF,
    MANTISSA,
    V,
    fabs,
    fast_two_sum,
    floor,
    fma,
    parts,
    pow2,
    rint,
    select,
    two_prod,
    two_sum,
)
from .exp_log import round_scaled

TWO_OVER_PI = 0.6366197723675814
FAST_LIMIT = {"float": 2.0 ** 16, "double": 2.0 ** 27}
CHUNKS = CONSTANTS["2opi_chunks"]


def reduce_fast(x: V) -> tuple[V, V]:
    """(r, k) for |x| < FAST_LIMIT: x = k pi/2 + r, k an integer vector."""
    c1, c2, c3 = parts("pio2", x.elem)
    kf, k = round_scaled(x, TWO_OVER_PI)
    r = fma(kf, -c1, x)
    r = fma(kf, -c2, r)
    r = fma(kf, -c3, r)
    return select(kf.eq(0.0), x, r), k


def _mod4(t: V) -> V:
    """t - 4 round(t / 4): t reduced exactly to [-2, 2]."""
    return fma(rint(t * 0.25), -4.0, t)


def _reduce_huge(ax: V, chunk_values: list[V]) -> tuple[V, V]:
    """(r, k mod 4 as float) for a float64 |x| given as ax = |x| 2**(-53 (j + 1)) and the
    chunks C_{j + t} 2**(-53 t), t = 0..4."""
    s = e = ax.b.const("double", 0.0)
    for c in chunk_values:
        hi, lo = two_prod(ax, c)
        for term in (_mod4(hi), _mod4(lo)):
            s, err = two_sum(s, term)
            e = e + err
    s = _mod4(s)
    k = rint(s)
    fh, fl = fast_two_sum(s - k, e)
    p1, p2, _ = parts("pio2", "double")
    rh, rl = two_prod(fh, p1)
    rl = rl + fma(fh, p2, fl * p1)
    r, _ = fast_two_sum(rh, rl)
    return r, k


def reduce_slow(x: V) -> tuple[V, V]:
    """(r, k) for any finite x (float64 arithmetic inside; r in x's type)."""
    b = x.b
    if x.elem == "float":
        ax = b.cast("fpext", fabs(x), "double")
        chunks = [b.const("double", CHUNKS[t] * 2.0 ** (-53 * (t + 1))) for t in range(5)]
        r, kf = _reduce_huge(ax, chunks)
    else:
        ax = fabs(x)
        e = (b.bits(ax) >> MANTISSA["double"]) - BIAS["double"]
        ef = b.cast("sitofp", e, "double")
        j = b.cast("fptosi", floor((ef - 53.5) * (1.0 / 53.0)), "i64")
        j = select(j < 0, b.const("i64", 0), j)
        j = select(j > len(CHUNKS) - 5, b.const("i64", len(CHUNKS) - 5), j)
        scaled = ax * pow2(b.const("i64", -53) * (j + 1), "double")
        table = b.table(f"{b.fname}.two_over_pi", "double", CHUNKS)
        chunks = [b.gather(table, "double", j + t) * 2.0 ** (-53 * t) for t in range(5)]
        r, kf = _reduce_huge(scaled, chunks)
    k = b.cast("fptosi", kf, INT_OF[x.elem] if x.elem == "double" else "i32")
    if x.elem == "float":
        r = b.cast("fptrunc", r, "float")
    negative = x < 0.0
    return select(negative, -r, r), select(negative, -k, k)


def reduce(x: V) -> tuple[V, V]:
    """(r, k) with x = k pi/2 + r, |r| <= pi/4 + tiny, for every x (NaN, inf give NaN r).

    The slow path runs only when a lane has a finite |x| >= FAST_LIMIT.
    """
    b = x.b
    r, k = reduce_fast(x)
    ax = fabs(x)
    huge = (ax >= FAST_LIMIT[x.elem]) & (ax < float("inf"))
    any_huge = b.reduce_or(huge)
    entry = b.block
    slow, join = f"{b.prefix}reduce_slow", f"{b.prefix}reduce_join"
    b.cond_br(any_huge, slow, join)
    b.label(slow)
    rs, ks = reduce_slow(x)
    rs = select(huge, rs, r)
    ks = select(huge, ks, k)
    b.br(join)
    b.label(join)
    return b.phi(x.elem, [(r, entry), (rs, slow)]), b.phi(k.elem, [(k, entry), (ks, slow)])
