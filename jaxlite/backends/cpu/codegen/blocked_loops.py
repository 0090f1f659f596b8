"""Loop nests cut into chunks for accurate sums (the loop side of XLA's CPU tree reduction).

A reduction's accumulators each take a bounded number of additions: `chunk_steps` decides,
from the innermost dimension out, where the loops are cut into chunks (a chunk loop of step
s runs the loop below it over [c, min(c + s, end))), and `blocked_nest` emits the loops,
calling `fold(level)` at the end of each chunk so that the caller can add the accumulators
inside the chunk into the chunk's own accumulator (level 0 is the innermost cut). A step of
1 on an outer dimension means a cut after each of its iterations.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from jaxlite.backends.cpu.codegen.elemental import Elemental
from jaxlite.backends.cpu.codegen.indexing import Lin, Var
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder
from jaxlite.backends.cpu.codegen.loops import Emitters, i64_add, vector_loop

__all__ = ["chunk_steps", "blocked_nest"]


def chunk_steps(extents: Sequence[int], width: int, unroll: int, hot_fan_in: int,
                fan_in: int) -> list[list[int]]:
    """Per loop (outermost first), its chunk steps in increasing order.

    The innermost loop runs `width` lanes wide, `unroll` vectors a step (as `vector_loop`;
    width 1: scalar); the hot accumulators take at most `hot_fan_in` additions per lane
    between folds, the chunk accumulators `fan_in`.
    """
    steps: list[list[int]] = [[] for _ in extents]
    if not extents:
        return steps
    unit = width * max(1, unroll) if width > 1 else 1
    n = extents[-1]
    adds, limit = float(_additions_per_lane(n, width, unit)), hot_fan_in
    if adds > limit:  # chunks of whole unrolled steps
        steps[-1] = [hot_fan_in * unit]
        while math.ceil(n / steps[-1][-1]) > fan_in:
            steps[-1].append(steps[-1][-1] * fan_in)
        adds, limit = float(math.ceil(n / steps[-1][-1])), fan_in
    for position in reversed(range(len(extents) - 1)):
        n = extents[position]
        if adds * n <= limit:
            adds *= n
            continue
        # Cut after every `group` iterations, then group the cuts `fan_in` at a time.
        own = [max(1, int(limit // adds))]
        while math.ceil(n / own[-1]) > fan_in:
            own.append(own[-1] * fan_in)
        steps[position] = own
        adds, limit = float(math.ceil(n / own[-1])), fan_in
    return steps


def _additions_per_lane(n: int, width: int, unit: int) -> int:
    """The most additions one accumulator gets from `vector_loop` over n elements: the first
    vector copy takes the unrolled steps and the single vectors, the scalar the tail."""
    if width == 1:
        return n
    return max(n // unit + n % unit // width, n % width)


def _min(fb: FunctionBuilder, a: str, b: str) -> str:
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
        return str(min(int(a), int(b)))
    less = fb.op(f"icmp slt i64 {a}, {b}", "lt")
    return fb.op(f"select i1 {less}, i64 {a}, i64 {b}", "min")


def blocked_nest(ems: Emitters, order: Sequence[int], extents: Sequence[int],
                 steps: Sequence[Sequence[int]], width: int, unroll: int,
                 body: Callable[[Elemental, dict[int, Lin], int], None],
                 fold: Callable[[int], None], vector_inner: bool = True,
                 body_width: int = 1) -> None:
    """Loops over the dimensions `order` (outermost first) cut at `steps` (one list per
    loop, from `chunk_steps`), the innermost vectorized when `vector_inner`; the body gets
    the emitter, every dimension's index and the copy number; scalar bodies run at
    `body_width` lanes. `fold(level)` runs at the end of each chunk."""
    fb = ems.base.fb
    levels: dict[tuple[int, int], int] = {}
    for position in reversed(range(len(order))):
        for s in steps[position]:
            levels[(position, s)] = len(levels)
    parts: dict[int, Lin] = {}
    last = len(order) - 1

    def dim(position: int, lo: str, hi: str, cuts: Sequence[int]) -> None:
        d = order[position]
        if cuts and cuts[-1] > 1:
            s = cuts[-1]
            # At most `fan_in` chunks per loop: unrolled, the nest of levels copied the
            # hot loop up to 2**levels times (a mean of 100000-element rows: 12x the machine
            # code, 35 % slower).
            with fb.loop(lo, hi, s, f"c{d}_", unroll=False) as c:
                ems.push()
                dim(position, c, _min(fb, i64_add(fb, c, s), hi), cuts[:-1])
                ems.pop()
                fold(levels[(position, s)])
            return
        if position == last and vector_inner:
            def inner(em: Elemental, lin: Lin, copy: int) -> None:
                parts[d] = lin
                body(em, dict(parts), copy)
            vector_loop(fb, ems, lo, hi, extents[d], width, unroll, inner, f"d{d}_")
            return
        with fb.loop(lo, hi, 1, f"d{d}_") as i:
            parts[d] = Lin.of(Var(i, "scalar", 0, extents[d]))
            ems.push()
            if position == last:
                body(ems.at(body_width), dict(parts), 0)
            else:
                dim(position + 1, "0", str(extents[order[position + 1]]), steps[position + 1])
            ems.pop()
            if cuts:  # a step of 1: a cut after each iteration
                fold(levels[(position, 1)])

    if not order:
        ems.push()
        body(ems.at(body_width), {}, 0)
        ems.pop()
        return
    dim(0, "0", str(extents[order[0]]), steps[0])
