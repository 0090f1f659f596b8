"""Loop nests for kernels: scalar outer loops, one vectorized innermost loop (the part of XLA's
`llvm_ir::ForLoopNest` and its CPU loop vectorization that jaxlite does by hand).

The innermost loop runs in three parts: a main loop of `unroll` vectors per step (independent
copies of the body hide each other's latency), a loop of single vectors, and a scalar tail for
the last elements that do not fill a vector. The body is called once per copy with the
emitter for its lane count, the index of the loop as a `Lin` (a lanes variable whose lane 0
is a multiple of the width) and the copy's number, so that reductions can keep one
accumulator per copy. Loops whose bounds are known skip the parts that never run.
"""
from __future__ import annotations

from typing import Callable, Sequence

from jaxlite.backends.cpu.codegen.elemental import Elemental
from jaxlite.backends.cpu.codegen.indexing import Lin, Var
from jaxlite.backends.cpu.codegen.llvm_text import FunctionBuilder

__all__ = ["Body", "Emitters", "vector_loop", "loop_nest", "i64_add", "i64_sub",
           "i64_round_down"]

# body(emitter, index of the innermost loop, copy number)
Body = Callable[[Elemental, Lin, int], None]


class Emitters:
    """One `Elemental` per lane count, sharing bound values."""

    def __init__(self, base: Elemental) -> None:
        self._by_width = {base.width: base}
        self.base = base
        self._depth = 0

    def at(self, width: int) -> Elemental:
        if width not in self._by_width:
            em = self.base.with_width(width)
            for _ in range(self._depth):  # as deep in scopes as its siblings
                em.push()
            self._by_width[width] = em
        return self._by_width[width]

    def push(self) -> None:
        self._depth += 1
        for em in self._by_width.values():
            em.push()

    def pop(self) -> None:
        self._depth -= 1
        for em in self._by_width.values():
            em.pop()


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


def i64_add(fb: FunctionBuilder, a: str, b: str | int) -> str:
    b = str(b)
    if _is_int(a) and _is_int(b):
        return str(int(a) + int(b))
    if b == "0":
        return a
    return fb.op(f"add nsw i64 {a}, {b}", "n")


def i64_sub(fb: FunctionBuilder, a: str, b: str | int) -> str:
    b = str(b)
    if _is_int(a) and _is_int(b):
        return str(int(a) - int(b))
    if b == "0":
        return a
    return fb.op(f"sub nsw i64 {a}, {b}", "n")


def i64_round_down(fb: FunctionBuilder, a: str, multiple: int) -> str:
    """a - a % multiple, for a >= 0."""
    if _is_int(a):
        return str(int(a) // multiple * multiple)
    if multiple == 1:
        return a
    rem = fb.op(f"urem i64 {a}, {multiple}", "n")
    return fb.op(f"sub nsw i64 {a}, {rem}", "n")


def vector_loop(fb: FunctionBuilder, ems: Emitters, start: str, end: str, extent: int,
                width: int, unroll: int, body: Body, hint: str = "j") -> None:
    """`for j in [start, end)` with the body vectorized `width` lanes wide (see the module
    docstring). `start` must be a multiple of `width`; every index lies in [0, extent)."""
    if width > 1 and extent >= width:
        span = i64_sub(fb, end, start)
        step = width * max(1, unroll)
        main_end = i64_add(fb, start, i64_round_down(fb, span, step))
        if not (_is_int(main_end) and _is_int(start) and int(main_end) <= int(start)):
            with fb.loop(start, main_end, step, hint) as j:
                for u in range(max(1, unroll)):
                    ref = j if u == 0 else fb.op(f"add nuw nsw i64 {j}, {u * width}", hint)
                    _call(ems, width, Var(ref, "lanes", 0, extent, width), body, u)
        start = main_end
        if unroll > 1:
            vec_end = i64_add(fb, start, i64_round_down(fb, i64_sub(fb, end, start), width))
            if not (_is_int(vec_end) and _is_int(start) and int(vec_end) <= int(start)):
                with fb.loop(start, vec_end, width, hint + "v") as j:
                    _call(ems, width, Var(j, "lanes", 0, extent, width), body, 0)
            start = vec_end
    if _is_int(start) and _is_int(end) and int(start) >= int(end):
        return
    if _is_int(start) and _is_int(end) and int(end) - int(start) == 1:
        _call(ems, 1, None, body, 0, constant=int(start), extent=extent)
        return
    with fb.loop(start, end, 1, hint + "s") as j:
        _call(ems, 1, Var(j, "scalar", 0, extent), body, 0)


def _call(ems: Emitters, width: int, var: Var | None, body: Body, copy: int,
          constant: int = 0, extent: int = 0) -> None:
    em = ems.at(width)
    ems.push()
    body(em, Lin.of(var) if var is not None else Lin.of(constant), copy)
    ems.pop()


def loop_nest(fb: FunctionBuilder, ems: Emitters, order: Sequence[int],
              extents: Sequence[int], width: int, unroll: int,
              body: Callable[[Elemental, dict[int, Lin], int], None],
              outer_range: tuple[str, str] | None = None,
              vector_inner: bool = True) -> None:
    """Loops over the dimensions `order` (outermost first), the last one vectorized when
    `vector_inner`; the outermost runs over `outer_range` (start, end) when given. The body
    gets the emitter, the index of every dimension and the copy number."""
    order = list(order)
    if not order:
        ems.push()
        body(ems.at(1), {}, 0)
        ems.pop()
        return
    parts: dict[int, Lin] = {}

    def level(position: int) -> None:
        d = order[position]
        start, end = ("0", str(extents[d]))
        if position == 0 and outer_range is not None:
            start, end = outer_range
        if position == len(order) - 1 and vector_inner:
            def inner(em: Elemental, lin: Lin, copy: int) -> None:
                parts[d] = lin
                body(em, dict(parts), copy)
            vector_loop(fb, ems, start, end, extents[d], width, unroll, inner, f"d{d}_")
            return
        def deeper() -> None:
            ems.push()
            if position == len(order) - 1:
                body(ems.at(1), dict(parts), 0)
            else:
                level(position + 1)
            ems.pop()
        if extents[d] == 1 and start == "0" and end == "1":
            parts[d] = Lin()
            deeper()
            return
        with fb.loop(start, end, 1, f"d{d}_") as i:
            parts[d] = Lin.of(Var(i, "scalar", 0, extents[d]))
            deeper()
    level(0)
